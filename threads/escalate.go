package threads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"approvalsbot/approval"
	"approvalsbot/ladder"
	"approvalsbot/store"
	"approvalsbot/templates"
	"approvalsbot/tenant"
)

// KindEmail sends one escalation email.
const KindEmail = "email"

// Mailer sends email; the notify package implements it.
type Mailer interface {
	// Mail sends one message and returns its Message-ID.
	Mail(ctx context.Context, req MailRequest) (string, error)
}

// errNoSMTP: a mail is due but nothing can send it.
var errNoSMTP = errors.New("no SMTP server is configured")

// Linker is a surface that can give a posted card's web address, so an
// escalation mail can link to the card's thread.
type Linker interface {
	Link(ctx context.Context, p PostRef) string
}

// TickResult counts what one tick did.
type TickResult struct {
	Approvals int // due approvals claimed
	Steps     int // ladder steps fired (skipped ones not counted)
	Deadlines int // deadlines that sent their deny
}

// tickBatch bounds one claim; a tick claims again while batches come full.
const tickBatch = 200

// tickLease is the default hold on a due approval while a tick handles it.
const tickLease = time.Minute

// Tick fires every ladder step and deadline that is due now. It claims
// due approvals through the store's index, so it costs O(due), not
// O(pending). Steps missed while the bot was down fire once, merged into
// one message per thread. The deadline only ever denies.
func (s *Service) Tick(ctx context.Context) (TickResult, error) {
	var total TickResult
	seen := map[string]bool{}
	for round := 1; ; round++ {
		now := s.clock.Now()
		due, err := s.store.ApprovalClaimDue(ctx, store.ApprovalClaimDueParams{
			Worker: s.worker + ladderClaim, Now: now, Lease: s.lease, Limit: tickBatch})
		if err != nil {
			return total, fmt.Errorf("claim due approvals: %w", err)
		}
		again := false
		for _, a := range due {
			again = again || seen[a.ID]
			seen[a.ID] = true
		}
		var failed []error
		for group := range slices.Chunk(due, s.tickGroup()) {
			res, err := s.escalateGroup(ctx, group, now)
			total.merge(res)
			failed = append(failed, err...)
			if res.Steps+res.Deadlines > 0 {
				s.Wake() // the first denies go out while the rest are handled
			}
		}
		if len(due) < tickBatch || len(failed) > 0 {
			return total, errors.Join(failed...)
		}
		// A full batch: claim the next. Approvals that wait on a
		// decision on its way (at a step or at the deadline) stay claimed
		// past now (decisionHoldRecheck), so the next batch is the ones
		// behind them, however many wait: they cannot keep a tick from
		// the approvals behind them. A round that claims again an
		// approval this tick handled (in a tick slower than that claim)
		// has gone round them: the next tick looks again. The rounds are
		// bounded too.
		if again || round == tickRounds {
			return total, nil
		}
	}
}

// tickRounds bounds the batches one tick claims: tickRounds × tickBatch
// approvals; a later tick takes up the rest.
const tickRounds = 50

// tickGroup is how many due approvals one transaction handles on a store
// with one writer: a thousand deadlines falling due together commit in a
// few dozen transactions, not a thousand, so their denies go out
// promptly.
const tickGroup = 50

// tickGroupSideBySide is the group where writers run side by side
// (PostgreSQL): small, so a click waits on the row locks of a few
// approvals at most (a replica frozen mid-group holds them until it
// dies), yet a step over a thousand approvals is a hundred commits, not
// a thousand.
const tickGroupSideBySide = 10

// tickGroup is the group for this store.
func (s *Service) tickGroup() int {
	if s.oneWriter() {
		return tickGroup
	}
	return tickGroupSideBySide
}

