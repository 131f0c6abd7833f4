package threads

import (
	"context"
	"slices"
	"time"

	"approvalsbot/approval"
	"approvalsbot/internal/utf16text"
	"approvalsbot/ladder"
	"approvalsbot/store"
	"approvalsbot/templates"
	"approvalsbot/tenant"
)

// The figures of approval fatigue (docs/operations.md#approval-fatigue):
// each approval's row in the outcomes table, written with each revision
// and again in the transaction that closes it, and the metrics counted
// once that transaction has committed.

// The effect label: a small fixed set read from the tool's annotations,
// the call's class and kind, never from a value the agent chose.
const (
	EffectLabelReadsOnly   = "reads_only"
	EffectLabelWrite       = "write"
	EffectLabelDestructive = "destructive"
	EffectLabelEgress      = "egress"
	EffectLabelUnknown     = "unknown"
	// EffectLabelQuestion is an agent's question: no call, no effect.
	EffectLabelQuestion = "question"
)

// EffectLabels lists every effect label.
var EffectLabels = []string{EffectLabelReadsOnly, EffectLabelWrite, EffectLabelDestructive, EffectLabelEgress, EffectLabelUnknown,
	EffectLabelQuestion}

// EffectLabel classes a call for the figures (an agent's question is
// EffectLabelQuestion), the most dangerous reading first: destructive when the card says DESTRUCTIVE or the class is;
// egress when the class is, or the tool may write outside the tenant
// (openWorldHint not false); reads only when the tool says so and no
// class says more; write for a declared write, a write class or a
// changeset; unknown otherwise.
func EffectLabel(a *approval.Approval) string {
	ann := a.Call.Annotations
	class := ""
	if a.Flags.ClassAbove != nil {
		class = a.Flags.ClassAbove.Class
	}
	readOnly := ann.ReadOnlyHint != nil && *ann.ReadOnlyHint
	declared := ann.ReadOnlyHint != nil && ann.DestructiveHint != nil
	switch {
	case a.IsQuestion():
		return EffectLabelQuestion
	case a.Destructive() || class == approval.ClassDestructive:
		return EffectLabelDestructive
	case class == approval.ClassEgress:
		return EffectLabelEgress
	case readOnly && class == "":
		return EffectLabelReadsOnly
	case !readOnly && (ann.OpenWorldHint == nil || *ann.OpenWorldHint) && declared:
		return EffectLabelEgress
	case class == approval.ClassWrite || a.Kind != approval.KindCall || declared && !readOnly:
		return EffectLabelWrite
	}
	return EffectLabelUnknown
}

// outcomeTextMax bounds a function name or job id kept for the figures,
// as a card's line bounds it.
const outcomeTextMax = 200

// shownText is free text from a request as a card's line shows it:
// redacted, invisible characters shown as [U+XXXX], on one line, cut.
func shownText(s string) string {
	return utf16text.Cut(templates.VisibleLine(approval.RedactText(s)), outcomeTextMax)
}

// outcomeRequest is a revision's row of the outcomes table; ladder is
// empty for a reask (the row keeps the ladder frozen at request).
func outcomeRequest(a *approval.Approval, ladderName string) store.OutcomeRequestParams {
	function := shownText(a.Call.Function)
	if a.IsQuestion() {
		// Named by its kind, as its row is listed: never by its text.
		function = string(approval.KindQuestion)
	}
	return store.OutcomeRequestParams{ApprovalID: a.ID, Tenant: a.Tenant, Job: shownText(a.Job.ID),
		Function: function, ArgsSHA256: a.Call.ArgsSHA256, Effect: EffectLabel(a),
		Ladder: ladderName, Restricted: a.ContentRestricted(), Revision: a.Revision, RequestedAt: a.RequestedAt}
}

// QuickApproval is how soon after its card was posted, where that person
// decided, an Approve of a destructive call counts as quick: too soon, as
// a rule, to have read the card (the bot cannot know when it was read).
const QuickApproval = 5 * time.Second

// RepeatWindow is how far back an approval of the same function and
// digest makes an approval a repeat.
const RepeatWindow = 24 * time.Hour

// OutcomesKeptAtLeast is how long the outcomes table keeps a decided
// row even when closed approvals keep their content for less: the
// digest reads the last 7 days.
const OutcomesKeptAtLeast = 8 * 24 * time.Hour

