package threads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"approvalsbot/approval"
	"approvalsbot/ladder"
	"approvalsbot/say"
	"approvalsbot/store"
	"approvalsbot/tenant"
)

// Backend is the job backend's calls out; each call retries within itself
// and returns ErrBackendUnavailable when it gave up.
type Backend interface {
	Decide(ctx context.Context, c DecisionCall) (DecisionAnswer, error)
	Arguments(ctx context.Context, c ArgumentsCall) (ArgumentsAnswer, error)
}

// ErrBackendUnavailable: the backend did not answer within the retries.
var ErrBackendUnavailable = errors.New("the job backend did not answer")

// DecisionCall is one decision sent to the backend.
type DecisionCall struct {
	ApprovalID     string
	Revision       int
	Approve        bool
	Actor          string
	Surface        string // slack, discord, deadline
	User           string // the chat user id; empty for the deadline
	Comment        string
	ArgsSHA256     string // the call's digest when the person holds the content permission; else empty
	IdempotencyKey string // the same on every retry of this decision
	// Approvers, when a quorum decided, is every approval that made it,
	// in the order given, the one that completed it (Actor) last. The
	// client sends them only to a backend that supports them
	// (docs/protocol.md#approvers).
	Approvers []Approver
	// Confirm is the typed confirmation the decision page checked, for a
	// call that needs one; nil for none. The client sends it only to a
	// backend that supports it (docs/protocol.md#typed_confirmation).
	Confirm *Typed
	// Grant is the grant the person gave with this approval; nil for
	// none. Only a backend that supports grants is offered them
	// (docs/protocol.md#grants).
	Grant *Grant
}

// Typed is a typed confirmation: the argument the call names, and the
// value as the person typed it.
type Typed struct {
	Argument string `json:"argument"`
	Value    string `json:"value"`
}

// Approver is one person's approval towards a quorum, as the backend is
// told of it.
type Approver struct {
	Actor   string    // the tenant user
	Surface string    // slack, discord, email
	User    string    // the surface's user id (the address on email)
	At      time.Time // when the bot recorded it
	// ArgsSHA256 is the digest of the call they approved when they hold
	// the content permission; else empty.
	ArgsSHA256 string
}

// DecisionOutcome is the backend's answer to a decision (docs/protocol.md).
type DecisionOutcome string

// Decision outcomes.
const (
	DecisionRecorded       DecisionOutcome = "recorded"
	DecisionAlreadyDecided DecisionOutcome = "already_decided"
	DecisionStaleRevision  DecisionOutcome = "stale_revision"
	DecisionDigestMismatch DecisionOutcome = "digest_mismatch"
	DecisionForbidden      DecisionOutcome = "forbidden"
	DecisionNotFound       DecisionOutcome = "not_found"
	DecisionCancelled      DecisionOutcome = "cancelled"
)

// DecisionAnswer is what the backend said.
type DecisionAnswer struct {
	Outcome DecisionOutcome
	Status  approval.State // approved or denied (recorded, already decided)
	// Actor is who decided first (already decided), or whose approval a
	// quorum's decision was refused for (forbidden), when the backend names them.
	Actor   string
	Message string // the backend's sentence
}

// ArgumentsCall asks the backend for an approval's full arguments.
type ArgumentsCall struct {
	ApprovalID     string
	Revision       int
	Actor          string
	IdempotencyKey string
}

// ArgumentsAnswer is the backend's answer to an arguments look-up.
type ArgumentsAnswer struct {
	Forbidden  bool // the person lacks the content permission
	Gone       bool // not found or cancelled
	Arguments  json.RawMessage
	ArgsSHA256 string
	// Changes is a changeset's files and patch; nil when the answer has none.
	Changes *ArgumentsChanges
	Message string
}

// ArgumentsChanges is a changeset as the look-up returns it: shown only
// once its patch's digest equals the approval's patch_sha256.
type ArgumentsChanges struct {
	Files       []approval.ChangedFile
	Patch       string
	PatchSHA256 string
}

// SurfaceEmail names decisions made on the decision page (protocol's
// via.surface); the Person's User is then the member's address.
const SurfaceEmail = ladder.SurfaceEmail

// Person is who clicked, on which surface, and how to answer them alone.
type Person struct {
	Surface string // slack, discord, email
	User    string // the surface's user id
	Channel string // where they clicked, for an ephemeral answer
	Reply   string // the surface's handle for a later private answer
}

// DecideRequest is a click on Approve or Deny.
type DecideRequest struct {
	Tenant     string
	ApprovalID string
	Revision   int // the revision of the card clicked
	Approve    bool
	Comment    string
	Person     Person
	// ReceivedAt is when the bot received the click (zero: now), from the
	// surface's Receipt; the deadline judges a click by it (see
	// docs/design.md#the-deadline-and-the-clicks-before-it).
	ReceivedAt time.Time
	// Shown: this is the Approve that came with a private showing of the
	// call's content (Reveal). Without it, a content holder's Approve of a
	// restricted call is answered with Reveal: nobody approves it blind.
	Shown bool
	// ShownDigest is the digest the decision page showed with its Approve:
	// Shown when it is the revision's own, refused when another's.
	ShownDigest string
	// Passkey: the decision page verified the member's passkey for this
	// Approve, bound to the approval, revision, digest and member. An
	// Approve the tenant's passkey rule covers is refused without it.
	Passkey bool
	// Typed is the value the person typed to confirm the call's
	// argument, which the decision page checked against the call's full
	// arguments (approval.TypedMatches); "" for none. Only with it, from a
	// content holder, to a backend that takes it (Options.TypedConfirm),
	// is a call that needs a typed confirmation approved.
	Typed string
	// Grant is the grant dialog's choice ("Approve and allow…"); nil for
	// a plain decision. The core checks it as if crafted (grants.go).
	Grant *GrantAsk
}

