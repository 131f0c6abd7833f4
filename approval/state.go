package approval

import (
	"fmt"
	"time"
)

// State is where an approval stands. It only moves forward: pending to one
// of the final states. Approved may still become refused when the
// backend's re-check turns the yes into a denial.
type State string

// The states of an approval.
const (
	// StatePending waits for a person.
	StatePending State = "pending"
	// StateApproved: a person said yes (here or elsewhere).
	StateApproved State = "approved"
	// StateDenied: a person said no.
	StateDenied State = "denied"
	// StateExpired: nobody answered by the deadline; the bot denied it.
	StateExpired State = "expired"
	// StateCancelled: the job ended or the call is no longer wanted.
	StateCancelled State = "cancelled"
	// StateRefused: a yes that the backend's re-check turned into a denial.
	StateRefused State = "refused"
)

// States enumerates every state, so tests can cover each state × event.
func States() []State {
	return []State{StatePending, StateApproved, StateDenied, StateExpired, StateCancelled, StateRefused, StateAnswered}
}

// Final reports whether nothing but a re-check can change the state.
func (s State) Final() bool { return s != StatePending && s != "" }

// Decision is who closed an approval and how. Its free text (Comment,
// Message) is kept as RedactText gives it: it is stored, and backed up,
// as the arguments are, so it carries no secret the event held.
type Decision struct {
	Actor   string `json:"actor,omitempty"`
	Comment string `json:"comment,omitempty"`
	Via     string `json:"via,omitempty"`
	Message string `json:"message,omitempty"` // the backend's sentence, what the model reads
	// Answer is a question's answer as cards show it (RedactText of the
	// words, or of the choice); "" for a decision. The words as the
	// person wrote them go to the backend only, and are not kept.
	Answer string `json:"answer,omitempty"`
	// Choice is the index of the answer's choice plus one; 0 for words.
	Choice int       `json:"choice,omitempty"`
	At     time.Time `json:"at"`
}

// Record is what the bot keeps of one approval between events.
type Record struct {
	ID       string
	Tenant   string
	Revision int
	State    State
	// Seen is false for a tombstone: a resolve, re-check or cancel that
	// arrived before its request. A late request then never posts a live
	// card, and the approval stays a tombstone: no card, no thread.
	Seen     bool
	Decision *Decision
}

// EffectKind is an outward consequence of a transition (an outbox row).
type EffectKind string

// Effects of a transition.
const (
	// EffectPostCard posts the card to the approval's targets.
	EffectPostCard EffectKind = "post_card"
	// EffectSupersede marks every earlier card superseded and posts the new
	// revision's card in the same threads.
	EffectSupersede EffectKind = "supersede"
	// EffectEditCards edits every copy of the card to the current state.
	EffectEditCards EffectKind = "edit_cards"
	// EffectThreadReply posts Text as a reply in every thread of the card.
	EffectThreadReply EffectKind = "thread_reply"
	// EffectAudit posts a one-line notice of an unattended call.
	EffectAudit EffectKind = "audit"
)

// Effect is one outward consequence.
type Effect struct {
	Kind EffectKind
	Text string // for thread replies
}

// Result is what one event does to one record.
type Result struct {
	Next    Record
	Changed bool     // Next differs from the current record and must be stored
	Effects []Effect // in order
	Ignored string   // why the event changed nothing; empty when applied
}

