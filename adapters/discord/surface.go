package discord

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/bwmarrin/discordgo"

	"approvalsbot/adapters/chunk"
	"approvalsbot/approval"
	"approvalsbot/internal/utf16text"
	"approvalsbot/ladder"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// noPreviews is the flag of every message the bot sends that is text
// alone: a link in it must not show an attacker's preview under the bot's
// name. A card, which is an embed, cannot carry it.
const noPreviews = flagSuppressEmbeds

// ephemeralText is an answer to one person that is text alone.
const ephemeralText = flagEphemeral | noPreviews

// Post puts a card at a target: a channel, with a thread started from it
// for what follows, or a user's DM; under Thread (a reasked card), into
// that card's thread. A thread that cannot be started does not undo the
// card: the first reply starts it.
func (a *Surface) Post(ctx context.Context, req threads.PostRequest) (threads.PostResult, error) {
	if req.Card.Approval == nil {
		return threads.PostResult{}, threads.Permanent(errors.New("post card: the card has no approval"))
	}
	what := fmt.Sprintf("post card of %s to %s", req.Card.Approval.ID, req.Target)
	msg := renderCard(req.Card)
	if req.Thread != nil {
		channel, inThread, err := a.threadOf(ctx, *req.Thread, req.Card)
		if err != nil {
			return threads.PostResult{}, classify(what, err)
		}
		m, err := a.send(ctx, channel, msg)
		if err != nil {
			return threads.PostResult{}, classify(what, err)
		}
		res := threads.PostResult{Channel: channel, Ref: m.ID}
		if inThread {
			res.ThreadRef = channel
		}
		return res, nil
	}
	channel, dm, err := a.channelFor(ctx, req.Target)
	if err != nil {
		return threads.PostResult{}, err
	}
	m, err := a.send(ctx, channel, msg)
	if err != nil {
		return threads.PostResult{}, classify(what, err)
	}
	res := threads.PostResult{Channel: channel, Ref: m.ID}
	if dm {
		return res, nil // a DM has no threads: later cards go into the DM itself
	}
	thread, err := a.startThread(ctx, channel, m.ID, threadName(req.Card))
	if err != nil {
		a.log.Warn("discord: card posted, but its thread could not be started; the first reply starts it",
			"tenant", req.Card.Tenant, "approval_id", req.Card.Approval.ID, "target", req.Target, "err", scrub(err).Error())
		return res, nil
	}
	res.ThreadRef = thread
	return res, nil
}

// Edit replaces a posted card with the card as it now stands.
func (a *Surface) Edit(ctx context.Context, req threads.EditRequest) error {
	if req.Post.Channel == "" || req.Post.Ref == "" {
		return threads.Permanent(errors.New("edit card: the post has no Discord channel or message id"))
	}
	if req.Card.Approval == nil {
		return threads.Permanent(errors.New("edit card: the card has no approval"))
	}
	msg := renderCard(req.Card)
	err := a.editMessage(ctx, req.Post.Channel, req.Post.Ref, msg.Edit())
	return classify(fmt.Sprintf("edit card of %s in %s", req.Post.ApprovalID, req.Post.Channel), err)
}

// Reply posts in a card's thread, pinging exactly the users and roles it
// mentions; its links show no preview (noPreviews).
func (a *Surface) Reply(ctx context.Context, req threads.ReplyRequest) error {
	if req.Root.Channel == "" || req.Root.Ref == "" {
		return threads.Permanent(errors.New("reply: the card has no Discord channel or message id"))
	}
	what := fmt.Sprintf("reply in the thread of %s in %s", req.Root.ApprovalID, req.Root.Channel)
	channel, _, err := a.threadOf(ctx, req.Root, threads.Card{})
	if err != nil {
		return classify(what, err)
	}
	msg := RenderThread(req.Message())
	msg.Flags |= noPreviews
	_, err = a.send(ctx, channel, msg)
	return classify(what, err)
}

// Notice posts to a channel (the audit channel, a digest), pinging
// nobody; text longer than one message is split at line ends.
func (a *Surface) Notice(ctx context.Context, req threads.NoticeRequest) error {
	channel, _, err := a.channelFor(ctx, req.Target)
	if err != nil {
		return err
	}
	for _, m := range noticeMessages(req) {
		if _, err := a.send(ctx, channel, m); err != nil {
			return classify("post notice to "+req.Target, err)
		}
	}
	return nil
}

// noticeMessages are the messages of a notice, split at line ends.
func noticeMessages(req threads.NoticeRequest) []*Message {
	var out []*Message
	for _, text := range chunk.Lines(markdown(approval.RedactText(req.Text)), contentMax) {
		out = append(out, &Message{Content: text, AllowedMentions: noMentions(), Flags: noPreviews})
	}
	return out
}

