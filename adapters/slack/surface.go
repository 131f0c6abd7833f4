package slack

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	slackgo "github.com/slack-go/slack"

	"approvalsbot/approval"
	"approvalsbot/internal/utf16text"
	"approvalsbot/ladder"
	"approvalsbot/threads"
)

// Post puts a card in a channel, or a user's DM (conversations.open), with
// working buttons; under Thread (a reasked card), into that card's thread.
func (a *Surface) Post(ctx context.Context, req threads.PostRequest) (threads.PostResult, error) {
	if req.Card.Approval == nil {
		return threads.PostResult{}, threads.Permanent(errors.New("post card: the card has no approval"))
	}
	msg := cardMessage(req.Card)
	var channel, threadTS string
	if req.Thread != nil && req.Thread.Channel != "" && req.Thread.Ref != "" {
		channel = req.Thread.Channel
		threadTS = cmp.Or(req.Thread.ThreadRef, req.Thread.Ref)
	} else {
		var err error
		if channel, err = a.channelFor(ctx, req.Target); err != nil {
			return threads.PostResult{}, err
		}
	}
	opts := append(msg.MsgOptions(), slackgo.MsgOptionDisableLinkUnfurl(), slackgo.MsgOptionDisableMediaUnfurl())
	if threadTS != "" {
		opts = append(opts, slackgo.MsgOptionTS(threadTS))
	}
	ts, err := a.postMessage(ctx, channel, opts)
	if err != nil {
		return threads.PostResult{}, classify(fmt.Sprintf("post card of %s to %s", req.Card.Approval.ID, req.Target), err)
	}
	return threads.PostResult{Channel: channel, Ref: ts, ThreadRef: threadTS}, nil
}

// Edit replaces a posted card (chat.update) with the card as it now stands.
func (a *Surface) Edit(ctx context.Context, req threads.EditRequest) error {
	if req.Post.Channel == "" || req.Post.Ref == "" {
		return threads.Permanent(errors.New("edit card: the post has no Slack channel or ts"))
	}
	if req.Card.Approval == nil {
		return threads.Permanent(errors.New("edit card: the card has no approval"))
	}
	msg := cardMessage(req.Card)
	_, _, _, err := a.api.UpdateMessageContext(ctx, req.Post.Channel, req.Post.Ref, msg.MsgOptions()...)
	return classify(fmt.Sprintf("edit card of %s in %s", req.Post.ApprovalID, req.Post.Channel), err)
}

// Reply posts in a card's thread; an escalation's mentions (<@U…>,
// <!subteam^S…>) notify.
func (a *Surface) Reply(ctx context.Context, req threads.ReplyRequest) error {
	if req.Root.Channel == "" || req.Root.Ref == "" {
		return threads.Permanent(errors.New("reply: the card has no Slack channel or ts"))
	}
	msg := ThreadReply(req.Message())
	opts := append(msg.MsgOptions(), slackgo.MsgOptionTS(cmp.Or(req.Root.ThreadRef, req.Root.Ref)),
		slackgo.MsgOptionDisableLinkUnfurl(), slackgo.MsgOptionDisableMediaUnfurl())
	_, err := a.postMessage(ctx, req.Root.Channel, opts)
	return classify(fmt.Sprintf("reply in the thread of %s in %s", req.Root.ApprovalID, req.Root.Channel), err)
}

// Notice posts one line to a channel (the audit channel), as literal
// text: it may carry the backend's or a person's words.
func (a *Surface) Notice(ctx context.Context, req threads.NoticeRequest) error {
	channel, err := a.channelFor(ctx, req.Target)
	if err != nil {
		return err
	}
	_, err = a.postMessage(ctx, channel, noticeMessage(req).MsgOptions())
	return classify("post notice to "+req.Target, err)
}

// noticeMessage is a notice as literal text on one line, or, for lines
// the bot composed (a digest), each of its lines on one line.
func noticeMessage(req threads.NoticeRequest) Message {
	text := approval.RedactText(req.Text)
	if !req.Lines {
		return literal(oneLine(text))
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = oneLine(l)
	}
	return literal(strings.Join(lines, "\n"))
}

// Tell answers one person privately: through the interaction's
// response_url while it works, else chat.postEphemeral where they
// clicked. A card first replaces the clicked copy through the
// response_url, so they see the outcome at once; chat.update does the rest.
func (a *Surface) Tell(ctx context.Context, req threads.TellRequest) error {
	who := person{user: req.User, channel: req.Channel, reply: a.allowedReply(req.Reply)}
	if req.Card != nil && who.reply != "" {
		if err := a.replace(ctx, who.reply, *req.Card); err != nil {
			if ctx.Err() != nil {
				return classify("show the clicked card to "+req.User, err)
			}
			a.log.Info("slack: the response_url did not take the clicked card; chat.update shows it",
				"tenant", req.Tenant, "slack_user", req.User, "err", scrub(err).Error())
		}
	}
	err := a.tell(ctx, who, []Message{literal(approval.RedactText(req.Text))})
	if err != nil {
		return classify("answer "+req.User, err)
	}
	return nil
}

