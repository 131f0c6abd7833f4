package templates

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/approval"
	"approvalsbot/ladder"
)

// TestFiredStepsEditNoCard is the point of the plan line: the card of a
// pending approval is byte for byte the same on every surface whatever
// steps of its ladder have fired, so firing a step needs no chat.update.
// The ladder is run the way the runner does (Plan.Due from the request to
// the deadline, counting the steps done), and the card is rebuilt from the
// frozen plan at every tick, as threads does for each edit.
func TestFiredStepsEditNoCard(t *testing.T) {
	r := newRenderer(t)
	for _, name := range []string{"merge.json", "refund.json", "private.json", "secrets.json"} {
		for _, state := range []string{"pending", PreviewDeciding} {
			t.Run(name+"/"+state, func(t *testing.T) {
				a := loadApproval(t, name)
				p := pinnedPlan(a)
				render := func() rendering { return renderAll(t, r, cardWith(t, a, state, frozen(p))) }
				want := render()

				done, fired := 0, 0
				ticks := []time.Time{p.Requested}
				for _, s := range p.Steps {
					ticks = append(ticks, s.At, s.At.Add(time.Second))
				}
				ticks = append(ticks, p.Deadline.Add(-time.Second))
				for _, now := range ticks {
					due := p.Due(now, done)
					done += len(due)
					for _, s := range due {
						if !s.Skipped {
							fired++
						}
					}
					got := render()
					got.each(func(surface, text string) {
						var w string
						want.each(func(s, x string) {
							if s == surface {
								w = x
							}
						})
						if text != w {
							t.Errorf("after %d steps (%s): %s differs:\n%s", done, now.Format(time.RFC3339), surface, cmp.Diff(w, text))
						}
					})
				}
				if fired == 0 {
					t.Fatal("no step fired: the test proves nothing")
				}
			})
		}
	}
}

// TestPlanLineWhilePending: the plan line is one line, the same for the
// waiting card and the card whose decision is being sent; a closed card
// drops it (nothing more will happen).
func TestPlanLineWhilePending(t *testing.T) {
	a := loadApproval(t, "merge.json")
	want := cardIn(t, a, "pending").Ladder
	if want == "" || strings.Contains(want, "\n") {
		t.Fatalf("plan line %q", want)
	}
	for _, s := range []string{"12:00", "step", "next at"} {
		if strings.Contains(want, s) {
			t.Errorf("plan line %q says %q: it must not depend on progress", want, s)
		}
	}
	for _, state := range PreviewStates() {
		got := cardIn(t, a, state).Ladder
		switch state {
		case "pending", PreviewDeciding:
			if got != want {
				t.Errorf("%s: plan line %q, want %q", state, got, want)
			}
		default:
			if got != "" {
				t.Errorf("%s: a closed card shows the plan line %q", state, got)
			}
		}
	}
}

// TestLongLadderKeepsTheEssentials: a 30-step ladder, each step telling
// dozens of people, leaves the plan line bounded and never pushes the
// status, the effect line, the flags or the buttons out, on any surface
// (the chats': their adapters' TestLongLadderKeepsTheEssentials).
func TestLongLadderKeepsTheEssentials(t *testing.T) {
	r := newRenderer(t)
	for name, a := range map[string]*approval.Approval{"merge.json": loadApproval(t, "merge.json"), "huge": huge(t, false), "huge confirm": huge(t, true)} {
		for _, state := range []string{"pending", PreviewDeciding} {
			t.Run(name+"/"+state, func(t *testing.T) {
				c := cardWith(t, a, state, frozen(longLadder().Plan(a.RequestedAt, a.RequestedAt.Add(24*time.Hour))))
				if n := charLen(c.Ladder); n > 1000 || !strings.Contains(c.Ladder, "and 25 more steps") {
					t.Errorf("plan line of %d chars: %q", n, c.Ladder)
				}
				// The same controls as under a short ladder.
				if want := len(cardIn(t, a, state).Buttons); len(c.Buttons) != want {
					t.Errorf("buttons: card %d, want %d", len(c.Buttons), want)
				}
				for surface, s := range map[string]string{"text": r.Text(c), "email": r.Email(c).Text} {
					for _, want := range append(essentials(c), c.Ladder) {
						if !strings.Contains(s, want) {
							t.Errorf("%s lacks %q", surface, want)
						}
					}
				}
			})
		}
	}
}

// longLadder has 30 steps, each mentioning 40 people and emailing 10.
func longLadder() ladder.Ladder {
	var l ladder.Ladder
	for i := range 30 {
		s := ladder.AfterStep(time.Duration(i+1) * 20 * time.Minute)
		for j := range 40 {
			s.Mention = append(s.Mention, ladder.Target{Kind: ladder.KindSlackUser, ID: "U0PERSON" + string(rune('A'+j%26)) + string(rune('A'+i%26))})
		}
		for j := range 10 {
			s.Email = append(s.Email, ladder.Target{Kind: ladder.KindEmail, ID: "lead" + string(rune('a'+j)) + "@acme.example"})
		}
		l.Steps = append(l.Steps, s)
	}
	return l
}