// RecordBound is how long a click may take to be recorded before the
// surface answers it, well inside the 3 s Slack and Discord allow; the
// deadline's deny waits as long for clicks received before it (see
// docs/design.md#the-deadline-and-the-clicks-before-it).
const RecordBound = time.Second

// DecideResult says what became of a decision.
type DecideResult struct {
	// Sent: the decision is on its way to the backend, or, for an approval
	// towards a quorum not met yet, recorded (Reason is then Voted).
	Sent   bool
	Reason say.Reason // what the person is told at once
	// Reveal: nothing was recorded; the surface shows the restricted call to
	// the content holder privately (ClickReveal), with an Approve bound to
	// the same revision and digest (DecideRequest.Shown).
	Reveal bool
	// Card is the clicked copy as the decision's transaction left the
	// approval, when Sent; nil when it could not be built (logged).
	Card *Card
}

// deciding is a decision in flight, kept on the approval until answered.
type deciding struct {
	Actor    string    `json:"actor"`
	Approve  bool      `json:"approve"`
	Surface  string    `json:"surface"`
	User     string    `json:"user,omitempty"`
	Channel  string    `json:"channel,omitempty"`
	Reply    string    `json:"reply,omitempty"`
	Comment  string    `json:"comment,omitempty"`
	Revision int       `json:"revision"`
	Digest   string    `json:"digest,omitempty"`
	At       time.Time `json:"at"`
	// Due is the deadline the deadline's deny is for (zero for a person's):
	// a deny that did not land re-arms that deadline, not a later one.
	Due time.Time `json:"due,omitzero"`
	// Sent: the deadline's deny left for the backend (takeDeadline); no
	// click takes its place any more.
	Sent bool `json:"sent,omitempty"`
	// Approvers are the approvals that met the call's quorum, this one
	// last; empty for a call one approval decides.
	Approvers []vote `json:"approvers,omitempty"`
	// Typed is the decision page's typed confirmation, checked there
	// against the call's full arguments; nil for none. It is kept only
	// while the decision is in flight.
	Typed *Typed `json:"typed,omitempty"`
	// Grant is the grant this approval carries; nil for none.
	Grant *Grant `json:"grant,omitempty"`
	// Turn is the id of the turn whose batch (Deny all, Approve all N)
	// this decision is part of; "" for a decision of this call alone.
	Turn string `json:"turn,omitempty"`
	// Answer is a person's answer to a question (question.go), the words
	// exactly as written: kept only while it is in flight, and gone with
	// it once the backend answered. nil for a decision, and for the
	// deadline's word that nobody answered.
	Answer *approval.Answer `json:"answer,omitempty"`
	// line is the answer as the thread is told it (performAnswer).
	line string
}

// The deadline's decision (docs/protocol.md): only ever deny.
const (
	DeadlineActor   = "system:deadline"
	DeadlineSurface = "deadline"
	DeadlineComment = "nobody answered"
)

// KindDecision sends a decision to the backend; KindTell answers one person.
const (
	KindDecision = "decision"
	KindTell     = "tell"
)

// MaxComment bounds a deny reason or an approval's comment.
const MaxComment = 1000

