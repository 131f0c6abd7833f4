package templatestest

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"approvalsbot/approval"
	"approvalsbot/templates"
)

// The cases below are the card's rules that every surface shows: package
// templates tests the card, text and email on them, each chat adapter its
// own layout.

// StatusCase is one state of the merge fixture's card, on the pinned
// clock and ladder, and what the card says and offers in it.
type StatusCase struct {
	Name    string
	In      templates.Input
	Status  string // the status line, on top of every surface
	Message string // the backend's message, under the status
	Waiting bool   // Approve and Deny
	Plan    bool   // the plan line
}

// StatusCases are every state's card. Decisions come from the fixture
// events that close these approvals.
func StatusCases(t testing.TB) []StatusCase {
	t.Helper()
	merge := Approval(t, "merge.json")
	resolved := Event(t, "merge-resolved.json").Resolved
	cancelled := Event(t, "mail-cancelled.json").Cancelled
	recheck := Event(t, "refund-recheck.json").RecheckFailed
	at, plan := Pinned(merge)
	sending := &templates.Deciding{Actor: resolved.Actor, Approve: true, At: at}
	approved := &approval.Decision{Actor: resolved.Actor, Via: resolved.Via, At: at}
	const rechecked = "Re-checked after a long wait: the job's starter user:ada no longer holds the operator role in tenant acme"

	cases := []StatusCase{
		{"pending", templates.Input{State: approval.StatePending}, "Waiting for a decision", "", true, true},
		{"deciding", templates.Input{State: approval.StatePending, Deciding: sending},
			"Recorded: " + resolved.Actor + "'s approval is being sent to the job backend…", "", false, true},
		{"approved", templates.Input{State: approval.StateApproved, Decision: approved},
			"Approved by " + resolved.Actor + " at " + at.Format("15:04") + " UTC", "", false, false},
		{"approved wins over deciding", templates.Input{State: approval.StateApproved, Decision: approved, Deciding: sending},
			"Approved by " + resolved.Actor + " at " + at.Format("15:04") + " UTC", "", false, false},
		{"denied", templates.Input{State: approval.StateDenied, Decision: &approval.Decision{Actor: resolved.Actor, Comment: resolved.Comment, Via: resolved.Via, At: at}},
			"Denied by " + resolved.Actor + ": " + resolved.Comment, "", false, false},
		{"expired", templates.Input{State: approval.StateExpired, Decision: &approval.Decision{Actor: "system:deadline", Comment: "nobody answered", Via: "deadline", At: at}},
			"Denied: nobody answered by the deadline", "", false, false},
		{"cancelled", templates.Input{State: approval.StateCancelled, Decision: &approval.Decision{Comment: cancelled.Reason, At: at}},
			"Cancelled: " + cancelled.Reason, "", false, false},
		// The re-check's refusal reads once: the status says the platform
		// refused the call after approval, the line below why.
		{"refused", templates.Input{State: approval.StateRefused, Decision: &approval.Decision{Message: recheck.Message, At: at}},
			"The platform refused the call after approval", rechecked, false, false},
		{"refused after a known approval", templates.Input{State: approval.StateRefused, Decision: &approval.Decision{Actor: resolved.Actor, Message: recheck.Message, At: at}},
			"The platform refused the call after " + resolved.Actor + " approved it", rechecked, false, false},
		{"superseded", templates.Input{State: approval.StatePending, Superseded: true},
			"Superseded: the call changed; see the new card", "", false, false},
		{"superseded, saying why", templates.Input{State: approval.StatePending, Superseded: true,
			SupersededBy: &approval.Reask{From: 1, Revision: 2, Why: approval.WhyArgumentsChanged}},
			"Superseded: the arguments changed; see the new card", "", false, false},
		{"superseded by a hook", templates.Input{State: approval.StatePending, Superseded: true,
			SupersededBy: &approval.Reask{From: 1, Revision: 2, Why: approval.WhyHookChanged}},
			"Superseded: a hook that checks calls before they run changed the call; see the new card", "", false, false},
		{"superseded wins over deciding", templates.Input{State: approval.StatePending, Superseded: true, Deciding: sending},
			"Superseded: the call changed; see the new card", "", false, false},
	}
	for i := range cases {
		cases[i].In.Approval, cases[i].In.Ladder = merge, plan
	}
	return cases
}

