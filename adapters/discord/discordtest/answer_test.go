package discordtest_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"approvalsbot/adapters/discord/discordtest"
)

const (
	token   = "MTEwMDAwMDAwMDAwMDAwMDAwMQ.Gx1234.fake-bot-token-0123456789"
	appID   = "1100000000000000001"
	guildID = "110000000000000099"
	channel = "112233445566778899"
	user    = "223344556677889900"
)

// bot is a stand-in for the bot's interactions endpoint: it answers each
// interaction with whatever answer holds (JSON of an interaction response).
type bot struct {
	answer atomic.Value // string
	seen   atomic.Value // string: the last interaction's body
}

func (b *bot) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Type int `json:"type"`
	}
	var raw bytes.Buffer
	_, _ = raw.ReadFrom(r.Body)
	b.seen.Store(raw.String())
	_ = json.Unmarshal(raw.Bytes(), &in)
	w.Header().Set("Content-Type", "application/json")
	if in.Type == int(discordgo.InteractionPing) {
		_, _ = w.Write([]byte(`{"type":1}`))
		return
	}
	_, _ = w.Write([]byte(b.answer.Load().(string)))
}

// last is the last interaction the bot was sent.
func (b *bot) last(t *testing.T) string {
	t.Helper()
	s, _ := b.seen.Load().(string)
	if s == "" {
		t.Fatal("the bot was sent no interaction")
	}
	return s
}

type fixture struct {
	fake *discordtest.Server
	bot  *bot
	skew *atomic.Int64
	card string // a message with an Approve button in channel
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	skew := &atomic.Int64{}
	fake := discordtest.New(t, discordtest.Options{Token: token, ApplicationID: appID,
		Now: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }})
	fake.AddGuild(guildID, "acme", discordgo.PermissionAll)
	fake.AddChannel(guildID, channel, "approvals")
	b := &bot{}
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	fake.SetInteractionsURL(srv.URL)
	f := &fixture{fake: fake, bot: b, skew: skew}
	status, body := f.call(t, "POST", "/channels/"+channel+"/messages", "Bot "+token, `{"content":"Waiting for a decision",
		"components":[{"type":1,"components":[{"type":2,"style":3,"label":"Approve","custom_id":"ab1|approve|a-1|1"},
		{"type":2,"style":4,"label":"Deny","custom_id":"ab1|deny|a-1|1"}]}]}`)
	if status != http.StatusOK {
		t.Fatalf("post the card: %d %s", status, body)
	}
	var m struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal([]byte(body), &m)
	f.card = m.ID
	return f
}

// call makes one REST call to the fake, as discordgo would.
func (f *fixture) call(t *testing.T, method, path, auth, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, f.fake.URL()+"api/v"+discordgo.APIVersion+path, bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(res.Body)
	return res.StatusCode, b.String()
}

func (f *fixture) editOriginal(t *testing.T, tok, body string) (int, string) {
	t.Helper()
	return f.call(t, http.MethodPatch, "/webhooks/"+appID+"/"+tok+"/messages/@original", "", body)
}

func (f *fixture) click(customID string) discordtest.Result {
	return f.fake.ClickButton(discordtest.Click{User: user, Channel: channel, CustomID: customID})
}

const deciding = `{"type":7,"data":{"content":"**Recorded: approval is being sent…**","components":[],"embeds":[{"title":"acme_github.merge"}]}}`

// TestUpdateMessageEditsTheClickedMessage: an UPDATE_MESSAGE answer
// edits the message the button is on, as one edit of it.
func TestUpdateMessageEditsTheClickedMessage(t *testing.T) {
	f := newFixture(t)
	f.bot.answer.Store(deciding)
	res := f.click("ab1|approve|a-1|1")
	if !res.Answered() || res.Response.Type != discordgo.InteractionResponseUpdateMessage || !res.Response.Components ||
		len(res.Response.Buttons) != 0 {
		t.Fatalf("answer %+v (%s)", res.Response, res.Problem)
	}
	m, _ := f.fake.Message(f.card)
	edits := f.fake.EditsOf(f.card)
	if m.Content != "**Recorded: approval is being sent…**" || len(m.Buttons) != 0 || len(m.Embeds) != 1 || m.Edits != 1 ||
		len(edits) != 1 || edits[0].Via != discordtest.EditUpdate || edits[0].Token != res.Token {
		t.Fatalf("message %+v, edits %+v: want it updated by the answer", m, edits)
	}
	if !f.fake.Answered(res.Token) {
		t.Fatal("the interaction is not answered")
	}
}