// decide checks that the person may decide this card and records the
// decision and its outbox row in one transaction. One decision is in
// flight per approval: a second click is told who is deciding. row is the
// approval as the click read it (nil: read here if needed).
func (s *Service) decide(ctx context.Context, req DecideRequest, row *store.Approval) (DecideResult, error) {
	ctx = ForPerson(ctx)
	chk, why, err := s.decidableTyped(ctx, req.Tenant, req.ApprovalID, req.Revision, req.Person, req.Approve,
		req.Approve && req.Typed != "" && s.typedConfirm)
	if !why.IsZero() || err != nil {
		return DecideResult{Reason: why}, err
	}
	m, a := chk.member, chk.request
	var typed *Typed
	if req.Approve && req.Typed != "" && a.Confirm != nil {
		typed = &Typed{Argument: a.Confirm.Argument, Value: req.Typed}
	}
	if req.Approve && !req.Passkey && tenant.PasskeyRequired(chk.tenant.Passkeys, PasskeyFacts(a)) {
		// A chat click cannot carry a passkey: the member is sent to
		// their decision page, privately.
		return DecideResult{Reason: s.passkeyNeeded(chk.tenant, m, a)}, nil
	}
	var grant *Grant
	if req.Grant != nil {
		// A grant is checked here whatever the surface showed: a crafted
		// submission, or one for a call it may not cover, is refused.
		if !req.Approve {
			return DecideResult{Reason: say.Reason{Kind: say.UnknownButton}}, nil
		}
		var fz *Frozen
		if row != nil {
			if f, err := frozenOf(row); err == nil {
				fz = &f
			}
		}
		if why := s.grantBar(chk.tenant, a, fz); !why.IsZero() {
			return DecideResult{Reason: why}, nil
		}
		g, ok := mintGrant(chk.tenant, a, *req.Grant, s.clock.Now())
		if !ok {
			return DecideResult{Reason: say.Reason{Kind: say.GrantBadChoice}}, nil
		}
		grant = g
	}
	if req.Approve && row != nil {
		// An approval the call's quorum would not count is refused before
		// anything is locked or shown (the transaction checks again).
		if fz, err := frozenOf(row); err == nil && fz.Quorum != nil {
			if why := fz.Quorum.refuse(m.User, a.Job); !why.IsZero() {
				return DecideResult{Reason: why}, nil
			}
		}
	}
	comment := strings.TrimSpace(req.Comment)
	// Only a content holder's Approve of a restricted call is ever shown
	// the call first, so only theirs may say what it was shown: anyone
	// else's ShownDigest is ignored unread, or its answer would tell them
	// whether a guess at the digest (and so at a hidden value) is right.
	reveals := req.Approve && m.Content && a.ContentRestricted()
	if reveals && req.ShownDigest != "" {
		if req.ShownDigest != a.Call.ArgsSHA256 {
			return DecideResult{Reason: say.Reason{Kind: say.NotShownThis}}, nil
		}
		req.Shown = true
	}
	if reveals && !req.Shown {
		// A card a reask replaced is told so, not shown the call again
		// (the look-up would answer for the new revision).
		if row == nil {
			row, err = s.store.ApprovalGet(ctx, req.ApprovalID)
			if errors.Is(err, store.ErrNotFound) {
				return DecideResult{Reason: say.Reason{Kind: say.UnknownCard}}, nil
			}
			if err != nil {
				return DecideResult{}, fmt.Errorf("read approval %s: %w", req.ApprovalID, err)
			}
		}
		if why := stale(row, req.Revision, say.Decision); !why.IsZero() {
			return DecideResult{Reason: why}, nil
		}
		return DecideResult{Reveal: true, Reason: say.Reason{Kind: say.RevealFirst}}, nil
	}
	now := s.clock.Now()
	d := deciding{Actor: m.User, Approve: req.Approve, Surface: req.Person.Surface, User: req.Person.User,
		Channel: req.Person.Channel, Reply: req.Person.Reply, Comment: comment, Revision: req.Revision, At: now, Typed: typed}
	// The decision carries the digest exactly when the person holds the
	// content permission (they were shown the call): the backend refuses a
	// digest from anyone else.
	if m.Content {
		d.Digest = a.Call.ArgsSHA256
	}
	sending := say.Reason{Kind: say.Sending, Approve: req.Approve, Function: a.Call.Function}
	if grant != nil {
		sending = say.Reason{Kind: say.GrantSending, Function: a.Call.Function, Message: grant.Words}
	}
	var res DecideResult
	var written *store.Approval // the approval as the transaction wrote it
	err = s.store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		row, err := tx.ApprovalGetForUpdate(ctx, req.ApprovalID)
		if errors.Is(err, store.ErrNotFound) {
			res = DecideResult{Reason: say.Reason{Kind: say.UnknownCard}}
			return nil
		}
		if err != nil {
			return err
		}
		if why := stale(row, req.Revision, say.Decision); !why.IsZero() {
			res = DecideResult{Reason: why}
			return nil
		}
		// A call with a quorum counts each eligible person's approval
		// once, for the revision they approved; the approval that meets
		// it sends the decision, with every approver.
		var q *FrozenQuorum
		var given votes
		partial := false
		if req.Approve {
			fz, err := frozenOf(row)
			if err != nil {
				return err
			}
			if q = fz.Quorum; q != nil {
				given = s.liveVotes(row)
				if why := q.standing(m.User, a.Job, given, row.Revision, now, fz.zone()); !why.IsZero() {
					res = DecideResult{Reason: why}
					return nil
				}
				partial = len(given.on(row.Revision))+1 < q.Need
			}
		}
		if grant != nil && q != nil {
			// A grant must not get around a quorum (frozen at request).
			res = DecideResult{Reason: say.Reason{Kind: say.GrantBarred, Message: "a quorum decides it"}}
			return nil
		}
		// A receipt is never taken as earlier than it says, even when
		// it is later than now: a receipt stamped at a deadline whose
		// deny went, with the wall clock stepped back since (Receipt).
		received := req.ReceivedAt
		if received.IsZero() {
			received = now
		}
		deadlineAt := row.DeadlineAt
		staged, waiting := waitingDeadline(row, now)
		if waiting {
			deadlineAt = staged.Due
		}
		if req.Approve && !deadlineAt.IsZero() && !received.Before(deadlineAt) {
			// No answer by the deadline is a no: the deny is on its way.
			res = DecideResult{Reason: say.Reason{Kind: say.DeadlinePassed}}
			return nil
		}
		if waiting && partial {
			// An approval received in time that does not meet the quorum
			// cannot take the place of the deadline's deny; it is recorded,
			// so the closed card counts it, and its giver told so.
			given = given.with(row.Revision, vote{Actor: d.Actor, Surface: d.Surface, User: d.User, At: now, Digest: d.Digest})
			row.Votes = given.marshal()
			if err := tx.ApprovalUpsert(ctx, row); err != nil {
				return err
			}
			res = DecideResult{Reason: say.Reason{Kind: say.VotedAtDeadline, Count: len(given.on(row.Revision)), Need: q.Need, Who: q.words()}}
			return nil
		}
		if waiting {
			// The deadline's deny waits for clicks like this one: the
			// person's decision takes its place (its row sends nothing),
			// with the deadline armed again should it not land.
			row.Deciding = nil
			row.DeadlineAt = staged.Due
		}
		if len(row.Deciding) > 0 {
			var other deciding
			_ = json.Unmarshal(row.Deciding, &other) // our own JSON
			res = DecideResult{Reason: say.Reason{Kind: say.Deciding, Actor: other.Actor}}
			return nil
		}
		row.UpdatedAt = now
		if q != nil {
			given = given.with(row.Revision, vote{Actor: d.Actor, Surface: d.Surface, User: d.User, At: now, Digest: d.Digest})
			row.Votes = given.marshal()
			if partial {
				// Recorded, and shown on every copy; nothing is sent yet.
				if err := tx.ApprovalUpsert(ctx, row); err != nil {
					return err
				}
				edits, err := s.editEveryCopy(ctx, tx, row, now)
				if err != nil {
					return err
				}
				n := len(given.on(row.Revision))
				res, written = DecideResult{Sent: true, Reason: say.Reason{Kind: say.Voted, Function: a.Call.Function,
					Count: n, Need: q.Need, Who: q.words()}}, row
				return s.insert(ctx, tx, edits)
			}
			d.Approvers = given.on(row.Revision)
		}
		dec := s.decisionRowFor(row, d, now, now)
		if grant != nil {
			// The grant's id comes from the decision's key: every retry
			// of the decision sends the same grant.
			grant.ID = approval.NewGrantID(dec.ID)
			d.Grant = grant
			g, err := grantRow(grant, row.Tenant, row.ID, d)
			if err != nil {
				return err
			}
			if err := tx.GrantInsert(ctx, g); err != nil {
				return err
			}
		}
		row.Deciding, _ = json.Marshal(d) // plain data: cannot fail
		if err := tx.ApprovalUpsert(ctx, row); err != nil {
			return err
		}
		res, written = DecideResult{Sent: true, Reason: sending}, row
		return s.insert(ctx, tx, []store.OutboxInsertParams{dec})
	})
	if errors.Is(err, store.ErrCommit) && written != nil && s.recorded(ctx, req.ApprovalID, d, res.Reason.Kind == say.Voted) {
		// The commit went through though its answer was lost (the
		// click's time ran out while a slow flush or a standby confirmed
		// it): the decision is on its way, and the person must hear so.
		err, res.Sent = nil, true
	}
	if err != nil {
		return DecideResult{}, fmt.Errorf("record the decision on %s: %w", req.ApprovalID, err)
	}
	if res.Sent {
		s.Wake()
		res.Card = s.turnCardOr(ctx, s.clickedCard(written, a, now))
	}
	return res, nil
}

