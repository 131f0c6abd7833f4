package threads_test

import (
	"encoding/json"
	"testing"
	"time"

	"approvalsbot/approval"
)

// hiddenCharsEvent is merge.json with a zero width space and a tag character
// in the function name and in an argument's key and value, the digest
// the backend's own for those arguments; it returns the event's body,
// the event and the full arguments.
func hiddenCharsEvent(t *testing.T) ([]byte, *approval.Event, json.RawMessage) {
	t.Helper()
	body, _ := readEvent(t, "merge.json")
	var ev map[string]any
	if err := json.Unmarshal(body, &ev); err != nil {
		t.Fatal(err)
	}
	args := json.RawMessage("{\"repo\":\"acme/api\",\"pr\":1234,\"method\":\"squ\u200bash\",\"note\U000E0041\":\"ok\"}")
	digest, err := approval.Digest(args)
	if err != nil {
		t.Fatal(err)
	}
	call := ev["data"].(map[string]any)["call"].(map[string]any)
	call["function"] = "acme_github.\u200bmerge"
	call["arguments"] = args
	call["args_sha256"] = digest
	body, err = json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := approval.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	return body, parsed, args
}

// TestShowArgumentsShowsHiddenCharacters: what Show all arguments and the
// page print as they are (the function name, the whole arguments) shows
// each invisible character, as the card does: the name as [U+200B], the
// arguments as JSON escapes that still decode to the call's own strings.
func TestShowArgumentsShowsHiddenCharacters(t *testing.T) {
	h := newDecideHarness(t, time.Minute)
	body, ev, args := hiddenCharsEvent(t)
	h.fake.AddApproval("a-merge1", 1, args, false)
	if _, err := h.ingestBody(body, ev); err != nil {
		t.Fatal(err)
	}
	res, err := showArguments(h.svc, "a-merge1", "U0KEVIN")
	if err != nil || !res.Refusal.IsZero() {
		t.Fatalf("show: %+v, %v", res, err)
	}
	if res.Function != "acme_github.[U+200B]merge" {
		t.Errorf("function %q", res.Function)
	}
	for _, r := range string(res.Arguments) + res.Function {
		if r != '\n' && approval.Invisible(r) {
			t.Errorf("U+%04X shown as is in %q", r, res.Arguments)
		}
	}
	var back map[string]any
	if err := json.Unmarshal(res.Arguments, &back); err != nil || back["method"] != "squ\u200bash" || back["note\U000E0041"] != "ok" {
		t.Errorf("arguments %s decode to %v (%v)", res.Arguments, back, err)
	}
}
