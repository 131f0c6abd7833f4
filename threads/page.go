package threads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"approvalsbot/approval"
	"approvalsbot/say"
	"approvalsbot/store"
	"approvalsbot/templates"
	"approvalsbot/tenant"
)

// PageLink is what a decision link names beside its Action's approval,
// revision and decision. The page checked its signature and expiry; the
// rest is judged here against the approval as it stands.
type PageLink struct {
	Tenant  string    // the tenant the link was signed for
	Member  string    // the member's user id
	Expires time.Time // the link's own expiry
	Expired bool      // the page found the link past Expires
	// Sending: the page sends the link's decision or I'm looking on when
	// the link decides; no card is built then.
	Sending bool
	// Chat: the link was given in chat (a member without an e-mail
	// address may open it).
	Chat bool
}

// Page is what the decision page may show of a link, to its member.
type Page struct {
	// User and Email name the member as configured now; the page's
	// clicks are theirs, on SurfaceEmail.
	User, Email string
	// Content: the member holds the content permission.
	Content bool
	// Title is the call's function, as the backend gave it.
	Title string
	// Lead is what the page says on top: how the call stands, or why it
	// offers no decision.
	Lead say.Reason
	// Card is the card as the mail shows it, to this member; nil where
	// the page shows none (closed, changed, expired) or Sending.
	Card *templates.Card
	// Decides: the call waits on the link's revision, the link has not
	// expired, no decision is on its way, and the tenant takes the
	// answer sent (ClickRequest.Action) on the page. Only then does the
	// page send a POST on.
	Decides bool
	// Form: the page offers its answers and I'm looking, which holds
	// the ladder for Pause; not to a member who may not decide a private
	// chat's call, nor to the job's own starter where the tenant forbids
	// it.
	Form  bool
	Pause time.Duration
	// Approve: the page offers Approve beside Deny. ApproveWhy says why
	// it does not (the tenant takes only denials on the page, the call
	// needs what a click cannot give, or the quorum would not count it).
	Approve    bool
	ApproveWhy say.Reason
	// DenyFirst: Deny comes first and takes the focus
	// (approval.DenyFirst); Destructive: Approve asks again, as chat does.
	DenyFirst, Destructive bool
	// Effect is the call's effect line, for the question Approve asks
	// again.
	Effect string
	// ShowFirst: a content holder's Approve of a restricted call, which
	// the page shows them first; its Approve carries the digest shown.
	ShowFirst bool
	// Passkey: the tenant's rule wants the member's passkey for this
	// Approve (tenant.PasskeyRequired); Digest is what the passkey's
	// challenge binds beside the approval, revision and member: the
	// call's digest for a content holder, "" for anyone else (a page
	// never carries the digest to someone who may not see it).
	Passkey bool
	Digest  string
	// Typed names the argument the member must type to approve (the
	// call needs a typed confirmation, the backend takes one, and the
	// member holds the content permission); "" for none. Such an Approve
	// is shown the call first (ShowFirst).
	Typed string
	// Grant is "Approve and allow…"'s offer beside a plain Approve; nil
	// where none is offered (the page asks no second question of a grant:
	// a destructive call's, a passkey's or a typed one's is never offered
	// here).
	Grant *GrantOffer
	// Question is an agent's question's page (approval.KindQuestion);
	// nil for a call, whose Approve, Deny and the rest above it offers
	// instead.
	Question *PageQuestion
}

// PageQuestion is what the decision page shows and takes of a question
// waiting on the link's revision.
type PageQuestion struct {
	// Text is the question as the agent asked it (redacted), whole: the
	// page has room for all of what the member answers; "" where the
	// page may not show it (a restricted question).
	Text string
	// Choices are the question's choices, in its order (redacted), each
	// answered by a POST of ActionAnswer with its index; none where Text
	// is not shown.
	Choices []string
	// FreeText: the question takes an answer in words (ActionAnswerText,
	// the words in ClickRequest.Comment, at most approval.MaxAnswerText).
	FreeText bool
	// Answers: the tenant's page setting lets the page take answers
	// (page_decisions: approve); where it does not, the page shows the
	// question and says to answer in the chat or the console.
	Answers bool
	// Restricted: the bot keeps none of the question's words; a content
	// holder's page shows it once looked up at the backend as them
	// (ClickShow of templates.ActionShowDetails, as Show question), and
	// the backend checks the answer's choice.
	Restricted bool
}