// decider is who clicked, as configured now, and the revision clicked.
type decider struct {
	tenant  *tenant.Tenant
	member  tenant.Member
	request *approval.Approval
}

// PasskeyFacts is what a tenant's passkey rule reads of a call, as its
// card shows it: DESTRUCTIVE, Deny first (flagged), a typed
// confirmation.
func PasskeyFacts(a *approval.Approval) tenant.PasskeyFacts {
	return tenant.PasskeyFacts{Destructive: a.Destructive(), Flagged: a.DenyFirst(), Typed: a.Confirm != nil}
}

// passkeyNeeded is why an Approve without a passkey is refused: with the
// member's own link to the decision page where the passkey is asked,
// when the page may approve for them, or else the console.
func (s *Service) passkeyNeeded(t *tenant.Tenant, m tenant.Member, a *approval.Approval) say.Reason {
	why := say.Reason{Kind: say.PasskeyNeeded, Tenant: t.ID, Console: a.ConsoleURL}
	if s.links == nil || !t.MailDecides(true) {
		return why
	}
	// The link lives no longer than the call's own deadline, or the
	// tenant's from the request; the page checks the approval's as it
	// stands in any case.
	expires := a.RequestedAt.Add(t.Deadline)
	if a.Deadline != nil {
		expires = *a.Deadline
	}
	l := s.links.Link(LinkRequest{Tenant: t.ID, ApprovalID: a.ID, Revision: a.Revision, Member: m.User,
		Approve: true, Chat: true, Expires: expires})
	why.Message = l.URL
	return why
}

// decidable checks that the clicker is a member who may decide, that the
// revision clicked is the tenant's, and that nothing refuses the decision;
// else it returns why.
func (s *Service) decidable(ctx context.Context, tenantID, approvalID string, revision int, who Person,
	approve bool) (decider, say.Reason, error) {
	return s.decidableTyped(ctx, tenantID, approvalID, revision, who, approve, false)
}

// decidableTyped is decidable for an Approve that carries a checked
// typed confirmation when typed: such an Approve of a call that needs
// one is taken from a member with the content permission.
func (s *Service) decidableTyped(ctx context.Context, tenantID, approvalID string, revision int, who Person,
	approve, typed bool) (decider, say.Reason, error) {
	t, m, why := s.member(tenantID, who, say.Decision)
	if !why.IsZero() {
		return decider{}, why, nil
	}
	a, why, err := s.revisionOf(ctx, tenantID, approvalID, revision, say.Decision)
	if !why.IsZero() || err != nil {
		return decider{}, why, err
	}
	if a.IsQuestion() {
		// A question is answered, never approved or denied (question.go).
		return decider{}, say.Reason{Kind: say.UnknownButton}, nil
	}
	why = refuse(t, m, a, approve)
	if why.Kind == say.TypedConfirm && typed && m.Content && a.Kind != approval.KindProtectedPaths {
		why = say.Reason{}
	}
	if !why.IsZero() {
		return decider{}, why, nil
	}
	return decider{tenant: t, member: m, request: a}, say.Reason{}, nil
}

