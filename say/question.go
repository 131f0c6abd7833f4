package say

import "fmt"

// AnswerLabel names the field of Answer…'s dialog; AnswerGoes says where
// the words go, AnswerWithheld for a restricted question, whose card and
// thread leave them out.
const (
	AnswerLabel    = "Your answer"
	AnswerGoes     = "Your answer goes to the job as you write it, and onto the card and into its thread with anything that looks like a secret hidden."
	AnswerWithheld = "Your answer goes to the job as you write it; the card and its thread will not show it (this question is restricted)."
	AnswerTitle    = "Answer the question"
	AnswerSubmit   = "Send answer"
)

// question words the reasons of an answer to an agent's question, and
// the decision reasons as an answer reads them; "" for a kind it leaves
// to the main catalogue.
func (r Reason) question() string {
	const none = "nothing was sent"
	switch r.Kind {
	case AnswerSending:
		return "Recorded: your answer is on its way to the job…"
	case Recorded:
		return "Recorded: your answer reached the job."
	case AlreadyAnswered:
		return fmt.Sprintf("%s answered this question first; your answer was not sent.", orSomeone(r.Actor))
	case NotAChoice:
		return "That is not one of the question's choices; " + none + "."
	case AnswerEmpty:
		return "The answer is empty; " + none + "."
	case AnswerTooLong:
		return fmt.Sprintf("The answer is longer than %d characters; %s.", r.Count, none)
	case AnswerWordsOff:
		return "This question takes one of its choices only; " + none + "."
	case NotAQuestion:
		return "This card asks no question; " + none + "."
	case QuestionsOff:
		return "This bot's job backend takes no answers to questions; " + none + "."
	case QuestionHidden, PrivateChat:
		return fmt.Sprintf("This question is restricted: only members of tenant %s with the content permission, which you do not hold, see and answer it; %s.", r.Tenant, none)
	case Closed:
		by := ""
		if r.Actor != "" {
			by = " by " + r.Actor
		}
		switch r.State {
		case "answered":
			return fmt.Sprintf("This question was already answered%s; your answer was not sent.", by)
		case "expired":
			return "Nobody answered this question by its deadline, and the job was told so; your answer was not sent."
		}
		return fmt.Sprintf("This question was already %s%s; your answer was not sent.", r.State, by)
	case Superseded, StaleRevision:
		return "The agent changed its question since this card was shown: look at the new card in the thread; your answer was not taken."
	case DeadlinePassed, DeadlineDenying:
		return "The deadline has passed: the job is being told that nobody answered, so your answer was not sent."
	case Deciding:
		return fmt.Sprintf("%s is answering this question already; wait for the card to change.", orSomeone(r.Actor))
	case Forbidden:
		if r.Message != "" {
			return "The platform refused your answer: " + r.Message
		}
		return "The platform refused your answer."
	case Gone:
		return "The job no longer waits for this answer."
	case NotAnswered:
		if r.Refused {
			return "The job backend refused the bot's request, so your answer was not recorded; try again, or answer in the console."
		}
		return "The job backend did not answer, so your answer was not recorded; try again in a moment."
	case CannotDecide:
		return fmt.Sprintf("Your role in tenant %s is %s, which cannot answer the agent's questions; %s.", r.Tenant, r.Role, none)
	case OwnJob:
		return fmt.Sprintf("You started job %s, and tenant %s forbids answering your own job's questions, as deciding its calls; %s.", r.Job, r.Tenant, none)
	}
	return ""
}

func orSomeone(actor string) string {
	if actor == "" {
		return "Someone else"
	}
	return actor
}
