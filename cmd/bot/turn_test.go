package main

import (
	"path/filepath"
	"strings"
	"testing"

	"approvalsbot/approval"
	"approvalsbot/internal/fixtures"
)

// `bot turn` sends three requests as one turn: each under a fresh id, each
// naming the same turn and the three fresh ids in the order given, signed
// with the events secret alone.
func TestTurnSendsThreeRequestsAsOneTurn(t *testing.T) {
	t.Parallel()
	root, err := fixtures.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	example := filepath.Join(root, "examples", "bot.yaml")
	ev := func(name string) string { return filepath.Join(root, "testdata", "fixtures", "events", name) }
	sink := newEventSink(t)
	onlyEvents := map[string]string{"BOT_EVENTS_SECRET": e2eEventsSecret}
	code, out, errOut := runBot(t, onlyEvents, "turn", "--config", example, "--url", sink.url,
		ev("search.json"), ev("late-requested.json"), ev("unknown.json"))
	if code != 0 {
		t.Fatalf("bot turn: exit %d\n%s%s", code, out, errOut)
	}
	sink.mu.Lock()
	bodies := sink.bodies
	sink.mu.Unlock()
	if len(bodies) != 3 {
		t.Fatalf("the bot received %d events, want 3", len(bodies))
	}
	var members []string
	turnID := ""
	for i, b := range bodies {
		parsed, err := approval.Parse(b)
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		a := parsed.Approval
		if i == 0 {
			members, turnID = a.Turn.Members, a.Turn.ID
		}
		if a.Turn.ID != turnID || len(a.Turn.Members) != 3 || a.Turn.Members[i] != a.ID || !a.InTurn() {
			t.Errorf("event %d: approval %s in turn %+v", i, a.ID, a.Turn)
		}
	}
	for i, base := range []string{"a-search1.", "a-late1.", "a-unk1."} {
		if !strings.HasPrefix(members[i], base) {
			t.Errorf("members[%d] = %s, want a fresh id of %s", i, members[i], base)
		}
	}
	if !strings.Contains(out, "as turn "+turnID) {
		t.Errorf("the command did not name the turn:\n%s", out)
	}
	// A file that is no request makes no turn; nothing is sent.
	code, _, errOut = runBot(t, onlyEvents, "turn", "--config", example, "--url", sink.url,
		ev("search.json"), ev("merge-resolved.json"), ev("unknown.json"))
	if code != 1 || !strings.Contains(errOut, "not an approval.requested event") {
		t.Errorf("bot turn with a resolution: exit %d %s", code, errOut)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if len(sink.bodies) != 3 {
		t.Errorf("%d events sent after a refused turn", len(sink.bodies)-3)
	}
}