// member finds the tenant as configured now and the clicker, who must be
// able to decide; else it returns why, worded for act.
func (s *Service) member(tenantID string, who Person, act say.Act) (*tenant.Tenant, tenant.Member, say.Reason) {
	t, ok := s.tenants.Tenant(tenantID)
	if !ok {
		return nil, tenant.Member{}, say.Reason{Kind: say.NotServed, Act: act, Tenant: tenantID}
	}
	m, ok := t.MemberOn(who.Surface, who.User)
	if !ok {
		return nil, tenant.Member{}, say.Reason{Kind: say.NotMember, Act: act, Tenant: tenantID, Surface: who.Surface, User: who.User}
	}
	if !m.Role.CanDecide() {
		return nil, tenant.Member{}, say.Reason{Kind: say.CannotDecide, Act: act, Tenant: tenantID, Role: string(m.Role)}
	}
	return t, m, say.Reason{}
}

// revisionOf reads the revision a click names, which must be the
// tenant's; when it is not, or there is none, it returns why.
func (s *Service) revisionOf(ctx context.Context, tenantID, approvalID string, revision int, act say.Act) (*approval.Approval, say.Reason, error) {
	rev, err := s.store.RevisionGet(ctx, approvalID, revision)
	if errors.Is(err, store.ErrNotFound) {
		return nil, say.Reason{Kind: say.UnknownCard, Act: act}, nil
	}
	if err != nil {
		return nil, say.Reason{}, fmt.Errorf("read revision %d of %s: %w", revision, approvalID, err)
	}
	var a approval.Approval
	if err := json.Unmarshal(rev.Body, &a); err != nil {
		return nil, say.Reason{}, fmt.Errorf("decode revision %d of %s: %w", revision, approvalID, err)
	}
	if a.Tenant != tenantID {
		return nil, say.Reason{Kind: say.UnknownCard, Act: act}, nil
	}
	return &a, say.Reason{}, nil
}

// recorded reports whether a transaction whose commit's outcome was lost
// committed after all (d is in flight, or, voted, d's approval towards
// the quorum is kept), read within RecordBound: the person is waiting.
func (s *Service) recorded(ctx context.Context, approvalID string, d deciding, voted bool) bool {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), RecordBound)
	defer cancel()
	row, err := s.store.ApprovalGet(rctx, approvalID)
	if err != nil {
		return false
	}
	if voted {
		v, ok := votesOf(row).of(d.Actor, d.Revision)
		return ok && v.Surface == d.Surface && v.User == d.User && v.At.Equal(d.At)
	}
	got, ok := decidingOf(row)
	return ok && got.Actor == d.Actor && got.Surface == d.Surface && got.User == d.User &&
		got.Revision == d.Revision && got.Approve == d.Approve && got.At.Equal(d.At)
}

// decisionRowFor is the outbox row that sends d, just put in flight on
// row, from send on. It names d by its time, so a row whose decision
// another took the place of sends nothing.
func (s *Service) decisionRowFor(row *store.Approval, d deciding, send, now time.Time) store.OutboxInsertParams {
	body, _ := json.Marshal(decisionPayload{At: d.At, Actor: d.Actor, Surface: d.Surface}) // plain data: cannot fail
	return store.OutboxInsertParams{ID: s.newID(now), Tenant: row.Tenant, ApprovalID: row.ID,
		Kind: KindDecision, Target: surfaceBackend, Payload: body, NotBefore: send, Now: now}
}

// decisionPayload names the decision in flight a row sends (sends).
type decisionPayload struct {
	At      time.Time `json:"at,omitzero"`
	Actor   string    `json:"actor,omitempty"`
	Surface string    `json:"surface,omitempty"`
	// Turn: the row sends a turn's batch, every member's decision at once
	// (turn.go); nil for one call's.
	Turn *turnBatch `json:"turn,omitempty"`
}

// sends reports whether this row sends d; a row of the previous release
// (`{}`) sends whichever is in flight.
func (p decisionPayload) sends(d deciding) bool {
	return p.At.IsZero() || p.At.Equal(d.At) && p.Actor == d.Actor && p.Surface == d.Surface
}

// decidingOf is the decision in flight on row; false for none.
func decidingOf(row *store.Approval) (deciding, bool) {
	var d deciding
	if len(row.Deciding) == 0 || json.Unmarshal(row.Deciding, &d) != nil {
		return deciding{}, false
	}
	return d, true
}

// inFlight reports whether d is the decision in flight on row.
func inFlight(row *store.Approval, d deciding) bool {
	cur, ok := decidingOf(row)
	return ok && cur.Actor == d.Actor && cur.Surface == d.Surface && cur.At.Equal(d.At)
}

// waitingDeadline is the deadline's deny in flight on row while a click
// received before the deadline may still take its place.
func waitingDeadline(row *store.Approval, now time.Time) (deciding, bool) {
	d, ok := decidingOf(row)
	if !ok || d.Surface != DeadlineSurface || d.Sent || d.Due.IsZero() || !now.Before(d.Due.Add(RecordBound)) {
		return deciding{}, false
	}
	return d, true
}