// ButtonCase is a fixture's waiting card's buttons, in order.
type ButtonCase struct {
	Fixture     string
	Labels      []string
	DenyDefault bool // Deny is the default
	Confirm     bool // Approve asks again (Slack's confirm dialog)
}

// ButtonCases: Deny as prominent as Approve and first (the default) for
// a destructive call, a value out of scope, one new to the job, a class
// above or a warning; only Deny where a typed confirmation is needed;
// Show all arguments where the projection was cut or redacted; Show
// details on a restricted card; a confirm dialog on Approve of a
// destructive call; Approve with comment… after the pair wherever Approve
// is; and I'm looking and Escalate now on every waiting card.
func ButtonCases() []ButtonCase {
	const note = "Approve with comment…"
	const look, esc = "I'm looking", "Escalate now"
	return []ButtonCase{
		{"merge.json", []string{"Deny", "Approve", note, look, esc}, true, true},                           // destructive
		{"mail.json", []string{"Deny", "Approve", note, look, esc}, true, false},                           // out of scope, new to the job, class above
		{"refund.json", []string{"Deny", look, esc}, true, false},                                          // confirm: approve it in the console
		{"search.json", []string{"Approve", "Deny", note, look, esc}, false, false},                        // reads only
		{"unknown.json", []string{"Deny", "Approve", note, look, esc}, true, false},                        // effects_mismatch: a warning
		{"secrets.json", []string{"Approve", "Deny", note, look, esc, "Show all arguments"}, false, false}, // redacted
		{"big.json", []string{"Approve", "Deny", note, look, esc, "Show all arguments"}, false, false},     // truncated
		{"private.json", []string{"Deny", "Approve", note, look, esc, "Show details"}, true, true},         // restricted, destructive
		{"protected.json", []string{"Deny", look, esc}, false, false},                                      // protected paths: never approved from a chat
	}
}

// DecidingCase is a waiting card whose decision is on its way: In is its
// fixture's on the pinned clock and ladder.
type DecidingCase struct {
	Name           string
	In             templates.Input
	Status, Detail string
	Buttons        []templates.ActionKind // the buttons that stay
}

// DecidingCases say who decided what, and keep only the buttons that
// decide nothing.
func DecidingCases(t testing.TB) []DecidingCase {
	t.Helper()
	const reason = "not before the release"
	cases := []struct {
		name, fixture string
		d             templates.Deciding
		reveal        bool
		status        string
		detail        string
		buttons       []templates.ActionKind
	}{
		{"approval", "merge.json", templates.Deciding{Actor: "user:kevin", Approve: true}, false,
			"Recorded: user:kevin's approval is being sent to the job backend…", "at 18:03 UTC", nil},
		{"denial with a reason", "merge.json", templates.Deciding{Actor: "user:kevin", Comment: reason}, false,
			"Recorded: user:kevin's denial is being sent to the job backend…", "at 18:03 UTC · reason: " + reason, nil},
		{"approval with a comment", "mail.json", templates.Deciding{Actor: "user:kevin", Approve: true, Comment: "checked"}, false,
			"Recorded: user:kevin's approval is being sent to the job backend…", "at 18:03 UTC · comment: checked", nil},
		{"no actor", "search.json", templates.Deciding{}, false,
			"Recorded: a denial is being sent to the job backend…", "at 18:03 UTC", nil},
		{"restricted: no comment", "private.json", templates.Deciding{Actor: "user:kevin", Comment: reason}, false,
			"Recorded: user:kevin's denial is being sent to the job backend…", "at 18:03 UTC", []templates.ActionKind{templates.ActionShowDetails}},
		{"revealed to a content holder", "private.json", templates.Deciding{Actor: "user:kevin", Comment: reason}, true,
			"Recorded: user:kevin's denial is being sent to the job backend…", "at 18:03 UTC · reason: " + reason, nil},
		{"redacted arguments keep Show all arguments", "secrets.json", templates.Deciding{Actor: "user:kevin", Approve: true}, false,
			"Recorded: user:kevin's approval is being sent to the job backend…", "at 18:03 UTC", []templates.ActionKind{templates.ActionShowArgs}},
		{"the deadline's deny", "merge.json", templates.Deciding{Actor: "system:deadline", Comment: "nobody answered", Deadline: true}, false,
			"Nobody answered by the deadline: the denial is being sent to the job backend…", "at 18:03 UTC", nil},
		{"typed confirmation", "refund.json", templates.Deciding{Actor: "user:kevin", Comment: "Bearer sk-live-0123456789abcdef"}, false,
			"Recorded: user:kevin's denial is being sent to the job backend…", "at 18:03 UTC · reason: Bearer [redacted]", nil},
	}
	out := make([]DecidingCase, len(cases))
	for i, c := range cases {
		a := Approval(t, c.fixture)
		at, plan := Pinned(a)
		d := c.d
		d.At = at
		out[i] = DecidingCase{Name: c.name, Status: c.status, Detail: c.detail, Buttons: c.buttons,
			In: templates.Input{Approval: a, State: approval.StatePending, Deciding: &d, Ladder: plan, RevealContent: c.reveal}}
	}
	return out
}

