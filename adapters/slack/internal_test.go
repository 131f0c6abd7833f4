package slack

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	slackgo "github.com/slack-go/slack"

	"approvalsbot/adapters/chunk"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// unescape undoes mrkdwn escaping and fencing, to compare with the input.
func unescape(s string) string {
	s = strings.ReplaceAll(s, "\u200b", "")
	return strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">").Replace(s)
}

func TestCodeChunksKeepEveryCharacterWithinLimits(t *testing.T) {
	long := strings.Repeat("<&>", 2000) // one line of 6,000, escaping to 15,000
	text := "{\n  \"a\": \"```\",\n  \"b\": \"" + long + "\",\n  \"c\": \"é😀\"\n}\n"
	for _, max := range []int{10, 100, codeChunkMax} {
		chunks := chunk.Code(text, max, mrkdwn)
		var joined strings.Builder
		for _, c := range chunks {
			if n := chunk.Len(c); n > max || n == 0 {
				t.Fatalf("max %d: chunk of %d characters", max, n)
			}
			if strings.Contains(c, "```") {
				t.Fatalf("max %d: a chunk can close its code block: %q", max, c)
			}
			for _, e := range []string{"&amp", "&lt", "&gt"} {
				if strings.HasSuffix(c, e) {
					t.Fatalf("max %d: a chunk cuts an escape: %q", max, c[len(c)-10:])
				}
			}
			joined.WriteString(c)
		}
		if got := unescape(joined.String()); got != text {
			t.Fatalf("max %d: chunks lose text", max)
		}
	}
}

func TestArgumentMessagesSplitAndSayWhatIsLeftOut(t *testing.T) {
	act := templates.Action{Kind: templates.ActionShowArgs, ApprovalID: "a-big1", Revision: 1}
	check := func(t *testing.T, msgs []templates.SlackMessage) string {
		t.Helper()
		var all strings.Builder
		for _, m := range msgs {
			if len(m.Blocks) > maxBlocks {
				t.Fatalf("%d blocks", len(m.Blocks))
			}
			raw, _ := json.Marshal(m.Blocks)
			var blocks []struct {
				Type string `json:"type"`
				Text struct {
					Text string `json:"text"`
				} `json:"text"`
			}
			_ = json.Unmarshal(raw, &blocks)
			for _, b := range blocks {
				if b.Type != "section" {
					continue
				}
				if chunk.Len(b.Text.Text) > sectionTextMax {
					t.Fatalf("section of %d characters", chunk.Len(b.Text.Text))
				}
				body := strings.TrimSuffix(strings.TrimPrefix(b.Text.Text, "```\n"), "\n```")
				all.WriteString(body + "\n")
			}
		}
		return unescape(all.String())
	}

	t.Run("fits", func(t *testing.T) {
		var lines []string
		for i := range 3000 {
			lines = append(lines, fmt.Sprintf("  \"k%04d\": \"<value %d>\",", i, i))
		}
		args := "{\n" + strings.Join(lines, "\n") + "\n}"
		msgs := argumentMessages(act, threads.ShowResult{Function: "mail.broadcast", Arguments: []byte(args),
			Digest: "sha256:00", Redacted: true}, maxShowMessages)
		if len(msgs) < 2 || len(msgs) > maxShowMessages {
			t.Fatalf("%d messages for %d characters", len(msgs), len(args))
		}
		got := check(t, msgs)
		for _, want := range []string{"\"k0000\": \"<value 0>\"", "\"k2999\": \"<value 2999>\""} {
			if !strings.Contains(got, want) {
				t.Fatalf("lost %q", want)
			}
		}
		raw, _ := json.Marshal(msgs[0].Blocks)
		if !strings.Contains(string(raw), "secrets are redacted") || !strings.Contains(string(raw), "only you see this") {
			t.Fatalf("first message %s", raw[:300])
		}
	})

	t.Run("too big for Slack", func(t *testing.T) {
		args := strings.Repeat("x", 1<<20)
		msgs := argumentMessages(act, threads.ShowResult{Function: "f", Arguments: []byte(args)}, maxShowMessages)
		if len(msgs) != maxShowMessages {
			t.Fatalf("%d messages", len(msgs))
		}
		check(t, msgs)
		raw, _ := json.Marshal(msgs[len(msgs)-1].Blocks)
		if !strings.Contains(string(raw), "more characters are not shown") {
			t.Fatal("what is left out is not said")
		}
	})
}

func TestSplitTextAndLayout(t *testing.T) {
	var lines []string
	for i := range 500 {
		lines = append(lines, fmt.Sprintf("• line %d %s", i, strings.Repeat("y", 40)))
	}
	msgs := layout([]string{strings.Join(lines, "\n"), strings.Repeat("z", 5000)})
	for _, m := range msgs {
		raw, _ := json.Marshal(m.Blocks)
		var blocks []struct {
			Text struct {
				Text string `json:"text"`
			} `json:"text"`
		}
		_ = json.Unmarshal(raw, &blocks)
		for _, b := range blocks {
			if chunk.Len(b.Text.Text) > sectionTextMax {
				t.Fatalf("section of %d", chunk.Len(b.Text.Text))
			}
		}
	}
}

func TestSince(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second: "0s", 45 * time.Second: "45s", 15 * time.Minute: "15m", 2 * time.Hour: "2h",
		2*time.Hour + 5*time.Minute: "2h5m", 76 * time.Hour: "3d4h",
	} {
		if got := since(d); got != want {
			t.Errorf("since(%s) = %q, want %q", d, got, want)
		}
	}
}

func TestClassifyKeepsResponseURLOutOfErrors(t *testing.T) {
	secret := "https://hooks.slack.com/actions/T0/123/SECRETPART"
	err := classify("answer U0KEVIN", &url.Error{Op: "Post", URL: secret, Err: errors.New("connection refused")})
	if strings.Contains(err.Error(), "SECRETPART") {
		t.Fatalf("error carries the response_url: %v", err)
	}
	if _, ok := errors.AsType[*threads.DeliveryError](err); ok {
		t.Fatalf("a network error was classified: %v", err)
	}
	err = classify("post", slackgo.StatusCodeError{Code: 404, Status: "404 Not Found"})
	if de, ok := errors.AsType[*threads.DeliveryError](err); !ok || !de.Permanent {
		t.Fatalf("404: %v", err)
	}
}
