package discord

import (
	"context"
	"errors"
	"time"

	"github.com/bwmarrin/discordgo"

	"approvalsbot/adapters/chunk"
	"approvalsbot/store"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// Sentences a person reads when the bot cannot do what they asked.
const (
	sayUnknownButton = "This button is not one the bot knows; nothing was sent."
	sayUnknownDialog = "This dialog is not one the bot knows; nothing was sent."
	sayUnknownCard   = "The bot knows no such card; nothing was sent."
	sayStarting      = "The bot is starting and cannot take clicks yet; try again in a moment. Nothing was sent."
	sayStoreDown     = "The bot cannot read this card right now; try again in a moment. Nothing was sent."
	sayNotRecorded   = "The bot could not record your decision; try again in a moment. Nothing was sent."
	sayLookupFailed  = "The arguments could not be looked up right now; try again in a moment."
	sayShuttingDown  = "The bot is shutting down; try again in a moment. Nothing was sent."
	sayReasonTooLong = "The reason is longer than 1,000 characters; nothing was sent."
	sayNoCommands    = "This bot has no commands: it answers the buttons on its cards."
	// reasonInputID names the deny modal's text input.
	reasonInputID = "reason"
)

// work is what runs after the answer, with its timeout.
type work struct {
	timeout time.Duration
	run     func(ctx context.Context)
}

// person is who clicked, where, and the interaction token that answers
// them alone for 15 minutes.
type person struct {
	user    string
	channel string
	token   string
}

func (p person) threads() threads.Person {
	return threads.Person{Surface: "discord", User: p.user, Channel: p.channel, Reply: p.token}
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
			Flags: discordgo.MessageFlagsEphemeral, AllowedMentions: noMentions()}}
}

func noMentions() *discordgo.MessageAllowedMentions {
	return &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}}
}

// interaction is the one handler both transports feed: it decides the
// first answer, with no I/O but one local store read (the deny modal),
// and returns the work to do after it. A nil answer means the type is not
// one the bot takes. PING never reaches it (only HTTP sends one).
func (a *Adapter) interaction(ctx context.Context, in *discordgo.Interaction) (*discordgo.InteractionResponse, work) {
	who := person{user: userOf(in), channel: in.ChannelID, token: in.Token}
	if who.user == "" {
		return ephemeral(sayUnknownButton), work{}
	}
	switch in.Type {
	case discordgo.InteractionMessageComponent:
		return a.click(ctx, in, who)
	case discordgo.InteractionModalSubmit:
		return a.submit(in, who)
	case discordgo.InteractionApplicationCommand:
		return ephemeral(sayNoCommands), work{}
	case discordgo.InteractionApplicationCommandAutocomplete:
		return &discordgo.InteractionResponse{Type: discordgo.InteractionApplicationCommandAutocompleteResult,
			Data: &discordgo.InteractionResponseData{Choices: []*discordgo.ApplicationCommandOptionChoice{}}}, work{}
	}
	return nil, work{}
}

// click handles a button. Its custom_id is untrusted: ParseAction reads it
// strictly, and one that is not the card's is answered and logged, with
// nothing sent.
func (a *Adapter) click(ctx context.Context, in *discordgo.Interaction, who person) (*discordgo.InteractionResponse, work) {
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
		return ephemeral(sayUnknownButton), work{}
	}
	if a.service() == nil {
		return ephemeral(sayStarting), work{}
	}
	switch act.Kind {
	case templates.ActionApprove:
		return deferUpdate(), work{decideTimeout, func(ctx context.Context) { a.decide(ctx, act, who, true, "") }}
	case templates.ActionDeny:
		return a.askReason(ctx, act, who)
	default: // ActionShowArgs, ActionShowDetails
		return deferUpdate(), work{showTimeout, func(ctx context.Context) { a.show(ctx, act, who) }}
	}
}

// askReason answers Deny with the reason modal for a person who may
// decide. Anyone else is refused through threads at once (its sentence,
// nothing recorded), without a modal. The modal must be the first answer,
// so this is the one store read before answering.
func (a *Adapter) askReason(ctx context.Context, act templates.Action, who person) (*discordgo.InteractionResponse, work) {
	row, err := a.store.ApprovalGet(ctx, act.ApprovalID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		a.log.Info("discord: click for an approval the bot does not hold", "approval_id", act.ApprovalID, "discord_user", who.user)
		return ephemeral(sayUnknownCard), work{}
	case err != nil:
		a.log.Error("discord: read the approval of a click", "approval_id", act.ApprovalID, "err", err.Error())
		return ephemeral(sayStoreDown), work{}
	}
	if !a.mayDecide(row.Tenant, who.user) {
		return deferUpdate(), work{decideTimeout, func(ctx context.Context) { a.decide(ctx, act, who, false, "") }}
	}
	return denyModal(row.Function, act), work{}
}