// postMessage posts. It does not wait for the channel's pace: the outbox
// claimed the row within the channel's budget (PaceKey), and a 429
// returns the row with Slack's wait, which holds the budget.
func (a *Surface) postMessage(ctx context.Context, channel string, opts []slackgo.MsgOption) (string, error) {
	_, ts, err := a.api.PostMessageContext(ctx, channel, opts...)
	return ts, err
}

// channelFor turns a target into the channel to post in.
func (a *Surface) channelFor(ctx context.Context, target string) (string, error) {
	t, err := ladder.ParseTarget(target)
	if err != nil {
		return "", threads.Permanent(fmt.Errorf("target %q: %w", target, err))
	}
	switch t.Kind {
	case ladder.KindSlackChannel:
		return t.ID, nil
	case ladder.KindSlackUser:
		return a.openDM(ctx, t.ID)
	case ladder.KindSlackUserGroup:
		return "", threads.Permanent(fmt.Errorf("target %s is a user group: it can be mentioned, not sent a card", target))
	}
	return "", threads.Permanent(fmt.Errorf("target %s is not a Slack target", target))
}

// openDM opens (or finds) the bot's DM with a user; the channel id is kept.
func (a *Surface) openDM(ctx context.Context, user string) (string, error) {
	a.dmMu.Lock()
	ch, ok := a.dms[user]
	a.dmMu.Unlock()
	if ok {
		return ch, nil
	}
	c, _, _, err := a.api.OpenConversationContext(ctx, &slackgo.OpenConversationParameters{Users: []string{user}})
	if err != nil {
		return "", classify("open a DM with "+user, err)
	}
	if c == nil || c.ID == "" {
		return "", fmt.Errorf("open a DM with %s: Slack returned no channel", user)
	}
	a.dmMu.Lock()
	a.dms[user] = c.ID
	a.dmMu.Unlock()
	return c.ID, nil
}

// person is who to answer privately, and how.
type person struct {
	user    string
	channel string // for chat.postEphemeral
	reply   string // a response_url, "" for none
}

// tell sends msgs to one person only: through the response_url while it
// takes them (five posts), then, or when it fails, with
// chat.postEphemeral in the channel.
func (a *Surface) tell(ctx context.Context, p person, msgs []Message) error {
	uses := 0
	for _, m := range msgs {
		if p.reply != "" && uses < responseURLUses {
			uses++
			opts := append(m.MsgOptions(), slackgo.MsgOptionResponseURL(p.reply, slackgo.ResponseTypeEphemeral))
			_, _, err := a.api.PostMessageContext(ctx, "", opts...)
			if err == nil {
				continue
			}
			if ctx.Err() != nil {
				return scrub(err)
			}
			a.log.Info("slack: the response_url did not take the answer; answering in the channel",
				"slack_user", p.user, "channel", p.channel, "err", scrub(err).Error())
			p.reply = ""
		}
		if p.channel == "" || p.user == "" {
			return threads.Permanent(errors.New("no response_url that works and no channel to answer in"))
		}
		if _, err := a.api.PostEphemeralContext(ctx, p.channel, p.user, m.MsgOptions()...); err != nil {
			return err
		}
	}
	return nil
}

// answer tells one person one sentence, logging what could not be sent.
func (a *Surface) answer(ctx context.Context, p person, text string) {
	if text == "" {
		return
	}
	if err := a.tell(ctx, p, []Message{literal(text)}); err != nil {
		a.log.Warn("slack: could not answer a person", "slack_user", p.user, "channel", p.channel, "err", err.Error())
	}
}

// allowedReply keeps a response_url only when it points at Slack (or at
// the configured API host, for GovSlack and tests): a response_url is
// posted to, and must not be a way to make the bot call anywhere else.
func (a *Surface) allowedReply(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.User != nil {
		return ""
	}
	host := strings.ToLower(u.Hostname())
	switch {
	case u.Scheme == "https" && (host == "slack.com" || strings.HasSuffix(host, ".slack.com") ||
		host == "slack-gov.com" || strings.HasSuffix(host, ".slack-gov.com")):
		return raw
	case u.Scheme == a.apiURL.Scheme && strings.EqualFold(u.Host, a.apiURL.Host):
		return raw
	}
	a.log.Warn("slack: ignored a response_url that does not point at Slack", "host", host)
	return ""
}

// literal is a message that shows text exactly as it is, in a rich_text
// block, its escaped mrkdwn the fallback notifications show.
func literal(text string) Message {
	if text == "" {
		return Message{}
	}
	return Message{Text: utf16text.Cut(mrkdwn(text), 3000), Blocks: []slackgo.Block{richText(textElem(text))}}
}