// TestUpdateMessageIsRefused: an UPDATE_MESSAGE that Discord would not
// take changes nothing.
func TestUpdateMessageIsRefused(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct {
		name, customID, answer, problem string
	}{
		{"a click on no message", "ab1|approve|a-forged|1", deciding, "no message"},
		{"content over 2000", "ab1|approve|a-1|1", `{"type":7,"data":{"content":"` + strings.Repeat("x", 2001) + `"}}`, "content"},
		{"six rows", "ab1|approve|a-1|1", `{"type":7,"data":{"components":[` +
			strings.TrimSuffix(strings.Repeat(`{"type":1,"components":[{"type":2,"style":1,"label":"x","custom_id":"c"}]},`, 6), ",") + `]}}`,
			"at most 5 rows"},
		{"made ephemeral", "ab1|approve|a-1|1", `{"type":7,"data":{"content":"x","flags":64}}`, "flags"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f.bot.answer.Store(c.answer)
			res := f.click(c.customID)
			if res.Answered() || !strings.Contains(res.Problem, c.problem) {
				t.Fatalf("answer accepted or refused for another reason: %q", res.Problem)
			}
			if m, _ := f.fake.Message(f.card); m.Edits != 0 || len(m.Buttons) != 2 {
				t.Fatalf("a refused answer changed the card: %+v", m)
			}
		})
	}
}

// TestEditOriginal: @original edits the clicked message while the token
// lives, within a message's limits, and is refused as Discord refuses it.
func TestEditOriginal(t *testing.T) {
	f := newFixture(t)
	f.bot.answer.Store(deciding)
	res := f.click("ab1|approve|a-1|1")
	if !res.Answered() {
		t.Fatal(res.Problem)
	}
	final := `{"content":"Approved by user:kevin","components":[],"embeds":[{"title":"acme_github.merge"}]}`
	if status, body := f.editOriginal(t, res.Token, final); status != http.StatusOK || !strings.Contains(body, `"id":"`+f.card+`"`) {
		t.Fatalf("@original: %d %s", status, body)
	}
	m, _ := f.fake.Message(f.card)
	edits := f.fake.EditsOf(f.card)
	if m.Content != "Approved by user:kevin" || m.Edits != 2 || len(edits) != 2 || edits[1].Via != discordtest.EditOriginal ||
		edits[1].Token != res.Token || edits[1].Seq <= edits[0].Seq {
		t.Fatalf("message %+v, edits %+v", m, edits)
	}

	for _, c := range []struct {
		name, token, body string
		status, code      int
	}{
		{"an unknown token", "aW50ZXJhY3Rpb24unknown", final, http.StatusNotFound, discordtest.CodeUnknownWebhook},
		{"content over 2000", res.Token, `{"content":"` + strings.Repeat("x", 2001) + `"}`, http.StatusBadRequest, discordtest.CodeInvalidFormBody},
		{"made ephemeral", res.Token, `{"content":"x","flags":64}`, http.StatusBadRequest, discordtest.CodeInvalidFormBody},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, body := f.editOriginal(t, c.token, c.body)
			var e struct {
				Code int `json:"code"`
			}
			_ = json.Unmarshal([]byte(body), &e)
			if status != c.status || e.Code != c.code {
				t.Fatalf("%d %s, want %d code %d", status, body, c.status, c.code)
			}
		})
	}
	if m2, _ := f.fake.Message(f.card); m2.Edits != 2 {
		t.Fatalf("a refused @original edited the card: %+v", m2)
	}

	// Past the token's 15 minutes: Invalid Webhook Token.
	f.skew.Store(int64(16 * time.Minute))
	status, body := f.editOriginal(t, res.Token, final)
	if status != http.StatusUnauthorized || !strings.Contains(body, "50027") {
		t.Fatalf("@original after 15 minutes: %d %s", status, body)
	}
}

