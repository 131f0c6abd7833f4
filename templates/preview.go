package templates

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"approvalsbot/approval"
)

// Preview states that are not an approval.State: a card a newer revision
// replaced, and a pending card whose decision is being sent to the
// backend.
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

// previewActor decides every sample decision: plainly an example, never a
// real member.
const previewActor = "user:reviewer"

// PreviewInput is the Input that bot preview (and this package's golden
// files) render: a in the named state (see PreviewStates), decided (or,
// deciding, approved and being sent) by a sample reviewer at the time at,
// with the frozen ladder plan given. So
// `bot preview --as slack FILE --state denied` is:
//
//	ev, _ := approval.Parse(body)
//	in, _ := templates.PreviewInput(ev.Approval, "denied", now, ladder)
//	msg := slack.CardMessage(templates.Build(in)) // approvalsbot/adapters/slack
//	json.MarshalIndent(msg, "", "  ")
//
// An event without an approval renders its thread reply instead
// (ThreadFromEvent).
func PreviewInput(a *approval.Approval, state string, at time.Time, ladder LadderPlan) (Input, error) {
	if a == nil {
		return Input{}, fmt.Errorf("preview: the event carries no approval")
	}
	in := Input{Approval: a, Ladder: ladder}
	at = at.UTC()
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
	case string(approval.StateRefused):
		in.State = approval.StateRefused
		in.Decision = &approval.Decision{Actor: previewActor, Via: "slack", At: at,
			Message: "The call to " + a.Call.Function + " was not made: the platform refused it: the re-check after a long wait refused it."}
	default:
		return Input{}, fmt.Errorf("preview: unknown state %q: want one of %s", state, strings.Join(PreviewStates(), ", "))
	}
	return in, nil
}

// MarshalPreview writes a rendered Slack or Discord message as indented
// JSON for bot preview and golden files, without escaping <, > and & so it
// reads as sent.
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

// unescapeHTML turns the \u003c, \u003e and \u0026 escapes that a
// library's own MarshalJSON wrote (slack-go's blocks do) back into <, >
// and &. It reads escapes pairwise, so an escaped backslash followed by
// "u003c" stays as it is; the JSON means the same either way.
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
