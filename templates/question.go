package templates

import (
	"fmt"
	"strconv"
	"strings"

	"approvalsbot/approval"
)

// A question's card (docs/cards.md#questions): the agent's question in
// the agent's box, never as the bot's words; its choices as buttons (the
// surface puts those it has no room for in a menu); Answer… for words.
const (
	// ActionAnswer answers with one of the question's choices; its
	// payload carries the choice's index (Action.Choice).
	ActionAnswer ActionKind = "answer"
	// ActionAnswerText is Answer…: it opens the dialog for an answer in
	// the person's own words, whose submission answers the revision.
	ActionAnswerText ActionKind = "answer_text"
)

const (
	labelAnswerText     = "Answer…"
	labelShowQuestion   = "Show question"
	statusQuestion      = "Waiting for an answer"
	statusUnanswered    = "Nobody answered by the deadline"
	statusAnsweringFmt  = "Sending %s's answer to the job"
	statusDeadlineShut  = "Nobody answered by the deadline: telling the job"
	withheldAnswer      = "The answer is not shown here: the question is restricted to members with the content permission."
	restrictedQuestion  = "The question is restricted: only members with the content permission see it (Show question) and answer it."
	questionHeadlineMax = 120
	deadlineUnanswered  = "(then the job is told nobody answered)"
	reaskQuestion       = "Asked again: the question changed"
)

// QuestionCard is what a card shows of an agent's question.
type QuestionCard struct {
	// Text is the question as the agent asked it, redacted and bounded;
	// "" on a restricted card.
	Text string
	// Whole is the question redacted as Text is but uncut, where Text
	// is cut: mail and the decision page, which have no chat's bounds,
	// show all of what the person answers (Full); "" otherwise.
	Whole string
	// Choices are the question's choices, one button each (ActionAnswer),
	// in the agent's order, while it waits; none on a restricted card.
	// A surface shows as many as it has room for as buttons and the rest
	// in one menu (docs/cards.md#questions).
	Choices []Button
	// FreeText: the question takes an answer in words (Answer… is among
	// the card's Buttons while it waits).
	FreeText bool
	// Answer is the answer given, once answered; "" on a restricted card
	// (StatusNote says it is left out).
	Answer string
}

// questionCard finishes Build for a question: the call's parts are
// none of a question's, and its status, headline and buttons are its own.
func questionCard(in Input, c *Card, a *approval.Approval, k clock) {
	c.Function, c.Effect, c.Flags, c.AskedBy, c.Reasons, c.Warnings = "", "", nil, "", nil, nil
	c.Arguments, c.Digest, c.Snapshot, c.Roles, c.Changes, c.AgentSays, c.Turn, c.ConfirmLine = nil, "", "", nil, nil, "", "", ""
	// question.asked names no autonomy level: the job line says none.
	c.Job.Level = ""
	// A question asked again changed its question: the call's reasons
	// and changes a reask of a call names are none of a question's.
	if c.Reask != nil {
		c.Reask = &Reask{Line: reaskQuestion}
		if in.Reask.From > 0 {
			c.Reask.Line += " since revision " + strconv.Itoa(in.Reask.From)
		}
	}
	// The deadline closes a question unanswered, not with a no.
	if rest, ok := strings.CutSuffix(c.Ladder, " "+deadlineMeansNo); ok {
		c.Ladder = rest + " " + deadlineUnanswered
	}
	q := &QuestionCard{}
	if a.Question != nil {
		q.FreeText = a.Question.FreeText
		if !c.Restricted {
			// Redacted once, then cut for the card.
			whole := agentWords(a.Question.Text)
			if q.Text = cutAgentWords(whole); q.Text != whole {
				q.Whole = whole
			}
		}
	}
	c.Question = q
	pending := c.State == approval.StatePending && !c.Superseded
	switch {
	case c.Superseded:
		c.Status = fmt.Sprintf(statusSuperseded, "the question changed")
	case c.Deciding:
		st := statusLines{tone: TonePending}
		if in.Deciding.Deadline {
			st.line.say(statusDeadlineShut)
		} else {
			who := "a member"
			if actor := cutLine(oneLine(approval.RedactText(in.Deciding.Actor)), lineMax); actor != "" {
				who = actor
			}
			st.line.say(fmt.Sprintf(statusAnsweringFmt, who))
		}
		if !in.Deciding.At.IsZero() {
			st.detail.say("at ")
			st.detail.time(k.at(in.Deciding.At))
		}
		c.Status, c.Times.Status = st.line.done(statusMax)
		c.StatusDetail, c.Times.StatusDetail = st.detail.done(statusMax)
		c.Message, c.StatusNote, c.Tone = "", "", st.tone
	case c.State == approval.StatePending:
		c.Status = statusQuestion
	case c.State == approval.StateAnswered:
		d := in.Decision
		if d == nil {
			d = &approval.Decision{}
		}
		st := statusLines{tone: ToneApproved}
		st.line.say("Answered")
		if actor := cutLine(oneLine(approval.RedactText(d.Actor)), lineMax); actor != "" {
			st.line.say(" by " + actor)
		}
		if !d.At.IsZero() {
			st.detail.say("at ")
			st.detail.time(k.at(d.At))
		}
		if v := oneLine(approval.RedactText(d.Via)); v != "" {
			if !st.detail.empty() {
				st.detail.say(" · ")
			}
			st.detail.say("via " + cutLine(v, 32))
		}
		// An answer at a revision the bot never saw asked chose among
		// that revision's choices, which may not be this card's: only
		// its number is known.
		asked := a
		if in.HeldRevision > a.Revision {
			asked = nil
		}
		words := AnswerWords(asked, d)
		switch {
		case words == "":
		case c.Restricted:
			st.note = withheldAnswer
		default:
			q.Answer = agentSays(words)
		}
		c.Status, c.Times.Status = st.line.done(statusMax)
		c.StatusDetail, c.Times.StatusDetail = st.detail.done(statusMax)
		c.Message, c.StatusNote, c.Tone = "", st.note, st.tone
	case c.State == approval.StateExpired:
		c.Status = statusUnanswered
	}
	if c.Restricted {
		c.RestrictedNote = restrictedQuestion
	}
	c.Headline = questionHeadline(c, a)
	if !pending {
		c.Buttons = nil
		return
	}
	waiting := !c.Deciding
	var out []Button
	add := func(b Button, act Action) {
		p := EncodeAction(act)
		if _, err := ParseAction(p); err != nil {
			return // an id or revision no valid event carries
		}
		b.Action, b.Payload = act, p
		out = append(out, b)
	}
	base := Action{ApprovalID: a.ID, Revision: a.Revision}
	if waiting && !c.Restricted && a.Question != nil {
		for i, choice := range a.Question.Choices {
			act := base
			act.Kind, act.Choice = ActionAnswer, i
			p := EncodeAction(act)
			if _, err := ParseAction(p); err != nil {
				continue
			}
			q.Choices = append(q.Choices, Button{Label: ChoiceLabel(choice), Action: act, Payload: p})
		}
	}
	if waiting && !c.Restricted && q.FreeText {
		act := base
		act.Kind = ActionAnswerText
		add(Button{Label: labelAnswerText, Style: StylePrimary}, act)
	}
	if waiting {
		lc := ladderControls(in)
		act := base
		act.Kind = ActionLook
		add(Button{Label: labelLook}, act)
		if lc.escalate {
			act.Kind, act.Escalations = ActionEscalate, lc.escalations
			add(Button{Label: labelEscalate}, act)
		}
	}
	if c.Restricted {
		act := base
		act.Kind = ActionShowDetails
		add(Button{Label: labelShowQuestion}, act)
	}
	c.Buttons = out
}

