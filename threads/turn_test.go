package threads_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"approvalsbot/adapters/backend/backendtest"
	"approvalsbot/adapters/backend/standin"
	"approvalsbot/approval"
	"approvalsbot/config"
	"approvalsbot/say"
	"approvalsbot/templates"
	"approvalsbot/threads"
	"approvalsbot/threads/threadstest"
)

// turnIDs are the three calls of the test turn, in call order.
var turnIDs = []string{"t-merge", "t-comment", "t-label"}

var turnFunctions = map[string]string{"t-merge": "acme_github.merge", "t-comment": "acme_github.comment", "t-label": "acme_github.label"}

func newTurnHarness(t *testing.T, turns bool) *decideHarness {
	t.Helper()
	var features []string
	if turns {
		features = []string{"turns"}
	}
	return newDecideHarnessWith(t, testConfig, time.Minute, features, func(o *threads.Options) { o.Turns = turns })
}

// ingestMember ingests one member of the test turn at revision rev,
// derived from the merge fixture (its arguments, so the backend's digest
// is the fixture's), edit changing it last.
func (h *decideHarness) ingestMember(t *testing.T, id string, rev int, edit func(data map[string]any)) {
	t.Helper()
	ev := threadstest.Ingest(t, h.svc, "merge.json", func(ev map[string]any) {
		ev["id"] = "evt-" + id + "-" + string(rune('0'+rev))
		if rev > 1 {
			ev["type"] = "approval.reasked"
		}
		data := ev["data"].(map[string]any)
		data["id"] = id
		data["revision"] = rev
		if rev > 1 {
			data["why"] = "policy_changed"
		}
		data["console_url"] = "https://console.example/approvals/" + id
		call := data["call"].(map[string]any)
		call["function"] = turnFunctions[id]
		call["annotations"].(map[string]any)["destructiveHint"] = false
		data["turn"] = map[string]any{"id": "turn-7", "members": []any{turnIDs[0], turnIDs[1], turnIDs[2]}}
		if edit != nil {
			edit(data)
		}
	})
	h.fake.AddApproval(id, rev, arguments(t, "a-merge1.json"), ev.Approval.ContentRestricted())
	h.fake.SetFunction(id, turnFunctions[id])
}

func (h *decideHarness) ingestTurn(t *testing.T, edit func(id string, data map[string]any)) {
	t.Helper()
	for _, id := range turnIDs {
		h.ingestMember(t, id, 1, func(data map[string]any) {
			if edit != nil {
				edit(id, data)
			}
		})
	}
	h.drain(t)
}

// shownCheck is the check a card showing every member at revs carries.
func shownCheck(revs ...int) string {
	ms := make([]templates.TurnMember, len(revs))
	for i, r := range revs {
		ms[i] = templates.TurnMember{ApprovalID: turnIDs[i], Revision: r}
	}
	return templates.TurnCheck(ms)
}

func (h *decideHarness) clickTurn(t *testing.T, approve bool, check, user string) threads.Clicked {
	t.Helper()
	return h.svc.ClickTurn(context.Background(), threads.TurnClickRequest{Person: slackPerson(user), Comment: "as planned",
		Action: templates.TurnAction{Approve: approve, ApprovalID: turnIDs[0], Check: check}})
}

