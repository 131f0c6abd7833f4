package templates_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/approval"
	"approvalsbot/internal/utf16text"
	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
)

// TestQuorumLine: the quorum line's words in every state a card shows
// (docs/cards.md#quorum): while the call waits, the approvals given and
// how many more from whom; a decision on its way and an approved call,
// the approvals as given; a call closed short of its quorum, what had
// been given; a reask's voided approvals counted; a superseded card and
// a call one approval decides, no line.
func TestQuorumLine(t *testing.T) {
	t.Parallel()
	a := templatestest.Approval(t, "merge.json") // requested 18:00 UTC
	at := func(d time.Duration) time.Time { return a.RequestedAt.Add(d) }
	kevin := templates.QuorumApproval{Actor: "user:kevin", At: at(3 * time.Minute)}
	ada := templates.QuorumApproval{Actor: "user:ada", At: at(10 * time.Minute)}
	two := func(voided int, given ...templates.QuorumApproval) *templates.Quorum {
		return &templates.Quorum{Need: 2, From: "rotation finance", Approvals: given, Voided: voided}
	}
	denial := &templates.Deciding{Actor: "user:ada", At: at(10 * time.Minute)}
	deadline := &templates.Deciding{Deadline: true, At: at(24 * time.Hour)}
	tests := []struct {
		name     string
		state    string
		q        *templates.Quorum
		deciding *templates.Deciding
		want     string
	}{
		{"one approval decides", "pending", nil, nil, ""},
		{"a quorum of one", "pending", &templates.Quorum{Need: 1, From: "rotation finance", Approvals: []templates.QuorumApproval{kevin}}, nil, ""},
		{"pending, none yet", "pending", two(0), nil, "0 of 2 approvals; needs 2 from rotation finance"},
		{"pending, one", "pending", two(0, kevin), nil,
			"1 of 2 approvals: user:kevin at 18:03 UTC; needs 1 more from rotation finance"},
		{"pending, from every member who may decide", "pending", &templates.Quorum{Need: 3, Approvals: []templates.QuorumApproval{kevin}}, nil,
			"1 of 3 approvals: user:kevin at 18:03 UTC; needs 2 more"},
		{"pending, after a reask voided one", "pending", two(1), nil,
			"0 of 2 approvals (the change voided 1 given before); needs 2 from rotation finance"},
		{"pending, one since a reask voided two", "pending", &templates.Quorum{Need: 3, From: "role:lead", Approvals: []templates.QuorumApproval{ada}, Voided: 2}, nil,
			"1 of 3 approvals (the change voided 2 given before): user:ada at 18:10 UTC; needs 2 more from role:lead"},
		{"an approval on its way", templates.PreviewDeciding, two(0, kevin, ada), nil,
			"2 of 2 approvals: user:kevin at 18:03 UTC, user:ada at 18:10 UTC"},
		{"a denial on its way", "pending", two(0, kevin), denial,
			"1 of 2 approvals: user:kevin at 18:03 UTC"},
		{"the deadline's denial on its way", "pending", two(0, kevin), deadline,
			"1 of 2 approvals: user:kevin at 18:03 UTC"},
		{"approved", "approved", two(0, kevin, ada), nil,
			"2 of 2 approvals: user:kevin at 18:03 UTC, user:ada at 18:10 UTC"},
		{"approved after a reask", "approved", two(1, kevin, ada), nil,
			"2 of 2 approvals (the change voided 1 given before): user:kevin at 18:03 UTC, user:ada at 18:10 UTC"},
		{"refused after the quorum", "refused", two(0, kevin, ada), nil,
			"2 of 2 approvals: user:kevin at 18:03 UTC, user:ada at 18:10 UTC"},
		{"denied after one", "denied", two(0, kevin), nil,
			"1 of 2 approvals had been given: user:kevin at 18:03 UTC"},
		{"expired after one", "expired", two(0, kevin), nil,
			"1 of 2 approvals had been given: user:kevin at 18:03 UTC"},
		{"expired after none", "expired", two(0), nil, "0 of 2 approvals had been given"},
		{"cancelled after one", "cancelled", two(0, kevin), nil,
			"1 of 2 approvals had been given: user:kevin at 18:03 UTC"},
		{"cancelled after a reask voided one", "cancelled", two(1), nil,
			"0 of 2 approvals had been given (the change voided 1 given before)"},
		{"superseded", templates.PreviewSuperseded, two(0, kevin), nil, ""},
		{"superseded while a decision is on its way", templates.PreviewSuperseded, two(0, kevin, ada), denial, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := templatestest.Input(t, a, tt.state)
			in.Quorum = tt.q
			if tt.deciding != nil {
				in.Deciding = tt.deciding
			}
			c := templates.Build(in)
			if c.Quorum != tt.want {
				t.Errorf("quorum line\n got %q\nwant %q", c.Quorum, tt.want)
			}
			checkStamps(t, c.Quorum, c.Times.Quorum)
		})
	}
}