// TestDeciding: a pending card whose decision is on its way says who
// decided what, offers no Approve, Deny or typed-confirmation line (Show
// all arguments and Show details stay), and never shows the comment on a
// content-restricted card.
func TestDeciding(t *testing.T) {
	r := newRenderer(t)
	const reason = "not before the release"
	tests := []struct {
		name       string
		fixture    string
		d          Deciding
		reveal     bool
		wantStatus string
		wantDetail string
		buttons    []ActionKind
	}{
		{"approval", "merge.json", Deciding{Actor: "user:kevin", Approve: true}, false,
			"Recorded: user:kevin's approval is being sent to the job backend…", "at 18:03 UTC", nil},
		{"denial with a reason", "merge.json", Deciding{Actor: "user:kevin", Comment: reason}, false,
			"Recorded: user:kevin's denial is being sent to the job backend…", "at 18:03 UTC · reason: " + reason, nil},
		{"approval with a comment", "mail.json", Deciding{Actor: "user:kevin", Approve: true, Comment: "checked"}, false,
			"Recorded: user:kevin's approval is being sent to the job backend…", "at 18:03 UTC · comment: checked", nil},
		{"no actor", "search.json", Deciding{}, false,
			"Recorded: a denial is being sent to the job backend…", "at 18:03 UTC", nil},
		{"restricted: no comment", "private.json", Deciding{Actor: "user:kevin", Comment: reason}, false,
			"Recorded: user:kevin's denial is being sent to the job backend…", "at 18:03 UTC", []ActionKind{ActionShowDetails}},
		{"revealed to a content holder", "private.json", Deciding{Actor: "user:kevin", Comment: reason}, true,
			"Recorded: user:kevin's denial is being sent to the job backend…", "at 18:03 UTC · reason: " + reason, nil},
		{"redacted arguments keep Show all arguments", "secrets.json", Deciding{Actor: "user:kevin", Approve: true}, false,
			"Recorded: user:kevin's approval is being sent to the job backend…", "at 18:03 UTC", []ActionKind{ActionShowArgs}},
		{"the deadline's deny", "merge.json", Deciding{Actor: "system:deadline", Comment: "nobody answered", Deadline: true}, false,
			"Nobody answered by the deadline: the denial is being sent to the job backend…", "at 18:03 UTC", nil},
		{"typed confirmation", "refund.json", Deciding{Actor: "user:kevin", Comment: "Bearer sk-live-0123456789abcdef"}, false,
			"Recorded: user:kevin's denial is being sent to the job backend…", "at 18:03 UTC · reason: Bearer [redacted]", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := loadApproval(t, tt.fixture)
			at, plan := pinned(a)
			d := tt.d
			d.At = at
			in := Input{Approval: a, State: approval.StatePending, Deciding: &d, Ladder: plan, RevealContent: tt.reveal}
			c := Build(in)
			if c.Status != tt.wantStatus || c.StatusDetail != tt.wantDetail {
				t.Errorf("status %q / %q, want %q / %q", c.Status, c.StatusDetail, tt.wantStatus, tt.wantDetail)
			}
			if !c.Deciding || c.State != approval.StatePending || c.Tone != TonePending {
				t.Errorf("deciding %v, state %s, tone %s", c.Deciding, c.State, c.Tone)
			}
			if c.ConfirmLine != "" {
				t.Errorf("confirm line %q while a decision is being sent", c.ConfirmLine)
			}
			if c.Ladder != Build(Input{Approval: a, Ladder: plan, RevealContent: tt.reveal}).Ladder {
				t.Error("the plan line changed with the decision")
			}
			var kinds []ActionKind
			for _, b := range c.Buttons {
				kinds = append(kinds, b.Action.Kind)
			}
			if diff := cmp.Diff(tt.buttons, kinds); diff != "" {
				t.Errorf("buttons (-want +got):\n%s", diff)
			}

			x := renderAll(t, r, c)
			for _, s := range []string{x.text, x.emailText} {
				if !strings.HasPrefix(s, tt.wantStatus+"\n"+tt.wantDetail+"\n") {
					t.Errorf("does not start with the status and its detail:\n%s", s)
				}
			}
			if !strings.Contains(x.emailHTML, htmlEscape(tt.wantStatus)) || !strings.Contains(x.emailHTML, htmlEscape(tt.wantDetail)) {
				t.Error("email html lacks the status")
			}
			if x.emailSubject != "Approval needed: "+a.Call.Function+" · "+a.ID {
				t.Errorf("subject %q", x.emailSubject)
			}
			x.each(func(surface, s string) {
				for _, bad := range []string{"Decide in the console", "typed confirmation", "[Approve]", "[Deny]", "sk-live-0123456789abcdef"} {
					if strings.Contains(s, bad) {
						t.Errorf("%s shows %q while a decision is being sent", surface, bad)
					}
				}
				if c.Restricted && strings.Contains(s, reason) {
					t.Errorf("%s: a restricted card shows the comment", surface)
				}
			})
		})
	}
}
