package slack_test

import (
	"cmp"
	"encoding/json"
	"testing"
	"time"

	slackad "approvalsbot/adapters/slack"
	"approvalsbot/adapters/slack/slacktest"
	"approvalsbot/internal/utf16text"
	"approvalsbot/store"
	"approvalsbot/templates/templatestest"
	"approvalsbot/tenant"
	"approvalsbot/threads"
	"approvalsbot/threads/surfacetest"
	"approvalsbot/threads/threadstest"
)

func TestConformance(t *testing.T) {
	surfacetest.Run(t, slackConformance{store: threadstest.OpenSQLite(t)})
}

// slackConformance is the Slack surface over a fresh fake Slack.
type slackConformance struct {
	store store.Store
}

func (slackConformance) Traits() surfacetest.Traits {
	// A notice is one line (oneLine), so it is cut rather than split.
	return surfacetest.Traits{Buttons: true, MessageMax: 3000, Notice: surfacetest.Cut}
}

func (slackConformance) Skip(string) string { return "" }

func (c slackConformance) New(t *testing.T) (threads.Surface, surfacetest.Fake) {
	fake := slacktest.New(t, slacktest.Options{Token: botToken})
	fake.AddChannel("C0APPROVALS", "approvals", true)
	s, err := slackad.NewSurface(slackad.Options{Credentials: slackad.Credentials{BotToken: botToken, SigningSecret: signingSecret}, APIURL: fake.APIURL(),
		Tenants: func() map[string]*tenant.Tenant { return nil },
		Store:   c.store})
	if err != nil {
		t.Fatal(err)
	}
	return s, slackFake{fake}
}

type slackFake struct{ s *slacktest.Server }

func (slackFake) Target() string { return "slack:C0APPROVALS" }

func (f slackFake) Card(post threads.PostRef) (surfacetest.Message, bool) {
	for _, m := range f.s.Channel(post.Channel) {
		if m.TS == post.Ref {
			return slackMessage(m), true
		}
	}
	return surfacetest.Message{}, false
}

func (f slackFake) Thread(root threads.PostRef) []surfacetest.Message {
	ts := cmp.Or(root.ThreadRef, root.Ref)
	var out []surfacetest.Message
	for _, m := range f.s.Channel(root.Channel) {
		if m.ThreadTS == ts {
			out = append(out, slackMessage(m))
		}
	}
	return out
}

func (f slackFake) Channel(target string) []surfacetest.Message {
	var out []surfacetest.Message
	for _, m := range f.s.Channel(target[len("slack:"):]) {
		if m.ThreadTS == "" {
			out = append(out, slackMessage(m))
		}
	}
	return out
}

func (f slackFake) Fail(op surfacetest.Op, fl surfacetest.Failure, card threads.PostRef) time.Duration {
	method := "chat.postMessage"
	if op == surfacetest.OpEdit {
		method = "chat.update"
	}
	switch fl {
	case surfacetest.RateLimited:
		f.s.FailStatus(method, 1, 429, 7*time.Second) // Retry-After is whole seconds
		return 7 * time.Second
	case surfacetest.Unavailable:
		f.s.FailStatus(method, 1, 503, 0)
	case surfacetest.Refused:
		f.s.Fail(method, 1, "invalid_auth")
	case surfacetest.ChannelGone:
		f.s.RemoveChannel(card.Channel)
	case surfacetest.MessageGone:
		f.s.DeleteMessage(card.Channel, card.Ref)
	}
	return 0
}

func (slackFake) Secrets() []string { return []string{botToken, signingSecret} }

// slackMessage is m as a person reads it. Its size is its longest text
// Slack limits: the notification text, or one block's texts together.
func slackMessage(m slacktest.Message) surfacetest.Message {
	out := surfacetest.Message{Text: m.AllText(), Size: utf16text.Len(m.Text)}
	var blocks []any
	_ = json.Unmarshal(m.Blocks, &blocks)
	for _, b := range blocks {
		out.Size = max(out.Size, textLen(b))
	}
	var ids []string
	for _, b := range m.Buttons() {
		ids = append(ids, b.ActionID)
	}
	out.Approval, out.Decidable = templatestest.Decides(ids...)
	return out
}

// textLen sums the texts inside a block, as Slack counts them.
func textLen(v any) int {
	n := 0
	slackad.EachObject(v, func(x map[string]any) {
		if s, ok := x["text"].(string); ok {
			n += utf16text.Len(s)
		}
	})
	return n
}
