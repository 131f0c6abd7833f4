package threads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"approvalsbot/approval"
	"approvalsbot/ladder"
	"approvalsbot/store"
	"approvalsbot/templates"
	"approvalsbot/tenant"
)

// Mail kinds. Every recipient's mails about one approval form one thread
// of their own.
const (
	// MailEscalation is a ladder step's mail: the card, and why they get it.
	MailEscalation = ""
	// MailReask is a changed call's new revision, to all mailed the old one.
	MailReask = "reask"
	// MailOutcome is how the approval ended, to everyone who was mailed.
	MailOutcome = "outcome"
	// MailRecheck is the outcome of a re-check that refused an approved
	// call, which everyone mailed may have been told of: sent as MailOutcome.
	MailRecheck = "recheck"
	// MailNote tells a member who decided on the decision page that the
	// decision did not land.
	MailNote = "note"
)

// MailRequest is one email of a recipient's conversation about one
// approval.
type MailRequest struct {
	To   string
	Kind string // MailEscalation, MailReask, MailOutcome or MailNote
	Card Card
	// Step is the ladder step that sends an escalation (1-based); Waited is
	// how long the call had waited then.
	Step   int
	Waited time.Duration
	// Note is a MailNote's sentence.
	Note string
	// Thread is what this recipient received before (zero for none).
	Thread MailThread
	// Member is the tenant user the address belongs to; "" for a list,
	// which gets no links.
	Member string
	// Link is Member's decision link (MemberLink); nil for none.
	Link *MailLink
	// Key names this mail (its outbox row): a repeat after a crash carries
	// the same Message-ID.
	Key string
}

// MailThread is a recipient's own mail thread about one approval.
type MailThread struct {
	Root string // the Message-ID of their first mail
	Last string // the Message-ID of their latest mail
}

// MailLink is a member's decision link to one revision: it opens the
// one page where they see the call and give any answer the tenant and
// the call allow.
type MailLink struct {
	// Approve: the page offered Approve beside Deny when the link was
	// made, so the mail says both; the page judges again when opened.
	Approve bool
	URL     string
}

// DecisionLinks makes decision links; the decidepage package implements it.
type DecisionLinks interface {
	Link(req LinkRequest) MailLink
}

// LinkRequest asks for one member's link to one revision.
type LinkRequest struct {
	Tenant     string
	ApprovalID string
	Revision   int
	Member     string
	Approve    bool // the page offers Approve as things stand (MailLink.Approve)
	// Chat: a link given in chat, privately, rather than mailed; its
	// page's decisions are on tenant.SurfacePage.
	Chat    bool
	Expires time.Time
}

// mailTargetPrefix marks the posts that record a recipient's mails: one
// per recipient and revision, Ref its latest Message-ID, ThreadRef the first.
const mailTargetPrefix = "mail:"

func mailTarget(addr string) string { return mailTargetPrefix + tenant.AddressKey(addr) }

// isMailPost reports whether p records mail rather than a card (edits and
// replies pass it by).
func isMailPost(p *store.Post) bool {
	return p.Target == emailThread || strings.HasPrefix(p.Target, mailTargetPrefix) ||
		strings.HasPrefix(p.Target, mailEndPrefix) || strings.HasPrefix(p.Target, mailRefusedPrefix)
}

// mailThreadOf finds what addr received of the approval.
func mailThreadOf(posts []*store.Post, addr string) MailThread {
	target, end := mailTarget(addr), mailEndTarget(addr)
	var t MailThread
	for _, p := range posts {
		if p.Target == end && t.Root != "" {
			// The outcome mail, which only a re-check's refusal follows.
			t.Last = p.Ref
			continue
		}
		if p.Target != target {
			continue
		}
		if t.Root == "" {
			t.Root = p.ThreadRef
			if t.Root == "" {
				t.Root = p.Ref
			}
		}
		t.Last = p.Ref // posts come by revision: the last is the latest
	}
	return t
}

// mailRecipients lists the addresses mailed, first mailed first.
func mailRecipients(posts []*store.Post) []string {
	var out []string
	for _, p := range posts {
		if addr, ok := strings.CutPrefix(p.Target, mailTargetPrefix); ok && !slices.Contains(out, addr) {
			out = append(out, addr)
		}
	}
	return out
}

