package templates_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"approvalsbot/approval"
	"approvalsbot/internal/costtest"
	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
)

// Sizes of the hostile events the render cost test compares: the large
// one near the 1 MiB bound of an event's body, as the 900 KiB event that
// once stalled the bot for 93 s. A linear rendering costs as much per
// byte of both, to within renderMaxRatio; a quadratic one about 14 times.
const (
	renderSmall    = 64 << 10
	renderLarge    = 900 << 10
	renderMaxRatio = 4
	// renderLargeMax bounds the best time of the large event's rendering
	// on every surface, tens of milliseconds on a quiet machine.
	renderLargeMax = time.Second
)

// renderPieces are what the hostile events repeat: shapes that made
// redaction read again from every start, a hidden-character run every
// surface must show as [U+…], and markup every surface must escape.
var renderPieces = []struct{ name, piece string }{
	{"url-password", "https://a:"},
	{"named-value", "a="},
	{"bearer", "Bearer "},
	{"hidden", "a\u200b\u202e\U000E0041\u3164"},
	{"markup", "<&>*_`|~@"},
}

// repeatText is piece repeated to at most n bytes, whole pieces only (a
// hidden character is never split).
func repeatText(piece string, n int) string {
	return strings.Repeat(piece, max(1, n/len(piece)))
}

// splitText is about n bytes of piece as parts of at most each bytes.
func splitText(piece string, n, each int) []any {
	var out []any
	for ; n > 0; n -= each {
		out = append(out, repeatText(piece, min(n, each)))
	}
	return out
}

// hostileOfSize is mail.json's request with about n bytes of piece in
// every field a card shows (arguments, role values, agent text, the
// policy rule, the waiting calls, a changeset's files and patch), each
// free-text field within the parser's 64 KiB bound.
func hostileOfSize(t testing.TB, piece string, n int) *approval.Approval {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal(readFixture(t, "mail.json"), &ev); err != nil {
		t.Fatal(err)
	}
	d := ev["data"].(map[string]any)
	text := func(share int) string { return repeatText(piece, min(n/share, 64<<10-1)) }
	call := d["call"].(map[string]any)
	call["function"] = "mail.send" + text(64)
	call["arguments"] = map[string]any{"url": repeatText(piece, n/4), "to": splitText(piece, n/16, 1<<10)}
	var values []any
	for i, v := range splitText(piece, n/8, 1<<10) {
		origin := []string{"job_read", "tenant_record", "request"}[i%3]
		values = append(values, map[string]any{"value": v, "origin": origin, "out_of_scope": origin == "job_read"})
	}
	d["roles"] = []any{
		map[string]any{"argument": "to", "role": "recipient", "values": values, "left_out": 0, "not_compared": false},
		map[string]any{"argument": "url", "role": "host", "values": []any{map[string]any{"value": text(16), "origin": "job_read"}}},
	}
	d["agent_says"] = text(8)
	d["asked_by"] = map[string]any{"reason": "policy", "rule": text(16)}
	d["turn"] = map[string]any{"waiting": splitText(piece, n/16, 256)}
	var files []any
	for i, p := range splitText(piece, n/16, 512) {
		files = append(files, map[string]any{"path": p.(string), "protected": i%2 == 0})
	}
	d["kind"] = "changes"
	d["changes"] = map[string]any{"files": files, "patch": "+" + repeatText(piece, n/8),
		"patch_sha256": "sha256:" + strings.Repeat("c", 64)}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // markup as the backend may send it, not as \u003c
	if err := enc.Encode(ev); err != nil {
		t.Fatal(err)
	}
	body := buf.Bytes()
	if len(body) > 1<<20 {
		t.Fatalf("the hostile event of %d bytes of %q is %d bytes, over the 1 MiB bound of a body", n, piece, len(body))
	}
	e, err := approval.Parse(body)
	if err != nil {
		t.Fatalf("parse the hostile event of %d bytes of %q: %v", n, piece, err)
	}
	return e.Approval
}

// renderEverywhere builds a's card for a reader who holds the content
// permission (who is shown the most) and renders it on every surface:
// Slack, Discord, email, plain text and the decision page.
func renderEverywhere(r *templates.Renderer, a *approval.Approval) error {
	at, plan := templatestest.Pinned(a)
	in, err := templates.PreviewInput(a, string(approval.StatePending), at, plan)
	if err != nil {
		return err
	}
	asContentHolder(&in)
	c := templates.Build(in)
	slackJSON, _ := chats.SlackCard(c)
	discordJSON, err := templates.MarshalPreview(discordCard(c))
	if err != nil {
		return err
	}
	e := r.Email(c)
	if len(slackJSON) == 0 || len(discordJSON) == 0 || e.HTML == "" || r.Text(c) == "" || r.CardHTML(c) == "" {
		return fmt.Errorf("a surface rendered nothing")
	}
	return nil
}

// TestRenderCostPerByteFlat: rendering a hostile event on every surface
// costs as much per byte of a 900 KiB event as of a 64 KiB one, to within
// renderMaxRatio, timed in the same run (costtest.Compare), and the 900 KiB
// event renders within renderLargeMax, not the 40 s it once took.
func TestRenderCostPerByteFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the cost test renders 900 KiB events")
	}
	if costtest.Race {
		t.Skip("-race: the race detector slows every pass about tenfold, so the cost test runs only without it (go test ./templates -run CostPerByte)")
	}
	r := newRenderer(t)
	for _, pc := range renderPieces {
		t.Run(pc.name, func(t *testing.T) {
			var sizes [2]costtest.Input
			for i, n := range []int{renderSmall, renderLarge} {
				a := hostileOfSize(t, pc.piece, n)
				sizes[i] = costtest.Input{Bytes: n, Do: func() error { return renderEverywhere(r, a) }}
			}
			g, err := costtest.Compare(sizes[0], sizes[1], renderMaxRatio)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d KiB against %d KiB: %v", renderSmall>>10, renderLarge>>10, g)
			if took := time.Duration(g.Large * renderLarge); took > renderLargeMax {
				t.Errorf("rendering %d KiB of %s on every surface took %v at best, over %v", renderLarge>>10, pc.name, took, renderLargeMax)
			}
			if g.Ratio() > renderMaxRatio {
				t.Errorf("rendering %s costs %.2f ns/byte at %d KiB but %.2f at %d KiB (×%.1f, more than ×%d): a pass over the card's content is not linear in its size",
					pc.name, g.Small, renderSmall>>10, g.Large, renderLarge>>10, g.Ratio(), renderMaxRatio)
			}
		})
	}
}