// Transition is the only rule of how events move approvals. cur is the
// stored record, or nil when the bot holds none. now stamps decisions. It
// is pure: the caller stores Next and enqueues Effects in one transaction.
// The event's free text reaches Next and Effects only through RedactText.
func Transition(cur *Record, ev *Event, now time.Time) Result {
	if ev.Type == EventAutoGranted {
		res := Result{Effects: []Effect{{Kind: EffectAudit}}}
		if cur != nil {
			res.Next = *cur
		}
		return res
	}
	var rec Record
	if cur != nil {
		rec = *cur
	} else {
		rec = Record{ID: ev.ApprovalID(), Tenant: ev.Tenant}
	}
	exists := cur != nil
	ignore := func(why string) Result { return Result{Next: rec, Ignored: why} }

	switch ev.Type {
	case EventRequested, EventReasked, EventQuestionAsked:
		a := ev.Approval
		switch {
		case !exists:
			rec.Revision, rec.State, rec.Seen = a.Revision, StatePending, true
			return Result{Next: rec, Changed: true, Effects: []Effect{{Kind: EffectPostCard}}}
		case !rec.Seen:
			// A tombstone stays one, so nothing later speaks of a card
			// that was never posted.
			return ignore("decided before it was requested: no live card")
		case rec.State.Final():
			return ignore("already " + string(rec.State))
		case a.Revision <= rec.Revision:
			return ignore(fmt.Sprintf("revision %d is not above the held revision %d", a.Revision, rec.Revision))
		default:
			rec.Revision = a.Revision
			return Result{Next: rec, Changed: true, Effects: []Effect{{Kind: EffectSupersede}}}
		}

	case EventResolved, EventQuestionAnswered:
		r := ev.Resolved
		if exists && rec.State.Final() {
			return ignore("already " + string(rec.State))
		}
		if exists && r.Revision < rec.Revision {
			return ignore(fmt.Sprintf("revision %d is below the held revision %d", r.Revision, rec.Revision))
		}
		rec.State = r.Status
		if r.Revision > rec.Revision {
			rec.Revision = r.Revision
		}
		rec.Decision = &Decision{Actor: RedactText(r.Actor), Comment: RedactText(r.Comment), Via: RedactText(r.Via), Message: RedactText(r.Message), At: now}
		if r.Answer != nil {
			// The choice's words are the question's, which the caller
			// fills in where it holds them (the record holds no request).
			rec.Decision.Answer = RedactText(r.Answer.Text)
			if r.Answer.Choice != nil {
				rec.Decision.Choice = *r.Answer.Choice + 1
			}
		}
		return closed(rec, rec.Decision.Message)

	case EventRecheckFailed:
		if exists && rec.State != StatePending && rec.State != StateApproved {
			return ignore("already " + string(rec.State))
		}
		prev := rec.Decision
		rec.State = StateRefused
		rec.Decision = &Decision{Message: RedactText(ev.RecheckFailed.Message), At: now}
		if prev != nil {
			rec.Decision.Actor, rec.Decision.Via = prev.Actor, prev.Via
		}
		return closed(rec, rec.Decision.Message)

	case EventCancelled, EventQuestionCancelled:
		if exists && rec.State.Final() {
			return ignore("already " + string(rec.State))
		}
		rec.State = StateCancelled
		rec.Decision = &Decision{Comment: RedactText(ev.Cancelled.Reason), At: now}
		return closed(rec, "")

	case EventCallFinished:
		if !exists || !rec.Seen {
			return ignore("no card of this approval was posted")
		}
		return Result{Next: rec, Effects: []Effect{{Kind: EffectThreadReply, Text: FinishedText(ev.Finished)}}}
	}
	return ignore("unknown event type " + string(ev.Type))
}

// closed finishes a transition into a final state; a tombstone stays one
// and has no effects.
func closed(rec Record, message string) Result {
	res := Result{Next: rec, Changed: true}
	if !rec.Seen {
		return res
	}
	res.Effects = append(res.Effects, Effect{Kind: EffectEditCards})
	if message != "" {
		res.Effects = append(res.Effects, Effect{Kind: EffectThreadReply, Text: message})
	}
	return res
}

// FinishedText is the thread reply for what an approved call did, its
// summary passed through RedactText: the reply is stored until it is sent.
func FinishedText(f *Finished) string {
	verb := "completed"
	if f.Outcome == OutcomeFailed {
		verb = "failed"
	}
	if f.Summary == "" {
		return "The call " + verb + "."
	}
	return "The call " + verb + ": " + RedactText(f.Summary)
}