// outcomesKept is how long a decided outcome is kept: as long as a
// closed approval's content, and at least OutcomesKeptAtLeast.
func outcomesKept(r Retention) time.Duration {
	return max(r.Closed, OutcomesKeptAtLeast)
}

// closing is what an approval's close tells the figures: written in the
// closing transaction (params), counted after it commits (count).
type closing struct {
	params    store.OutcomeCloseParams
	tenant    string
	effect    string
	ladder    string
	requested time.Time
	quick     []string // the surfaces of each quick approval
	// recheck: a re-check refused an approval counted already; the row
	// takes the state, and nothing is counted again.
	recheck bool
}

// closingOf works out the close the transaction moving row from before
// records, when it is one: an approval people saw, now in a final state
// it was not in. d is the bot's own decision that closed it (nil for an
// event). It reads the approval's posts only for a person's Approve of a
// destructive call.
func (s *Service) closingOf(ctx context.Context, tx store.Tx, before *approval.Record, row *store.Approval, d *deciding) (*closing, error) {
	state := approval.State(row.State)
	if !row.Seen || !state.Final() || before != nil && before.State == state || row.Plan == nil {
		return nil, nil
	}
	fz, err := frozenOf(row)
	if err != nil {
		return nil, err
	}
	rec, err := recordOf(row)
	if err != nil {
		return nil, err
	}
	now := row.UpdatedAt
	c := &closing{tenant: row.Tenant, effect: fz.Effect, ladder: fz.Plan.Ladder, requested: row.RequestedAt,
		params:  store.OutcomeCloseParams{ApprovalID: row.ID, State: row.State, DecidedAt: now},
		recheck: before != nil && before.State.Final()}
	if c.effect == "" {
		c.effect = EffectLabelUnknown // frozen before the figures were kept
	}
	if dec := rec.Decision; dec != nil {
		c.params.Actor = shownText(dec.Actor)
		c.params.Surface = shownText(dec.Via)
		if !dec.At.IsZero() {
			c.params.DecidedAt = dec.At
		}
	}
	for i, st := range fz.Plan.Steps {
		if i < row.StepsDone && !st.Skipped {
			c.params.Steps++
		}
	}
	mine := d != nil && rec.Decision != nil && rec.Decision.Actor == d.Actor && rec.Decision.Via == d.Surface
	if mine {
		// When the person decided, not when the backend's answer came.
		c.params.DecidedAt = d.At
		if d.Grant != nil && state == approval.StateApproved {
			c.params.Grant = d.Grant.ID
		}
	}
	c.params.FirstLookAt = firstLook(row, c.params.Surface, c.params.DecidedAt)
	if mine && state == approval.StateApproved && c.effect == EffectLabelDestructive {
		posts, err := tx.PostList(ctx, row.ID)
		if err != nil {
			return nil, err
		}
		for _, v := range approvedBy(*d) {
			if at, ok := cardPostedAt(posts, v, d.Revision); ok && v.At.Sub(at) < QuickApproval {
				c.quick = append(c.quick, v.Surface)
			}
		}
		c.params.Quick = len(c.quick) > 0
	}
	return c, nil
}

// personSurfaces are where a person acts on the bot itself: an act
// there is one the bot saw.
var personSurfaces = []string{ladder.SurfaceSlack, ladder.SurfaceDiscord, ladder.SurfaceEmail, tenant.SurfacePage}

// firstLook is the first act a person recorded on the approval through
// the bot: I'm looking, Escalate now, an approval towards a quorum, or
// the decision made in chat or on the decision page. Page views and
// Show arguments leave no record, and a decision made elsewhere says
// nothing of when it was read; zero when nobody acted.
func firstLook(row *store.Approval, via string, decided time.Time) time.Time {
	var first time.Time
	take := func(t time.Time) {
		if !t.IsZero() && (first.IsZero() || t.Before(first)) {
			first = t
		}
	}
	st := ladderStateOf(row)
	if st.Looking != nil {
		take(st.Looking.Since)
	}
	for _, e := range st.Escalations {
		take(e.At)
	}
	for _, v := range votesOf(row).Approvals {
		take(v.At)
	}
	if slices.Contains(personSurfaces, via) {
		take(decided)
	}
	return first
}

// approvedBy lists the people whose Approve made d: a quorum's every
// approval, else d's own.
func approvedBy(d deciding) []vote {
	if len(d.Approvers) > 0 {
		return d.Approvers
	}
	if !d.Approve {
		return nil
	}
	return []vote{{Actor: d.Actor, Surface: d.Surface, User: d.User, At: d.At}}
}

