package templates

import (
	"fmt"

	"approvalsbot/approval"
	htmltemplate "html/template"
	"strings"
	"time"
)

// Email is one rendered mail: a subject, and a text and an HTML part with
// the same facts, from which package notify builds the MIME message.
type Email struct {
	Subject string
	Text    string
	HTML    string
}

// Mail kinds, as Mail.Kind takes them: each recipient's mails about one
// approval read as one conversation.
const (
	MailEscalation = ""        // a ladder step: the card, and why this person gets it
	MailReask      = "reask"   // the new revision of a call that changed
	MailOutcome    = "outcome" // how it ended
	MailNote       = "note"    // an answer to a decision made on the decision page
)

// Mail is one mail of a recipient's conversation about an approval.
type Mail struct {
	Card Card
	Kind string
	// Reply marks a follow-up in the recipient's thread ("Re: …").
	Reply bool
	// Why says in one line why this person gets an escalation.
	Why string
	// Note is a MailNote's sentence.
	Note string
	// Changed says why a reask's call changed (the event's why).
	Changed approval.Why
	// Link is this recipient's decision link; nil if they may not decide
	// on the page.
	Link *MailLink
	// ActAs names the member the links act as ("user:kevin").
	ActAs string
	// Expires is when the link stops working (the deadline).
	Expires time.Time
}

// MailLink is a member's decision link: it opens the decision page,
// which shows the call and decides only when one of its buttons is
// pressed.
type MailLink struct {
	// Approve: the page offers Approve beside Deny.
	Approve bool
	URL     string
}

// Label is the link's text.
func (l MailLink) Label() string {
	if l.Approve {
		return "Open the decision page (Approve or Deny)"
	}
	return "Open the decision page (Deny)"
}

// MailSubject is the subject of every mail about one approval, for its
// whole life, so that each recipient's mails read as one conversation.
func MailSubject(function, approvalID string) string {
	return cutLine(oneLine("Approval needed: "+function+" · "+approvalID), emailSubjectMax)
}

// MailQuestionSubject is MailSubject for an agent's question: who asks,
// never what (the text may be restricted, and it is the agent's, not
// the bot's, words).
func MailQuestionSubject(agent, questionID string) string {
	if agent == "" {
		agent = "the agent"
	}
	return cutLine(oneLine("Answer needed: "+agent+"'s question · "+questionID), emailSubjectMax)
}

// MailWhy says why a person gets a ladder step's mail.
func MailWhy(waited time.Duration, step int, ladder string) string {
	return mailWhy("decided", waited, step, ladder)
}

// MailQuestionWhy is MailWhy for an agent's question.
func MailQuestionWhy(waited time.Duration, step int, ladder string) string {
	return mailWhy("answered", waited, step, ladder)
}

func mailWhy(done string, waited time.Duration, step int, ladder string) string {
	if ladder == "" {
		ladder = "default"
	}
	wait := "Nobody has " + done + " yet"
	if waited >= time.Minute {
		wait = "Nobody has " + done + " for " + spokenDuration(waited)
	}
	if step <= 0 {
		return wait + "."
	}
	return fmt.Sprintf("%s; you are on step %d of the %s ladder.", wait, step, ladder)
}

// spokenDuration words a wait in a sentence: "1 hour 30 minutes".
func spokenDuration(d time.Duration) string {
	unit := func(n int, one string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %ss", n, one)
	}
	switch {
	case d < time.Hour:
		return unit(int(d.Minutes()), "minute")
	case d < 24*time.Hour:
		h, m := int(d.Hours()), int(d.Minutes())%60
		if m == 0 {
			return unit(h, "hour")
		}
		return unit(h, "hour") + " " + unit(m, "minute")
	default:
		days, h := int(d.Hours())/24, int(d.Hours())%24
		if h == 0 {
			return unit(days, "day")
		}
		return unit(days, "day") + " " + unit(h, "hour")
	}
}

// Email renders c as a step's mail without links, as bot preview shows it.
func (r *Renderer) Email(c Card) Email {
	return r.Mail(Mail{Card: c})
}

// Mail renders one mail of a conversation. The HTML uses inline styles
// and loads nothing. Nothing in it decides: its links open the decision
// page, which decides only on a POST from its own form, so a mail scanner
// that opens every link decides nothing.
func (r *Renderer) Mail(m Mail) Email {
	m.Card = forMail(m.Card)
	subject := MailSubject(m.Card.Function, m.Card.ApprovalID)
	if m.Card.Question != nil {
		subject = MailQuestionSubject(m.Card.Job.Agent, m.Card.ApprovalID)
	}
	if m.Reply {
		subject = "Re: " + subject
	}
	text, err := execText(r.emailText, "mail.text", &m)
	if err != nil {
		text = brokenPart
	}
	var h strings.Builder
	if err := r.emailHTML.ExecuteTemplate(&h, "mail.html", &m); err != nil {
		h.Reset()
		h.WriteString(htmltemplate.HTMLEscapeString(brokenPart))
	}
	return Email{Subject: subject, Text: squeezeBlankLines(text), HTML: h.String()}
}

// CardHTML is the card's facts as the mail's HTML shows them, without
// the page around them: what the decision page shows of the call.
func (r *Renderer) CardHTML(c Card) htmltemplate.HTML {
	c = forMail(c)
	var h strings.Builder
	if err := r.emailHTML.ExecuteTemplate(&h, "card.html", &c); err != nil {
		return htmltemplate.HTML(htmltemplate.HTMLEscapeString(brokenPart))
	}
	return htmltemplate.HTML(h.String()) // html/template escaped every value
}

