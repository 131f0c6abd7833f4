package templates

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestDiscordEdit: an edit of a decided card removes its buttons.
func TestDiscordEdit(t *testing.T) {
	r := newRenderer(t)
	a := loadApproval(t, "merge.json")
	for _, state := range []string{"pending", "approved"} {
		send := r.Discord(cardIn(t, a, state))
		e := send.Edit()
		if e.Content != send.Content || len(e.Embeds) != 1 {
			t.Fatalf("%s: edit %+v", state, e)
		}
		if e.Components == nil || len(e.Components) != len(send.Components) {
			t.Errorf("%s: components %v, want %d rows", state, e.Components, len(send.Components))
		}
		// Discord removes buttons only when told so with an empty list.
		js, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if state != "pending" && !strings.Contains(string(js), `"components":[]`) {
			t.Errorf("%s: the edit keeps the buttons: %s", state, js)
		}
	}
}

// TestConcurrentUse: one Renderer serves every worker at once.
func TestConcurrentUse(t *testing.T) {
	r := newRenderer(t)
	c := cardIn(t, loadApproval(t, "mail.json"), "pending")
	want := r.Text(c)
	done := make(chan string)
	for range 8 {
		go func() {
			_ = r.Discord(c)
			_ = r.Email(c)
			done <- r.Text(c)
		}()
	}
	for range 8 {
		if got := <-done; got != want {
			t.Error("concurrent renderings differ")
		}
	}
}