// TestTurnApproveAllIsOneBatch: Approve all sends one request, reaching
// the backend once, each member bound to its own revision and digest,
// and every member ends approved; the person is told once.
func TestTurnApproveAllIsOneBatch(t *testing.T) {
	h := newTurnHarness(t, true)
	h.ingestTurn(t, nil)
	tells := len(h.surf.tells)
	out := h.clickTurn(t, true, shownCheck(1, 1, 1), "U0KEVIN")
	if !out.Sent || out.Reason.Kind != say.TurnSending || out.Reason.Count != 3 {
		t.Fatalf("Approve all: %+v (%s)", out, out.Reason.String())
	}
	for _, id := range turnIDs {
		if a := h.state(t, id); len(a.Deciding) == 0 {
			t.Fatalf("%s: no decision in flight after the click was acknowledged", id)
		}
	}
	// A second click while the batch is in flight is told who decides.
	if again := h.clickTurn(t, true, shownCheck(1, 1, 1), "U0LEE"); again.Sent || again.Reason.Kind != say.Deciding {
		t.Fatalf("second click: %+v", again)
	}
	h.drain(t)
	got := h.fake.TurnDecisions()
	if len(got) != 1 {
		t.Fatalf("the backend got %d batches, want 1", len(got))
	}
	if n := len(h.fake.Decisions()); n != 0 {
		t.Fatalf("%d single decisions were sent beside the batch", n)
	}
	b := got[0]
	if !b.SignatureOK || b.Status != 200 || b.TurnID != "turn-7" || b.Request.Decision != "approve" ||
		b.Request.Actor != "user:kevin" || b.Request.Via.Surface != "slack" || b.Request.Comment != "as planned" || b.IdempotencyKey == "" {
		t.Fatalf("batch %+v", b)
	}
	if len(b.Request.Decisions) != 3 {
		t.Fatalf("batch decisions %+v", b.Request.Decisions)
	}
	for i, d := range b.Request.Decisions {
		if d.ApprovalID != turnIDs[i] || d.Revision != 1 || d.ArgsSHA256 != h.fake.Digest(turnIDs[i]) {
			t.Errorf("decisions[%d] = %+v, want %s revision 1 bound to %s", i, d, turnIDs[i], h.fake.Digest(turnIDs[i]))
		}
	}
	for _, id := range turnIDs {
		if a := h.state(t, id); a.State != string(approval.StateApproved) || len(a.Deciding) != 0 {
			t.Errorf("%s: state %s, deciding %s", id, a.State, a.Deciding)
		}
		if st, actor := h.fake.Status(id); st != "approved" || actor != "user:kevin" {
			t.Errorf("backend %s: %s by %s", id, st, actor)
		}
	}
	if n := len(h.surf.tells) - tells; n != 1 {
		t.Fatalf("told %d times, want once for the batch", n)
	}
	if tell := h.lastTell(t); !strings.Contains(tell.Text, "Recorded") {
		t.Fatalf("tell %q", tell.Text)
	}
}

// TestTurnDenyAllSkipsDecided: Deny all denies every member still
// waiting in one batch; a member decided on its own row is not in it.
func TestTurnDenyAllSkipsDecided(t *testing.T) {
	h := newTurnHarness(t, true)
	h.ingestTurn(t, nil)
	if res := h.decide(t, "t-label", 1, true, "U0KEVIN"); !res.Sent {
		t.Fatalf("row approve: %s", res.Reason.String())
	}
	h.drain(t)
	// Approve all needs every member waiting.
	if out := h.clickTurn(t, true, shownCheck(1, 1, 1), "U0KEVIN"); out.Sent || out.Reason.Kind != say.TurnIncomplete {
		t.Fatalf("Approve all with a member decided: %+v", out)
	}
	out := h.clickTurn(t, false, shownCheck(1, 1, 1), "U0KEVIN")
	if !out.Sent || out.Reason.Count != 2 {
		t.Fatalf("Deny all: %+v (%s)", out, out.Reason.String())
	}
	h.drain(t)
	got := h.fake.TurnDecisions()
	if len(got) != 1 || got[0].Status != 200 || got[0].Request.Decision != "deny" || len(got[0].Request.Decisions) != 2 ||
		got[0].Request.Decisions[0].ApprovalID != "t-merge" || got[0].Request.Decisions[1].ApprovalID != "t-comment" {
		t.Fatalf("batches %+v", got)
	}
	for id, want := range map[string]approval.State{"t-merge": approval.StateDenied, "t-comment": approval.StateDenied, "t-label": approval.StateApproved} {
		if a := h.state(t, id); a.State != string(want) {
			t.Errorf("%s: %s, want %s", id, a.State, want)
		}
	}
}