// ForgedTime is a comment that looks like Discord's and Slack's time
// tokens; every surface shows it as text.
const ForgedTime = "<t:0:f> <!date^0^{time}|x>"

// ShownTime is a time a card shows: the instant, and the card's own text
// of it in the tenant's zone.
type ShownTime struct {
	At   time.Time
	Text string
}

// ZoneCase is a card of Synthetic in CET and the times it shows, in the
// order it shows them: the status part (Discord's content), then the
// quorum line, then the plan line.
type ZoneCase struct {
	Name  string
	In    templates.Input
	Times []ShownTime
}

// Forged tells whether a comment on the card is ForgedTime.
func (z ZoneCase) Forged() bool {
	return z.In.Decision != nil && z.In.Decision.Comment == ForgedTime || z.In.Deciding != nil && z.In.Deciding.Comment == ForgedTime
}

// ZoneCases are the cards that print times: the status, who is looking,
// what was escalated now, the quorum's approvals, the plan's steps and
// deadline. Every time
// carries the reader's day, dated in the tenant's text or not: whether it
// is today is the reader's zone's to say.
func ZoneCases() []ZoneCase {
	a := Synthetic() // requested 2030-01-02 09:00 UTC
	req := a.RequestedAt
	cet := time.FixedZone("CET", 3600)
	dl := req.Add(26 * time.Hour)
	plan := templates.LadderPlan{Deadline: dl, Steps: []templates.PlanStep{{At: req.Add(15 * time.Minute), Who: "mention @kevin"}, {At: req.Add(25 * time.Hour), Who: "dm lead"}}}
	at := req.Add(3 * time.Minute)
	now := req.Add(20 * time.Minute)
	tod := func(d time.Duration, text string) ShownTime { return ShownTime{At: req.Add(d), Text: text} }
	return []ZoneCase{
		{"waiting, looked at and escalated", templates.Input{Approval: a, Ladder: plan, Now: now, Zone: cet,
			Looking:     &templates.Looking{Actor: "user:ada", Since: req.Add(10 * time.Minute), Until: req.Add(40 * time.Minute)},
			Escalations: []templates.EscalatedStep{{Actor: "user:kevin", At: req.Add(5 * time.Minute), Who: "dm slack:U0LEE", Planned: req.Add(15 * time.Minute)}}},
			[]ShownTime{tod(10*time.Minute, "10:10 CET"), tod(40*time.Minute, "10:40 CET"), tod(5*time.Minute, "10:05 CET"), tod(15*time.Minute, "10:15 CET"),
				tod(15*time.Minute, "10:15 CET"), tod(25*time.Hour, "2030-01-03 11:00 CET"), tod(26*time.Hour, "2030-01-03 12:00 CET")}},
		{"approved, shown the next day", templates.Input{Approval: a, State: approval.StateApproved, Now: now.Add(24 * time.Hour), Zone: cet,
			Decision: &approval.Decision{Actor: "user:kevin", Comment: ForgedTime, Via: "slack", At: at}},
			[]ShownTime{tod(3*time.Minute, "2030-01-02 10:03 CET")}},
		{"denied", templates.Input{Approval: a, State: approval.StateDenied, Now: now, Zone: cet,
			Decision: &approval.Decision{Actor: "user:kevin", Comment: ForgedTime, Via: "slack", At: at}},
			[]ShownTime{tod(3*time.Minute, "10:03 CET")}},
		{"expired", templates.Input{Approval: a, State: approval.StateExpired, Ladder: plan, Now: now, Zone: cet,
			Decision: &approval.Decision{Actor: "system:deadline", At: dl}},
			[]ShownTime{tod(26*time.Hour, "2030-01-03 12:00 CET")}},
		{"deciding", templates.Input{Approval: a, Ladder: plan, Now: now, Zone: cet,
			Deciding: &templates.Deciding{Actor: "user:kevin", Comment: ForgedTime, At: at}},
			[]ShownTime{tod(3*time.Minute, "10:03 CET"),
				tod(15*time.Minute, "10:15 CET"), tod(25*time.Hour, "2030-01-03 11:00 CET"), tod(26*time.Hour, "2030-01-03 12:00 CET")}},
		{"waiting for a second approval", templates.Input{Approval: a, Ladder: plan, Now: now, Zone: cet,
			Quorum: &templates.Quorum{Need: 2, From: QuorumFrom, Approvals: []templates.QuorumApproval{{Actor: "user:kevin", At: req.Add(time.Minute)}}}},
			[]ShownTime{tod(time.Minute, "10:01 CET"),
				tod(15*time.Minute, "10:15 CET"), tod(25*time.Hour, "2030-01-03 11:00 CET"), tod(26*time.Hour, "2030-01-03 12:00 CET")}},
		{"approved by two, shown the next day", templates.Input{Approval: a, State: approval.StateApproved, Now: now.Add(24 * time.Hour), Zone: cet,
			Decision: &approval.Decision{Actor: "user:ada", Via: "slack", At: at},
			Quorum: &templates.Quorum{Need: 2, From: QuorumFrom, Approvals: []templates.QuorumApproval{
				{Actor: "user:kevin", At: req.Add(time.Minute)}, {Actor: "user:ada", At: at}}}},
			[]ShownTime{tod(3*time.Minute, "2030-01-02 10:03 CET"), tod(time.Minute, "2030-01-02 10:01 CET"), tod(3*time.Minute, "2030-01-02 10:03 CET")}},
	}
}

