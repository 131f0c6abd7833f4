// Package logsurface is the surface of a bot with no chat configured: it
// writes each card, edit, thread reply and notice as plain text to a
// stream (stdout in `bot serve`), so a newcomer sees cards without tokens.
// It is a shared place: a content-restricted card shows no details here.
package logsurface

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"

	"approvalsbot/templates"
	"approvalsbot/tenant"
	"approvalsbot/threads"
)

// Options configure the log surface.
type Options struct {
	Out      io.Writer
	Renderer *templates.Renderer
	// Links makes each pending card name the decision links of the members
	// who may decide by mail (from Tenants), and keeps mail's, so the loop
	// runs on one machine. A link decides as its member: give Links only
	// where nobody else reads the output. Nil names none.
	Links   threads.DecisionLinks
	Tenants func() map[string]*tenant.Tenant
}

// Surface writes cards as text.
type Surface struct {
	mu      sync.Mutex
	out     io.Writer
	r       *templates.Renderer
	links   threads.DecisionLinks
	tenants func() map[string]*tenant.Tenant
	seq     atomic.Uint64
}

var (
	_ threads.Surface = (*Surface)(nil)
	_ threads.Mailer  = (*Surface)(nil)
)

// New builds the log surface.
func New(o Options) *Surface {
	return &Surface{out: o.Out, r: o.Renderer, links: o.Links, tenants: o.Tenants}
}

// maxLinkMembers bounds the members whose links a card names.
const maxLinkMembers = 3

// decideLines names the decision links of the members who may decide
// the card on the decision page:
// "decide as user:kevin (approve or deny): https://…/decide/…".
func (s *Surface) decideLines(c threads.Card) string {
	if s.links == nil || s.tenants == nil {
		return ""
	}
	t := s.tenants()[c.Tenant]
	if t == nil {
		return ""
	}
	var b strings.Builder
	n := 0
	for _, m := range t.Members {
		l := threads.MemberLink(s.links, t, m, c)
		if l == nil {
			continue
		}
		if n++; n > maxLinkMembers {
			break
		}
		if c.Approval.IsQuestion() {
			fmt.Fprintf(&b, "\nanswer as %s: %s", m.User, l.URL)
			continue
		}
		answers := "deny"
		if l.Approve {
			answers = "approve or deny"
		}
		fmt.Fprintf(&b, "\ndecide as %s (%s): %s", m.User, answers, l.URL)
	}
	return b.String()
}

// rule separates entries so a terminal reader sees where a card starts.
const rule = "────────────────────────────────────────────────────────────"

func (s *Surface) write(header, body string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := fmt.Fprintf(s.out, "%s\n%s\n%s\n", rule, header, strings.TrimRight(body, "\n"))
	return err
}

// Post writes a new card.
func (s *Surface) Post(_ context.Context, req threads.PostRequest) (threads.PostResult, error) {
	ref := fmt.Sprintf("log-%d", s.seq.Add(1))
	header := fmt.Sprintf("card %s for %s (%s %s, revision %d)", ref, req.Target, noun(req.Card), req.Card.Approval.ID, req.Card.Approval.Revision)
	if req.Thread != nil {
		header += " in the thread of " + req.Thread.Ref
	}
	if err := s.write(header, s.text(req.Card)+s.decideLines(req.Card)); err != nil {
		return threads.PostResult{}, err
	}
	return threads.PostResult{Channel: req.Target, Ref: ref}, nil
}

// Edit writes the card again as it now stands.
func (s *Surface) Edit(_ context.Context, req threads.EditRequest) error {
	header := fmt.Sprintf("card %s for %s edited (%s %s)", req.Post.Ref, req.Post.Target, noun(req.Card), req.Post.ApprovalID)
	return s.write(header, s.text(req.Card)+s.decideLines(req.Card))
}

// text is a copy as the log shows it: the turn card for a call of a turn
// shown on one card, else the call's own card.
func (s *Surface) text(c threads.Card) string {
	if c.Turn != nil && len(c.Turn.Rows) > 0 {
		return s.r.TurnText(templates.BuildTurn(*c.Turn))
	}
	return s.r.Text(templates.Build(c.Input()))
}

// noun names what the card is of: an approval, or an agent's question.
func noun(c threads.Card) string {
	if c.Approval != nil && c.Approval.IsQuestion() {
		return "question"
	}
	return "approval"
}

// Reply writes a thread reply.
func (s *Surface) Reply(_ context.Context, req threads.ReplyRequest) error {
	header := fmt.Sprintf("reply in the thread of %s for %s (approval %s)", req.Root.Ref, req.Root.Target, req.Root.ApprovalID)
	return s.write(header, s.r.TextThread(req.Message()))
}

// Notice writes a one-line notice.
func (s *Surface) Notice(_ context.Context, req threads.NoticeRequest) error {
	// A notice quotes an event's words: shown as every surface shows
	// them, each hidden character in its visible form.
	return s.write(fmt.Sprintf("notice for %s (tenant %s)", req.Target, req.Tenant), templates.Visible(req.Text))
}

// Mail writes an email that a bot without SMTP would send, as its text
// part shows it (decision links included).
func (s *Surface) Mail(_ context.Context, req threads.MailRequest) (string, error) {
	id := fmt.Sprintf("log-mail-%d@bot.invalid", s.seq.Add(1))
	m := req.Render()
	if s.links == nil {
		m.Link = nil // working links belong in the mail, not in a log others read
	}
	e := s.r.Mail(m)
	kind := req.Kind
	if kind == threads.MailEscalation {
		kind = fmt.Sprintf("step %d", req.Step)
	}
	header := fmt.Sprintf("email to %s (%s, %s %s): %s", req.To, kind, noun(req.Card), req.Card.Approval.ID, e.Subject)
	return id, s.write(header, e.Text)
}