// escalateGroup handles due approvals in one transaction. When that
// fails, each is handled in a transaction of its own, so one approval
// that cannot be handled does not hold up the others: its claim lapses
// and a later tick tries it again.
func (s *Service) escalateGroup(ctx context.Context, due []*store.Approval, now time.Time) (TickResult, []error) {
	var res TickResult
	err := s.store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		res = TickResult{}
		for _, a := range due {
			steps, deadline, err := s.escalateTx(ctx, tx, a.ID, now)
			if err != nil {
				return err
			}
			res.add(steps, deadline)
		}
		return nil
	})
	if err == nil {
		return res, nil
	}
	if len(due) == 1 {
		s.log.Error("escalate", "tenant", due[0].Tenant, "approval_id", due[0].ID, "err", err)
		return TickResult{}, []error{fmt.Errorf("escalate %s: %w", due[0].ID, err)}
	}
	res = TickResult{}
	var failed []error
	for _, a := range due {
		one, errs := s.escalateGroup(ctx, []*store.Approval{a}, now)
		res.merge(one)
		failed = append(failed, errs...)
	}
	return res, failed
}

func (r *TickResult) merge(o TickResult) {
	r.Approvals += o.Approvals
	r.Steps += o.Steps
	r.Deadlines += o.Deadlines
}

func (r *TickResult) add(steps int, deadline bool) {
	r.Approvals++
	r.Steps += steps
	if deadline {
		r.Deadlines++
	}
}

// escalateTx handles one due approval in the caller's transaction: its
// deadline, or its due steps. A decision that committed since the claim
// wins: a closed approval fires nothing.
func (s *Service) escalateTx(ctx context.Context, tx store.Tx, id string, now time.Time) (int, bool, error) {
	steps, deadline := 0, false
	err := func() error {
		row, err := tx.ApprovalGetForUpdate(ctx, id)
		if err != nil {
			return err
		}
		row.ClaimedBy, row.ClaimedUntil = "", time.Time{}
		if row.State != string(approval.StatePending) || !row.Seen {
			row.NextStepAt, row.DeadlineAt = time.Time{}, time.Time{}
			return tx.ApprovalUpsert(ctx, row)
		}
		var rows []store.OutboxInsertParams
		switch {
		case !row.DeadlineAt.IsZero() && !now.Before(row.DeadlineAt):
			// While the deadline waits, the approval stays claimed until
			// it is worth looking at again, so this tick (and the others)
			// claim the approvals behind it instead of this one again.
			if len(row.Deciding) > 0 {
				// A person's decision is in flight; if it fails, the
				// deadline is still due, and settle lets the next tick
				// take the approval up at once.
				row.ClaimedBy, row.ClaimedUntil = s.worker+ladderClaim, now.Add(decisionHoldRecheck)
				return tx.ApprovalUpsert(ctx, row)
			}
			// The deny is recorded now, and sent once a click the bot
			// received before the deadline can no longer be being
			// recorded (denyAt: at once where this process holds every
			// click that can be, else RecordBound after the deadline):
			// such a click is judged by when it arrived, and takes the
			// deny's place until then (decide). Recording it during that
			// grace, rather than after, leaves the backend call alone on
			// the deadline's path.
			send := s.denyAt(row.DeadlineAt, now)
			d := deciding{Actor: DeadlineActor, Approve: false, Surface: DeadlineSurface,
				Comment: DeadlineComment, Revision: row.Revision, At: now, Due: row.DeadlineAt}
			row.Deciding, _ = json.Marshal(d) // plain data
			row.NextStepAt, row.DeadlineAt = time.Time{}, time.Time{}
			rows = append(rows, s.decisionRowFor(row, d, send, now))
			// The buttons leave every copy of the card as the deny goes,
			// first among chat work.
			edits, err := s.editEveryCopy(ctx, tx, row, now)
			if err != nil {
				return err
			}
			for i := range edits {
				edits[i].NotBefore = send
			}
			rows = append(rows, edits...)
			deadline = true
		case !row.NextStepAt.IsZero() && !now.Before(row.NextStepAt):
			fz, err := frozenOf(row)
			if err != nil {
				return err
			}
			if until, ok := decisionHolds(row, now); ok {
				// A person's decision is on its way to the backend: nobody
				// more need be told while it goes. The step stays due, so
				// should the decision not land the ladder goes on where it
				// was, the steps it missed merged; until then the approval
				// stays claimed, so the ticks look at the ones behind it.
				row.ClaimedBy, row.ClaimedUntil = s.worker+ladderClaim, until
				return tx.ApprovalUpsert(ctx, row)
			}
			st := ladderStateOf(row)
			if st.holds(now) {
				// Someone is looking: the steps wait for the hold's end
				// (a row claimed by a time set before the hold was).
				row.NextStepAt = nextStepAt(fz.Plan, row.StepsDone, st)
				return tx.ApprovalUpsert(ctx, row)
			}
			// A hold that ran out lets what it kept waiting go now, merged
			// as steps missed while the bot was down are; up to a step
			// whose window has closed since it came due, which waits for
			// the window's opening (DueOpen).
			due, opens := fz.Plan.DueOpen(now, row.StepsDone)
			row.StepsDone += len(due)
			row.NextStepAt = nextStepAt(fz.Plan, row.StepsDone, st)
			if !opens.IsZero() {
				row.NextStepAt = opens
			}
			fired, err := s.stepRows(ctx, tx, row, fz, due, now, "")
			if err != nil {
				return err
			}
			rows = append(rows, fired...)
			for _, st := range due {
				if !st.Skipped {
					steps++
				}
			}
		default:
			return tx.ApprovalUpsert(ctx, row) // claimed as due, but not due: release
		}
		row.UpdatedAt = now
		if err := tx.ApprovalUpsert(ctx, row); err != nil {
			return err
		}
		if len(rows) == 0 {
			return nil
		}
		return s.insert(ctx, tx, rows)
	}()
	return steps, deadline, err
}

