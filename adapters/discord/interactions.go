package discord

import (
	"context"
	"errors"
	"time"

	"github.com/bwmarrin/discordgo"

	"approvalsbot/adapters/chunk"
	"approvalsbot/adapters/click"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

const (
	// sayNoCommands answers a slash command: the one sentence of a
	// Discord interaction that is not a click (package click words those).
	sayNoCommands = "This bot has no commands: it answers the buttons on its cards."
	// reasonInputID names the deny modal's text input.
	reasonInputID = "reason"
)

// person is who clicked, where, and the interaction token that answers
// them alone for 15 minutes.
type person struct {
	user    string
	channel string
	token   string
}

func (p person) threads() threads.Person {
	return threads.Person{User: p.user, Channel: p.channel, Reply: p.token}
}

func userOf(in *discordgo.Interaction) string {
	switch {
	case in.Member != nil && in.Member.User != nil:
		return in.Member.User.ID
	case in.User != nil:
		return in.User.ID
	}
	return ""
}

// deferUpdate acknowledges a click without a visible answer; the work
// answers with ephemeral follow-ups.
func deferUpdate() *discordgo.InteractionResponse {
	return &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate}
}

// ephemeral answers at once, to the clicker alone.
func ephemeral(text string) *discordgo.InteractionResponse {
	return &discordgo.InteractionResponse{Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Content: chunk.Cut(markdown(text), contentMax),
			Flags: ephemeralText, AllowedMentions: noMentions()}}
}

func noMentions() *discordgo.MessageAllowedMentions {
	return &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}}
}

// interaction is the one handler both transports feed: it decides the
// first answer, with no I/O but one local store read (the deny modal),
// and returns the work to do after it. A nil answer means the type is not
// one the bot takes. PING never reaches it (only HTTP sends one).
func (a *Adapter) interaction(ctx context.Context, in *discordgo.Interaction) (*discordgo.InteractionResponse, click.Work) {
	who := person{user: userOf(in), channel: in.ChannelID, token: in.Token}
	if who.user == "" {
		return ephemeral(click.SayUnknownButton), click.Work{}
	}
	switch in.Type {
	case discordgo.InteractionMessageComponent:
		return a.button(ctx, in, who)
	case discordgo.InteractionModalSubmit:
		return a.submit(ctx, in, who)
	case discordgo.InteractionApplicationCommand:
		return ephemeral(sayNoCommands), click.Work{}
	case discordgo.InteractionApplicationCommandAutocomplete:
		return &discordgo.InteractionResponse{Type: discordgo.InteractionApplicationCommandAutocompleteResult,
			Data: &discordgo.InteractionResponseData{Choices: []*discordgo.ApplicationCommandOptionChoice{}}}, click.Work{}
	}
	return nil, click.Work{}
}

// button handles a click on a button. Its custom_id is untrusted:
// ParseAction reads it strictly, and one that is not the card's is
// answered and logged, with nothing sent.
func (a *Adapter) button(ctx context.Context, in *discordgo.Interaction, who person) (*discordgo.InteractionResponse, click.Work) {
	data, ok := in.Data.(discordgo.MessageComponentInteractionData)
	act, err := templates.ParseAction(data.CustomID)
	switch {
	case !ok:
		err = errors.New("the click carries no component data")
	case err == nil && data.ComponentType != discordgo.ButtonComponent:
		err = errors.New("the component is not a button")
	}
	if err != nil {
		a.log.Warn("discord: click on a button the bot does not know", "discord_user", who.user, "channel", who.channel,
			"err", err.Error())
		return ephemeral(click.SayUnknownButton), click.Work{}
	}
	switch act.Kind {
	case templates.ActionApprove:
		return a.record(ctx, act, who, true, ""), click.Work{}
	case templates.ActionDeny:
		return a.askReason(ctx, act, who), click.Work{}
	default: // ActionShowArgs, ActionShowDetails
		if a.service() == nil {
			// Said at once rather than after a deferred answer.
			return ephemeral(click.SayStarting), click.Work{}
		}
		return deferUpdate(), click.Work{Timeout: showTimeout, Run: func(ctx context.Context) { a.show(ctx, act, who) }}
	}
}

// askReason answers Deny with the reason modal for a person who may
// decide. Anyone else is refused through threads at once (package click:
// its sentence, nothing recorded), without a modal. The modal must be the
// first answer, so this is the one store read before answering.
func (a *Adapter) askReason(ctx context.Context, act templates.Action, who person) *discordgo.InteractionResponse {
	row, out := a.clicks.Deny(ctx, act, who.threads(), a.now())
	if row == nil {
		return a.recorded(ctx, act, out)
	}
	return denyModal(row.Function, act)
}

// denyModal asks for an optional reason, at most click.ReasonMax
// characters. Its custom_id is the Deny action itself, so the submission
// says which card and revision it denies. Rows hold one text input each (discordgo
// v0.29.0 knows no Label component).
func denyModal(function string, act templates.Action) *discordgo.InteractionResponse {
	return &discordgo.InteractionResponse{Type: discordgo.InteractionResponseModal, Data: &discordgo.InteractionResponseData{
		CustomID: templates.EncodeAction(act),
		Title:    chunk.Cut(click.DenyTitle(function), modalTitleMax),
		Components: []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
			discordgo.TextInput{
				CustomID:    reasonInputID,
				Label:       chunk.Cut(click.SayReasonLabel, textInputLabelMax),
				Style:       discordgo.TextInputParagraph,
				Placeholder: chunk.Cut(click.SayReasonGoes, textInputPlaceholderMax),
				Required:    false,
				MaxLength:   click.ReasonMax,
			},
		}}},
	}}
}

