package slacktest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"approvalsbot/adapters/slack/slacktest"
)

// TestFakeSpeaksSlackGo drives the fake with slack-go itself: form and
// JSON bodies, the token, unique ts, the paces, permalinks by GET, the
// five uses of a response_url, and replace_original through a click's.
func TestFakeSpeaksSlackGo(t *testing.T) {
	ctx := context.Background()
	s := slacktest.New(t, slacktest.Options{Token: "xoxb-1", PostRate: 1, PostBurst: 2, UpdateRate: 0.5, UpdateBurst: 1,
		RetryAfter: 3 * time.Second, Scopes: []string{"chat:write"}})
	s.AddChannel("C1", "one", true)
	s.AddUser("U1")
	api := slack.New("xoxb-1", slack.OptionAPIURL(s.APIURL()))

	if _, err := slack.New("xoxb-wrong", slack.OptionAPIURL(s.APIURL())).AuthTestContext(ctx); err == nil || err.Error() != "invalid_auth" {
		t.Fatalf("wrong token: %v", err)
	}
	auth, err := api.AuthTestContext(ctx)
	if err != nil || auth.Header.Get("X-OAuth-Scopes") != "chat:write" {
		t.Fatalf("auth.test: %+v %v", auth, err)
	}
	_, ts1, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("a", false))
	if err != nil {
		t.Fatal(err)
	}
	_, ts2, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("b", false), slack.MsgOptionTS(ts1))
	if err != nil || ts1 == ts2 || !strings.HasPrefix(ts1, "1700000000.") {
		t.Fatalf("ts %q %q: %v", ts1, ts2, err)
	}
	_, _, err = api.PostMessageContext(ctx, "C1", slack.MsgOptionText("c", false))
	var rl *slack.RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter != 3*time.Second || s.RateLimited() != 1 {
		t.Fatalf("third post in a second: %v", err)
	}
	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("d", false), slack.MsgOptionTS("1.2")); err == nil {
		t.Fatal("a reply to no message was taken")
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, "C1", ts1, slack.MsgOptionText("a2", false)); err != nil {
		t.Fatal(err)
	}
	limited := s.RateLimited()
	if _, _, _, err := api.UpdateMessageContext(ctx, "C1", ts1, slack.MsgOptionText("a2", false)); !errors.As(err, &rl) ||
		rl.RetryAfter != 3*time.Second || s.RateLimited() != limited+1 {
		t.Fatalf("a second chat.update within the workspace's pace: %v", err)
	}
	if got := s.Channel("C1"); len(got) != 2 || got[0].Text != "a2" || got[1].ThreadTS != ts1 {
		t.Fatalf("channel %+v", got)
	}
	link, err := api.GetPermalinkContext(ctx, &slack.PermalinkParameters{Channel: "C1", Ts: ts1})
	if err != nil || link != "https://acme.slack.test/archives/C1/p"+strings.ReplaceAll(ts1, ".", "") {
		t.Fatalf("permalink %q %v", link, err)
	}
	dm, _, _, err := api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{"U1"}})
	if err != nil || dm.ID != "DU1" {
		t.Fatalf("DM %+v %v", dm, err)
	}
	if _, err := api.OpenViewContext(ctx, "trig", slack.ModalViewRequest{Type: slack.VTModal, CallbackID: "cb",
		Title: slack.NewTextBlockObject(slack.PlainTextType, "A title", false, false)}); err != nil {
		t.Fatal(err)
	}
	if v := s.Views(); len(v) != 1 || v[0].TriggerID != "trig" || v[0].CallbackID != "cb" {
		t.Fatalf("views %+v", v)
	}
	ru := s.ResponseURL("C1", "U1")
	for i := range 6 {
		_, _, err := api.PostMessageContext(ctx, "", slack.MsgOptionText("e", false), slack.MsgOptionResponseURL(ru, slack.ResponseTypeEphemeral))
		if (i < 5) != (err == nil) {
			t.Fatalf("response_url use %d: %v", i+1, err)
		}
	}
	// A click's response_url replaces the message it belongs to, for
	// everyone, keeping its ts and thread; its uses count with the
	// answers sent through it.
	click := s.ResponseURLFor("C1", "U1", ts1)
	if _, _, err := api.PostMessageContext(ctx, "", slack.MsgOptionText("a3", false), slack.MsgOptionReplaceOriginal(click)); err != nil {
		t.Fatalf("replace_original: %v", err)
	}
	if got := s.Channel("C1"); len(got) != 2 || got[0].Text != "a3" || got[0].TS != ts1 || got[1].Text != "b" {
		t.Fatalf("channel after replace_original %+v", got)
	}
	if m := s.MessagesBy("response_url"); m[len(m)-1].TS != ts1 || !m[len(m)-1].ReplaceOriginal || m[len(m)-1].User != "U1" {
		t.Fatalf("replace_original recorded as %+v", m[len(m)-1])
	}
	for i := range 5 {
		opt := slack.MsgOptionResponseURL(click, slack.ResponseTypeEphemeral)
		if i%2 == 1 {
			opt = slack.MsgOptionReplaceOriginal(click)
		}
		_, _, err := api.PostMessageContext(ctx, "", slack.MsgOptionText(fmt.Sprintf("g%d", i), false), opt)
		if (i < 4) != (err == nil) {
			t.Fatalf("use %d of a click's response_url: %v", i+2, err)
		}
	}
	if got := s.Channel("C1")[0].Text; got != "g3" {
		t.Fatalf("message after its response_url's uses: %q, want the last replacement taken", got)
	}
	// A response_url minted for no message records a replace_original
	// and replaces nothing; one whose message is gone refuses it.
	if _, _, err := api.PostMessageContext(ctx, "", slack.MsgOptionText("h", false),
		slack.MsgOptionReplaceOriginal(s.ResponseURL("C1", "U1"))); err != nil {
		t.Fatalf("replace_original through a response_url of no message: %v", err)
	}
	if m := s.MessagesBy("response_url"); m[len(m)-1].Text != "h" || !m[len(m)-1].ReplaceOriginal || m[len(m)-1].TS == ts1 ||
		s.Channel("C1")[0].Text != "g3" {
		t.Fatalf("replace_original of no message recorded as %+v", m[len(m)-1])
	}
	if _, _, err := api.PostMessageContext(ctx, "", slack.MsgOptionText("h", false),
		slack.MsgOptionReplaceOriginal(s.ResponseURLFor("C1", "U1", "1700000000.999999"))); err == nil {
		t.Fatal("replace_original of a message that is not there was taken")
	}
	late := s.ResponseURLFor("C1", "U1", ts1)
	s.ExpireResponseURLs()
	if _, _, err := api.PostMessageContext(ctx, "", slack.MsgOptionText("i", false), slack.MsgOptionReplaceOriginal(late)); err == nil {
		t.Fatal("an expired response_url was taken")
	}
	s.Fail("chat.postEphemeral", 1, "user_not_in_channel")
	if _, err := api.PostEphemeralContext(ctx, "C1", "U1", slack.MsgOptionText("f", false)); err == nil || err.Error() != "user_not_in_channel" {
		t.Fatalf("injected failure: %v", err)
	}
}