// refuse says why this member may not make this decision, if anything.
func refuse(t *tenant.Tenant, m tenant.Member, a *approval.Approval, approve bool) say.Reason {
	if a.DecidedByContentHolders() && !m.Content {
		return say.Reason{Kind: say.PrivateChat, Tenant: a.Tenant}
	}
	if t.ForbidSelfApproval && a.Job.StartedBy != "" && m.User == a.Job.StartedBy {
		return say.Reason{Kind: say.OwnJob, Job: a.Job.ID, Tenant: a.Tenant}
	}
	if !approve {
		return say.Reason{}
	}
	if a.Confirm != nil {
		return say.Reason{Kind: say.TypedConfirm, Argument: a.Confirm.Argument, Console: a.ConsoleURL}
	}
	if a.Kind == approval.KindProtectedPaths {
		return say.Reason{Kind: say.ProtectedPaths, Console: a.ConsoleURL}
	}
	return say.Reason{}
}

// stale says why a card can no longer be decided (closed, or superseded),
// worded for act; the zero Reason when it can.
func stale(row *store.Approval, revision int, act say.Act) say.Reason {
	if approval.State(row.State).Final() || !row.Seen {
		why := say.Reason{Kind: say.Closed, Act: act, State: row.State}
		if rec, err := recordOf(row); err == nil && rec.Decision != nil {
			why.Actor = rec.Decision.Actor
		}
		return why
	}
	if revision < row.Revision {
		return say.Reason{Kind: say.Superseded, Act: act}
	}
	return say.Reason{}
}

// performDecision sends the decision in flight and applies the answer.
// It returns an error only to retry the row (the deadline's decision,
// which must reach the backend).
func (s *Service) performDecision(ctx context.Context, row *store.OutboxRow) error {
	if s.backend == nil {
		return Permanent(errors.New("no backend client configured"))
	}
	if p, ok := turnPayload(row); ok {
		return s.performTurn(ctx, row, p)
	}
	a, err := s.store.ApprovalGet(ctx, row.ApprovalID)
	if err != nil {
		return fmt.Errorf("read approval: %w", err)
	}
	if len(a.Deciding) == 0 {
		return nil // answered already (a repeat after a crash)
	}
	var d deciding
	if err := json.Unmarshal(a.Deciding, &d); err != nil {
		return Permanent(fmt.Errorf("decode the decision in flight: %w", err))
	}
	var p decisionPayload
	if err := json.Unmarshal(row.Payload, &p); err == nil && !p.sends(d) {
		return nil // another decision took this one's place: its own row sends it
	}
	if d.Surface == DeadlineSurface && !d.Due.IsZero() && !d.Sent {
		// The deny leaves its grace under the approval's lock, so a click
		// still being recorded either takes its place before this (and
		// the deny is not sent) or is told the deny is on its way.
		took, err := s.takeDeadline(ctx, a.ID, d)
		if err != nil {
			return fmt.Errorf("take the deadline's deny: %w", err)
		}
		if !took {
			return nil // a click took its place: its own row sends it
		}
		d.Sent = true
	}
	if isQuestionRow(a) {
		return s.performAnswer(ctx, row, a, d)
	}
	if d.Revision < a.Revision || approval.State(a.State).Final() {
		// The call changed or closed since the click: refused as stale.
		return s.settle(context.WithoutCancel(ctx), row, d, nil, stale(a, d.Revision, say.Decision))
	}
	if why, err := s.quorumUnmet(a, d); err != nil {
		return Permanent(err)
	} else if !why.IsZero() {
		// Never an approve the quorum has not made: the person is told,
		// and every copy gets its buttons back.
		s.log.Warn("decision not sent: its quorum is not met", "approval_id", a.ID, "tenant", a.Tenant,
			"actor", d.Actor, "approvals", why.Count, "need", why.Need)
		return s.settle(context.WithoutCancel(ctx), row, d, nil, why)
	}
	ans, err := s.backend.Decide(ctx, DecisionCall{ApprovalID: a.ID, Revision: d.Revision, Approve: d.Approve,
		Actor: d.Actor, Surface: d.Surface, User: d.User, Comment: d.Comment, ArgsSHA256: d.Digest,
		IdempotencyKey: row.ID, Approvers: approvers(d.Approvers), Confirm: d.Typed, Grant: d.Grant})
	if err != nil {
		if d.Surface == DeadlineSurface || stopping(ctx) {
			// The deadline retries until the backend answers; a stop
			// leaves a person's decision in flight for the next start.
			return err
		}
		s.log.Warn("decision not recorded", "approval_id", a.ID, "tenant", a.Tenant, "err", err)
		why := say.Reason{Kind: say.NotAnswered, Approve: d.Approve,
			Refused: !errors.Is(err, ErrBackendUnavailable) && !errors.Is(err, context.DeadlineExceeded)}
		// Recorded with a fresh context: ctx may be spent by the retries.
		return s.settle(context.WithoutCancel(ctx), row, d, nil, why)
	}
	return s.settle(context.WithoutCancel(ctx), row, d, &ans, say.Reason{})
}

// takeDeadline marks the deadline's deny d as sent under the approval's
// lock; false when d is no longer in flight.
func (s *Service) takeDeadline(ctx context.Context, id string, d deciding) (bool, error) {
	took := false
	// Grouped on every store: a thousand deadlines due together take a few
	// commits, each holding its approval's lock for one read and one write.
	err := s.commitGrouped(ctx, func(ctx context.Context, tx store.Tx) error {
		took = false
		row, err := tx.ApprovalGetForUpdate(ctx, id)
		if err != nil {
			return err
		}
		if !inFlight(row, d) {
			return nil
		}
		d.Sent = true
		row.Deciding, _ = json.Marshal(d) // plain data: cannot fail
		took = true
		return tx.ApprovalUpsert(ctx, row)
	})
	return took, err
}

// errSettled: settle ended the decision's row with the answer's commit.
var errSettled = errors.New("the decision row was completed with its answer")