// submit handles the deny modal's submission: the denial is recorded,
// then answered (record).
func (a *Adapter) submit(ctx context.Context, in *discordgo.Interaction, who person) (*discordgo.InteractionResponse, click.Work) {
	data, ok := in.Data.(discordgo.ModalSubmitInteractionData)
	act, err := templates.ParseAction(data.CustomID)
	switch {
	case !ok:
		err = errors.New("the submission carries no modal data")
	case err == nil && act.Kind != templates.ActionDeny:
		err = errors.New("the dialog's action is not a denial")
	}
	if err != nil {
		a.log.Warn("discord: dialog the bot does not know", "discord_user", who.user, "err", err.Error())
		return ephemeral(click.SayUnknownDialog), click.Work{}
	}
	return a.record(ctx, act, who, false, textValue(data.Components, reasonInputID)), click.Work{}
}

// textValue finds a text input's value in a modal's rows.
func textValue(rows []discordgo.MessageComponent, id string) string {
	for _, c := range rows {
		switch c := c.(type) {
		case *discordgo.ActionsRow:
			if v := textValue(c.Components, id); v != "" {
				return v
			}
		case discordgo.ActionsRow:
			if v := textValue(c.Components, id); v != "" {
				return v
			}
		case *discordgo.TextInput:
			if c.CustomID == id {
				return c.Value
			}
		case discordgo.TextInput:
			if c.CustomID == id {
				return c.Value
			}
		}
	}
	return ""
}

// record records an approval or denial before the click is answered
// (package click), and answers it (recorded).
func (a *Adapter) record(ctx context.Context, act templates.Action, who person, approve bool, comment string) *discordgo.InteractionResponse {
	return a.recorded(ctx, act, a.clicks.Record(ctx, act, who.threads(), approve, comment, a.now()))
}

// recorded is the first answer to a click on Approve or Deny: a recorded
// decision updates the clicked message itself (UPDATE_MESSAGE) to its
// card as the approval now stands, its buttons gone and the decision on
// its way, which spends none of the channel's edit budget; anything else
// is told to the person alone, and the card keeps its buttons.
func (a *Adapter) recorded(ctx context.Context, act templates.Action, out click.Outcome) *discordgo.InteractionResponse {
	if card, ok := a.clicks.Card(ctx, act, out); ok {
		msg := a.render.Discord(templates.Build(card.Input()))
		return &discordgo.InteractionResponse{Type: discordgo.InteractionResponseUpdateMessage, Data: updateData(msg)}
	}
	return ephemeral(out.Text)
}

// updateData is a card as the data of an UPDATE_MESSAGE answer: every
// field set, so buttons that are gone are removed.
func updateData(msg *discordgo.MessageSend) *discordgo.InteractionResponseData {
	components := msg.Components
	if components == nil {
		components = []discordgo.MessageComponent{}
	}
	embeds := msg.Embeds
	if embeds == nil {
		embeds = []*discordgo.MessageEmbed{}
	}
	return &discordgo.InteractionResponseData{Content: msg.Content, Embeds: embeds, Components: components,
		AllowedMentions: msg.AllowedMentions}
}

// answer tells the person who clicked one sentence, ephemerally, logging
// what could not be sent.
func (a *Adapter) answer(ctx context.Context, who person, text string) {
	if err := a.followup(ctx, who.token, ephemeralParams(text), true); err != nil {
		a.log.Warn("discord: could not answer a person", "discord_user", who.user, "channel", who.channel,
			"err", scrub(err).Error())
	}
}

func ephemeralParams(text string) *discordgo.WebhookParams {
	return &discordgo.WebhookParams{Content: chunk.Cut(markdown(text), contentMax),
		Flags: ephemeralText, AllowedMentions: noMentions()}
}

// followup posts through an interaction's webhook. Right after an HTTP
// answer Discord may not have recorded it yet and says Unknown Webhook:
// fresh retries that for a few seconds. A 429 waits as Discord asks, a
// few times, within ctx.
func (a *Adapter) followup(ctx context.Context, token string, params *discordgo.WebhookParams, fresh bool) error {
	if token == "" {
		return threads.Permanent(errors.New("no interaction token to answer with"))
	}
	in := &discordgo.Interaction{AppID: a.appID, Token: token}
	settle := time.Now().Add(followupSettle)
	limited := 0
	for try := 1; ; try++ {
		_, err := a.rest.FollowupMessageCreate(in, true, params, discordgo.WithContext(ctx))
		if err == nil {
			return nil
		}
		wait, again := time.Duration(0), false
		if d, ok := retryAfter(err); ok && limited < 3 {
			limited++
			wait, again = d, true
		} else if code := restCode(err); fresh && (code == codeUnknownWebhook || code == codeUnknownInteraction) && time.Now().Before(settle) {
			wait, again = time.Duration(min(try, 5))*100*time.Millisecond, true
		}
		if !again || !pause(ctx, wait) {
			return err
		}
	}
}