// TestTurnStaleBatchRefusedWhole: a reask of one member after the card
// was shown refuses the batch whole, in the core, naming the call that
// changed; so does a forged check; nothing reaches the backend.
func TestTurnStaleBatchRefusedWhole(t *testing.T) {
	h := newTurnHarness(t, true)
	h.ingestTurn(t, nil)
	shown := shownCheck(1, 1, 1)
	h.ingestMember(t, "t-comment", 2, nil)
	h.drain(t)
	out := h.clickTurn(t, true, shown, "U0KEVIN")
	if out.Sent || out.Reason.Kind != say.TurnChanged || out.Reason.Function != "acme_github.comment" {
		t.Fatalf("stale Approve all: %+v", out)
	}
	if !strings.Contains(out.Reason.String(), "acme_github.comment was asked again") {
		t.Fatalf("told %q", out.Reason.String())
	}
	if out := h.clickTurn(t, false, shown, "U0KEVIN"); out.Sent || out.Reason.Kind != say.TurnChanged {
		t.Fatalf("stale Deny all: %+v", out)
	}
	forged := shownCheck(1, 3, 1)
	if out := h.clickTurn(t, true, forged, "U0KEVIN"); out.Sent || out.Reason.Kind != say.TurnChanged || out.Reason.Function != "" {
		t.Fatalf("forged Approve all: %+v", out)
	}
	h.drain(t)
	if n := len(h.fake.TurnDecisions()) + len(h.fake.Decisions()); n != 0 {
		t.Fatalf("%d requests reached the backend", n)
	}
	for _, id := range turnIDs {
		if a := h.state(t, id); a.State != string(approval.StatePending) || len(a.Deciding) != 0 {
			t.Errorf("%s: %s, deciding %s", id, a.State, a.Deciding)
		}
	}
	// The card as it stands now decides.
	if out := h.clickTurn(t, true, shownCheck(1, 2, 1), "U0KEVIN"); !out.Sent {
		t.Fatalf("fresh Approve all: %s", out.Reason.String())
	}
	h.drain(t)
	if got := h.fake.TurnDecisions(); len(got) != 1 || got[0].Request.Decisions[1].Revision != 2 || got[0].Status != 200 {
		t.Fatalf("batches %+v", got)
	}
}

// TestTurnBackendRefusesWhole: the backend's stale_revision for one
// member applies none: every member waits again, and the person is
// told which call changed.
func TestTurnBackendRefusesWhole(t *testing.T) {
	h := newTurnHarness(t, true)
	h.ingestTurn(t, nil)
	// The backend moved on without the bot hearing yet.
	h.fake.AddApproval("t-label", 2, arguments(t, "a-merge1.json"), false)
	if out := h.clickTurn(t, true, shownCheck(1, 1, 1), "U0KEVIN"); !out.Sent {
		t.Fatalf("Approve all: %s", out.Reason.String())
	}
	h.drain(t)
	got := h.fake.TurnDecisions()
	if len(got) != 1 || got[0].Status != 409 || got[0].Code != "stale_revision" || got[0].ApprovalID != "t-label" {
		t.Fatalf("batches %+v", got)
	}
	for _, id := range turnIDs {
		if a := h.state(t, id); a.State != string(approval.StatePending) || len(a.Deciding) != 0 {
			t.Errorf("%s: %s, deciding %s", id, a.State, a.Deciding)
		}
		if st, _ := h.fake.Status(id); st != "pending" {
			t.Errorf("backend applied %s: %s", id, st)
		}
	}
	if tell := h.lastTell(t); !strings.Contains(tell.Text, "acme_github.label was asked again") {
		t.Fatalf("tell %q", tell.Text)
	}
}

