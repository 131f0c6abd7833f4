package templates

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"approvalsbot/approval"
)

// Preview states that are not an approval.State: a superseded card, and
// a pending card whose decision is being sent.
const (
	PreviewSuperseded = "superseded"
	PreviewDeciding   = "deciding"
)

// PreviewStates are the states bot preview --state accepts: every
// approval.State (deciding after pending) and superseded.
func PreviewStates() []string {
	var out []string
	for _, s := range approval.States() {
		out = append(out, string(s))
		if s == approval.StatePending {
			out = append(out, PreviewDeciding)
		}
	}
	return append(out, PreviewSuperseded)
}

// PreviewStatesOf are the preview states a's kind reaches: a call is
// never answered, and a question is never approved, denied or refused.
func PreviewStatesOf(a *approval.Approval) []string {
	var out []string
	for _, s := range PreviewStates() {
		if previewReaches(a, s) {
			out = append(out, s)
		}
	}
	return out
}

// previewReaches reports whether a's kind reaches the preview state.
func previewReaches(a *approval.Approval, state string) bool {
	switch approval.State(state) {
	case approval.StateAnswered:
		return a.IsQuestion()
	case approval.StateApproved, approval.StateDenied, approval.StateRefused:
		return !a.IsQuestion()
	}
	return true
}

// previewActor decides every sample decision: plainly no real member.
const previewActor = "user:reviewer"

// previewAnswer is the sample answer in words to a question that takes
// them and offers no choice.
const previewAnswer = "Yes, go ahead."

// PreviewInput is the Input that bot preview and the golden files render:
// a in the named state (PreviewStates), decided by a sample reviewer at
// at, with the given frozen ladder plan. An event without an approval
// renders its thread reply instead (ThreadFromEvent).
func PreviewInput(a *approval.Approval, state string, at time.Time, ladder LadderPlan) (Input, error) {
	if a == nil {
		return Input{}, fmt.Errorf("preview: the event carries no approval")
	}
	in := Input{Approval: a, Ladder: ladder}
	at = at.UTC()
	if slices.Contains(PreviewStates(), state) && !previewReaches(a, state) {
		kind := "a call"
		if a.IsQuestion() {
			kind = "a question"
		}
		return Input{}, fmt.Errorf("preview: %s is never %s: want one of %s", kind, state, strings.Join(PreviewStatesOf(a), ", "))
	}
	switch state {
	case "", string(approval.StatePending):
		in.State = approval.StatePending
	case PreviewDeciding:
		in.State = approval.StatePending
		in.Deciding = &Deciding{Actor: previewActor, Approve: true, At: at}
	case PreviewSuperseded:
		in.State, in.Superseded = approval.StatePending, true
	case string(approval.StateApproved):
		in.State = approval.StateApproved
		in.Decision = &approval.Decision{Actor: previewActor, Via: "slack", At: at}
	case string(approval.StateDenied):
		in.State = approval.StateDenied
		in.Decision = &approval.Decision{Actor: previewActor, Comment: "not before the release", Via: "slack", At: at}
	case string(approval.StateExpired):
		// What the deadline sends (docs/protocol.md), when it passes.
		in.State = approval.StateExpired
		if dl := deadline(in, a); !dl.IsZero() {
			at = dl
		}
		in.Decision = &approval.Decision{Actor: "system:deadline", Comment: "nobody answered", Via: "deadline", At: at}
	case string(approval.StateCancelled):
		in.State = approval.StateCancelled
		in.Decision = &approval.Decision{Comment: "the job ended", At: at}
	case string(approval.StateAnswered):
		// The first choice, or words where the question offers none.
		in.State = approval.StateAnswered
		d := &approval.Decision{Actor: previewActor, Via: "slack", At: at, Answer: previewAnswer}
		if q := a.Question; q != nil && len(q.Choices) > 0 {
			d.Choice, d.Answer = 1, approval.RedactText(q.Choices[0])
		}
		in.Decision = d
	case string(approval.StateRefused):
		in.State = approval.StateRefused
		in.Decision = &approval.Decision{Actor: previewActor, Via: "slack", At: at,
			Message: "The call to " + a.Call.Function + " was not made: the platform refused it: the re-check after a long wait refused it."}
	default:
		return Input{}, fmt.Errorf("preview: unknown state %q: want one of %s", state, strings.Join(PreviewStates(), ", "))
	}
	return in, nil
}

// MarshalPreview writes a rendered message as indented JSON for bot
// preview and golden files, <, > and & unescaped so it reads as sent.
func MarshalPreview(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("marshal preview: %w", err)
	}
	return unescapeHTML(b.Bytes()), nil
}

// unescapeHTML turns the \u003c, \u003e and \u0026 escapes a library's
// MarshalJSON wrote (slack-go's do) back into <, > and &, reading escapes
// pairwise so an escaped backslash before "u003c" stays as it is.
func unescapeHTML(b []byte) []byte {
	out := b[:0:0]
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 >= len(b) {
			out = append(out, b[i])
			continue
		}
		if b[i+1] == 'u' && i+6 <= len(b) {
			switch string(b[i+2 : i+6]) {
			case "003c":
				out, i = append(out, '<'), i+5
				continue
			case "003e":
				out, i = append(out, '>'), i+5
				continue
			case "0026":
				out, i = append(out, '&'), i+5
				continue
			}
		}
		out = append(out, b[i], b[i+1])
		i++
	}
	return out
}