// settle applies the backend's answer in one transaction: it clears the
// decision in flight, enqueues the state's effects and the answer to the
// person, and ends the decision's row (one commit, not two). It returns
// errSettled when it committed.
func (s *Service) settle(ctx context.Context, dec *store.OutboxRow, d deciding, ans *DecisionAnswer, tell say.Reason) error {
	now := s.clock.Now()
	id := dec.ApprovalID
	var enqueued int
	var closed *closing
	// Answers arriving together commit together on one writer (commit.go).
	err := s.commit(ctx, func(ctx context.Context, tx store.Tx) error {
		enqueued, closed = 0, nil
		if err := tx.OutboxComplete(ctx, store.OutboxCompleteParams{ID: dec.ID, Worker: s.worker, Now: now}); err != nil {
			// Another worker holds the row now: it sends the same
			// decision again (same key) and applies the answer.
			return err
		}
		rows, c, err := s.settleIn(ctx, tx, id, d, ans, tell, now, false)
		if err != nil {
			return err
		}
		closed = c
		enqueued = len(rows)
		if len(rows) == 0 {
			return nil
		}
		return s.insert(ctx, tx, rows)
	})
	if err != nil {
		return fmt.Errorf("apply the backend's answer: %w", err)
	}
	if closed != nil {
		s.count(ctx, closed)
	}
	if enqueued > 0 {
		s.Wake()
	}
	return errSettled
}

// settleIn applies the backend's answer to the decision d in flight on
// the approval id, in tx: it clears d, moves the approval on, and returns
// the rows of the state's effects and, unless quiet, the answer to the
// person (a turn's batch tells them once for all its calls).
func (s *Service) settleIn(ctx context.Context, tx store.Tx, id string, d deciding, ans *DecisionAnswer, tell say.Reason,
	now time.Time, quiet bool) (rows []store.OutboxInsertParams, closed *closing, err error) {
	err = func() error {
		row, err := tx.ApprovalGetForUpdate(ctx, id)
		if err != nil {
			return err
		}
		if inFlight(row, d) {
			row.Deciding = nil
		} // else a person's decision took the place of the deadline's deny as it went out: its row answers them
		row.UpdatedAt = now
		var ev *approval.Event
		why := tell
		if ans != nil {
			if fz, ok := questionPlan(row); ok {
				ev, why = answerOutcome(row, d, *ans, fz.Restricted)
			} else {
				ev, why = outcome(row, d, *ans)
			}
		}
		if d.Grant != nil {
			// The grant lives only if the backend recorded the approval
			// that carried it.
			live := ans != nil && ans.Outcome == DecisionRecorded && (ans.Status == "" || ans.Status == approval.StateApproved)
			if err := settleGrant(ctx, tx, d.Grant, live); err != nil {
				return err
			}
		}
		text := why.String()
		if ev != nil {
			cur, err := recordOf(row)
			if err != nil {
				return err
			}
			res := approval.Transition(cur, ev, now)
			if res.Changed {
				// As ingest does; nothing is frozen, so no tenant is read.
				row, _ = s.nextRow(row, res.Next, nil, now)
				if closed, err = s.closingOf(ctx, tx, cur, row, &d); err != nil {
					return err
				}
				if closed != nil {
					if err := tx.OutcomeClose(ctx, closed.params); err != nil {
						return err
					}
				}
			}
			fz, err := frozenOf(row)
			if err != nil {
				return err
			}
			if rows, err = s.rowsFor(ctx, tx, row, fz, ev.Type, res.Effects, now); err != nil {
				return err
			}
			ended, err := s.closingMail(ctx, tx, cur.State, row, now)
			if err != nil {
				return err
			}
			rows = append(rows, ended...)
		} else if d.Surface != DeadlineSurface {
			// A person's decision did not land: every copy, the clicked
			// one above all, gets its buttons back, whatever became of the
			// click's handle. (A deadline's deny is due again at once.)
			// The approval that met a quorum no longer counts: the others
			// stay, and its giver may approve again.
			refusedEarlier := why.Kind == say.Forbidden && len(d.Approvers) > 0 && why.Actor != d.Actor
			var change func(votes) votes
			switch {
			case why.Kind == say.QuorumShort:
				// Those whose approvals no longer count leave the list;
				// the sender's, when it counts, stays.
				change = func(v votes) votes { return v.still(s.decides(row.Tenant)) }
			case refusedEarlier:
				// The backend refused the quorum for an earlier approval:
				// that one no longer counts (kept, it would refuse every
				// quorum it completed); the sender's stays. Refused for
				// none it names, none counts any more.
				change = func(v votes) votes {
					if _, ok := v.of(why.Actor, d.Revision); why.Actor != "" && ok {
						return v.without(why.Actor, d.Revision)
					}
					why.Actor = ""
					return v.refused(d.Revision)
				}
			case len(d.Approvers) > 0:
				change = func(v votes) votes { return v.without(d.Actor, d.Revision) }
			}
			if change != nil {
				if err := changeVotes(row, change); err != nil {
					return err
				}
			}
			if refusedEarlier {
				why = say.Reason{Kind: say.QuorumRefused, Message: why.Message, Actor: why.Actor, Count: len(d.Approvers)}
				text = why.String()
			}
			if rows, err = s.editEveryCopy(ctx, tx, row, now); err != nil {
				return err
			}
		}
		if d.Surface == DeadlineSurface && row.State == string(approval.StatePending) {
			// The deadline's deny did not land (the call changed at the
			// last moment): the same deadline is due again at the next
			// tick, so a click received after it is still refused.
			row.DeadlineAt = d.Due
			if row.DeadlineAt.IsZero() {
				row.DeadlineAt = now // a deny recorded before Due was kept
			}
		}
		if row.State == string(approval.StatePending) && len(row.Deciding) == 0 && strings.HasSuffix(row.ClaimedBy, ladderClaim) {
			// The decision did not land, and the ladder held the approval
			// for it (decisionHolds, the deadline's wait): the next tick
			// takes it up at once, the steps it missed or the deadline.
			row.ClaimedBy, row.ClaimedUntil = "", time.Time{}
		}
		if err := tx.ApprovalUpsert(ctx, row); err != nil {
			return err
		}
		switch {
		case quiet || text == "" || d.Surface == DeadlineSurface:
		case d.Surface == tenant.SurfacePage:
			// The page reached from chat shows the state; there is no
			// thread of the member's to tell it in.
		case d.Surface == SurfaceEmail:
			// The page shows the state; a decision that did not land is told
			// in the member's mail thread (one that did, by the outcome mail).
			if ev == nil || !approval.State(row.State).Final() {
				rows = append(rows, s.noteRow(row, d, text, now))
			}
		default:
			rows = append(rows, s.tellRow(row, d, text, now))
		}
		return nil
	}()
	return rows, closed, err
}