// checkStamps: every time the line prints is where its stamp says.
func checkStamps(t *testing.T, line string, at []templates.Stamp) {
	t.Helper()
	if strings.Count(line, " UTC") != len(at) {
		t.Errorf("%d times for %q", len(at), line)
	}
	for _, s := range at {
		if s.Off+len(s.Text) > len(line) || line[s.Off:s.Off+len(s.Text)] != s.Text || s.Text != s.At.UTC().Format("15:04 MST") && s.Text != s.At.UTC().Format("2006-01-02 15:04 MST") {
			t.Errorf("stamp %+v not in %q", s, line)
		}
	}
}

// TestQuorumLineTimes: an approval's time is in the tenant's zone, and
// carries its date when not on the day the card is shown.
func TestQuorumLineTimes(t *testing.T) {
	t.Parallel()
	a := templatestest.Approval(t, "merge.json") // requested 2026-11-29 18:00 UTC
	q := &templates.Quorum{Need: 2, From: "rotation finance",
		Approvals: []templates.QuorumApproval{{Actor: "user:kevin", At: a.RequestedAt.Add(3 * time.Minute)}}}
	in := templatestest.Input(t, a, "pending")
	in.Quorum = q
	in.Zone = time.FixedZone("CET", 3600)
	if got, want := templates.Build(in).Quorum, "1 of 2 approvals: user:kevin at 19:03 CET; needs 1 more from rotation finance"; got != want {
		t.Errorf("in the tenant's zone\n got %q\nwant %q", got, want)
	}
	in.Zone = nil
	in.Now = a.RequestedAt.Add(30 * time.Hour)
	c := templates.Build(in)
	if want := "1 of 2 approvals: user:kevin at 2026-11-29 18:03 UTC; needs 1 more from rotation finance"; c.Quorum != want {
		t.Errorf("the next day\n got %q\nwant %q", c.Quorum, want)
	}
	checkStamps(t, c.Quorum, c.Times.Quorum)
}

// TestQuorumLineIsBounded: however many approvals, however long their
// names, the line names at most ListMax people, each cut, and counts the
// rest; it stays short enough never to be cut on any surface.
func TestQuorumLineIsBounded(t *testing.T) {
	t.Parallel()
	a := templatestest.Approval(t, "merge.json")
	q := &templates.Quorum{Need: 40, From: strings.Repeat("rotation finance or ", 40)}
	for i := range 12 {
		q.Approvals = append(q.Approvals, templates.QuorumApproval{
			Actor: fmt.Sprintf("user:p%02d", i) + strings.Repeat("x", 500), At: a.RequestedAt.Add(time.Duration(i) * time.Minute)})
	}
	in := templatestest.Input(t, a, "pending")
	in.Quorum = q
	c := templates.Build(in)
	for i := range templates.ListMax {
		if !strings.Contains(c.Quorum, fmt.Sprintf("user:p%02d", i)) {
			t.Errorf("lacks person %d", i)
		}
	}
	if strings.Contains(c.Quorum, "user:p10") || !strings.Contains(c.Quorum, ", and 2 more; needs 28 more from rotation finance") {
		t.Errorf("names more than %d people, or counts the rest wrong: %q", templates.ListMax, c.Quorum)
	}
	if len(c.Times.Quorum) != templates.ListMax {
		t.Errorf("%d times, want %d", len(c.Times.Quorum), templates.ListMax)
	}
	for _, name := range strings.Split(c.Quorum, ", ")[1:templates.ListMax] {
		name, _, _ = strings.Cut(name, " at ")
		if n := utf16text.Len(name); n > 64 {
			t.Errorf("a name of %d characters", n)
		}
	}
	if n := utf16text.Len(c.Quorum); n > 1300 {
		t.Errorf("the quorum line has %d characters", n)
	}
}

