package discord

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"approvalsbot/approval"
	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
)

// paragraphs are a description's parts, as joinParts separates them.
func paragraphs(m *Message) []string { return strings.Split(m.Embeds[0].Description, partSep) }

// TestQuorumLine: the quorum line is the paragraph after the job line,
// the card's words escaped, each approval's time a timestamp.
func TestQuorumLine(t *testing.T) {
	for _, q := range templatestest.QuorumCases(t) {
		t.Run(q.Name, func(t *testing.T) {
			c := templates.Build(q.In)
			m := RenderCard(c)
			checkLimits(t, c, m)
			p := paragraphs(m)
			if len(p) < 2 || timeless(p[1]) != want(q.Line) || len(timestamps(t, p[1])) != len(c.Times.Quorum) {
				t.Errorf("the paragraph after the job line is %q, want %q", p[1], want(q.Line))
			}
		})
	}
}

// TestQuorumNamesAreEscaped: an approver's id and the words of whom the
// quorum waits for ping nobody and form no link, markup or time.
func TestQuorumNamesAreEscaped(t *testing.T) {
	const hostile = "<@U0BOSS> @everyone [click](https://evil.invalid) **bold** <t:0:f>"
	a := templatestest.Synthetic()
	at := a.RequestedAt.Add(3 * time.Minute)
	for _, in := range []templates.Input{
		{Approval: a, Quorum: &templates.Quorum{Need: 3, From: "rotation " + hostile,
			Approvals: []templates.QuorumApproval{{Actor: "user:" + hostile, At: at}}}},
		{Approval: a, State: approval.StateExpired, Decision: &approval.Decision{Actor: "system:deadline", At: at},
			Quorum: &templates.Quorum{Need: 2, Approvals: []templates.QuorumApproval{{Actor: "user:" + hostile, At: at}}}},
	} {
		c := templates.Build(in)
		m := RenderCard(c)
		line := paragraphs(m)[1]
		// The line escaped, its one time the approval's timestamp.
		if w := strings.Replace(want(c.Quorum), "TIME", "<t:"+strconv.FormatInt(at.Unix(), 10)+":f>", 1); line != w {
			t.Errorf("quorum paragraph\n got %q\nwant %q", line, w)
		}
		for _, bad := range []string{"<@U0BOSS>", "@everyone", "[click](", "**bold**", "<t:0:f>"} {
			for i := strings.Index(line, bad); i >= 0; i = indexFrom(line, bad, i+1) {
				if i == 0 || line[i-1] != '\\' {
					t.Errorf("renders %q live: %q", bad, line)
					break
				}
			}
		}
		if got := timestamps(t, line); len(got) != 1 || got[0].Unix != at.Unix() {
			t.Errorf("timestamps %+v, want the approval's alone", got)
		}
		if len(m.AllowedMentions.Parse) != 0 || len(m.AllowedMentions.Users) != 0 || len(m.AllowedMentions.Roles) != 0 {
			t.Errorf("a card may ping: %+v", m.AllowedMentions)
		}
	}
}