// A person's decision on its way holds the ladder's steps (decisionHolds)
// for at most decisionHoldMax after it was recorded: longer than one
// decision row may take (decisionTimeout) with a lease's lapse to spare,
// so only a decision that is stuck (its row dead, a store that refuses
// its answer) outlasts it, and then the ladder tells people again rather
// than stay quiet. decisionHoldRecheck is how long a held approval stays
// claimed before a tick looks at it again.
const (
	decisionHoldMax     = 5 * time.Minute
	decisionHoldRecheck = 15 * time.Second
)

// ladderClaim ends the worker name of the ladder's claims on approvals,
// its ticks' and its holds', which settle releases when a decision the
// ladder held for did not land.
const ladderClaim = "-ladder"

// decisionHolds reports whether row's due steps wait for a person's
// decision on its way to the backend, and until when the approval stays
// claimed meanwhile. A decision on an older revision (a reask came after
// it) holds nothing: the backend refuses it as stale.
func decisionHolds(row *store.Approval, now time.Time) (time.Time, bool) {
	d, ok := decidingOf(row)
	if !ok || d.Surface == DeadlineSurface || d.Revision != row.Revision {
		return time.Time{}, false
	}
	end := d.At.Add(decisionHoldMax)
	if !now.Before(end) {
		return time.Time{}, false
	}
	return minTime(now.Add(decisionHoldRecheck), end), true
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// stepRows turns the due steps into outbox rows, merged: one reply per
// thread mentioning everyone the steps tell, one card per new DM or
// channel, one mail per address.
// by is the member who fired them at once (Escalate now), "" for the
// ladder's own time; the thread replies name them.
func (s *Service) stepRows(ctx context.Context, tx store.Tx, row *store.Approval, fz Frozen, due []ladder.PlannedStep, now time.Time, by string) ([]store.OutboxInsertParams, error) {
	var mention, dm, post, email []string
	seen := map[string]bool{}
	add := func(list *[]string, ts []ladder.Target) {
		for _, t := range ts {
			k := t.String()
			id := k
			if t.Kind == ladder.KindEmail {
				id = tenant.AddressKey(k) // one mailbox, however it is written
			}
			if !seen[id] {
				seen[id] = true
				*list = append(*list, k)
			}
		}
	}
	lastStep := 0
	for _, st := range due {
		if st.Skipped {
			continue
		}
		add(&mention, st.Step.Mention)
		add(&dm, fz.Plan.Resolve(st.Step.DM, ladder.VerbDM, postSurfaces(fz), now))
		add(&post, st.Step.Post)
		add(&email, fz.Plan.Resolve(st.Step.Email, ladder.VerbEmail, nil, now))
		lastStep = st.Index + 1
	}
	var rows []store.OutboxInsertParams
	push := func(kind, target string, p rowPayload) {
		body, _ := json.Marshal(p) // plain data
		id := s.newID(now)
		rows = append(rows, store.OutboxInsertParams{ID: id, Tenant: row.Tenant, ApprovalID: row.ID,
			Kind: kind, Target: target, CoalesceKey: mootRow(row.ID, id), Payload: body, NotBefore: now, Now: now})
	}
	if len(mention) > 0 {
		waited := now.Sub(row.RequestedAt).Round(time.Second)
		for _, t := range fz.Post {
			push(KindReply, t, rowPayload{Thread: string(templates.ThreadEscalation), Mentions: threadMentions(fz.Plan, mention, t, now),
				Waited: waited, Step: lastStep, By: by})
		}
	}
	for _, t := range dm {
		push(KindPostCard, t, rowPayload{Revision: row.Revision, Step: lastStep})
	}
	for _, t := range post {
		push(KindPostCard, t, rowPayload{Revision: row.Revision, Step: lastStep})
	}
	for _, t := range email {
		push(KindEmail, t, rowPayload{Revision: row.Revision, Step: lastStep,
			Waited: now.Sub(row.RequestedAt).Round(time.Second)})
	}
	// No card is edited: a card shows the ladder as frozen at request
	// (docs/cards.md), so a step changes nothing on it; the thread reply
	// says what happened.
	return rows, nil
}

// stillWaiting reports whether a row that tells people of a waiting call
// should still go out: a decision that landed after its step was claimed
// means nobody need be told any more. A row queued before a decision that
// is still on its way goes out: it was due before the click, and should
// the decision not land, the people it tells must know.
func (s *Service) stillWaiting(ctx context.Context, approvalID string) (bool, error) {
	a, err := s.store.ApprovalGet(ctx, approvalID)
	if err != nil {
		return false, fmt.Errorf("read approval: %w", err)
	}
	return a.State == string(approval.StatePending), nil
}

// mentionsFor names the people of an escalation reply for the templates:
// a member by their tenant user name, anyone else by the id.
func (s *Service) mentionsFor(tenantID string, targets []string) []templates.Mention {
	tenant, _ := s.tenants.Tenant(tenantID)
	out := make([]templates.Mention, 0, len(targets))
	for _, t := range targets {
		out = append(out, templates.Mention{Target: t, Name: displayName(tenant, t)})
	}
	return out
}

func displayName(tenant *tenant.Tenant, target string) string {
	t, err := ladder.ParseTarget(target)
	if err != nil {
		return target
	}
	if tenant != nil && t.IsUser() {
		// A chat user's target lives on the surface its id is kept under.
		if m, ok := tenant.MemberOn(t.Surface(), t.ID); ok {
			return strings.TrimPrefix(m.User, "user:")
		}
	}
	return t.ID
}

// emailThread is the post target that records an approval's first mail,
// whose Message-ID later mails refer to. It is not a card: edits and
// replies pass it by.
const emailThread = "mail-thread"

// threadLink is the web address of the approval's first card among its
// posts on a surface that can give one, or "".
func (s *Service) threadLink(ctx context.Context, posts []*store.Post) string {
	for _, p := range posts {
		if _, surface := s.surfaceFor(p.Target); surface != nil {
			if l, ok := surface.(Linker); ok {
				if url := l.Link(ctx, RefOf(p)); url != "" {
					return url
				}
			}
		}
	}
	return ""
}