// TestTurnApproveAllRefusedForWhatNeedsALook: Approve all is refused
// whole when a member is not shown in full or asks for more than one
// click; Deny all still takes them.
func TestTurnApproveAllRefusedForWhatNeedsALook(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(data map[string]any)
		want string
	}{
		{"destructive", func(data map[string]any) {
			data["call"].(map[string]any)["annotations"].(map[string]any)["destructiveHint"] = true
		}, "it is destructive."},
		{"redacted", func(data map[string]any) {
			data["call"].(map[string]any)["redaction"] = map[string]any{"redacted": true, "truncated": false}
		}, "not shown in full"},
		{"restricted", func(data map[string]any) { data["content"] = map[string]any{"restricted": true} }, "not shown on shared cards"},
		{"new to the job", func(data map[string]any) {
			data["flags"] = map[string]any{"new_to_job": []any{map[string]any{"argument": "repo", "role": "repository"}}}
		}, "new to this job"},
		{"class above", func(data map[string]any) {
			data["flags"] = map[string]any{"class_above": map[string]any{"class": "egress", "previous": "read"}}
		}, "class is above"},
		{"left out", func(data map[string]any) {
			data["roles"].([]any)[0].(map[string]any)["left_out"] = 2
		}, "left out or not compared"},
		{"typed confirmation", func(data map[string]any) { data["confirm"] = map[string]any{"argument": "pr"} }, "typed confirmation"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newTurnHarness(t, true)
			h.ingestTurn(t, func(id string, data map[string]any) {
				if id == "t-comment" {
					c.edit(data)
				}
			})
			out := h.clickTurn(t, true, shownCheck(1, 1, 1), "U0KEVIN")
			if out.Sent || !strings.Contains(out.Reason.String(), c.want) {
				t.Fatalf("Approve all: %+v (%s), want a refusal saying %q", out, out.Reason.String(), c.want)
			}
			if out.Reason.Kind == say.TurnNotAll && out.Reason.Function != "acme_github.comment" {
				t.Fatalf("refusal names %q", out.Reason.Function)
			}
			h.drain(t)
			if n := len(h.fake.TurnDecisions()); n != 0 {
				t.Fatalf("%d batches sent", n)
			}
			if out := h.clickTurn(t, false, shownCheck(1, 1, 1), "U0KEVIN"); !out.Sent {
				t.Fatalf("Deny all: %s", out.Reason.String())
			}
		})
	}
}

// TestTurnButtonsNeedTheFeature: without `turns` the bot sends no batch.
func TestTurnButtonsNeedTheFeature(t *testing.T) {
	h := newTurnHarness(t, false)
	h.ingestTurn(t, nil)
	if out := h.clickTurn(t, false, shownCheck(1, 1, 1), "U0KEVIN"); out.Sent || out.Reason.Kind != say.TurnUnknown {
		t.Fatalf("Deny all without the feature: %+v", out)
	}
	// Nor for a person who may not decide, or their own job.
	h2 := newTurnHarness(t, true)
	h2.ingestTurn(t, nil)
	for user, want := range map[string]string{"U0VIC": "cannot decide", "U0ADA": "your own job", "U0STRANGER": "not a member"} {
		if out := h2.clickTurn(t, false, shownCheck(1, 1, 1), user); out.Sent || !strings.Contains(out.Reason.String(), want) {
			t.Errorf("%s: %+v (%s)", user, out, out.Reason.String())
		}
	}
	h.drain(t)
	h2.drain(t)
	if n := len(h.fake.TurnDecisions()) + len(h2.fake.TurnDecisions()); n != 0 {
		t.Fatalf("%d batches sent", n)
	}
}

