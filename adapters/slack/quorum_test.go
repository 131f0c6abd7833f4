package slack

import (
	"strings"
	"testing"
	"time"

	slackgo "github.com/slack-go/slack"

	"approvalsbot/approval"
	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
)

// quorumOf is the text of the rich_text block right after the card's job
// line (its meta context block), the quorum's place, each date as its
// fallback; and how many dates it holds.
func quorumOf(t *testing.T, m Message) (string, int) {
	t.Helper()
	for i, b := range m.Blocks {
		if _, ok := b.(*slackgo.ContextBlock); !ok || i+1 == len(m.Blocks) {
			continue
		}
		rt, ok := m.Blocks[i+1].(*slackgo.RichTextBlock)
		if !ok {
			t.Fatalf("block %d after the job line is %T", i+1, m.Blocks[i+1])
		}
		line := linesOf(Message{Blocks: []slackgo.Block{rt}})
		if len(line) != 1 {
			t.Fatalf("the quorum's block holds %d sections", len(line))
		}
		return line[0], len(datesOf(Message{Blocks: []slackgo.Block{rt}}))
	}
	t.Fatal("no job line")
	return "", 0
}

// TestQuorumLine: the quorum line is its own rich_text block right under
// the job line, the card's words with each approval's time a date.
func TestQuorumLine(t *testing.T) {
	for _, q := range templatestest.QuorumCases(t) {
		t.Run(q.Name, func(t *testing.T) {
			c := templates.Build(q.In)
			m := CardMessage(c)
			checkShape(t, m)
			line, dates := quorumOf(t, m)
			if line != q.Line || dates != len(c.Times.Quorum) {
				t.Errorf("quorum block %q with %d dates, want %q with %d", line, dates, q.Line, len(c.Times.Quorum))
			}
		})
	}
}

// TestQuorumNamesAreLiteral: an approver's id and the words of whom the
// quorum waits for are shown only in rich_text runs, exactly as the card
// says them: no mrkdwn, no mention, no link.
func TestQuorumNamesAreLiteral(t *testing.T) {
	for _, h := range hostileTexts {
		t.Run(h, func(t *testing.T) {
			a := templatestest.Synthetic()
			at := a.RequestedAt.Add(3 * time.Minute)
			for _, in := range []templates.Input{
				{Approval: a, Quorum: &templates.Quorum{Need: 3, From: "rotation " + h,
					Approvals: []templates.QuorumApproval{{Actor: "user:" + h, At: at}}}},
				{Approval: a, State: approval.StateExpired, Decision: &approval.Decision{Actor: "system:deadline", At: at},
					Quorum: &templates.Quorum{Need: 2, Approvals: []templates.QuorumApproval{{Actor: "user:" + h, At: at}}}},
			} {
				c := templates.Build(in)
				m := CardMessage(c)
				checkShape(t, m)
				if line, _ := quorumOf(t, m); line != c.Quorum || !strings.Contains(line, "user:"+h) {
					t.Errorf("quorum block %q, want %q", line, c.Quorum)
				}
				for _, s := range shownTexts(t, m) {
					if strings.Contains(s.text, h) && s.holder != "text" && s.holder != "plain_text" {
						t.Errorf("%q shown in a %s object: %q", h, s.holder, s.text)
					}
				}
			}
		})
	}
}
