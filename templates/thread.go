package templates

import (
	"cmp"
	"fmt"
	"time"

	"approvalsbot/approval"
)

// ThreadKind is what a thread reply reports.
type ThreadKind string

// Thread replies.
const (
	// ThreadBackendMessage is the backend's sentence after a decision.
	ThreadBackendMessage ThreadKind = "backend_message"
	// ThreadRecheckRefused is a yes the backend's re-check turned into a no.
	ThreadRecheckRefused ThreadKind = "recheck_refused"
	// ThreadOutcome is what an approved call did (call.finished).
	ThreadOutcome ThreadKind = "outcome"
	// ThreadCancelled says the approval is no longer wanted, and why.
	ThreadCancelled ThreadKind = "cancelled"
	// ThreadAutoGranted is the audit notice of a call that ran unattended.
	ThreadAutoGranted ThreadKind = "auto_granted"
	// ThreadEscalation mentions whom a ladder step tells: "@kevin: waiting 15m".
	ThreadEscalation ThreadKind = "escalation"
)

// ThreadMessage is a reply the bot posts in a card's threads. Build one
// with the constructors; Text is redacted and cleaned again when rendered.
type ThreadMessage struct {
	Kind       ThreadKind
	ApprovalID string // empty for ThreadAutoGranted
	Text       string
	Mentions   []Mention     // ThreadEscalation, ThreadRecheckRefused (the approver)
	Waited     time.Duration // ThreadEscalation: how long the card has waited
	// By is who fired an escalation with Escalate now; "" for the ladder.
	By string
}

// Mention is one person or group a ladder step tells.
type Mention struct {
	// Target as the tenant's config names it (slack:U…, slack:S…,
	// discord:user:ID, discord:role:ID); another surface's, or a malformed
	// one, shows as @Name and pings nobody.
	Target string
	// Name is how text and email show it: "kevin", "oncall".
	Name string
}

// maxMentions bounds one escalation reply, so it stays within Discord's
// 2,000 characters of content whatever the ladder lists.
const maxMentions = 50

// BackendMessage is the backend's message after a decision.
func BackendMessage(approvalID, message string) ThreadMessage {
	return ThreadMessage{Kind: ThreadBackendMessage, ApprovalID: approvalID, Text: message}
}

// RecheckRefused is the reply for approval.recheck_failed.
func RecheckRefused(r *approval.RecheckFailed) ThreadMessage {
	return ThreadMessage{Kind: ThreadRecheckRefused, ApprovalID: r.ApprovalID, Text: r.Message}
}

// Outcome is the reply for call.finished, worded by approval.FinishedText.
func Outcome(f *approval.Finished) ThreadMessage {
	return ThreadMessage{Kind: ThreadOutcome, ApprovalID: f.ApprovalID, Text: approval.FinishedText(f)}
}

// Escalation mentions the people a ladder step tells.
func Escalation(approvalID string, mentions []Mention, waited time.Duration) ThreadMessage {
	return ThreadMessage{Kind: ThreadEscalation, ApprovalID: approvalID, Mentions: mentions, Waited: waited}
}

// ThreadFromEvent is the thread reply an event other than a request or a
// reask calls for (false for those); whether to post it is the caller's
// rule (approval.Transition).
func ThreadFromEvent(ev *approval.Event) (ThreadMessage, bool) {
	switch {
	case ev.Resolved != nil:
		r := ev.Resolved
		text := r.Message
		if text == "" {
			text = "The call was " + string(r.Status) + " by " + r.Actor
			if r.Comment != "" {
				text += ": " + r.Comment
			}
			text = sentence(text)
		}
		return BackendMessage(r.ApprovalID, text), true
	case ev.RecheckFailed != nil:
		return RecheckRefused(ev.RecheckFailed), true
	case ev.Cancelled != nil:
		c := ev.Cancelled
		return ThreadMessage{Kind: ThreadCancelled, ApprovalID: c.ApprovalID, Text: c.Reason}, true
	case ev.Finished != nil:
		return Outcome(ev.Finished), true
	case ev.AutoGranted != nil:
		// The audit channel's notice, as the bot posts it.
		return ThreadMessage{Kind: ThreadAutoGranted, Text: ev.AutoGranted.Notice()}, true
	}
	return ThreadMessage{}, false
}

// recheckLead is what a re-check refusal's reply says before the reason.
func recheckLead(longWait bool) string {
	if longWait {
		return "The platform refused the call after approval (re-checked after a long wait)"
	}
	return "The platform refused the call after approval"
}

// ThreadLines is what a thread reply says, for a surface to lay out and
// escape: Text cleaned, redacted and cut, the bot's Lead before it, an
// escalation's wait and who fired it, at most maxMentions Mentions and
// More for the rest. Which Targets ping is the surface's to decide.
type ThreadLines struct {
	Kind             ThreadKind
	Lead, Text       string
	Waited, By, More string
	Mentions         []Mention
}

// Lines is m as every surface shows it.
func (m ThreadMessage) Lines() ThreadLines {
	l := ThreadLines{Kind: m.Kind, Text: cutLine(cleanText(approval.RedactText(m.Text)), messageMax)}
	if m.Kind == ThreadRecheckRefused {
		reason, longWait := RecheckReason(m.Text)
		l.Lead, l.Text = recheckLead(longWait), cutLine(cleanText(approval.RedactText(reason)), messageMax)
	}
	switch m.Kind {
	case ThreadEscalation:
		l.Waited = shortDuration(m.Waited)
		l.By = cutLine(oneLine(m.By), lineMax)
	case ThreadRecheckRefused:
		// The approver, who read "Approved", is told the call never ran.
	default:
		return l
	}
	for i, mn := range m.Mentions {
		if i == maxMentions {
			l.More = fmt.Sprintf("and %d more", len(m.Mentions)-maxMentions)
			break
		}
		l.Mentions = append(l.Mentions, Mention{Target: mn.Target, Name: cutLine(oneLine(cmp.Or(mn.Name, mn.Target)), 64)})
	}
	return l
}

// shortDuration words a wait as people say it: 45s, 15m, 1h30m, 2d3h.
func shortDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 24*time.Hour:
		h, m := int(d.Hours()), int(d.Minutes())%60
		if m == 0 {
			return fmt.Sprintf("%dh", h)
		}
		return fmt.Sprintf("%dh%dm", h, m)
	default:
		days, h := int(d.Hours())/24, int(d.Hours())%24
		if h == 0 {
			return fmt.Sprintf("%dd", days)
		}
		return fmt.Sprintf("%dd%dh", days, h)
	}
}

// threadData is a reply's Lines for the text template, mentions as @name.
type threadData struct {
	Kind                   ThreadKind
	Lead, Text, Waited, By string
	Mentions               []string
}

// TextThread renders a thread reply as plain text.
func (r *Renderer) TextThread(m ThreadMessage) string {
	return part(r.text, "thread", textThread(m)) + "\n"
}

func textThread(m ThreadMessage) threadData {
	l := m.Lines()
	d := threadData{Kind: l.Kind, Lead: l.Lead, Text: l.Text, Waited: l.Waited, By: l.By}
	for _, mn := range l.Mentions {
		d.Mentions = append(d.Mentions, "@"+mn.Name)
	}
	if l.More != "" {
		d.Mentions = append(d.Mentions, l.More)
	}
	return d
}