// WithRoles is Synthetic sending to 25 recipients and 5 more left out,
// the fourth out of scope, and copying two it did not compare.
func WithRoles() *approval.Approval {
	a := Synthetic()
	var vals []approval.RoleValue
	for i := range 25 {
		vals = append(vals, approval.RoleValue{Value: fmt.Sprintf("u%d@example.invalid", i), Origin: approval.OriginTenantRecord})
	}
	vals[3].OutOfScope, vals[3].Origin = true, approval.OriginJobRead
	a.Roles = []approval.Role{
		{Argument: "to", Role: approval.RoleRecipient, Values: vals, LeftOut: 5},
		{Argument: "cc", Role: approval.RoleRecipient, Values: vals[:2], NotCompared: true},
	}
	return a
}

// LimitCase is a card every surface's limits are tested on.
type LimitCase struct {
	Name string // approval/state
	Card templates.Card
}

// LimitCases are the cards of the fixtures and of a ~1 MiB approval, in
// every preview state.
func LimitCases(t testing.TB) []LimitCase {
	t.Helper()
	approvals := map[string]*approval.Approval{
		"huge":            Huge(t, false),
		"huge confirm":    Huge(t, true),
		"synthetic small": Synthetic(),
	}
	for _, f := range []string{"big", "merge", "protected", "secrets", "refund", "private"} {
		approvals[f+".json"] = Approval(t, f+".json")
	}
	var out []LimitCase
	for name, a := range approvals {
		for _, state := range templates.PreviewStatesOf(a) {
			out = append(out, LimitCase{Name: name + "/" + state, Card: Card(t, a, state)})
		}
	}
	// The ~1 MiB approval as a call that needs many approvals, each
	// person named by a long, hostile id: the quorum line is never cut.
	huge := approvals["huge"]
	for _, state := range templates.PreviewStatesOf(huge) {
		in := Input(t, huge, state)
		in.Quorum = LongQuorum(huge.RequestedAt)
		out = append(out, LimitCase{Name: "huge quorum/" + state, Card: templates.Build(in)})
	}
	return out
}

