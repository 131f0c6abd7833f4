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

// Linker is a surface that can give a posted card's web address, for mail.
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

// Tick fires every ladder step and deadline due now, claiming due
// approvals through the store's index (O(due), not O(pending)). Steps
// missed while the bot was down fire once, merged. The deadline only denies.
func (s *Service) Tick(ctx context.Context) (TickResult, error) {
	var total TickResult
	if s.grants {
		// Grants whose time ran out are posted as ended where they were
		// made (grants_revoke.go); a failure is retried at the next tick.
		if _, err := s.ExpireGrants(ctx); err != nil {
			s.log.Warn("end expired grants", "err", err.Error())
		}
	}
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
		// A full batch: claim the next. Approvals waiting on a decision stay
		// claimed (decisionHoldRecheck), so they cannot keep a tick from
		// those behind them; a round that claims one again has gone round,
		// and the next tick looks again.
		if again || round == tickRounds {
			return total, nil
		}
	}
}

// tickRounds bounds the batches of one tick; a later tick takes the rest.
const tickRounds = 50

// tickGroup is how many due approvals one transaction handles on one
// writer: a thousand deadlines due together take a few dozen commits.
const tickGroup = 50

// tickGroupSideBySide is the group where writers run side by side: small,
// so a click waits on few approvals' row locks, yet not a commit each.
const tickGroupSideBySide = 10

func (s *Service) tickGroup() int {
	if s.oneWriter() {
		return tickGroup
	}
	return tickGroupSideBySide
}

// escalateGroup handles due approvals in one transaction, or, when that
// fails, each in its own, so one that cannot be handled holds up no other
// (its claim lapses and a later tick tries again).
func (s *Service) escalateGroup(ctx context.Context, due []*store.Approval, now time.Time) (TickResult, []error) {
	var res TickResult
	fired := make([]int, len(due)) // steps fired per approval, counted after the commit
	err := s.store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		res = TickResult{}
		for i, a := range due {
			steps, deadline, err := s.escalateTx(ctx, tx, a.ID, now)
			if err != nil {
				return err
			}
			res.add(steps, deadline)
			fired[i] = steps
		}
		return nil
	})
	if err == nil {
		for i, a := range due {
			s.countSteps(a, fired[i], StepsByTime)
		}
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

// escalateTx handles one due approval's deadline or due steps in tx. A
// decision that committed since the claim wins: a closed one fires nothing.
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
			// While the deadline waits, the approval stays claimed, so ticks
			// claim the ones behind it.
			if len(row.Deciding) > 0 {
				// A person's decision is in flight; should it fail, settle
				// lets the next tick take the deadline up at once.
				row.ClaimedBy, row.ClaimedUntil = s.worker+ladderClaim, now.Add(decisionHoldRecheck)
				return tx.ApprovalUpsert(ctx, row)
			}
			// The deny is recorded now and sent at denyAt, so a click
			// received before the deadline can still take its place (see
			// docs/design.md#the-deadline-and-the-clicks-before-it).
			send := s.denyAt(row.DeadlineAt, now)
			d := deciding{Actor: DeadlineActor, Approve: false, Surface: DeadlineSurface,
				Comment: DeadlineComment, Revision: row.Revision, At: now, Due: row.DeadlineAt}
			row.Deciding, _ = json.Marshal(d) // plain data
			row.NextStepAt, row.DeadlineAt = time.Time{}, time.Time{}
			rows = append(rows, s.decisionRowFor(row, d, send, now))
			// The buttons leave every copy as the deny goes.
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
				// A person's decision is on its way: nobody more need be
				// told. The step stays due, so should it not land the ladder
				// goes on, merged; the approval stays claimed meanwhile.
				row.ClaimedBy, row.ClaimedUntil = s.worker+ladderClaim, until
				return tx.ApprovalUpsert(ctx, row)
			}
			st := ladderStateOf(row)
			if st.holds(now) {
				// Someone is looking: the steps wait for the hold's end.
				row.NextStepAt = nextStepAt(fz.Plan, row.StepsDone, st)
				return tx.ApprovalUpsert(ctx, row)
			}
			// What a lapsed hold kept waiting goes now, merged, up to a step
			// whose window has closed since, which waits for its opening
			// (DueOpen).
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
// for at most decisionHoldMax, longer than a decision row may take: only a
// stuck decision outlasts it, and then the ladder tells people again.
// decisionHoldRecheck is how long a held approval stays claimed.
const (
	decisionHoldMax     = 5 * time.Minute
	decisionHoldRecheck = 15 * time.Second
)

// ladderClaim ends the worker name of the ladder's claims, which settle
// releases when a decision the ladder held for did not land.
const ladderClaim = "-ladder"

// decisionHolds reports whether row's due steps wait for a person's
// decision, and until when the approval stays claimed. One on an older
// revision holds nothing: the backend refuses it as stale.
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

// stepRows turns due steps into outbox rows, merged: one reply per thread
// mentioning everyone, one card per new DM or channel, one mail per
// address, one push per member. by is who pressed Escalate now ("" for
// the ladder's time).
func (s *Service) stepRows(ctx context.Context, tx store.Tx, row *store.Approval, fz Frozen, due []ladder.PlannedStep, now time.Time, by string) ([]store.OutboxInsertParams, error) {
	var mention, dm, post, email, pushes []string
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
	surfaces := postSurfaces(fz)
	for _, st := range due {
		if st.Skipped {
			continue
		}
		// The approvers target reaches those a quorum still waits for,
		// found now: in each thread, on its own surface (threadMentions).
		add(&mention, st.Step.Mention)
		add(&dm, fz.Plan.Resolve(s.approversIn(st.Step.DM, row, fz, ladder.VerbDM, surfaces), ladder.VerbDM, surfaces, now))
		add(&post, st.Step.Post)
		add(&email, fz.Plan.Resolve(s.approversIn(st.Step.Email, row, fz, ladder.VerbEmail, nil), ladder.VerbEmail, nil, now))
		add(&pushes, s.pushable(row, fz.Plan.Resolve(s.approversIn(st.Step.Push, row, fz, ladder.VerbPush, nil), ladder.VerbPush, nil, now)))
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
			push(KindReply, t, rowPayload{Thread: string(templates.ThreadEscalation), Mentions: s.threadMentions(row, fz, mention, t, now),
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
	for _, t := range pushes {
		push(KindPush, t, rowPayload{Revision: row.Revision, Step: lastStep})
	}
	// No card is edited: a step changes nothing on a card (docs/cards.md).
	return rows, nil
}

// stillWaiting reports whether a row telling people of a waiting call
// should still go: not once a decision landed. A decision still on its
// way does not stop it: should it not land, people must know.
func (s *Service) stillWaiting(ctx context.Context, approvalID string) (bool, error) {
	a, err := s.store.ApprovalGet(ctx, approvalID)
	if err != nil {
		return false, fmt.Errorf("read approval: %w", err)
	}
	return a.State == string(approval.StatePending), nil
}

// mentionsFor names an escalation reply's people: a member by user name.
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
		if m, ok := tenant.MemberOn(t.Surface(), t.ID); ok {
			return strings.TrimPrefix(m.User, "user:")
		}
	}
	return t.ID
}

// emailThread is the post target that recorded an approval's first mail
// in earlier releases (isMailPost); not a card.
const emailThread = "mail-thread"

// threadLink is the web address of the approval's first card, or "".
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