// mailRows is one mail of kind to each address mailed (a reask's is moot
// once the approval closes).
func (s *Service) mailRows(posts []*store.Post, row *store.Approval, kind string, now time.Time) []store.OutboxInsertParams {
	var rows []store.OutboxInsertParams
	for _, addr := range mailRecipients(posts) {
		body, _ := json.Marshal(rowPayload{Revision: row.Revision, Mail: kind}) // plain data
		id := s.newID(now)
		key, at := "", now
		switch kind {
		case MailReask:
			key = mootRow(row.ID, id)
		case MailOutcome, MailRecheck:
			key = outcomeRow(row.ID, addr)
		}
		if kind == MailRecheck {
			at = now.Add(recheckMailDelay)
		}
		rows = append(rows, store.OutboxInsertParams{ID: id, Tenant: row.Tenant, ApprovalID: row.ID,
			Kind: KindEmail, Target: addr, CoalesceKey: key, Payload: body, NotBefore: at, Now: now})
	}
	return rows
}

// outcomeRow is the coalesce key of a recipient's outcome mails, so a
// re-check's refusal joins an outcome still waiting. One already in flight
// is followed recheckMailDelay later: whichever goes second finds the
// first's record and mails nothing more (sendMail).
func outcomeRow(approvalID, addr string) string {
	return "mail-outcome:" + approvalID + ":" + tenant.AddressKey(addr)
}

// recheckMailDelay: see outcomeRow.
const recheckMailDelay = time.Minute

// closingMail is the outcome mail to everyone mailed about an approval
// that closed in this transaction, one each; a re-check that refused it
// after its approval closes it again (MailRecheck).
func (s *Service) closingMail(ctx context.Context, tx store.Tx, before approval.State, row *store.Approval, now time.Time) ([]store.OutboxInsertParams, error) {
	kind := MailOutcome
	switch {
	case !before.Final() && approval.State(row.State).Final():
	case before == approval.StateApproved && row.State == string(approval.StateRefused):
		kind = MailRecheck
	default:
		return nil, nil
	}
	posts, err := tx.PostList(ctx, row.ID)
	if err != nil {
		return nil, fmt.Errorf("list posts of %s: %w", row.ID, err)
	}
	return s.mailRows(posts, row, kind, now), nil
}

// mailEndPrefix marks the post of a recipient's outcome mail, so they are
// told once; mailRefusedPrefix one that said the re-check refused the call.
const (
	mailEndPrefix     = "mail-end:"
	mailRefusedPrefix = "mail-refused:"
)

func mailEndTarget(addr string) string     { return mailEndPrefix + tenant.AddressKey(addr) }
func mailRefusedTarget(addr string) string { return mailRefusedPrefix + tenant.AddressKey(addr) }

// mailedAfterClose enqueues the outcome mail for the recipient of a mail
// recorded after its approval closed, which the close did not list; the
// outcome row sees whether they were told already.
func (s *Service) mailedAfterClose(ctx context.Context, row *store.OutboxRow, log *slog.Logger) {
	var p rowPayload
	if json.Unmarshal(row.Payload, &p) != nil || (p.Mail != MailEscalation && p.Mail != MailReask) {
		return
	}
	a, err := s.store.ApprovalGet(ctx, row.ApprovalID)
	if err != nil {
		log.Warn("read the approval after its mail", "err", err)
		return
	}
	if !approval.State(a.State).Final() {
		return
	}
	now := s.clock.Now()
	body, _ := json.Marshal(rowPayload{Revision: a.Revision, Mail: MailOutcome}) // plain data
	end := store.OutboxInsertParams{ID: s.newID(now), Tenant: a.Tenant, ApprovalID: a.ID, Kind: KindEmail,
		Target: row.Target, CoalesceKey: outcomeRow(a.ID, row.Target), Payload: body, NotBefore: now, Now: now}
	if err := s.store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		return s.insert(ctx, tx, []store.OutboxInsertParams{end})
	}); err != nil {
		log.Error("enqueue the outcome mail of a mail sent as its approval closed", "err", err)
		return
	}
	s.Wake()
}

