package threads_test

import (
	"strings"
	"testing"

	"approvalsbot/templates"
	"approvalsbot/threads/threadstest"
)

// TestReaskThatRestrictsStaysRestricted: a reask that makes a call
// private or restricted walls its content off for every later reply and
// card, whatever a later event says: the backend's message and the
// decision's comment, a cancel reason, a re-check message and a
// call.finished summary never reach the shared threads.
func TestReaskThatRestrictsStaysRestricted(t *testing.T) {
	const secret = "PRIVATE-"
	walls := map[string]func(data map[string]any){
		"private chat": func(data map[string]any) { data["job"].(map[string]any)["private_chat"] = true },
		"restricted":   func(data map[string]any) { data["content"] = map[string]any{"restricted": true} },
	}
	resolved := func(status string, message bool) func(ev map[string]any) {
		return func(ev map[string]any) {
			data := ev["data"].(map[string]any)
			data["status"], data["comment"] = status, secret+"COMMENT"
			if message {
				data["message"] = "The call was not made: " + secret + "MESSAGE"
			} else {
				delete(data, "message")
			}
		}
	}
	onMerge := func(typ string, data map[string]any) func(ev map[string]any) {
		return func(ev map[string]any) {
			ev["id"], ev["type"] = "evt-later-"+typ, typ
			data["approval_id"] = "a-merge1"
			ev["data"] = data
		}
	}
	type step struct {
		fixture string
		edit    func(ev map[string]any)
	}
	laters := map[string][]step{
		"resolved message": {{"merge-resolved.json", resolved("denied", true)}},
		"cancel reason": {{"merge-resolved.json", onMerge("approval.cancelled",
			map[string]any{"reason": secret + "REASON"})}},
		"re-check message": {{"merge-resolved.json", resolved("approved", false)},
			{"merge-resolved.json", onMerge("approval.recheck_failed", map[string]any{"message": secret + "RECHECK"})}},
		"finished summary": {{"merge-resolved.json", resolved("approved", false)},
			{"merge-resolved.json", onMerge("call.finished", map[string]any{"outcome": "completed", "summary": secret + "SUMMARY"})}},
	}
	for wall, restrict := range walls {
		for later, steps := range laters {
			t.Run(wall+", "+later, func(t *testing.T) {
				h := newHarness(t)
				h.ingest(t, "merge.json")
				h.drain(t)
				threadstest.Ingest(t, h.svc, "merge-reasked.json", func(ev map[string]any) {
					data := ev["data"].(map[string]any)
					restrict(data)
					data["agent_says"] = secret + "AGENT"
				})
				h.drain(t)
				for _, s := range steps {
					threadstest.Ingest(t, h.svc, s.fixture, s.edit)
					h.drain(t)
				}
				if len(h.surf.edits) == 0 || (len(h.surf.replies) == 0) != (later == "cancel reason") {
					t.Fatalf("%d edits, %d replies", len(h.surf.edits), len(h.surf.replies))
				}
				for _, r := range h.surf.replies {
					if strings.Contains(r.Text, secret) {
						t.Errorf("reply %q shows the restricted call's text", r.Text)
					}
				}
				render := threadstest.Renderer(t)
				for _, e := range h.surf.edits {
					if e.Card.Approval.Revision == 2 && !e.Card.Approval.ContentRestricted() {
						t.Errorf("revision 2's card is edited as unrestricted")
					}
					if strings.Contains(render.Text(templates.Build(e.Card.Input())), secret) {
						t.Errorf("an edited card shows the restricted call's text")
					}
				}
			})
		}
	}
}

// TestRestrictionOutlivesAnUnrestrictedReask: once a revision was
// restricted, a later one that says it is not is kept and shown as
// restricted, and its replies say nothing of it.
func TestRestrictionOutlivesAnUnrestrictedReask(t *testing.T) {
	h := newHarness(t)
	threadstest.Ingest(t, h.svc, "merge.json", func(ev map[string]any) {
		ev["data"].(map[string]any)["content"] = map[string]any{"restricted": true}
	})
	h.drain(t)
	threadstest.Ingest(t, h.svc, "merge-reasked.json", func(ev map[string]any) {
		ev["data"].(map[string]any)["agent_says"] = "PRIVATE-AGENT"
	})
	h.drain(t)
	threadstest.Ingest(t, h.svc, "merge-resolved.json", func(ev map[string]any) {
		ev["data"].(map[string]any)["message"] = "PRIVATE-MESSAGE"
	})
	h.drain(t)
	for _, p := range h.surf.posts {
		if !p.Card.Approval.ContentRestricted() || p.Card.Approval.AgentSays != "" || p.Card.Approval.Call.Arguments != nil {
			t.Errorf("revision %d posted with its content: %+v", p.Card.Approval.Revision, p.Card.Approval)
		}
	}
	for _, r := range h.surf.replies {
		if strings.Contains(r.Text, "PRIVATE") {
			t.Errorf("reply %q", r.Text)
		}
	}
}