// TestEditOriginalOfOtherAnswers: before the answer there is no webhook;
// after a modal there is no original message; after a message answer the
// original is that answer, not a channel message.
func TestEditOriginalOfOtherAnswers(t *testing.T) {
	f := newFixture(t)
	f.bot.answer.Store(`{"type":9,"data":{"custom_id":"ab1|deny|a-1|1","title":"Deny","components":[{"type":18,"label":"Reason","component":{"type":4,"custom_id":"reason","style":2}}]}}`)
	modal := f.click("ab1|deny|a-1|1")
	if !modal.Answered() {
		t.Fatal(modal.Problem)
	}
	if status, _ := f.editOriginal(t, modal.Token, `{"content":"x"}`); status != http.StatusNotFound {
		t.Fatalf("@original after a modal: %d, want 404 Unknown Message", status)
	}
	// The modal's submission is on the card the modal was opened from:
	// its UPDATE_MESSAGE edits that card.
	f.bot.answer.Store(deciding)
	sub := f.fake.SubmitModal(discordtest.Submit{User: user, Channel: channel, CustomID: "ab1|deny|a-1|1",
		Values: map[string]string{"reason": "not now"}})
	if !sub.Answered() {
		t.Fatal(sub.Problem)
	}
	if m, _ := f.fake.Message(f.card); m.Edits != 1 || len(m.Buttons) != 0 {
		t.Fatalf("the submission's update did not edit the card: %+v", m)
	}
	// Submitted once: a second submission of that modal is on no message.
	again := f.fake.SubmitModal(discordtest.Submit{User: user, Channel: channel, CustomID: "ab1|deny|a-1|1",
		Values: map[string]string{"reason": "not now"}})
	if again.Answered() || !strings.Contains(again.Problem, "no message") {
		t.Fatalf("a second submission's update: %q", again.Problem)
	}

	f.bot.answer.Store(`{"type":4,"data":{"content":"only you","flags":64}}`)
	eph := f.click("ab1|approve|a-1|1")
	if !eph.Answered() {
		t.Fatal(eph.Problem)
	}
	before := f.fake.Messages(channel)
	if status, body := f.editOriginal(t, eph.Token, `{"content":"only you, edited"}`); status != http.StatusOK ||
		!strings.Contains(body, "only you, edited") {
		t.Fatalf("@original of a message answer: %d %s", status, body)
	}
	after := f.fake.Messages(channel)
	if len(after) != len(before) || after[0].Content != before[0].Content || after[0].Edits != before[0].Edits {
		t.Fatalf("@original of an ephemeral answer changed the channel: %+v", after)
	}
}

// TestSendFlags: a channel message takes SUPPRESS_EMBEDS, which hides
// every embed it carries, its sender's own too, but not EPHEMERAL; an
// interaction's answer and follow-ups take both.
func TestSendFlags(t *testing.T) {
	f := newFixture(t)
	messages := "/channels/" + channel + "/messages"
	auth := "Bot " + token
	if status, body := f.call(t, "POST", messages, auth, `{"content":"see https://example.com/x","flags":4}`); status != http.StatusOK {
		t.Fatalf("a message with SUPPRESS_EMBEDS: %d %s", status, body)
	}
	if status, body := f.call(t, "POST", messages, auth, `{"content":"a card","embeds":[{"title":"acme_github.merge"}],"flags":4}`); status != http.StatusOK {
		t.Fatalf("an embed with SUPPRESS_EMBEDS: %d %s", status, body)
	}
	if status, _ := f.call(t, "POST", messages, auth, `{"content":"only you","flags":64}`); status != http.StatusBadRequest {
		t.Fatalf("an ephemeral channel message answered %d, want 400", status)
	}
	got := f.fake.Messages(channel)
	if len(got) != 3 || got[1].Flags != discordgo.MessageFlagsSuppressEmbeds || got[1].EmbedsDropped ||
		len(got[2].Embeds) != 0 || !got[2].EmbedsDropped {
		t.Fatalf("messages %+v: want the flag kept, and the embed of the second hidden", got)
	}

	f.bot.answer.Store(`{"type":4,"data":{"content":"only you","flags":68}}`)
	res := f.click("ab1|approve|a-1|1")
	if !res.Answered() || res.Response.Flags != discordgo.MessageFlagsEphemeral|discordgo.MessageFlagsSuppressEmbeds {
		t.Fatalf("an ephemeral answer with SUPPRESS_EMBEDS: %+v (%s)", res.Response, res.Problem)
	}
	f.bot.answer.Store(`{"type":4,"data":{"content":"loud","flags":2}}`)
	if bad := f.click("ab1|approve|a-1|1"); bad.Answered() || !strings.Contains(bad.Problem, "flags") {
		t.Fatalf("an answer flagged IS_CROSSPOST: %+v (%s), want it refused", bad.Response, bad.Problem)
	}
	followups := "/webhooks/" + appID + "/" + res.Token
	if status, body := f.call(t, "POST", followups, "", `{"content":"details","embeds":[{"title":"card"}],"flags":68}`); status != http.StatusNoContent {
		t.Fatalf("a follow-up with SUPPRESS_EMBEDS: %d %s", status, body)
	}
	if status, _ := f.call(t, "POST", followups, "", `{"content":"x","flags":2}`); status != http.StatusBadRequest {
		t.Fatalf("a follow-up flagged IS_CROSSPOST answered %d, want 400", status)
	}
	fu := f.fake.AllFollowups()
	if len(fu) != 1 || !fu[0].EmbedsDropped || len(fu[0].Embeds) != 0 || !fu[0].Ephemeral() {
		t.Fatalf("follow-ups %+v: want one, ephemeral, its embed hidden", fu)
	}
}