// noteRow is a MailNote in the member's thread.
func (s *Service) noteRow(row *store.Approval, d deciding, text string, now time.Time) store.OutboxInsertParams {
	body, _ := json.Marshal(rowPayload{Revision: d.Revision, Mail: MailNote, Text: text}) // plain data
	return store.OutboxInsertParams{ID: s.newID(now), Tenant: row.Tenant, ApprovalID: row.ID, Kind: KindEmail,
		Target: d.User, Payload: body, NotBefore: now, Now: now}
}

// mailLink is the member an address belongs to and their link: none for
// no member, or a mail that asks nothing (an outcome, a note).
func (s *Service) mailLink(tenant *tenant.Tenant, card Card, kind, addr string) (string, *MailLink) {
	if tenant == nil {
		return "", nil
	}
	m, ok := tenant.MemberOn(ladder.SurfaceEmail, addr)
	if !ok {
		return "", nil
	}
	if kind != MailEscalation && kind != MailReask {
		return m.User, nil
	}
	return m.User, MemberLink(s.links, tenant, m, card)
}

// MemberLink is the decision link m gets for the card, expiring at the
// deadline: none without a decision page, for a closed or superseded card,
// or for a member or tenant that may not decide it on the page. One link
// per member and revision opens the page that offers every answer the
// tenant and the call allow: Deny where the tenant takes decisions on the
// page, Approve too where it takes approvals and the call allows this
// member's. A decision in flight keeps it: mail cannot be edited, and the
// page is the way on should it fail. A question's link answers it: only
// where the tenant takes approvals on the page (an answer is the approve
// page_decisions speaks of), and for a restricted question only to a
// content holder.
func MemberLink(links DecisionLinks, tenant *tenant.Tenant, m tenant.Member, card Card) *MailLink {
	a := card.Approval
	if links == nil || a == nil || tenant == nil || card.State != approval.StatePending || card.Superseded ||
		!tenant.MailDecides(false) || !m.Role.CanDecide() ||
		m.Email == "" || !refuse(tenant, m, a, false).IsZero() {
		return nil
	}
	if a.IsQuestion() && (!tenant.MailDecides(true) || a.ContentRestricted() && !m.Content) {
		return nil
	}
	approve := !a.IsQuestion() && tenant.MailDecides(true) && refuse(tenant, m, a, true).IsZero()
	expires := card.Frozen.Plan.Deadline
	if expires.IsZero() && a.Deadline != nil {
		expires = *a.Deadline
	}
	if expires.IsZero() {
		return nil // no deadline known: a link would never expire
	}
	l := links.Link(LinkRequest{Tenant: card.Tenant, ApprovalID: a.ID, Revision: a.Revision,
		Member: m.User, Approve: approve, Expires: expires})
	return &l
}

// Render is the mail r asks for in the templates' terms.
func (r MailRequest) Render() templates.Mail {
	in := r.Card.MailInput()
	m := templates.Mail{Card: templates.Build(in), Kind: r.Kind, Reply: r.Thread.Root != "",
		Note: r.Note, ActAs: r.Member}
	if r.Kind == MailReask && r.Card.Approval != nil {
		m.Changed = r.Card.Approval.Why
	}
	if r.Kind == MailEscalation && r.Step > 0 {
		m.Why = templates.MailWhy(r.Waited, r.Step, r.Card.Frozen.Plan.Ladder)
		if r.Card.Approval != nil && r.Card.Approval.IsQuestion() {
			m.Why = templates.MailQuestionWhy(r.Waited, r.Step, r.Card.Frozen.Plan.Ladder)
		}
	}
	if r.Link != nil {
		m.Link = &templates.MailLink{Approve: r.Link.Approve, URL: r.Link.URL}
		m.Expires = r.Card.Frozen.Plan.Deadline
	}
	return m
}

