package discordtest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"approvalsbot/adapters/discord/discordtest"
)

// menuRow is an action row holding a string select of n options.
func menuRow(id string, n int, extra string) string {
	opts := make([]string, n)
	for i := range opts {
		opts[i] = fmt.Sprintf(`{"label":"Choice %d","value":"v%d"}`, i, i)
	}
	return `{"type":1,"components":[{"type":3,"custom_id":"` + id + `","placeholder":"More choices…","options":[` +
		strings.Join(opts, ",") + `],"min_values":1,"max_values":1` + extra + `}]}`
}

// TestMenusAreHeldToDiscordsBounds: a message's action row holds one
// string select alone, of 1 to 25 options with distinct values, a
// placeholder of at most 150 and no "required" (a modal's field only);
// a choice in it reaches the bot with its one value, on the message.
func TestMenusAreHeldToDiscordsBounds(t *testing.T) {
	f := newFixture(t)
	button := `{"type":2,"style":2,"label":"B","custom_id":"b"}`
	for name, c := range map[string]struct {
		rows string
		want string // "" accepts
	}{
		"a menu":                  {menuRow("m", 25, ""), ""},
		"26 options":              {menuRow("m", 26, ""), "options: 1 to 25"},
		"required outside modals": {menuRow("m", 2, `,"required":true`), "required: not a field"},
		"a long placeholder":      {strings.Replace(menuRow("m", 2, ""), "More choices…", strings.Repeat("x", 151), 1), "placeholder: over 150"},
		"a value twice":           {strings.Replace(menuRow("m", 2, ""), `"v1"`, `"v0"`, 1), "a value twice"},
		"a menu beside a button": {`{"type":1,"components":[` + button + `,{"type":3,"custom_id":"m","options":[{"label":"a","value":"a"}]}]}`,
			"alone in its row"},
		"a menu's id twice": {menuRow("b", 2, "") + `,{"type":1,"components":[` + button + `]}`, "COMPONENT_CUSTOM_ID_DUPLICATED"},
	} {
		t.Run(name, func(t *testing.T) {
			status, body := f.call(t, "POST", "/channels/"+channel+"/messages", "Bot "+token, `{"content":"Q","components":[`+c.rows+`]}`)
			if c.want == "" && status != http.StatusOK || c.want != "" && (status != http.StatusBadRequest || !strings.Contains(body, c.want)) {
				t.Fatalf("%d %s, want %q", status, body, c.want)
			}
		})
	}
	status, body := f.call(t, "POST", "/channels/"+channel+"/messages", "Bot "+token, `{"content":"Q","components":[`+menuRow("pick", 3, "")+`]}`)
	if status != http.StatusOK {
		t.Fatalf("%d %s", status, body)
	}
	var m struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal([]byte(body), &m)
	msg, _ := f.fake.Message(m.ID)
	if len(msg.Menus) != 1 || msg.Menus[0].CustomID != "pick" || len(msg.Menus[0].Options) != 3 || msg.Menus[0].Options[2].Value != "v2" {
		t.Fatalf("menus %+v", msg.Menus)
	}
	f.bot.answer.Store(`{"type":6}`)
	res := f.fake.ChooseOption(discordtest.Choose{User: user, Channel: channel, CustomID: "pick", Values: []string{"v2"}})
	if !res.Answered() || res.Response.Type != discordgo.InteractionResponseDeferredMessageUpdate {
		t.Fatalf("answer %+v (%s)", res.Response, res.Problem)
	}
	in := f.bot.last(t)
	if !strings.Contains(in, `"component_type":3`) || !strings.Contains(in, `"values":["v2"]`) || !strings.Contains(in, m.ID) {
		t.Fatalf("interaction %s: want the choice, its value and its message", in)
	}
}