// TestTurnOneCardPerTarget: a turn's calls share one card at each
// target: the first posts it, each later one edits it to add its row,
// and its copy points at the same message; deciding them at once edits
// it, and the backend's message is said once per thread.
func TestTurnOneCardPerTarget(t *testing.T) {
	h := newTurnHarness(t, true)
	h.ingestMember(t, "t-merge", 1, nil)
	h.drain(t)
	if len(h.surf.posts) != 2 {
		t.Fatalf("%d posts, want one per target", len(h.surf.posts))
	}
	for _, p := range h.surf.posts {
		if p.Card.Turn == nil || len(p.Card.Turn.Rows) != 1 || p.Card.Turn.Members != 3 {
			t.Fatalf("first post is no turn card of one row in three: %+v", p.Card.Turn)
		}
		tc := templates.BuildTurn(*p.Card.Turn)
		if len(tc.Buttons) != 1 || tc.Buttons[0].Label != "Deny all" || !strings.Contains(tc.NoApproveAll, "not every call is here yet") {
			t.Fatalf("turn card of one arrived call: buttons %+v, note %q", tc.Buttons, tc.NoApproveAll)
		}
	}
	edits := len(h.surf.edits)
	h.ingestMember(t, "t-comment", 1, nil)
	h.ingestMember(t, "t-label", 1, nil)
	h.drain(t)
	if len(h.surf.posts) != 2 {
		t.Fatalf("%d posts after the turn arrived, want the 2 turn cards only", len(h.surf.posts))
	}
	last := h.surf.edits[len(h.surf.edits)-1]
	if len(h.surf.edits) <= edits || last.Card.Turn == nil || len(last.Card.Turn.Rows) != 3 {
		t.Fatalf("no edit adding the rows: %+v", h.surf.edits[edits:])
	}
	tc := templates.BuildTurn(*last.Card.Turn)
	if len(tc.Buttons) != 2 || tc.Buttons[1].Label != "Approve all 3" || tc.NoApproveAll != "" {
		t.Fatalf("the whole turn here: buttons %+v, note %q", tc.Buttons, tc.NoApproveAll)
	}
	for _, r := range tc.Rows {
		if len(r.Buttons) != 2 {
			t.Fatalf("row %d buttons %+v", r.Index, r.Buttons)
		}
	}
	refs := map[string]bool{}
	for _, id := range turnIDs {
		posts, err := h.store.PostList(context.Background(), id)
		if err != nil || len(posts) != 2 {
			t.Fatalf("posts of %s: %v %v", id, posts, err)
		}
		for _, p := range posts {
			refs[p.Channel+"/"+p.Ref] = true
		}
	}
	if len(refs) != 2 {
		t.Fatalf("the members' copies point at %d messages, want the 2 turn cards: %v", len(refs), refs)
	}
	act, err := templates.ParseTurnAction(tc.Buttons[1].Payload)
	if err != nil {
		t.Fatal(err)
	}
	replies := len(h.surf.replies)
	out := h.svc.ClickTurn(context.Background(), threads.TurnClickRequest{Action: act, Person: slackPerson("U0KEVIN")})
	if !out.Sent || out.Card == nil || out.Card.Turn == nil {
		t.Fatalf("Approve all from the card: %+v", out)
	}
	h.drain(t)
	if n := len(h.surf.replies) - replies; n != 2 {
		t.Fatalf("%d thread replies, want the backend's message once per turn card", n)
	}
	final := templates.BuildTurn(*h.surf.edits[len(h.surf.edits)-1].Card.Turn)
	for _, r := range final.Rows {
		if r.Tone != templates.ToneApproved || len(r.Buttons) != 0 {
			t.Errorf("row %d after Approve all: %s, buttons %+v", r.Index, r.Status, r.Buttons)
		}
	}
	if len(final.Buttons) != 0 {
		t.Errorf("the decided turn still offers %+v", final.Buttons)
	}
}

// TestTurnWithoutFeatureLooksAsToday: without `turns` each call has its
// own card, as before the feature.
func TestTurnWithoutFeatureLooksAsToday(t *testing.T) {
	h := newTurnHarness(t, false)
	h.ingestTurn(t, nil)
	if len(h.surf.posts) != 6 {
		t.Fatalf("%d posts, want one card per call and target", len(h.surf.posts))
	}
	for _, p := range h.surf.posts {
		if p.Card.Turn != nil {
			t.Fatalf("a turn card without the feature: %+v", p.Card.Turn)
		}
	}
}

// TestTurnTooLongForOneCard: a turn of more calls than one card shows
// keeps a card per call, and each says why.
func TestTurnTooLongForOneCard(t *testing.T) {
	h := newTurnHarness(t, true)
	members := []any{"t-merge"}
	for i := range templates.MaxTurnRows {
		members = append(members, "t-more"+string(rune('a'+i)))
	}
	h.ingestMember(t, "t-merge", 1, func(data map[string]any) {
		data["turn"] = map[string]any{"id": "turn-long", "members": members}
	})
	h.drain(t)
	if len(h.surf.posts) != 2 {
		t.Fatalf("%d posts", len(h.surf.posts))
	}
	for _, p := range h.surf.posts {
		if p.Card.Turn != nil {
			t.Fatal("a turn card for a turn longer than a card shows")
		}
		if c := templates.Build(p.Card.Input()); !strings.Contains(c.Turn, "one of a turn of 11 calls") {
			t.Fatalf("the call's card does not say why it is alone: %q", c.Turn)
		}
	}
}