// clickView reads the link's tenant and member as configured now, the
// approval, and the revision whose card the page shows, once each.
func (s *Service) clickView(ctx context.Context, req ClickRequest) Clicked {
	l, act := req.Link, req.Action
	t, ok := s.tenants.Tenant(l.Tenant)
	if !ok || t == nil {
		return Clicked{Reason: say.Reason{Kind: say.LinkNotServed}}
	}
	m, ok := t.MemberByUser(l.Member)
	if !ok || !m.Role.CanDecide() || (m.Email == "" && !l.Chat) {
		return Clicked{Reason: say.Reason{Kind: say.LinkNotMember, User: l.Member, Tenant: l.Tenant}}
	}
	row, err := s.store.ApprovalGet(ctx, act.ApprovalID)
	switch {
	case errors.Is(err, store.ErrNotFound), err == nil && (row.Tenant != l.Tenant || row.Pruned()):
		return Clicked{Reason: say.Reason{Kind: say.LinkUnknown}}
	case err != nil:
		s.log.Error("decision page: read the approval", "approval_id", act.ApprovalID, "err", err.Error())
		return Clicked{Retry: true, Reason: say.Reason{Kind: say.PageStoreDown}}
	}
	p := &Page{User: m.User, Email: m.Email, Content: m.Content, Title: row.Function}
	question := isQuestionRow(row)
	if question {
		// A closed, changed or expired question's page shows neither the
		// question nor a form; livePage fills it in while it waits.
		p.Title, p.Question = "An agent asks", &PageQuestion{}
	}
	expired, expiredAt := l.Expired, l.Expires
	if !row.DeadlineAt.IsZero() && row.DeadlineAt.Before(l.Expires) && !s.clock.Now().Before(row.DeadlineAt) {
		// The approval's own deadline came first, even before its tick
		// closes the approval.
		expired, expiredAt = true, row.DeadlineAt
	}
	switch {
	case approval.State(row.State).Final():
		// How it ended is on the last revision's card, whichever
		// revision the link was for.
		_, card, err := s.pageCard(ctx, row, row.Revision, m)
		if err != nil && row.Revision != act.Revision {
			_, card, err = s.pageCard(ctx, row, act.Revision, m)
		}
		if err != nil {
			return s.cardUnread(row, err)
		}
		how := card.Status
		if card.Quorum != "" {
			// A call that needed several approvals ends saying how many
			// it had, as its card does.
			how = strings.TrimRight(how, ". ") + "; " + card.Quorum
		}
		p.Lead = say.Reason{Kind: say.LinkClosed, Message: how}
		if q := card.Question; q != nil {
			// An answer shows as on the card: redacted, and not at all
			// for a restricted question.
			p.Title, p.Lead.Kind = card.QuestionTitle(), say.QuestionClosed
			if q.Answer != "" {
				p.Lead.Message = strings.TrimRight(how, ". ") + ": " + templates.VisibleLine(q.Answer)
			}
		}
	case act.Revision < row.Revision && question:
		p.Lead = say.Reason{Kind: say.QuestionChanged, Count: row.Revision}
	case act.Revision < row.Revision:
		p.Lead = say.Reason{Kind: say.LinkChanged, Count: row.Revision}
	case expired:
		p.Lead = say.Reason{Kind: say.LinkExpired, At: expiredAt.UTC().Format(time.DateTime)}
	default:
		return s.livePage(ctx, req, row, t, m, p)
	}
	return Clicked{Tenant: row.Tenant, Page: p}
}