// outcome turns the backend's answer into the event it implies (nil for
// none) and what the person who clicked is told.
func outcome(row *store.Approval, d deciding, ans DecisionAnswer) (*approval.Event, say.Reason) {
	resolved := func(status approval.State, actor, comment, via, message string) *approval.Event {
		return &approval.Event{Type: approval.EventResolved, Tenant: row.Tenant, Resolved: &approval.Resolved{
			ApprovalID: row.ID, Revision: d.Revision, Status: status, Actor: actor, Comment: comment, Via: via, Message: message}}
	}
	switch ans.Outcome {
	case DecisionRecorded:
		status := ans.Status
		if status == "" {
			status = map[bool]approval.State{true: approval.StateApproved, false: approval.StateDenied}[d.Approve]
		}
		if d.Surface == DeadlineSurface && status == approval.StateDenied {
			status = approval.StateExpired
		}
		return resolved(status, d.Actor, d.Comment, d.Surface, ans.Message), say.Reason{Kind: say.Recorded, Approve: d.Approve}
	case DecisionAlreadyDecided:
		actor := ans.Actor
		if actor == "" {
			actor = "someone else"
		}
		status := ans.Status
		if status != approval.StateApproved {
			status = approval.StateDenied
		}
		return resolved(status, actor, "", "", ans.Message),
			say.Reason{Kind: say.AlreadyDecided, Actor: actor, State: string(status), Approve: d.Approve}
	case DecisionStaleRevision:
		return nil, say.Reason{Kind: say.StaleRevision, Approve: d.Approve}
	case DecisionDigestMismatch:
		return nil, say.Reason{Kind: say.BackendSays, Message: ans.Message}
	case DecisionForbidden:
		return nil, say.Reason{Kind: say.Forbidden, Message: ans.Message, Actor: ans.Actor}
	case DecisionNotFound, DecisionCancelled:
		return &approval.Event{Type: approval.EventCancelled, Tenant: row.Tenant, Cancelled: &approval.Cancelled{
			ApprovalID: row.ID, Reason: "the job backend no longer waits for this call"}}, say.Reason{Kind: say.Gone}
	}
	return nil, say.Reason{Kind: say.UnknownAnswer}
}

func (s *Service) tellRow(row *store.Approval, d deciding, text string, now time.Time) store.OutboxInsertParams {
	// The answer shows the clicked copy as it now stands too, through the
	// click's own handle, which spends no edit budget.
	body, _ := json.Marshal(tellPayload{User: d.User, Channel: d.Channel, Reply: d.Reply, Text: text, // plain data
		Card: d.Reply != "", Revision: d.Revision})
	// To the person's user on the surface clicked (slack:U…): retention
	// finds the handle by the surface's name it starts with.
	target := d.Surface + ":" + d.User
	if c, ok := ladder.ChatSurfaceNamed(d.Surface); ok {
		target = c.User(d.User).String()
	}
	return store.OutboxInsertParams{ID: s.newID(now), Tenant: row.Tenant, ApprovalID: row.ID, Kind: KindTell,
		Target: target, Payload: body, NotBefore: now, Now: now}
}

type tellPayload struct {
	User    string `json:"user"`
	Channel string `json:"channel,omitempty"`
	Reply   string `json:"reply,omitempty"`
	Text    string `json:"text"`
	// Card: show the clicked copy (of Revision) as it now stands too.
	Card     bool `json:"card,omitempty"`
	Revision int  `json:"revision,omitempty"`
}

// Teller is a surface that can answer one person privately (Slack
// ephemeral messages, Discord follow-ups with flag 64).
type Teller interface {
	Tell(ctx context.Context, req TellRequest) error
}

// TellRequest answers one person.
type TellRequest struct {
	Tenant  string
	User    string
	Channel string
	Reply   string
	Text    string
	// Card is the clicked copy as it now stands, shown through Reply, or nil.
	Card *Card
}

// Card is one copy of a card as it stands now: what a surface shows on the
// copy a person just clicked, at once, through the click's own answer.
func (s *Service) Card(ctx context.Context, approvalID string, revision int) (Card, error) {
	return s.card(ctx, approvalID, revision)
}
