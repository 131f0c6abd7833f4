package discord

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"approvalsbot/internal/utf16text"
	"approvalsbot/say"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

func TestArgumentMessagesSplitWithinLimitsAndSayWhatIsLeftOut(t *testing.T) {
	var lines []string
	for i := range 400 {
		lines = append(lines, fmt.Sprintf(`  "key%03d": "value %d with a `+"```"+` fence and *stars*",`, i, i))
	}
	lines = append(lines, `  "long": "`+strings.Repeat("x", 5000)+`"`)
	args := "{\n" + strings.Join(lines, "\n") + "\n}"
	act := templates.Action{Kind: templates.ActionShowArgs, ApprovalID: "a-big1", Revision: 3}
	res := threads.ShowResult{Function: "mail_send.broadcast", Arguments: []byte(args),
		Digest: "sha256:" + strings.Repeat("ab", 32), Redacted: true}

	msgs := argumentMessages(act, res, 100)
	var all strings.Builder
	for i, m := range msgs {
		if n := utf16text.Len(m); n > contentMax {
			t.Fatalf("message %d has %d characters", i, n)
		}
		if strings.Count(m, "```") != 2 {
			t.Fatalf("message %d breaks its code block: %q", i, m)
		}
		_, code, _ := strings.Cut(m, codeOpen)
		all.WriteString(strings.TrimSuffix(code, codeClose) + "\n")
	}
	if !strings.HasPrefix(msgs[0], "Arguments of **mail\\_send.broadcast** · approval a-big1, revision 3") ||
		!strings.Contains(msgs[0], "secrets are redacted") || !strings.Contains(msgs[1], fmt.Sprintf("part 2 of %d", len(msgs))) {
		t.Fatalf("headers %q / %q", msgs[0][:120], msgs[1][:60])
	}
	got := strings.ReplaceAll(all.String(), "\u200b", "")
	for _, want := range []string{`"key000"`, `"key399"`, strings.Repeat("x", 1000)} {
		if !strings.Contains(got, want) {
			t.Fatalf("%q lost", want)
		}
	}
	if strings.Count(got, "x") < 5000 {
		t.Fatal("the long value was not shown whole")
	}

	few := argumentMessages(act, res, 3)
	if len(few) != 3 || !strings.Contains(few[2], "more characters are not shown") || utf16text.Len(few[2]) > contentMax {
		t.Fatalf("limited to 3: %d messages, last %q", len(few), few[len(few)-1])
	}
	if none := argumentMessages(act, threads.ShowResult{Function: "f", Digest: "d"}, 5); len(none) != 1 ||
		!strings.Contains(none[0], "(no arguments)") {
		t.Fatalf("no arguments: %q", none)
	}
}

func TestMarkdownEscapesEverythingButLinks(t *testing.T) {
	cases := []struct{ in, want string }{
		{"acme_github.merge", `acme\_github.merge`},
		{"**bold** `code` ~~x~~ ||spoiler|| <@123> [x](y)", `\*\*bold\*\* \` + "`" + `code\` + "`" + ` \~\~x\~\~ \|\|spoiler\|\| \<@123> \[x\](y)`},
		{"> quote\n# head\n- item", "\\> quote\n\\# head\n\\- item"},
		{"ping @everyone and @here", "ping @\u200beveryone and @\u200bhere"},
		{"approve it in the console (https://console.example/approvals/a_refund1).",
			"approve it in the console (https://console.example/approvals/a_refund1)."},
		{"see https://x.example/a_b and a_b", `see https://x.example/a_b and a\_b`},
	}
	for _, c := range cases {
		if got := markdown(c.in); got != c.want {
			t.Errorf("markdown(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestFatalGatewayCloses(t *testing.T) {
	for code, fatal := range map[int]bool{4004: true, 4013: true, 4014: true, 4000: false, 4009: false, 1006: false} {
		err := fmt.Errorf("open: %w", &websocket.CloseError{Code: code})
		if got := fatalGateway(err) != ""; got != fatal {
			t.Errorf("close %d: fatal %v, want %v", code, got, fatal)
		}
	}
	if fatalGateway(errConnectionLost) != "" || fatalGateway(nil) != "" {
		t.Error("a dropped connection is not fatal")
	}
}

func TestScrubKeepsTheInteractionTokenOut(t *testing.T) {
	token := "aW50ZXJhY3Rpb24secret"
	err := &url.Error{Op: "Post", URL: "https://discord.com/api/v9/webhooks/1100000000000000001/" + token + "?wait=true",
		Err: errors.New("connection refused")}
	for _, e := range []error{scrub(err), classify("answer", err)} {
		if strings.Contains(e.Error(), token) || !strings.Contains(e.Error(), "connection refused") {
			t.Fatalf("%q", e.Error())
		}
	}
	var ue *url.Error
	if errors.As(scrub(err), &ue) {
		t.Fatal("the scrubbed error still unwraps to the URL")
	}
}

func TestEphemeralAnswersFitAndPingNobody(t *testing.T) {
	r := ephemeral(strings.Repeat("@everyone ", 400)).Data.(*Message)
	if utf16text.Len(r.Content) > contentMax || r.AllowedMentions == nil || len(r.AllowedMentions.Parse) != 0 ||
		strings.Contains(r.Content, "@everyone") {
		t.Fatalf("%d characters, mentions %+v", utf16text.Len(r.Content), r.AllowedMentions)
	}
	b, _ := json.Marshal(denyModal(threads.Dialog{Function: strings.Repeat("very_long_function_name.", 10)}, templates.Action{Kind: templates.ActionDeny, ApprovalID: "a-1", Revision: 1}))
	var m struct {
		Data struct {
			Title    string `json:"title"`
			CustomID string `json:"custom_id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &m); err != nil || utf16text.Len(m.Data.Title) > modalTitleMax || m.Data.CustomID != "ab1|deny|a-1|1" {
		t.Fatalf("modal %s", b)
	}
}

// TestDialogHintsFitUncut: what a dialog says of where its text goes is
// a field's description, which Discord bounds; cut, it would stop short
// of saying the card will not show it.
func TestDialogHintsFitUncut(t *testing.T) {
	for _, hint := range []string{say.ReasonHint(false), say.ReasonHint(true), say.CommentHint(false), say.CommentHint(true)} {
		if n := utf16text.Len(hint); n > labelDescriptionMax {
			t.Errorf("%q is %d characters, over Discord's %d", hint, n, labelDescriptionMax)
		}
	}
}
