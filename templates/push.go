package templates

import (
	"strings"
	"time"

	"approvalsbot/approval"
)

// A push notice's bounds, in characters as the chats count them. A phone
// shows a few lines of a notice; ntfy takes messages of up to 4,096 bytes
// (https://docs.ntfy.sh/publish/#limitations), which the longest notice,
// every character four bytes, stays well below.
const (
	// pushFunctionMax bounds the function in the title.
	pushFunctionMax = 100
	// pushFlagMax bounds the first flag's line.
	pushFlagMax = 160
	// pushActAsMax bounds the member's user id the link acts as.
	pushActAsMax = 64
)

// PushLabel is the label of a notice's one action, which opens the
// member's decision page: a GET, which shows the call (or the question)
// and decides nothing.
const PushLabel = "Open the decision page"

// PushNotice is what a push to a member's phone says of a waiting call:
// its function, effect line, first flag and deadline, and where to
// decide; of a waiting question, whose question it is, its deadline and
// where to answer. Never an argument value, a role's value, the agent's
// words (a question's text and choices are the agent's) or a digest: a
// notice is read on a lock screen and passes through a push service.
// Every field is cleaned and bounded; each push integration only lays
// it out.
type PushNotice struct {
	// Title is "Approval needed: FUNCTION"; for a question, "Answer
	// needed: AGENT's question".
	Title string
	// Function is the call's function as the title shows it; "" for a
	// question.
	Function string
	// Lines are the effect line (none for a contained write), the first
	// flag, the deadline in the tenant's zone, and where to decide; a
	// question's, the deadline and where to answer.
	Lines []string
	// Link opens the member's decision page; "" when there is none, and
	// the last line then says where to decide instead.
	Link string
	// Destructive: the card says DESTRUCTIVE, for the integration's
	// urgency.
	Destructive bool
	// Deadline is when nobody deciding denies the call (or tells the job
	// nobody answered its question); zero when unknown.
	Deadline time.Time
}

// Message is the notice's lines, one per line.
func (n PushNotice) Message() string { return strings.Join(n.Lines, "\n") }

// PushInput is what a notice says beside the card.
type PushInput struct {
	// Deadline is the call's deadline, written in Zone (nil: UTC).
	Deadline time.Time
	Zone     *time.Location
	// Link is the member's decision link, "" for none; ActAs the member
	// it acts as.
	Link, ActAs string
	// Thread: the call has a chat thread to decide in.
	Thread bool
}

// pushWords are what a notice says happens at the deadline and where to
// act: a call is decided, a question answered.
type pushWords struct {
	deadline, sending, page, thread, console string
}

var (
	pushCallWords = pushWords{
		deadline: "denied unless someone decides first.",
		sending:  "A decision is on its way to the job backend.",
		page:     "Open the decision page to see the call and decide as ",
		thread:   "Decide in the console or in the chat thread.",
		console:  "Decide in the console.",
	}
	pushQuestionWords = pushWords{
		deadline: "the job is told nobody answered unless someone answers first.",
		sending:  "An answer is on its way to the job.",
		page:     "Open the decision page to see the question and answer as ",
		thread:   "Answer in the console or in the chat thread.",
		console:  "Answer in the console.",
	}
)

// Push is the notice of the waiting card c to one member. A question's
// is worded as its mail is: whose question it is, never the question,
// which is the agent's words and may be restricted.
func Push(c Card, in PushInput) PushNotice {
	n := PushNotice{Link: linkable(in.Link), Deadline: in.Deadline}
	words := pushCallWords
	if c.Question != nil {
		words = pushQuestionWords
		agent := cutLine(oneLine(c.Job.Agent), pushFunctionMax)
		if agent == "" {
			agent = "the agent"
		}
		n.Title = "Answer needed: " + agent + "'s question"
	} else {
		fn := cutLine(oneLine(c.Function), pushFunctionMax)
		n.Title, n.Function = "Approval needed: "+fn, fn
		n.Destructive = strings.HasPrefix(c.Effect, approval.EffectDestructive)
		if c.Effect != "" {
			n.Lines = append(n.Lines, c.Effect)
		}
		if len(c.Flags) > 0 {
			n.Lines = append(n.Lines, "! "+cutLine(oneLine(c.Flags[0]), pushFlagMax))
		}
	}
	if line := pushDeadline(in, words.deadline); line != "" {
		n.Lines = append(n.Lines, line)
	}
	switch {
	case c.Deciding:
		n.Lines = append(n.Lines, words.sending)
	case n.Link != "":
		n.Lines = append(n.Lines, words.page+cutLine(oneLine(in.ActAs), pushActAsMax)+".")
	case in.Thread:
		n.Lines = append(n.Lines, words.thread)
	default:
		n.Lines = append(n.Lines, words.console)
	}
	return n
}

// pushDeadline is the deadline's line in the tenant's zone, saying what
// then happens; "" for no deadline.
func pushDeadline(in PushInput, then string) string {
	if in.Deadline.IsZero() {
		return ""
	}
	zone := in.Zone
	if zone == nil {
		zone = time.UTC
	}
	return "Deadline " + in.Deadline.In(zone).Format(dateAndTime) + ": " + then
}
