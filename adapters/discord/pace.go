package discord

import (
	"strings"
	"time"

	"golang.org/x/time/rate"

	"approvalsbot/ladder"
	"approvalsbot/threads"
)

// The budgets an outbox row spends (threads.Paced). The outbox paces rows
// when it claims them, with the budgets kept in the store, so no worker
// sleeps for Discord's limits and every replica spends the same budget,
// as Discord counts it: per route and channel.
const (
	paceSend = "discord:send:" // + the channel, or dm: + the user: a card (and its thread) or a notice
	paceEdit = "discord:edit:" // + the target's id: edits of its cards
)

var _ threads.Paced = (*Surface)(nil)

// PaceKey names the budget a row's call spends. A thread reply goes into
// the approval's own thread, a channel of its own with its own limit,
// which one approval's few replies never reach; a private answer goes
// through the interaction's webhook: neither is paced.
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

// every turns a rate into the spacing of its calls; rate.Inf (pacing off)
// is 0.
func every(r rate.Limit) time.Duration {
	if r == rate.Inf || r <= 0 {
		return 0
	}
	return time.Duration(float64(time.Second) / float64(r))
}
