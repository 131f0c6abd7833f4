package discord

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/bwmarrin/discordgo"
)

// call sends body (nil, or one of the bot's wire types) to Discord's REST
// API through discordgo's request function, which signs it and keeps the
// rate-limit buckets, and returns the answer's body.
func (a *Surface) call(ctx context.Context, method, url string, body any, bucket string) ([]byte, error) {
	return a.rest.RequestWithBucketID(method, url, body, bucket, discordgo.WithContext(ctx))
}

// Endpoints the bot calls beside discordgo's own functions, from
// discordgo's package globals (read, never changed).
func endpointFollowup(app, token string) string { return discordgo.EndpointFollowupMessage(app, token) }
func endpointOriginal(app, token string) string {
	return discordgo.EndpointInteractionResponseActions(app, token)
}
func endpointCallback(id, token string) string {
	return discordgo.EndpointInteractionResponse(id, token)
}

// sent is what the bot reads of a message Discord created.
type sent struct {
	ID string `json:"id"`
}

// send posts a message to a channel without waiting for its pace: the
// outbox claimed the row within its budget (PaceKey), and a 429 returns
// the row with Discord's wait.
func (a *Surface) send(ctx context.Context, channel string, msg *Message) (*sent, error) {
	body, err := a.call(ctx, "POST", discordgo.EndpointChannelMessages(channel), msg, discordgo.EndpointChannelMessages(channel))
	if err != nil {
		return nil, err
	}
	var m sent
	if err := json.Unmarshal(body, &m); err != nil || m.ID == "" {
		return nil, errors.New("no message id in Discord's answer")
	}
	return &m, nil
}

// editMessage replaces a posted message's content, embeds and buttons.
func (a *Surface) editMessage(ctx context.Context, channel, message string, edit *MessageEdit) error {
	_, err := a.call(ctx, "PATCH", discordgo.EndpointChannelMessage(channel, message), edit, discordgo.EndpointChannelMessage(channel, ""))
	return err
}

// threadStart starts a thread from a message: discordgo's ThreadStart
// always carries "invitable", which only a thread without one takes.
type threadStart struct {
	Name                string `json:"name"`
	AutoArchiveDuration int    `json:"auto_archive_duration,omitempty"`
}

// startThread starts a public thread from a message and returns its id.
// Discord gives a thread the id of its message and starts one per
// message, so "already created" means it exists: that id.
func (a *Surface) startThread(ctx context.Context, channel, messageID, name string) (string, error) {
	url := discordgo.EndpointChannelMessageThread(channel, messageID)
	body, err := a.call(ctx, "POST", url, threadStart{Name: name, AutoArchiveDuration: threadArchiveMinutes}, url)
	switch {
	case restCode(err) == codeThreadAlreadyCreated:
		return messageID, nil
	case err != nil:
		return "", err
	}
	var ch sent
	if err := json.Unmarshal(body, &ch); err != nil || ch.ID == "" {
		return "", errors.New("no thread id in Discord's answer")
	}
	return ch.ID, nil
}
