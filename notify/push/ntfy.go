package push

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"approvalsbot/templates"
	"approvalsbot/tenant"
	"approvalsbot/threads"
)

// serviceNtfy names ntfy in errors.
const serviceNtfy = "ntfy"

// ntfy's publishing, as its documentation states it
// (https://docs.ntfy.sh/publish/): a message published as JSON is
// POSTed to the server's root URL, never the topic's, and names its
// topic; UTF-8 is safe there, unlike in headers.
const (
	// NtfyPriorityHigh is "high": a long vibration burst, a pop-over.
	NtfyPriorityHigh = 4
	// NtfyActionView opens a URL when tapped: the only action a notice
	// has. An "http" action would send a request from the phone, one
	// that could decide: never.
	NtfyActionView = "view"
	// NtfyMaxActions is how many actions a notice may have.
	NtfyMaxActions = 3
	// NtfyMessageMax is ntfy.sh's default message-size-limit in bytes;
	// a longer message becomes an attachment.
	NtfyMessageMax = 4096
)

// NtfyMessage is a message published as JSON
// (https://docs.ntfy.sh/publish/#publish-as-json).
type NtfyMessage struct {
	Topic    string       `json:"topic"`
	Title    string       `json:"title,omitempty"`
	Message  string       `json:"message"`
	Priority int          `json:"priority,omitempty"`
	Tags     []string     `json:"tags,omitempty"`
	Actions  []NtfyAction `json:"actions,omitempty"`
	// Click is what tapping the notice opens (the member's page, a GET).
	Click string `json:"click,omitempty"`
}

// NtfyAction is an action button
// (https://docs.ntfy.sh/publish/#action-buttons); the bot sends "view"
// only.
type NtfyAction struct {
	Action string `json:"action"`
	Label  string `json:"label"`
	URL    string `json:"url"`
	Clear  bool   `json:"clear,omitempty"`
}

// NtfyMessageOf is the message of a notice to topic: the notice's title
// and lines, high priority, an emoji tag (a warning sign for a
// destructive call), and with a link one view action that opens it,
// as tapping the notice itself does.
// Plain text: nothing from the agent is rendered as Markdown.
func NtfyMessageOf(topic string, n templates.PushNotice) NtfyMessage {
	m := NtfyMessage{Topic: topic, Title: n.Title, Message: n.Message(), Priority: NtfyPriorityHigh,
		Tags: []string{"hourglass_flowing_sand"}}
	if n.Destructive {
		m.Tags = append(m.Tags, "warning")
	}
	if n.Link != "" {
		m.Actions = []NtfyAction{{Action: NtfyActionView, Label: templates.PushLabel, URL: n.Link}}
		m.Click = n.Link
	}
	return m
}

// ntfyRoot splits a topic's URL into the server's root URL (a path
// before the topic kept, for a server behind a prefix) and the topic.
func ntfyRoot(topicURL string) (root, topic string, err error) {
	u, err := url.Parse(topicURL)
	if err != nil || u.Host == "" {
		return "", "", fmt.Errorf("push to ntfy: the topic's address is not a URL")
	}
	i := strings.LastIndexByte(u.Path, '/')
	if i < 0 || u.Path[i+1:] == "" {
		return "", "", fmt.Errorf("push to ntfy: the topic's address names no topic")
	}
	topic = u.Path[i+1:]
	u.Path, u.RawPath = u.Path[:i+1], ""
	u.RawQuery, u.Fragment = "", ""
	return u.String(), topic, nil
}

func (s *Sender) ntfy(ctx context.Context, addr tenant.PushAddress, req threads.PushRequest) error {
	root, topic, err := ntfyRoot(addr.URL)
	if err != nil {
		return threads.Permanent(err)
	}
	body, err := json.Marshal(NtfyMessageOf(topic, req.Notice))
	if err != nil {
		return threads.Permanent(fmt.Errorf("push to ntfy: encode: %w", err))
	}
	r, err := http.NewRequest(http.MethodPost, root, bytes.NewReader(body))
	if err != nil {
		return threads.Permanent(fmt.Errorf("push to ntfy: %w", withoutURL(err)))
	}
	r.Header.Set("Content-Type", "application/json")
	if addr.Token != "" {
		r.Header.Set("Authorization", "Bearer "+addr.Token)
	}
	return s.send(ctx, serviceNtfy, r)
}