// mayDecide reports whether the user maps to a member who may decide in
// the tenant as configured now. It only chooses between asking for a
// reason and letting threads word the refusal at once; threads decides.
func (a *Adapter) mayDecide(tenant, user string) bool {
	t, ok := a.tenants()[tenant]
	if !ok {
		return false
	}
	m, ok := t.MemberByDiscord(user)
	return ok && m.Role.CanDecide()
}

// denyModal asks for an optional reason, at most 1,000 characters. Its
// custom_id is the Deny action itself, so the submission says which card
// and revision it denies. Rows hold one text input each (discordgo
// v0.29.0 knows no Label component).
func denyModal(function string, act templates.Action) *discordgo.InteractionResponse {
	return &discordgo.InteractionResponse{Type: discordgo.InteractionResponseModal, Data: &discordgo.InteractionResponseData{
		CustomID: templates.EncodeAction(act),
		Title:    chunk.Cut("Deny "+function, modalTitleMax),
		Components: []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
			discordgo.TextInput{
				CustomID:    reasonInputID,
				Label:       chunk.Cut("Why not? (optional)", textInputLabelMax),
				Style:       discordgo.TextInputParagraph,
				Placeholder: "Goes to the job backend and into the card's thread",
				Required:    false,
				MaxLength:   reasonMax,
			},
		}}},
	}}
}

// submit handles the deny modal's submission: it is acknowledged at
// once, and the denial recorded after.
func (a *Adapter) submit(in *discordgo.Interaction, who person) (*discordgo.InteractionResponse, work) {
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
		return ephemeral(sayUnknownDialog), work{}
	}
	reason := textValue(data.Components, reasonInputID)
	if len([]rune(reason)) > reasonMax {
		return ephemeral(sayReasonTooLong), work{}
	}
	if a.service() == nil {
		return ephemeral(sayStarting), work{}
	}
	return deferUpdate(), work{decideTimeout, func(ctx context.Context) { a.decide(ctx, act, who, false, reason) }}
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

// approvalOf finds the approval a click names, and so its tenant. The
// tenant is never taken from the click or its channel: the store holds it
// from the backend's signed event, and threads checks it against the
// revision.
func (a *Adapter) approvalOf(ctx context.Context, act templates.Action, who person) (*store.Approval, bool) {
	row, err := a.store.ApprovalGet(ctx, act.ApprovalID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		a.log.Info("discord: click for an approval the bot does not hold", "approval_id", act.ApprovalID, "discord_user", who.user)
		a.answer(ctx, who, sayUnknownCard)
		return nil, false
	case err != nil:
		a.log.Error("discord: read the approval of a click", "approval_id", act.ApprovalID, "err", err.Error())
		a.answer(ctx, who, sayStoreDown)
		return nil, false
	}
	return row, true
}

// decide records an approval or denial through threads and tells the
// person what threads said: that it is on its way, or why not.
func (a *Adapter) decide(ctx context.Context, act templates.Action, who person, approve bool, comment string) {
	svc := a.service()
	if svc == nil {
		a.answer(ctx, who, sayStarting)
		return
	}
	row, ok := a.approvalOf(ctx, act, who)
	if !ok {
		return
	}
	res, err := svc.Decide(ctx, threads.DecideRequest{Tenant: row.Tenant, ApprovalID: act.ApprovalID,
		Revision: act.Revision, Approve: approve, Comment: comment, Person: who.threads()})
	if err != nil {
		a.log.Error("discord: record a decision", "tenant", row.Tenant, "approval_id", act.ApprovalID,
			"discord_user", who.user, "err", err.Error())
		a.answer(ctx, who, sayNotRecorded)
		return
	}
	if !res.Sent {
		a.log.Info("discord: decision refused", "tenant", row.Tenant, "approval_id", act.ApprovalID, "discord_user", who.user)
	}
	a.answer(ctx, who, res.Text)
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
		Flags: discordgo.MessageFlagsEphemeral, AllowedMentions: noMentions()}
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
