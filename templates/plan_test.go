package templates_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/approval"
	"approvalsbot/internal/utf16text"
	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
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
		for _, state := range []string{"pending", templates.PreviewDeciding} {
			t.Run(name+"/"+state, func(t *testing.T) {
				a := templatestest.Approval(t, name)
				p := templatestest.PinnedPlan(a)
				render := func() rendering { return renderAll(t, r, templatestest.CardWith(t, a, state, templatestest.Frozen(p))) }
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
	a := templatestest.Approval(t, "merge.json")
	want := templatestest.Card(t, a, "pending").Ladder
	if want == "" || strings.Contains(want, "\n") {
		t.Fatalf("plan line %q", want)
	}
	for _, s := range []string{"12:00", "step", "next at"} {
		if strings.Contains(want, s) {
			t.Errorf("plan line %q says %q: it must not depend on progress", want, s)
		}
	}
	for _, state := range templates.PreviewStatesOf(a) {
		got := templatestest.Card(t, a, state).Ladder
		switch state {
		case "pending", templates.PreviewDeciding:
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
	for _, tt := range templatestest.LongLadderCases(t) {
		t.Run(tt.Name, func(t *testing.T) {
			c := tt.Card
			if n := utf16text.Len(c.Ladder); n > 1000 || !strings.Contains(c.Ladder, "and 25 more steps") {
				t.Errorf("plan line of %d chars: %q", n, c.Ladder)
			}
			// The same controls as under a short ladder.
			if want := len(tt.Short.Buttons); len(c.Buttons) != want {
				t.Errorf("buttons: card %d, want %d", len(c.Buttons), want)
			}
			for surface, s := range map[string]string{"text": r.Text(c), "email": r.Email(c).Text} {
				for _, want := range append(templatestest.Essentials(c), c.Ladder) {
					if !strings.Contains(s, want) {
						t.Errorf("%s lacks %q", surface, want)
					}
				}
			}
		})
	}
}

// TestDeciding: a pending card whose decision is on its way says who
// decided what, offers no Approve, Deny or typed-confirmation line (Show
// all arguments and Show details stay), and never shows the comment on a
// content-restricted card.
func TestDeciding(t *testing.T) {
	r := newRenderer(t)
	for _, tt := range templatestest.DecidingCases(t) {
		t.Run(tt.Name, func(t *testing.T) {
			a := tt.In.Approval
			c := templates.Build(tt.In)
			if c.Status != tt.Status || c.StatusDetail != tt.Detail {
				t.Errorf("status %q / %q, want %q / %q", c.Status, c.StatusDetail, tt.Status, tt.Detail)
			}
			if !c.Deciding || c.State != approval.StatePending || c.Tone != templates.TonePending {
				t.Errorf("deciding %v, state %s, tone %s", c.Deciding, c.State, c.Tone)
			}
			if c.ConfirmLine != "" {
				t.Errorf("confirm line %q while a decision is being sent", c.ConfirmLine)
			}
			if c.Ladder != templates.Build(templates.Input{Approval: a, Ladder: tt.In.Ladder, RevealContent: tt.In.RevealContent}).Ladder {
				t.Error("the plan line changed with the decision")
			}
			var kinds []templates.ActionKind
			for _, b := range c.Buttons {
				kinds = append(kinds, b.Action.Kind)
			}
			if diff := cmp.Diff(tt.Buttons, kinds); diff != "" {
				t.Errorf("buttons (-want +got):\n%s", diff)
			}

			x := renderAll(t, r, c)
			for _, s := range []string{x.text, x.emailText} {
				if !strings.HasPrefix(s, tt.Status+"\n"+tt.Detail+"\n") {
					t.Errorf("does not start with the status and its detail:\n%s", s)
				}
			}
			if !strings.Contains(x.emailHTML, htmlEscape(tt.Status)) || !strings.Contains(x.emailHTML, htmlEscape(tt.Detail)) {
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
				if comment := tt.In.Deciding.Comment; c.Restricted && comment != "" && strings.Contains(s, comment) {
					t.Errorf("%s: a restricted card shows the comment", surface)
				}
			})
		})
	}
}