// LongQuorum is a quorum of 30 from a long list of groups, after a reask
// voided 99 approvals: 25 approvals an hour apart from ten hours before
// requested (the first ones on another day, so dated), each by a long id
// full of chat markup.
func LongQuorum(requested time.Time) *templates.Quorum {
	q := &templates.Quorum{Need: 30, From: strings.Repeat("rotation finance or role:payments-lead or ", 10), Voided: 99}
	for i := range 25 {
		q.Approvals = append(q.Approvals, templates.QuorumApproval{
			Actor: fmt.Sprintf("user:%02d", i) + strings.Repeat("<@U0BOSS>*_`[x](https://evil.invalid)", 3),
			At:    requested.Add(time.Duration(i-10) * time.Hour),
		})
	}
	return q
}

// Essentials are what must survive every cut: the status line, the
// quorum line, the effect line and the flags.
func Essentials(c templates.Card) []string {
	out := []string{c.Status}
	if c.Quorum != "" {
		out = append(out, c.Quorum)
	}
	if c.Effect != "" {
		out = append(out, c.Effect)
	}
	return append(out, c.Flags...)
}

// LongLadderCase is a card under LongLadder (frozen a day from the
// request) and the same card under the pinned ladder.
type LongLadderCase struct {
	Name        string // fixture/state
	Card, Short templates.Card
}

// LongLadderCases are the merge fixture's and Huge's pending and deciding
// cards under a 30-step ladder, each step telling dozens of people.
func LongLadderCases(t testing.TB) []LongLadderCase {
	t.Helper()
	var out []LongLadderCase
	for name, a := range map[string]*approval.Approval{"merge.json": Approval(t, "merge.json"), "huge": Huge(t, false), "huge confirm": Huge(t, true)} {
		long := Frozen(LongLadder().Plan(a.RequestedAt, a.RequestedAt.Add(24*time.Hour)))
		for _, state := range []string{"pending", templates.PreviewDeciding} {
			out = append(out, LongLadderCase{Name: name + "/" + state, Card: CardWith(t, a, state, long), Short: Card(t, a, state)})
		}
	}
	return out
}

// Escalation is a reply naming Slack and Discord users and groups, and
// names that would ping everyone.
func Escalation() templates.ThreadMessage {
	return templates.Escalation("a-1", []templates.Mention{
		{Target: "slack:U0KEVIN", Name: "kevin"},
		{Target: "slack:S0ONCALL", Name: "oncall"},
		{Target: "discord:user:112233", Name: "kevin"},
		{Target: "discord:role:445566", Name: "oncall"},
		{Target: "slack:<!channel>", Name: "<!channel>"},
		{Target: "discord:user:12ab", Name: "@everyone"},
	}, 15*time.Minute)
}

// Warning is a change to Synthetic and the warning lines it brings.
type Warning struct {
	Set  func(a *approval.Approval)
	Want []string
}