// sendMail performs an email row, answering what the recipient received
// before, and returns the post that records it.
func (s *Service) sendMail(ctx context.Context, row *store.OutboxRow, p rowPayload) (*store.Post, error) {
	mailer := s.mailer
	if mailer == nil {
		// Without SMTP, the fallback shows the mail if it can (bot check says so).
		m, ok := s.fallback.(Mailer)
		if !ok {
			return nil, Permanent(errNoSMTP)
		}
		mailer = m
	}
	posts, err := s.store.PostList(ctx, row.ApprovalID)
	if err != nil {
		return nil, fmt.Errorf("list posts: %w", err)
	}
	revision := p.Revision
	outcome := p.Mail == MailOutcome || p.Mail == MailRecheck
	if outcome || p.Mail == MailEscalation {
		// An outcome shows the approval on its last card held (a resolve may
		// name a revision never received); a step's mail shows the call as it
		// stands, a reask since included.
		a, err := s.store.ApprovalGet(ctx, row.ApprovalID)
		if err != nil {
			return nil, fmt.Errorf("read approval: %w", err)
		}
		if outcome && toldOfEnd(posts, row.Target, a) {
			return nil, nil
		}
		if revision, err = s.heldRevision(ctx, row.ApprovalID, max(revision, a.Revision), posts, row.Target); err != nil {
			return nil, err
		}
	}
	card, err := s.card(ctx, row.ApprovalID, revision)
	if err != nil {
		return nil, err
	}
	card.ThreadURL = s.threadLink(ctx, posts)
	tenant, _ := s.tenants.Tenant(row.Tenant)
	kind := p.Mail
	if outcome {
		kind = MailOutcome
	}
	req := MailRequest{To: row.Target, Kind: kind, Card: card, Step: p.Step, Waited: p.Waited, Note: p.Text,
		Thread: mailThreadOf(posts, row.Target), Key: row.ID}
	req.Member, req.Link = s.mailLink(tenant, card, kind, row.Target)
	id, err := mailer.Mail(ctx, req)
	if err != nil {
		return nil, err
	}
	target := mailTarget(row.Target)
	switch {
	case outcome && card.State == approval.StateRefused:
		target = mailRefusedTarget(row.Target)
	case outcome:
		target = mailEndTarget(row.Target)
	}
	post := &store.Post{ApprovalID: row.ApprovalID, Target: target, Revision: revision,
		Channel: "email", Ref: id, CreatedAt: s.clock.Now()}
	if req.Thread.Root != "" {
		post.ThreadRef = req.Thread.Root
	}
	return post, nil
}

// toldOfEnd reports whether addr was told all of how a's approval ended:
// the re-check's refusal, or the end unless the re-check refused it since.
func toldOfEnd(posts []*store.Post, addr string, a *store.Approval) bool {
	told := func(target string) bool {
		return slices.ContainsFunc(posts, func(x *store.Post) bool { return x.Target == target })
	}
	return told(mailRefusedTarget(addr)) || told(mailEndTarget(addr)) && a.State != string(approval.StateRefused)
}

// heldRevision is want when the store holds it, else the highest the
// recipient was mailed (which it holds).
func (s *Service) heldRevision(ctx context.Context, approvalID string, want int, posts []*store.Post, addr string) (int, error) {
	_, err := s.store.RevisionGet(ctx, approvalID, want)
	if err == nil {
		return want, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return 0, fmt.Errorf("read revision %d: %w", want, err)
	}
	mailed := 0
	for _, p := range posts {
		if p.Target == mailTarget(addr) {
			mailed = max(mailed, p.Revision)
		}
	}
	if mailed == 0 {
		return 0, Permanent(fmt.Errorf("revision %d of %s is not held, and %s was mailed none", want, approvalID, addr))
	}
	return mailed, nil
}

// MailPlan is the ladder as a mail shows it: email recipients counted, so
// no recipient reads the others' addresses.
func MailPlan(p templates.LadderPlan, plan ladder.Plan) templates.LadderPlan {
	out := p
	out.Steps = slices.Clone(p.Steps)
	for i := range out.Steps {
		if i >= len(plan.Steps) {
			break
		}
		if len(plan.Steps[i].Step.Email) > 0 {
			out.Steps[i].Who = plan.Say(plan.Steps[i], true)
		}
	}
	return out
}

// CardPlan is a frozen plan in the card's words, for bot preview.
func CardPlan(p ladder.Plan) templates.LadderPlan { return plan(p) }