// mailArgsCutNote is the cut note where no Show all arguments exists.
const mailArgsCutNote = "[cut; the console shows all arguments]"

// mailRestrictedQuestion is a restricted question's note where no Show
// question exists.
const mailRestrictedQuestion = "The question is restricted: only members with the content permission see it and answer it."

// forMail words c for a mail or the decision page, which have no chat
// buttons: a cut note points at the console instead, and a restricted
// question's note names no button.
func forMail(c Card) Card {
	if c.Arguments != nil && c.Arguments.CutNote == argsCutNote {
		args := *c.Arguments
		args.CutNote = mailArgsCutNote
		c.Arguments = &args
	}
	if c.Question != nil && c.RestrictedNote == restrictedQuestion {
		c.RestrictedNote = mailRestrictedQuestion
	}
	return c
}

// Outcome is true for a mail that says how the approval ended.
func (m *Mail) Outcome() bool { return m.Kind == MailOutcome }

// Reask is true for a mail that carries a call's new revision.
func (m *Mail) Reask() bool { return m.Kind == MailReask }

// IsNote is true for a mail that answers a decision page's decision.
func (m *Mail) IsNote() bool { return m.Kind == MailNote }

// Asks is true for a mail that asks for a decision: a step's or a
// reask's, of a call still waiting. A decision on its way still asks: a
// mail cannot be edited, and is the way to decide if that one fails.
func (m *Mail) Asks() bool {
	return (m.Kind == MailEscalation || m.Kind == MailReask) && !m.Card.Superseded &&
		(m.Card.State == "" || m.Card.State == approval.StatePending)
}

// IsQuestion is true for a mail about an agent's question.
func (m *Mail) IsQuestion() bool { return m.Card.Question != nil }

// LinkLabel is the link's text: MailLink.Label for a call; for a
// question, the page that takes the answer.
func (m *Mail) LinkLabel() string {
	switch {
	case m.Link == nil:
		return ""
	case m.IsQuestion():
		return "Open the page to answer"
	}
	return m.Link.Label()
}

// ActLine introduces the link: who it acts as.
func (m *Mail) ActLine() string {
	if m.IsQuestion() {
		return "Answer as " + m.ActAs + ":"
	}
	return "Decide as " + m.ActAs + ":"
}

// ElsewhereLine says where to answer when the mail carries no link.
func (m *Mail) ElsewhereLine() string {
	verb := "Decide"
	if m.IsQuestion() {
		verb = "Answer"
	}
	if m.Card.ThreadURL != "" {
		return verb + " in the console or in the chat thread."
	}
	return verb + " in the console."
}

// ExpiresLine says until when the link works.
func (m *Mail) ExpiresLine() string {
	if m.Expires.IsZero() {
		return ""
	}
	return "The link works until the deadline, " + m.Expires.UTC().Format(dateAndTime) + "."
}

// LinksNote says what the link does, so nobody fears opening it.
func (m *Mail) LinksNote() string {
	if m.IsQuestion() {
		return "The link opens a page that shows this question; nothing is answered until you press a button on that page."
	}
	return "The link opens a page that shows this call; nothing is decided until you press a button on that page."
}

// ReaskLine says what a reask mail is, and what it means for the links
// (the card's Reask part, when it has one, says why).
func (m *Mail) ReaskLine() string {
	if m.IsQuestion() {
		return fmt.Sprintf("The agent asked its question again: this mail is for revision %d, and the links in earlier mails no longer work.", m.Card.Revision)
	}
	if m.Card.Reask != nil {
		return fmt.Sprintf("The call changed, as the card below says: this mail is for revision %d, and the links in earlier mails no longer work.", m.Card.Revision)
	}
	why := ""
	switch m.Changed {
	case approval.WhyArgumentsChanged:
		why = " (its arguments changed)"
	case approval.WhySnapshotChanged:
		why = " (the function's snapshot changed)"
	case approval.WhyPolicyChanged:
		why = " (the policy that asks for approval changed)"
	case approval.WhyHookChanged:
		why = " (a hook changed it)"
	}
	return fmt.Sprintf("The call changed%s: this is revision %d, and the links in earlier mails no longer work.", why, m.Card.Revision)
}

// emailSubjectMax keeps a subject readable in a mail list; RFC 5322 folds
// longer ones but clients cut them anyway.
const emailSubjectMax = 200

// selfTestMail renders every kind of mail of an empty and a full card,
// with and without links, so that mail rendering cannot fail later.
func (r *Renderer) selfTestMail() error {
	full := Build(selfTestInput())
	for _, c := range []Card{{}, full} {
		for _, kind := range []string{MailEscalation, MailReask, MailOutcome, MailNote} {
			for _, l := range []*MailLink{nil, {Approve: true, URL: "https://bot.example/decide/a"}, {URL: "https://bot.example/decide/d"}} {
				m := Mail{Card: c, Kind: kind, Reply: true, Why: "why", Note: "note", Link: l, ActAs: "user:a",
					Expires: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)}
				if _, err := execText(r.emailText, "mail.text", &m); err != nil {
					return fmt.Errorf("render email mail.text: %w", err)
				}
				var b strings.Builder
				if err := r.emailHTML.ExecuteTemplate(&b, "mail.html", &m); err != nil {
					return fmt.Errorf("render email mail.html: %w", err)
				}
			}
		}
	}
	return nil
}