// AnswerWords is the answer a closed question's decision holds, as
// people read it, not yet redacted for a surface: the choice's words
// where a is the question as the person who answered saw it, "choice N"
// where a is nil (or lacks that choice), else the words given.
func AnswerWords(a *approval.Approval, d *approval.Decision) string {
	if d == nil {
		return ""
	}
	if d.Choice > 0 {
		if a != nil && a.Question != nil && d.Choice <= len(a.Question.Choices) {
			return a.Question.Choices[d.Choice-1]
		}
		if d.Answer == "" {
			return "choice " + strconv.Itoa(d.Choice)
		}
	}
	return d.Answer
}

// questionHeadline is a question card's one line for notifications and
// subjects; a restricted question's says nothing of its text.
func questionHeadline(c *Card, a *approval.Approval) string {
	who := c.Job.Agent
	if who == "" {
		who = "The agent"
	}
	what := ""
	if a.Question != nil && !c.Restricted {
		what = ": " + cutLine(oneLine(approval.RedactText(a.Question.Text)), questionHeadlineMax)
	}
	switch {
	case c.Superseded:
		return who + " changed its question: see the new card"
	case c.Deciding:
		return who + "'s question: an answer is being sent"
	case c.State == approval.StatePending:
		return who + " asks" + what
	case c.State == approval.StateAnswered:
		return who + "'s question was answered" + what
	case c.State == approval.StateExpired:
		return who + "'s question: nobody answered by the deadline"
	case c.State == approval.StateCancelled:
		return who + "'s question was cancelled"
	}
	return who + "'s question: " + oneLine(string(c.State))
}

// Full is the whole question where a surface has room for it (mail, the
// decision page): Whole where Text is cut, else Text.
func (q *QuestionCard) Full() string {
	if q.Whole != "" {
		return q.Whole
	}
	return q.Text
}

// QuestionText is an agent's question as a chat shows it: redacted of
// secret shapes, cleaned and bounded as the agent's words are.
func QuestionText(s string) string { return agentSays(s) }

// QuestionWhole is an agent's question as the decision page shows it:
// redacted and cleaned as QuestionText, but whole (the protocol bounds
// it at approval.MaxQuestionText characters).
func QuestionWhole(s string) string { return agentWords(s) }

// ChoiceLabel is a choice as a button or a menu option shows it: one
// line, redacted, within approval.MaxChoiceLen.
func ChoiceLabel(s string) string {
	return cutLine(oneLine(approval.RedactText(s)), approval.MaxChoiceLen)
}