// cardPostedAt is when the copy of revision a person decided on was
// posted on their surface: on chat, the copy in the channel they clicked
// in when it is known, else the first on that surface; on email, the
// first mail of that revision to their address. The page reached from a
// chat link has no post of its own.
func cardPostedAt(posts []*store.Post, v vote, revision int) (time.Time, bool) {
	var first *store.Post
	for _, p := range posts {
		if p.Revision != revision || !postOn(p, v) {
			continue
		}
		if first == nil || p.CreatedAt.Before(first.CreatedAt) {
			first = p
		}
	}
	if first == nil {
		return time.Time{}, false
	}
	return first.CreatedAt, true
}

// postOn reports whether p is a copy on v's surface that v could have
// decided on.
func postOn(p *store.Post, v vote) bool {
	if v.Surface == ladder.SurfaceEmail {
		return p.Target == mailTarget(v.User)
	}
	if isMailPost(p) {
		return false
	}
	t, err := ladder.ParseTarget(p.Target)
	return err == nil && t.Surface() == v.Surface
}

// count records a committed close in the metrics, and whether the same
// call was approved within RepeatWindow before (one store read, for an
// approval only).
func (s *Service) count(ctx context.Context, c *closing) {
	if c.recheck {
		return
	}
	m := s.metrics
	p := c.params
	m.Decided.WithLabelValues(c.tenant, p.State, c.effect).Observe(seconds(p.DecidedAt.Sub(c.requested)))
	if !p.FirstLookAt.IsZero() {
		m.FirstLook.WithLabelValues(c.tenant).Observe(seconds(p.FirstLookAt.Sub(c.requested)))
	}
	if p.State == string(approval.StateExpired) && c.effect != EffectLabelQuestion {
		// A question's deadline denies nothing: it tells the job that
		// nobody answered (decision_seconds counts it as expired).
		m.DeadlineDenies.WithLabelValues(c.tenant, c.ladder).Inc()
	}
	for _, surface := range c.quick {
		m.QuickApprovals.WithLabelValues(c.tenant, surface).Inc()
	}
	if p.State != string(approval.StateApproved) {
		return
	}
	again, err := s.store.OutcomeRepeated(context.WithoutCancel(ctx), store.OutcomeRepeatedParams{ApprovalID: p.ApprovalID, Window: RepeatWindow})
	if err != nil {
		s.log.Warn("repeat approvals not counted", "tenant", c.tenant, "approval_id", p.ApprovalID, "err", err)
		return
	}
	if again {
		m.RepeatApprovals.WithLabelValues(c.tenant).Inc()
	}
}

// countSteps counts the ladder steps an approval fired (how: by the
// ladder's time or a person's Escalate now), after their commit.
func (s *Service) countSteps(row *store.Approval, steps int, how string) {
	if steps <= 0 {
		return
	}
	fz, err := frozenOf(row)
	if err != nil {
		return
	}
	s.metrics.StepsFired.WithLabelValues(row.Tenant, fz.Plan.Ladder, how).Add(float64(steps))
}

// seconds is d in seconds, never below 0: a request's time is the
// backend's, up to RequestAhead past the bot's clock.
func seconds(d time.Duration) float64 {
	if d < 0 {
		return 0
	}
	return d.Seconds()
}

// StartFigures starts the fatigue counters of every tenant and ladder
// configured at 0, so that the first quick Approve or deadline deny is an
// increase a dashboard or an alert sees (a series born at 1 is none to
// increase()). Call it at start and after each reload; a series once
// started stays.
func (s *Service) StartFigures(tenants map[string]*tenant.Tenant) {
	m := s.metrics
	for id, t := range tenants {
		m.RepeatApprovals.WithLabelValues(id)
		for _, surface := range []string{ladder.SurfaceSlack, ladder.SurfaceDiscord, ladder.SurfaceEmail} {
			m.QuickApprovals.WithLabelValues(id, surface)
		}
		names := []string{tenant.DefaultLadder}
		for name := range t.Ladders {
			names = append(names, name)
		}
		for _, name := range names {
			m.DeadlineDenies.WithLabelValues(id, name)
			m.StepsFired.WithLabelValues(id, name, StepsByTime)
			m.StepsFired.WithLabelValues(id, name, StepsByPerson)
		}
	}
}