// livePage is the page of a link whose call waits on its revision: one
// page for every answer the tenant and the call allow this member.
func (s *Service) livePage(ctx context.Context, req ClickRequest, row *store.Approval, t *tenant.Tenant,
	m tenant.Member, p *Page) Clicked {
	approve := req.approves() // the answer a POST sends; a GET sends none
	var page say.Reason
	question := isQuestionRow(row)
	switch {
	case !t.MailDecides(false):
		page = say.Reason{Kind: say.MailOff, Tenant: t.ID}
	case question && !t.MailDecides(true):
		// An answer is the approve the setting speaks of: a tenant that
		// takes only denials on the page takes no answers there.
		page = say.Reason{Kind: say.PageNoAnswers, Tenant: t.ID}
	case req.Link.Sending && approve && !t.MailDecides(true):
		page = say.Reason{Kind: say.MailDenyOnly, Tenant: t.ID}
	}
	p.Decides = len(row.Deciding) == 0 && page.IsZero()
	if p.Decides && req.Link.Sending && !question && !(approve && s.pageChecks(t)) {
		// An Approve where the page may have to check a passkey or a
		// typed confirmation reads the call below to know; any other
		// answer goes on without that work.
		return Clicked{Tenant: row.Tenant, Page: p}
	}
	c, card, err := s.pageCard(ctx, row, req.Action.Revision, m)
	if err != nil {
		return s.cardUnread(row, err)
	}
	a := c.Approval
	p.Card, p.Title = card, a.Call.Function
	if a.IsQuestion() {
		p.Title = card.QuestionTitle()
		p.Question = pageQuestion(a, t)
	}
	switch {
	case len(row.Deciding) > 0:
		p.Lead = say.Reason{Kind: say.PageInFlight, Message: card.Status}
		return Clicked{Tenant: row.Tenant, Page: p}
	case !page.IsZero():
		p.Lead = page
		return Clicked{Tenant: row.Tenant, Page: p}
	}
	if a.IsQuestion() {
		return s.questionPage(row, t, m, p, c)
	}
	if why := refuse(t, m, a, false); !why.IsZero() {
		// A private chat's call to a member without the content
		// permission, or the job's own starter where the tenant forbids
		// it: no answer at all.
		if why.Kind == say.PrivateChat {
			why = say.Reason{Kind: say.FormPrivateChat, Tenant: req.Link.Tenant, User: m.User}
		}
		p.Lead = why
		return Clicked{Tenant: row.Tenant, Page: p}
	}
	p.Form, p.Pause = true, c.Frozen.Plan.Pause()
	p.DenyFirst, p.Destructive, p.Effect = a.DenyFirst(), a.Destructive(), card.Effect
	switch {
	case !t.MailDecides(true):
		p.ApproveWhy = say.Reason{Kind: say.MailDenyOnly, Tenant: t.ID}
	default:
		p.ApproveWhy = refuse(t, m, a, true)
		switch p.ApproveWhy.Kind {
		case say.TypedConfirm:
			switch {
			case !s.typedConfirm || a.Kind == approval.KindProtectedPaths:
				p.ApproveWhy.Kind = say.PageTyped
			case !m.Content:
				// Typing the value needs the value.
				p.ApproveWhy = say.Reason{Kind: say.PageTypedNoContent, Argument: a.Confirm.Argument, Tenant: t.ID, User: m.User}
			default:
				p.ApproveWhy, p.Typed = say.Reason{}, a.Confirm.Argument
			}
		case say.ProtectedPaths:
			p.ApproveWhy.Kind = say.PageProtected
		}
		if p.ApproveWhy.IsZero() {
			// An Approve the call's quorum would not count is not offered.
			p.ApproveWhy = c.counts(m.User)
		}
	}
	p.Approve = p.ApproveWhy.IsZero()
	// A content holder never approves blind; a typed confirmation is
	// typed beside the call's full arguments.
	p.ShowFirst = p.Approve && m.Content && (a.ContentRestricted() || p.Typed != "")
	p.Passkey = p.Approve && tenant.PasskeyRequired(t.Passkeys, PasskeyFacts(a))
	if m.Content {
		p.Digest = a.Call.ArgsSHA256
	}
	if p.Approve && !p.ShowFirst && !p.Passkey && !p.Destructive && p.Typed == "" {
		if why := s.grantBar(t, a, &c.Frozen); why.IsZero() {
			o := grantOffer(t, a)
			p.Grant = &o
		}
	}
	p.Lead = say.Reason{Kind: say.PageWaiting}
	return Clicked{Tenant: row.Tenant, Page: p}
}

