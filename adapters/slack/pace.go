package slack

import (
	"strings"
	"time"

	"golang.org/x/time/rate"

	"approvalsbot/ladder"
	"approvalsbot/threads"
)

// The budgets an outbox row spends (threads.Paced), as Slack counts them:
// per channel for chat.postMessage, per workspace for chat.update
// (docs/design.md#pacing-chat-calls).
const (
	paceUpdates = "slack:update" // chat.update, the workspace's Tier 3 budget
	pacePosts   = "slack:post:"  // + the channel (or the user of a DM)
)

var _ threads.Paced = (*Surface)(nil)

// PaceKey names the budget a row's call spends: an edit the workspace's,
// a post the channel's (a DM's, by its user); a private answer, which
// Slack does not limit per channel, none.
func (a *Surface) PaceKey(kind, target string) string {
	switch kind {
	case threads.KindEditCard:
		return paceUpdates
	case threads.KindTell:
		return ""
	}
	t, err := ladder.ParseTarget(target)
	if err != nil || t.Surface() != ladder.SurfaceSlack {
		return ""
	}
	return pacePosts + t.ID
}

// Pace is a key's budget from the options, with one call of its burst
// kept in hand so that the pace never meets a 429 of its own making
// (docs/design.md#pacing-chat-calls).
func (a *Surface) Pace(key string) (time.Duration, int) {
	switch {
	case key == paceUpdates:
		return every(a.updateRate), inHand(a.updateBurst)
	case strings.HasPrefix(key, pacePosts):
		return every(a.postRate), inHand(a.postBurst)
	}
	return 0, 0
}

// inHand is a burst less the one call kept in hand, at least 1.
func inHand(burst int) int { return max(burst-1, 1) }

// every turns a rate into its calls' spacing; rate.Inf (pacing off) is 0.
func every(r rate.Limit) time.Duration {
	if r == rate.Inf || r <= 0 {
		return 0
	}
	return time.Duration(float64(time.Second) / float64(r))
}