// Tell answers one person privately: an ephemeral follow-up while the
// interaction's token lives (15 minutes), else a DM. A card first replaces
// the clicked message (@original), so they see the outcome at once.
func (a *Surface) Tell(ctx context.Context, req threads.TellRequest) error {
	text := approval.RedactText(req.Text)
	if req.Card != nil && req.Reply != "" {
		msg := renderCard(*req.Card)
		_, err := a.call(ctx, "PATCH", endpointOriginal(a.appID, req.Reply), msg.Edit(), endpointOriginal(a.appID, ""))
		if err != nil {
			if !refused(err) {
				// A 429, Discord down, the network: tried again, since this
				// edit is how the person sees the outcome.
				return classify("show the clicked card to "+req.User, err)
			}
			// Refused (the token lapsed, the card is gone): the edit of
			// every copy shows the card, and the person is told below.
			a.log.Info("discord: the interaction's webhook did not take the clicked card; the edit of every copy shows it",
				"tenant", req.Tenant, "discord_user", req.User, "err", scrub(err).Error())
		}
	}
	if req.Reply != "" {
		err := a.followup(ctx, req.Reply, ephemeralMessage(text), false)
		if err == nil {
			return nil
		}
		if code := restCode(err); code != codeUnknownWebhook && code != codeInvalidWebhookToken {
			return classify("answer "+req.User, err)
		}
		a.log.Info("discord: the interaction's token has lapsed; answering by DM", "tenant", req.Tenant, "discord_user", req.User)
	}
	if req.User == "" {
		return threads.Permanent(errors.New("answer: no interaction token that works and no user to DM"))
	}
	channel, err := a.openDM(ctx, req.User)
	if err != nil {
		return err
	}
	_, err = a.send(ctx, channel, &Message{Content: utf16text.Cut(markdown(text), contentMax),
		AllowedMentions: noMentions(), Flags: noPreviews})
	return classify("answer "+req.User+" by DM", err)
}

// threadOf is the channel that takes what follows a posted card, and
// whether it is a thread: the card's thread in a guild channel (started
// now if Post could not), the DM itself for a DM.
func (a *Surface) threadOf(ctx context.Context, root threads.PostRef, card threads.Card) (string, bool, error) {
	if root.Channel == "" || root.Ref == "" {
		return "", false, threads.Permanent(errors.New("the card has no Discord channel or message id"))
	}
	if t, err := ladder.ParseTarget(root.Target); err == nil && t.Kind == ladder.KindDiscordUser {
		return root.Channel, false, nil
	}
	if root.ThreadRef != "" {
		return root.ThreadRef, true, nil
	}
	name := threadName(card)
	if card.Approval == nil {
		name = utf16text.Cut("approval "+root.ApprovalID, threadNameMax)
	}
	thread, err := a.startThread(ctx, root.Channel, root.Ref, name)
	return thread, err == nil, err
}

// threadName names a card's thread: the function and the approval,
// or for a question who asks.
func threadName(card threads.Card) string {
	if card.Approval == nil {
		return "approval"
	}
	if card.Approval.IsQuestion() {
		// Who asks, never what: a thread's name is seen by everyone in
		// the channel, and a restricted question's text by no one there.
		who := templates.VisibleLine(approval.RedactText(card.Approval.Job.Agent))
		if who == "" {
			who = "the agent"
		}
		return utf16text.Cut(who+" asks · "+card.Approval.ID, threadNameMax)
	}
	if card.Turn != nil && len(card.Turn.Rows) > 0 {
		return utf16text.Cut("turn of "+strconv.Itoa(card.Turn.Members)+" calls · "+card.Approval.Turn.ID, threadNameMax)
	}
	return utf16text.Cut(templates.VisibleLine(card.Approval.Call.Function)+" · "+card.Approval.ID, threadNameMax)
}

// channelFor turns a target into the channel to post in, and if a DM.
func (a *Surface) channelFor(ctx context.Context, target string) (string, bool, error) {
	t, err := ladder.ParseTarget(target)
	if err != nil {
		return "", false, threads.Permanent(fmt.Errorf("target %q: %w", target, err))
	}
	switch t.Kind {
	case ladder.KindDiscordChannel:
		return t.ID, false, nil
	case ladder.KindDiscordUser:
		ch, err := a.openDM(ctx, t.ID)
		return ch, true, err
	case ladder.KindDiscordRole:
		return "", false, threads.Permanent(fmt.Errorf("target %s is a role: it can be mentioned, not sent a card", target))
	}
	return "", false, threads.Permanent(fmt.Errorf("target %s is not a Discord target", target))
}

// openDM opens (or finds) the bot's DM with a user; the channel id is kept.
func (a *Surface) openDM(ctx context.Context, user string) (string, error) {
	a.dmMu.Lock()
	ch, ok := a.dms[user]
	a.dmMu.Unlock()
	if ok {
		return ch, nil
	}
	c, err := a.rest.UserChannelCreate(user, discordgo.WithContext(ctx))
	if err != nil {
		return "", classify("open a DM with "+user, err)
	}
	if c == nil || c.ID == "" {
		return "", fmt.Errorf("open a DM with %s: Discord returned no channel", user)
	}
	a.dmMu.Lock()
	a.dms[user] = c.ID
	a.dmMu.Unlock()
	return c.ID, nil
}