// pageQuestion is what the page shows of a's question: its text and
// choices where they are not restricted (the bot keeps no restricted
// question's words).
func pageQuestion(a *approval.Approval, t *tenant.Tenant) *PageQuestion {
	q := &PageQuestion{Answers: t.MailDecides(true), Restricted: a.ContentRestricted()}
	if a.Question == nil || q.Restricted {
		return q
	}
	q.FreeText = a.Question.FreeText
	q.Text = templates.QuestionWhole(a.Question.Text)
	for _, c := range a.Question.Choices {
		q.Choices = append(q.Choices, templates.ChoiceLabel(c))
	}
	return q
}

// questionPage is the page of a question that waits on the link's
// revision: its choices and words to answer with, and I'm looking, to a
// member who may answer it.
func (s *Service) questionPage(row *store.Approval, t *tenant.Tenant, m tenant.Member, p *Page, c Card) Clicked {
	a := c.Approval
	if why := refuse(t, m, a, false); !why.IsZero() {
		if why.Kind == say.PrivateChat {
			why = say.Reason{Kind: say.FormQuestionPrivate, Tenant: t.ID, User: m.User}
		}
		p.Lead, p.Question.Text, p.Question.Choices = why, "", nil
		return Clicked{Tenant: row.Tenant, Page: p}
	}
	if a.ContentRestricted() && !m.Content {
		// Only content holders answer a restricted question.
		p.Lead = say.Reason{Kind: say.FormQuestionPrivate, Tenant: t.ID, User: m.User}
		return Clicked{Tenant: row.Tenant, Page: p}
	}
	p.Form, p.Pause = true, c.Frozen.Plan.Pause()
	p.Lead = say.Reason{Kind: say.PageQuestionWaiting}
	return Clicked{Tenant: row.Tenant, Page: p}
}

// pageChecks reports whether the page may have to check something of an
// Approve before it is sent: the tenant's passkey rule, or a typed
// confirmation the backend takes.
func (s *Service) pageChecks(t *tenant.Tenant) bool {
	return s.typedConfirm || (t.Passkeys != "" && t.Passkeys != tenant.PasskeysOff)
}

// pageCard is the card of revision as the mail shows it, the approval
// standing as row says, built for member m: the digest shows only to a
// content holder.
func (s *Service) pageCard(ctx context.Context, row *store.Approval, revision int, m tenant.Member) (Card, *templates.Card, error) {
	rev, err := s.store.RevisionGet(ctx, row.ID, revision)
	if err != nil {
		return Card{}, nil, fmt.Errorf("read revision %d: %w", revision, err)
	}
	var a approval.Approval
	if err := json.Unmarshal(rev.Body, &a); err != nil {
		return Card{}, nil, fmt.Errorf("decode revision %d: %w", revision, err)
	}
	c, err := s.cardOf(row, &a, s.clock.Now())
	if err != nil {
		return Card{}, nil, err
	}
	in := c.MailInput()
	in.ContentHolder = m.Content
	built := templates.Build(in)
	return c, &built, nil
}

func (s *Service) cardUnread(row *store.Approval, err error) Clicked {
	s.log.Error("decision page: read the card", "approval_id", row.ID, "err", err.Error())
	return Clicked{Tenant: row.Tenant, Retry: true, Reason: say.Reason{Kind: say.PageStoreDown}}
}
