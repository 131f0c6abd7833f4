package templates

import (
	"cmp"
	"fmt"
	"regexp"
	"strings"
	"time"

	"approvalsbot/approval"
)

// ThreadKind is what a thread reply reports.
type ThreadKind string

// Thread replies.
const (
	// ThreadBackendMessage is the backend's sentence after a decision:
	// what the model reads ("The call to … was not made: user:kevin denied it: …").
	ThreadBackendMessage ThreadKind = "backend_message"
	// ThreadRecheckRefused is a yes that the backend's re-check turned into
	// a denial, with the backend's message.
	ThreadRecheckRefused ThreadKind = "recheck_refused"
	// ThreadOutcome is what an approved call did (call.finished).
	ThreadOutcome ThreadKind = "outcome"
	// ThreadCancelled says the approval is no longer wanted, and why.
	ThreadCancelled ThreadKind = "cancelled"
	// ThreadAutoGranted is the audit notice of a call that ran unattended
	// (approval.AutoGranted.Notice, which says it all).
	ThreadAutoGranted ThreadKind = "auto_granted"
	// ThreadEscalation mentions the people a ladder step tells:
	// "@kevin @oncall: waiting 15m".
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
	// By is, for ThreadEscalation, the member who fired the step at once
	// (Escalate now); "" when the ladder's own time fired it.
	By string
}

// Mention is one person or group a ladder step tells.
type Mention struct {
	// Target as the tenant's config names it: slack:U…/slack:W… (a user),
	// slack:S… (a user group), discord:user:ID, discord:role:ID. A target
	// of another surface, or a malformed one, is shown as @Name and pings
	// nobody.
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

// ThreadFromEvent is the thread reply an event other than a request
// calls for, and false for approval.requested and approval.reasked, which
// post or edit cards instead. Whether to post it is the caller's rule
// (approval.Transition); bot preview shows it.
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
			text += "."
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

// PreparedThread is a thread message as a chat surface lays it out: its
// words cleaned, redacted and cut, not yet escaped for any surface.
type PreparedThread struct {
	Kind ThreadKind
	// Lead is the bot's own words before Text, where the kind has some.
	Lead string
	Text string
	// Mentions are whom ThreadEscalation and ThreadRecheckRefused tell,
	// each Name cleaned and cut; More says how many were left out ("and 3
	// more"), "" when none.
	Mentions []Mention
	More     string
	// Waited and By are ThreadEscalation's: how long the card waited
	// ("15m"), and who fired the step at once.
	Waited string
	By     string
}

// Prepare is m with its words ready to lay out.
func (m ThreadMessage) Prepare() PreparedThread {
	p := PreparedThread{Kind: m.Kind, Text: cutLine(cleanText(approval.RedactText(m.Text)), messageMax)}
	if m.Kind == ThreadRecheckRefused {
		reason, longWait := RecheckReason(m.Text)
		p.Lead, p.Text = recheckLead(longWait), cutLine(cleanText(approval.RedactText(reason)), messageMax)
	}
	switch m.Kind {
	case ThreadEscalation:
		p.Waited = shortDuration(m.Waited)
		p.By = cutLine(oneLine(m.By), lineMax)
	case ThreadRecheckRefused:
		// The approver, who read "Approved", is told the call never ran.
	default:
		return p
	}
	for i, mn := range m.Mentions {
		if i == maxMentions {
			p.More = fmt.Sprintf("and %d more", len(m.Mentions)-maxMentions)
			break
		}
		p.Mentions = append(p.Mentions, Mention{Target: mn.Target, Name: cutLine(oneLine(cmp.Or(mn.Name, mn.Target)), 64)})
	}
	return p
}

// threadData is a thread message prepared for one surface's template:
// Text cleaned and redacted (escaped by the template), mentions already in
// the surface's syntax (safe: built only from validated ids).
type threadData struct {
	Kind ThreadKind
	// Lead is the bot's own words before Text, where the kind has some.
	Lead     string
	Text     string
	Mentions []string
	Waited   string
	By       string
}

// recheckLead is what a re-check refusal's reply says before the
// reason: once, that the platform refused the call after it was
// approved.
func recheckLead(longWait bool) string {
	if longWait {
		return "The platform refused the call after approval (re-checked after a long wait)"
	}
	return "The platform refused the call after approval"
}

type surface int

const (
	surfaceText surface = iota
	surfaceDiscord
)

var discordSnowflk = regexp.MustCompile(`^[0-9]{1,20}$`)

// prepareThread also returns the Discord users and roles the reply may
// ping: exactly those it mentions.
func prepareThread(m ThreadMessage, s surface) (d threadData, users, roles []string) {
	p := m.Prepare()
	d = threadData{Kind: p.Kind, Lead: p.Lead, Text: p.Text, Waited: p.Waited, By: p.By}
	for _, mn := range p.Mentions {
		switch s {
		case surfaceDiscord:
			if id, ok := strings.CutPrefix(mn.Target, "discord:user:"); ok && discordSnowflk.MatchString(id) {
				d.Mentions = append(d.Mentions, "<@"+id+">")
				users = append(users, id)
			} else if id, ok := strings.CutPrefix(mn.Target, "discord:role:"); ok && discordSnowflk.MatchString(id) {
				d.Mentions = append(d.Mentions, "<@&"+id+">")
				roles = append(roles, id)
			} else {
				d.Mentions = append(d.Mentions, "@"+discordMarkdown(mn.Name))
			}
		default:
			d.Mentions = append(d.Mentions, "@"+mn.Name)
		}
	}
	if p.More != "" {
		d.Mentions = append(d.Mentions, p.More)
	}
	return d, users, roles
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

// DiscordThread renders a thread reply as Discord content. It pings
// exactly the users and roles an escalation mentions, and nobody else.
func (r *Renderer) DiscordThread(m ThreadMessage) *DiscordMessage {
	d, users, roles := prepareThread(m, surfaceDiscord)
	return &DiscordMessage{
		Content:         cutText(part(r.discord, "thread", d), discordContentMax, discordCutMarker, trimDiscord),
		AllowedMentions: &DiscordAllowedMentions{Parse: []string{}, Users: users, Roles: roles},
	}
}

// TextThread renders a thread reply as plain text.
func (r *Renderer) TextThread(m ThreadMessage) string {
	d, _, _ := prepareThread(m, surfaceText)
	return part(r.text, "thread", d) + "\n"
}