// TestTurnCardOwnedByTheFirstToClaim: calls arriving out of order still
// share one card: the first to claim a place posts it, and a call earlier
// in the turn that arrives later joins it.
func TestTurnCardOwnedByTheFirstToClaim(t *testing.T) {
	h := newTurnHarness(t, true)
	h.ingestMember(t, "t-label", 1, nil)
	h.drain(t)
	h.ingestMember(t, "t-merge", 1, nil)
	h.ingestMember(t, "t-comment", 1, nil)
	h.drain(t)
	if len(h.surf.posts) != 2 {
		t.Fatalf("%d posts, want one turn card per target", len(h.surf.posts))
	}
	last := h.surf.edits[len(h.surf.edits)-1]
	if last.Card.Turn == nil || len(last.Card.Turn.Rows) != 3 || last.Post.ApprovalID != "t-label" {
		t.Fatalf("last edit %+v of %+v", last.Post, last.Card.Turn)
	}
	// The rows are in call order whoever posted the card.
	tc := templates.BuildTurn(*last.Card.Turn)
	for i, id := range turnIDs {
		if tc.Rows[i].ApprovalID != id {
			t.Fatalf("row %d is %s, want %s", i+1, tc.Rows[i].ApprovalID, id)
		}
	}
}

// TestTurnReaskedInFlightSendsNothing: a call asked again while its
// batch waits to be sent stops the batch whole: nothing reaches the
// backend, every call waits again, and the person is told which changed.
func TestTurnReaskedInFlightSendsNothing(t *testing.T) {
	h := newTurnHarness(t, true)
	h.ingestTurn(t, nil)
	if out := h.clickTurn(t, true, shownCheck(1, 1, 1), "U0KEVIN"); !out.Sent {
		t.Fatalf("Approve all: %s", out.Reason.String())
	}
	h.ingestMember(t, "t-label", 2, nil)
	h.drain(t)
	if n := len(h.fake.TurnDecisions()) + len(h.fake.Decisions()); n != 0 {
		t.Fatalf("%d requests reached the backend", n)
	}
	for _, id := range turnIDs {
		if a := h.state(t, id); a.State != string(approval.StatePending) || len(a.Deciding) != 0 {
			t.Errorf("%s: %s, deciding %s", id, a.State, a.Deciding)
		}
	}
	if tell := h.lastTell(t); !strings.Contains(tell.Text, "acme_github.label was asked again") {
		t.Fatalf("tell %q", tell.Text)
	}
}

// TestTurnMembersMustNameTheTurn: a member list cannot pull a call of no
// turn (or another turn) onto a turn card, nor into a batch.
func TestTurnMembersMustNameTheTurn(t *testing.T) {
	h := newTurnHarness(t, true)
	h.ingestEdited(t, "merge.json", func(data map[string]any) {}) // a-merge1: a call of no turn
	h.drain(t)
	posts := len(h.surf.posts)
	h.ingestMember(t, "t-comment", 1, func(data map[string]any) {
		data["turn"] = map[string]any{"id": "turn-7", "members": []any{"a-merge1", "t-comment"}}
	})
	h.drain(t)
	if len(h.surf.posts) != posts+2 {
		t.Fatalf("%d new posts, want the turn's own card per target", len(h.surf.posts)-posts)
	}
	for _, p := range h.surf.posts[posts:] {
		if p.Card.Turn == nil || len(p.Card.Turn.Rows) != 1 || p.Card.Turn.Rows[0].Input.Approval.ID != "t-comment" {
			t.Fatalf("the turn card shows %+v", p.Card.Turn)
		}
	}
	check := templates.TurnCheck([]templates.TurnMember{{ApprovalID: "t-comment", Revision: 1}})
	out := h.svc.ClickTurn(context.Background(), threads.TurnClickRequest{Person: slackPerson("U0KEVIN"),
		Action: templates.TurnAction{ApprovalID: "t-comment", Check: check}})
	if !out.Sent || out.Reason.Count != 1 {
		t.Fatalf("Deny all: %+v (%s)", out, out.Reason.String())
	}
	h.drain(t)
	if got := h.fake.TurnDecisions(); len(got) != 1 || len(got[0].Request.Decisions) != 1 || got[0].Request.Decisions[0].ApprovalID != "t-comment" {
		t.Fatalf("batches %+v", got)
	}
	if a := h.state(t, "a-merge1"); a.State != string(approval.StatePending) {
		t.Fatalf("a-merge1 was decided by another turn's batch: %s", a.State)
	}
}