// Warnings are the warnings the effect line alone would leave unsaid, by
// name.
func Warnings() map[string]Warning {
	yes, no := true, false
	return map[string]Warning{
		"contradiction": {func(a *approval.Approval) {
			a.Call.Annotations = approval.Annotations{ReadOnlyHint: &yes, DestructiveHint: &yes, OpenWorldHint: &no}
		}, []string{approval.WarningContradicts}},
		"inside but egress and tainted": {func(a *approval.Approval) {
			a.Flags.ClassAbove = &approval.ClassAbove{Class: approval.ClassEgress, Previous: "read"}
			a.AskedBy = approval.AskedBy{Reason: approval.ReasonTaint, Taint: []approval.Taint{{Source: "open_world", Function: "web.fetch", Call: 2}}}
			a.EffectsMismatch = true
		}, []string{approval.WarningSaidInside, approval.WarningInsideEgress, approval.WarningInsideTaint}},
	}
}

// Decides reads a message's button payloads: the approval they act on,
// and whether one of them approves or denies it.
func Decides(payloads ...string) (approvalID string, decidable bool) {
	for _, p := range payloads {
		a, err := templates.ParseAction(p)
		if err != nil {
			continue
		}
		approvalID = cmp.Or(approvalID, a.ApprovalID)
		decidable = decidable || a.Kind == templates.ActionApprove || a.Kind == templates.ActionDeny
	}
	return approvalID, decidable
}

// JSONString is s as it appears inside a JSON string MarshalPreview
// wrote.
func JSONString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	quoted := strings.TrimSuffix(b.String(), "\n")
	return quoted[1 : len(quoted)-1]
}

// QuorumCase is the card of a call that needs two approvals from
// rotation finance, on the merge fixtures' pinned clock and ladder, and
// its quorum line in the tenant's zone (UTC).
type QuorumCase struct {
	// Name is the case's golden file, without a surface's suffix.
	Name string
	In   templates.Input
	Line string
}

// QuorumFrom is who the quorum cases' approvals must come from.
const QuorumFrom = "rotation finance"

// QuorumCases are the quorum line as it rises and ends: waiting with one
// approval; waiting with none after a reask voided one; approved by the
// second; and denied by the deadline after one.
func QuorumCases(t testing.TB) []QuorumCase {
	t.Helper()
	merge, reasked := Approval(t, "merge.json"), Approval(t, "merge-reasked.json")
	at, _ := Pinned(merge)
	kevin := templates.QuorumApproval{Actor: "user:kevin", At: merge.RequestedAt.Add(time.Minute)}
	second := templates.QuorumApproval{Actor: "user:reviewer", At: at} // the preview's decision
	hhmm := func(t time.Time) string { return t.UTC().Format("15:04") + " UTC" }
	quorum := func(voided int, approvals ...templates.QuorumApproval) *templates.Quorum {
		return &templates.Quorum{Need: 2, From: QuorumFrom, Approvals: approvals, Voided: voided}
	}

	pending := Input(t, merge, "pending")
	pending.Quorum = quorum(0, kevin)
	voided := Input(t, reasked, "pending")
	change := approval.CompareRevisions(stored(t, merge), stored(t, reasked))
	voided.Reask, voided.Quorum = &change, quorum(1)
	approved := Input(t, merge, "approved")
	approved.Quorum = quorum(0, kevin, second)
	expired := Input(t, merge, "expired")
	expired.Quorum = quorum(0, kevin)
	return []QuorumCase{
		{"merge/quorum-pending", pending, "1 of 2 approvals: user:kevin at " + hhmm(kevin.At) + "; needs 1 more from " + QuorumFrom},
		{"merge-reasked/quorum-voided", voided, "0 of 2 approvals (the change voided 1 given before); needs 2 from " + QuorumFrom},
		{"merge/quorum-approved", approved, "2 of 2 approvals: user:kevin at " + hhmm(kevin.At) + ", user:reviewer at " + hhmm(at)},
		{"merge/quorum-expired", expired, "1 of 2 approvals had been given: user:kevin at " + hhmm(kevin.At)},
	}
}
