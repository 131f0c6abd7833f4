package discordtest_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"approvalsbot/adapters/discord/discordtest"
)

// TestBodiesAreCheckedFieldByField: the fake takes the fields Discord's
// API documents and refuses anything else, as a test of the bot's bodies
// needs: discordgo's own bodies (a MessageSend's nulls, an interaction
// response's tts and content in a modal, a MessageEdit's ID and Channel
// keys), a deprecated action row in a modal, a null where a field is to
// be left out, a wrong type, and a missing required field.
func TestBodiesAreCheckedFieldByField(t *testing.T) {
	marshal := func(v any) []byte {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	send := marshal(&discordgo.MessageSend{Content: "x"})
	edit := marshal(discordgo.NewMessageEdit("1", "2").SetContent("x"))
	modal := marshal(&discordgo.InteractionResponse{Type: discordgo.InteractionResponseModal, Data: &discordgo.InteractionResponseData{
		CustomID: "m", Title: "t", Components: []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
			discordgo.TextInput{CustomID: "r", Label: "Why", Style: discordgo.TextInputParagraph}}}}}})
	update := marshal(&discordgo.InteractionResponse{Type: discordgo.InteractionResponseUpdateMessage,
		Data: &discordgo.InteractionResponseData{Content: "x"}})
	followup := marshal(&discordgo.WebhookParams{Content: "x"})
	tests := []struct {
		name  string
		check func([]byte) string
		body  []byte
		want  string // "" accepts
	}{
		{"discordgo's MessageSend", discordtest.CheckMessageCreate, send, "null where the field is to be left out"},
		{"discordgo's MessageEdit", discordtest.CheckMessageEdit, edit, "Channel: not a field"},
		{"discordgo's modal", discordtest.CheckResponse, modal, "action rows in modals are deprecated"},
		{"discordgo's update", discordtest.CheckResponse, update, "null where the field is to be left out"},
		{"discordgo's follow-up", discordtest.CheckFollowup, followup, "null where the field is to be left out"},
		{"a modal of action rows", discordtest.CheckResponse, []byte(`{"type":9,"data":{"custom_id":"m","title":"t","components":[{"type":1,"components":[{"type":4,"custom_id":"r","style":2}]}]}}`),
			"action rows in modals are deprecated"},
		{"a text input with its own label in a label", discordtest.CheckResponse, []byte(`{"type":9,"data":{"custom_id":"m","title":"t","components":[{"type":18,"label":"L","component":{"type":4,"custom_id":"r","style":2,"label":"L"}}]}}`),
			"component.label: not a field"},
		{"a modal of labels", discordtest.CheckResponse, []byte(`{"type":9,"data":{"custom_id":"m","title":"t","components":[{"type":10,"content":"Sure?"},{"type":18,"label":"L","description":"d","component":{"type":4,"custom_id":"r","style":2,"required":false,"max_length":10}}]}}`), ""},
		{"a message", discordtest.CheckMessageCreate, []byte(`{"content":"x","embeds":[{"title":"t","footer":{"text":"f"}}],"components":[{"type":1,"components":[{"type":2,"style":3,"label":"Approve","custom_id":"a"}]}],"allowed_mentions":{"parse":[]},"flags":4}`), ""},
		{"a wrong type", discordtest.CheckMessageCreate, []byte(`{"content":1}`), "content: want a string"},
		{"a missing required field", discordtest.CheckMessageCreate, []byte(`{"embeds":[{"footer":{}}]}`), "embeds[0].footer.text: required"},
		{"a null the edit takes", discordtest.CheckMessageEdit, []byte(`{"content":null,"components":[]}`), ""},
		{"data where a type takes none", discordtest.CheckResponse, []byte(`{"type":6,"data":{}}`), "takes none"},
		{"a response with tts in a modal", discordtest.CheckResponse, []byte(`{"type":9,"data":{"custom_id":"m","title":"t","tts":false,"components":[{"type":10,"content":"x"}]}}`),
			"data.tts: not a field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.check(tt.body)
			if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Fatalf("%s\nchecked %q, want %q", tt.body, got, tt.want)
			}
		})
	}
}