// TestQuorumActorIsText: an approver's id is shown as the status shows a
// decision's actor: on one line, its invisible characters made visible,
// a secret in it redacted.
func TestQuorumActorIsText(t *testing.T) {
	t.Parallel()
	a := templatestest.Approval(t, "merge.json")
	in := templatestest.Input(t, a, "approved")
	in.Decision.Actor = "user:eve\n\u202egnp.exe Bearer abcdefghijklmnopqrstuvwxyz0123456789"
	in.Quorum = &templates.Quorum{Need: 2, From: "rotation\nfinance\u200b", Approvals: []templates.QuorumApproval{
		{Actor: "user:kevin", At: a.RequestedAt.Add(time.Minute)},
		{Actor: in.Decision.Actor, At: a.RequestedAt.Add(3 * time.Minute)},
	}}
	c := templates.Build(in)
	actor := strings.TrimPrefix(strings.TrimSuffix(c.Status, " at 18:03 UTC"), "Approved by ")
	if actor == in.Decision.Actor || !strings.Contains(actor, "[U+202E]") || strings.Contains(actor, "abcdefghij") {
		t.Fatalf("the status's actor is not cleaned: %q", actor)
	}
	if want := "2 of 2 approvals: user:kevin at 18:01 UTC, " + actor + " at 18:03 UTC"; c.Quorum != want {
		t.Errorf("quorum line\n got %q\nwant %q", c.Quorum, want)
	}
	in = templatestest.Input(t, a, "pending")
	in.Quorum = &templates.Quorum{Need: 2, From: "rotation\nfinance\u200b"}
	if got, want := templates.Build(in).Quorum, "0 of 2 approvals; needs 2 from rotation finance[U+200B]"; got != want {
		t.Errorf("from\n got %q\nwant %q", got, want)
	}
}

// TestQuorumOnEverySurface: the quorum line reads the same in the text
// copy, each part of an escalation mail, the outcome mail and the note
// mail, and on a restricted card (whose approvers are no content); a
// call one approval decides renders exactly as before.
func TestQuorumOnEverySurface(t *testing.T) {
	t.Parallel()
	r := newRenderer(t)
	for _, q := range templatestest.QuorumCases(t) {
		t.Run(q.Name, func(t *testing.T) {
			c := templates.Build(q.In)
			if c.Quorum != q.Line {
				t.Fatalf("quorum line\n got %q\nwant %q", c.Quorum, q.Line)
			}
			e := r.Email(c)
			outcome := r.Mail(templates.Mail{Card: c, Kind: templates.MailOutcome, Reply: true})
			note := r.Mail(templates.Mail{Card: c, Kind: templates.MailNote, Reply: true, Note: "Your approval was recorded."})
			for surface, s := range map[string]string{"text": r.Text(c), "email text": e.Text, "outcome text": outcome.Text, "note text": note.Text} {
				if !strings.Contains(s, "\n"+q.Line+"\n") {
					t.Errorf("%s lacks the line on its own:\n%s", surface, s)
				}
			}
			for surface, s := range map[string]string{"email html": e.HTML, "outcome html": outcome.HTML, "note html": note.HTML, "decision page": string(r.CardHTML(c))} {
				if !strings.Contains(s, ">"+htmlEscape(q.Line)+"</p>") {
					t.Errorf("%s lacks the line:\n%s", surface, s)
				}
			}
			without := q.In
			without.Quorum = nil
			plain := templates.Build(without)
			c.Quorum, c.Times.Quorum = "", nil
			if diff := cmp.Diff(plain, c); diff != "" {
				t.Errorf("the quorum changed more than its line (-without +with):\n%s", diff)
			}
		})
	}
	priv := templatestest.Approval(t, "private.json")
	in := templatestest.Input(t, priv, "pending")
	in.Quorum = &templates.Quorum{Need: 2, From: "rotation finance", Approvals: []templates.QuorumApproval{{Actor: "user:kevin", At: priv.RequestedAt.Add(time.Minute)}}}
	if c := templates.Build(in); !c.Restricted || !strings.HasPrefix(c.Quorum, "1 of 2 approvals: user:kevin at ") {
		t.Errorf("a restricted card's quorum line: %q", c.Quorum)
	}
	if c := templates.Build(templates.Input{Approval: priv, State: approval.StatePending}); c.Quorum != "" || c.Times.Quorum != nil {
		t.Errorf("a card without a quorum has a line: %q", c.Quorum)
	}
}