// TestTurnOneCardAcrossReplicas: two replicas post a turn's calls at
// once, many turns over; each place still gets one turn card, every call's
// copy there pointing at it. On PostgreSQL (BOT_TEST_POSTGRES_URL) each
// replica's claim holds its own connection.
func TestTurnOneCardAcrossReplicas(t *testing.T) {
	for _, pg := range []bool{false, true} {
		t.Run(map[bool]string{false: "sqlite", true: "postgres"}[pg], func(t *testing.T) {
			st := openStormStore(t, pg)
			cfg, err := config.Parse("bot.yaml", []byte(testConfig), testEnv)
			if err != nil {
				t.Fatal(err)
			}
			back := backendtest.New(t, standin.Options{Secrets: [][]byte{[]byte(testCallsSecret)}})
			clock := clockwork.NewFakeClockAt(threadstest.FixtureNow)
			rec := &recorder{}
			replica := func() *threads.Service {
				return threadstest.Service(t, threadstest.ServiceOptions{Store: st, Tenants: cfg, Backend: back,
					CallsSecret: testCallsSecret, Clock: clock, Turns: true,
					Surfaces: map[string]threads.Surface{"slack": rec, "discord": rec}})
			}
			a, b := replica(), replica()
			const turns = 5
			for n := range turns {
				ids := []any{fmt.Sprintf("r%d-1", n), fmt.Sprintf("r%d-2", n), fmt.Sprintf("r%d-3", n)}
				for i, id := range ids {
					threadstest.Ingest(t, []*threads.Service{a, b}[i%2], "merge.json", func(ev map[string]any) {
						ev["id"] = "evt-" + id.(string)
						data := ev["data"].(map[string]any)
						data["id"] = id
						data["turn"] = map[string]any{"id": fmt.Sprintf("turn-%d", n), "members": ids}
					})
				}
			}
			drainBoth := func() {
				var wg sync.WaitGroup
				for _, svc := range []*threads.Service{a, b} {
					wg.Go(func() {
						if _, err := svc.DrainOutbox(context.Background()); err != nil {
							t.Error(err)
						}
					})
				}
				wg.Wait()
			}
			drainBoth()
			clock.Advance(5 * time.Second) // a call that waited for its turn's card is due again
			drainBoth()
			rec.mu.Lock()
			posts := len(rec.posts)
			rec.mu.Unlock()
			if posts != 2*turns {
				t.Fatalf("%d cards posted, want one per turn and place (%d)", posts, 2*turns)
			}
			for n := range turns {
				refs := map[string]bool{}
				for i := 1; i <= 3; i++ {
					ps, err := st.PostList(context.Background(), fmt.Sprintf("r%d-%d", n, i))
					if err != nil || len(ps) != 2 {
						t.Fatalf("posts of r%d-%d: %v %v", n, i, ps, err)
					}
					for _, p := range ps {
						refs[p.Channel+"/"+p.Ref] = true
					}
				}
				if len(refs) != 2 {
					t.Fatalf("turn %d's copies point at %d messages, want 2", n, len(refs))
				}
			}
		})
	}
}

// TestTurnOfOneCallLooksAsToday: a turn of one call is a card of its own,
// with the feature too.
func TestTurnOfOneCallLooksAsToday(t *testing.T) {
	h := newTurnHarness(t, true)
	h.ingestMember(t, "t-merge", 1, func(data map[string]any) {
		data["turn"] = map[string]any{"id": "turn-1", "members": []any{"t-merge"}}
	})
	h.drain(t)
	if len(h.surf.posts) != 2 {
		t.Fatalf("%d posts", len(h.surf.posts))
	}
	for _, p := range h.surf.posts {
		if p.Card.Turn != nil {
			t.Fatalf("a turn card for a turn of one call: %+v", p.Card.Turn)
		}
		if c := templates.Build(p.Card.Input()); c.Turn != "" {
			t.Fatalf("the card's turn line: %q", c.Turn)
		}
	}
}