// TestFakeRefusesMenusAndInputsBeyondSlack: a static_select's options
// and a plain_text_input's max_length are held to Slack's bounds, as
// buttons are.
func TestFakeRefusesMenusAndInputsBeyondSlack(t *testing.T) {
	ctx := context.Background()
	s := slacktest.New(t, slacktest.Options{Token: "xoxb-1"})
	s.AddChannel("C1", "one", true)
	api := slack.New("xoxb-1", slack.OptionAPIURL(s.APIURL()))
	plain := func(text string) *slack.TextBlockObject {
		return slack.NewTextBlockObject(slack.PlainTextType, text, false, false)
	}
	menu := func(n int, text, value string) slack.Block {
		var opts []*slack.OptionBlockObject
		for i := range n {
			opts = append(opts, slack.NewOptionBlockObject(fmt.Sprintf("%s%d", value, i), plain(text), nil))
		}
		return slack.NewActionBlock("", slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, plain("More"), "menu", opts...))
	}
	for _, c := range []struct {
		name  string
		block slack.Block
		ok    bool
	}{
		{"a menu within bounds", menu(100, strings.Repeat("t", 75), strings.Repeat("v", 147)), true},
		{"101 options", menu(101, "t", "v"), false},
		{"an option's text of 76", menu(1, strings.Repeat("t", 76), "v"), false},
		{"an option's value of 151", menu(1, "t", strings.Repeat("v", 150)), false},
		{"no options", menu(0, "t", "v"), false},
		{"one action_id twice", slack.NewActionBlock("", slack.NewButtonBlockElement("a", "a", plain("A")),
			slack.NewButtonBlockElement("a", "a", plain("B"))), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("x", false), slack.MsgOptionBlocks(c.block))
			if (err == nil) != c.ok {
				t.Fatalf("posted: %v, want ok %v", err, c.ok)
			}
		})
	}
	for _, c := range []struct {
		name   string
		max    int
		submit string
		ok     bool
	}{
		{"max_length 3000", 3000, "Send", true},
		{"max_length 3001", 3001, "Send", false},
		{"a submit of 25", 10, strings.Repeat("s", 25), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			input := slack.NewInputBlock("b", plain("Label"), nil, slack.NewPlainTextInputBlockElement(nil, "a").WithMaxLength(c.max))
			_, err := api.OpenViewContext(ctx, "trig", slack.ModalViewRequest{Type: slack.VTModal, Title: plain("T"),
				Submit: plain(c.submit), Blocks: slack.Blocks{BlockSet: []slack.Block{input}}})
			if (err == nil) != c.ok {
				t.Fatalf("opened: %v, want ok %v", err, c.ok)
			}
		})
	}
}
