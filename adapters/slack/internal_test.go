package slack

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	slackgo "github.com/slack-go/slack"

	"approvalsbot/internal/utf16text"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// textLen counts the text in blocks marshalled to JSON, as Slack counts
// a message's text against its limit.
func textLen(raw []byte) int {
	var v any
	_ = json.Unmarshal(raw, &v)
	n := 0
	EachObject(v, func(x map[string]any) {
		for _, k := range []string{"text", "url"} {
			if s, ok := x[k].(string); ok {
				n += utf16text.Len(s)
			}
		}
	})
	return n
}

func TestArgumentMessagesSplitAndSayWhatIsLeftOut(t *testing.T) {
	act := templates.Action{Kind: templates.ActionShowArgs, ApprovalID: "a-big1", Revision: 1}
	check := func(t *testing.T, msgs []Message) string {
		t.Helper()
		var all strings.Builder
		for _, m := range msgs {
			if len(m.Blocks) > maxBlocks {
				t.Fatalf("%d blocks", len(m.Blocks))
			}
			raw, _ := json.Marshal(m.Blocks)
			var blocks []struct {
				Type     string `json:"type"`
				Elements []struct {
					Type     string `json:"type"`
					Elements []struct {
						Type string `json:"type"`
						Text string `json:"text"`
					} `json:"elements"`
				} `json:"elements"`
			}
			_ = json.Unmarshal(raw, &blocks)
			for _, b := range blocks {
				if b.Type == "section" {
					t.Fatal("a section block: its text would be mrkdwn")
				}
				for _, e := range b.Elements {
					if e.Type != "rich_text_preformatted" {
						continue
					}
					if len(e.Elements) != 1 || e.Elements[0].Type != "text" {
						t.Fatalf("a box of %+v, want one text", e.Elements)
					}
					body := e.Elements[0].Text
					if utf16text.Len(body) > codeChunkMax {
						t.Fatalf("a box of %d characters", utf16text.Len(body))
					}
					all.WriteString(body + "\n")
				}
			}
			if n := textLen(raw); n > blocksTextMax {
				t.Fatalf("a message of %d characters", n)
			}
		}
		return all.String()
	}

	t.Run("fits", func(t *testing.T) {
		var lines []string
		for i := range 2000 {
			lines = append(lines, fmt.Sprintf("  \"k%04d\": \"<value %d>\",", i, i))
		}
		args := "{\n" + strings.Join(lines, "\n") + "\n}"
		msgs := argumentMessages(act, threads.ShowResult{Function: "mail.broadcast", Arguments: []byte(args),
			Digest: "sha256:00", Redacted: true}, maxShowMessages)
		if len(msgs) < 2 || len(msgs) > maxShowMessages {
			t.Fatalf("%d messages for %d characters", len(msgs), len(args))
		}
		got := check(t, msgs)
		for _, want := range []string{"\"k0000\": \"<value 0>\"", "\"k1999\": \"<value 1999>\""} {
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
	var literal [][]elem
	for i := range 500 {
		lines = append(lines, fmt.Sprintf("• line %d %s", i, strings.Repeat("y", 40)))
		literal = append(literal, []elem{textElem(fmt.Sprintf("• row %d %s", i, strings.Repeat("w", 40)))})
	}
	msgs := layout([]section{{mrkdwn: strings.Join(lines, "\n")}, {mrkdwn: strings.Repeat("z", 5000)}, {lines: literal}})
	var all strings.Builder
	for _, m := range msgs {
		raw, _ := json.Marshal(m.Blocks)
		if len(m.Blocks) > maxBlocks || textLen(raw) > blocksTextMax {
			t.Fatalf("a message of %d blocks, %d characters", len(m.Blocks), textLen(raw))
		}
		var blocks []map[string]any
		_ = json.Unmarshal(raw, &blocks)
		for _, b := range blocks {
			one, _ := json.Marshal(b)
			if n := textLen(one); n > sectionTextMax {
				t.Fatalf("a %s block of %d", b["type"], n)
			}
			if b["type"] == "section" && b["text"].(map[string]any)["verbatim"] != true {
				t.Fatal("a mrkdwn section is not verbatim")
			}
			all.Write(one)
		}
	}
	for _, want := range []string{"line 499", "row 0 ", "row 499"} {
		if !strings.Contains(all.String(), want) {
			t.Fatalf("%q lost", want)
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
