package discord

import (
	"strings"
	"time"

	"golang.org/x/time/rate"

	"approvalsbot/ladder"
	"approvalsbot/threads"
)

// The budgets an outbox row spends (threads.Paced), per route and channel
// as Discord counts them (docs/design.md#pacing-chat-calls).
const (
	paceSend = "discord:send:" // + the channel, or dm: + the user: a card (and its thread) or a notice
	paceEdit = "discord:edit:" // + the target's id: edits of its cards
)

var _ threads.Paced = (*Surface)(nil)

// PaceKey names the budget a row's call spends. Neither a thread reply
// (its thread has its own limit, which one approval never reaches) nor a
// private answer (the interaction's webhook) is paced.
func (a *Surface) PaceKey(kind, target string) string {
	t, err := ladder.ParseTarget(target)
	if err != nil || t.Surface() != ladder.SurfaceDiscord {
		return ""
	}
	id := t.ID
	if !t.IsChannel() {
		id = "dm:" + t.ID
	}
	switch kind {
	case threads.KindPostCard, threads.KindNotice:
		return paceSend + id
	case threads.KindEditCard:
		return paceEdit + id
	}
	return ""
}

// Pace is a key's budget, from the options (DefaultPerChannelRate).
func (a *Surface) Pace(key string) (time.Duration, int) {
	if strings.HasPrefix(key, paceSend) || strings.HasPrefix(key, paceEdit) {
		return every(a.rate), a.burst
	}
	return 0, 0
}

// every turns a rate into its calls' spacing; rate.Inf (pacing off) is 0.
func every(r rate.Limit) time.Duration {
	if r == rate.Inf || r <= 0 {
		return 0
	}
	return time.Duration(float64(time.Second) / float64(r))
}
