package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	slackgo "github.com/slack-go/slack"

	"approvalsbot/approval"
	"approvalsbot/internal/strictjson"
	"approvalsbot/internal/utf16text"
	"approvalsbot/say"
	"approvalsbot/templates"
	"approvalsbot/tenant"
	"approvalsbot/threads"
)

// "Approve and allow…" on Slack (docs/slack.md#approve-and-allow): the
// card's button opens a modal that shows each scope in words, as the
// core worded it, with the lifetime and uses offered; its submission is
// the core's to check and record (threads.Click with a GrantAsk).

// The grant dialog's wire names.
const (
	grantCallbackID = "ab1-grant"
	grantScopeBlock = "grant_scope"
	grantTTLBlock   = "grant_ttl"
	grantUsesBlock  = "grant_uses"
	grantActionID   = "choice"
)

// Slack's limits the grant dialog meets
// (https://api.slack.com/reference/block-kit/composition-objects#option).
const optionTextMax = 75

// askGrant opens the grant modal for a person who may grant this call;
// anyone else is told at once why not (threads' reason, nothing recorded).
func (a *Adapter) askGrant(ctx context.Context, act templates.Action, who person, trigger string, received time.Time) {
	ctx = threads.ForPerson(ctx) // the dialog opens within the trigger's 3 s
	out := a.click(ctx, threads.ClickAsk, act, who, "", received)
	d := out.Dialog
	if d == nil || d.Grant == nil {
		a.afterRecord(ctx, act, who, out)
		return
	}
	a.openDialog(ctx, act, who, trigger, out.Tenant, func(meta string) slackgo.ModalViewRequest {
		return grantModal(*d, act, meta)
	})
}

// grantModal is the grant dialog: the call, each scope offered in words,
// the lifetime and the uses. Every choice has a default, the narrowest:
// this exact call, the shortest time, the fewest uses.
func grantModal(d threads.Dialog, act templates.Action, meta string) slackgo.ModalViewRequest {
	g := d.Grant
	plain := func(s string) *slackgo.TextBlockObject {
		return slackgo.NewTextBlockObject(slackgo.PlainTextType, utf16text.Cut(s, optionTextMax), false, false)
	}
	callOpt := slackgo.NewOptionBlockObject(string(approval.GrantScopeCall), plain(say.GrantScopeCallLabel), nil)
	scopes := []*slackgo.OptionBlockObject{callOpt}
	lines := []slackgo.Block{
		// The function, the id and the values are the backend's: literal text.
		richText(withBold(say.GrantQuestion(placeholder, act.ApprovalID, act.Revision, d.Effect), utf16text.Cut(d.Function, 200))...),
		richText(withBold(say.GrantScopeCallLabel+": "+placeholder, utf16text.Cut(g.Call, 1000))...),
	}
	if g.Values != "" {
		scopes = append(scopes, slackgo.NewOptionBlockObject(string(approval.GrantScopeValues), plain(say.GrantScopeValuesLabel), nil))
		lines = append(lines, richText(withBold(say.GrantScopeValuesLabel+": "+placeholder, utf16text.Cut(g.Values, 1000))...))
	} else {
		lines = append(lines, richText(elem{text: say.GrantNoValues(g.ValuesWhyNot)}))
	}
	scope := slackgo.NewRadioButtonsBlockElement(grantActionID, scopes...)
	scope.InitialOption = callOpt
	var ttls []*slackgo.OptionBlockObject
	for _, ttl := range g.TTLs {
		ttls = append(ttls, slackgo.NewOptionBlockObject(ttl.String(), plain(approval.TTLWords(ttl)), nil))
	}
	var uses []*slackgo.OptionBlockObject
	for _, n := range g.Uses {
		uses = append(uses, slackgo.NewOptionBlockObject(strconv.Itoa(n), plain(say.GrantUsesWords(n)), nil))
	}
	ttl := slackgo.NewOptionsSelectBlockElement(slackgo.OptTypeStatic, nil, grantActionID, ttls...)
	use := slackgo.NewOptionsSelectBlockElement(slackgo.OptTypeStatic, nil, grantActionID, uses...)
	if len(ttls) > 0 {
		ttl.InitialOption = ttls[0]
	}
	if len(uses) > 0 {
		use.InitialOption = uses[0]
	}
	blocks := append(lines,
		slackgo.NewInputBlock(grantScopeBlock, plain(say.GrantScopeLabel), nil, scope),
		slackgo.NewInputBlock(grantTTLBlock, plain(say.GrantTTLLabel), nil, ttl),
		slackgo.NewInputBlock(grantUsesBlock, plain(say.GrantUsesLabel), nil, use),
		richText(elem{text: say.GrantFootnote}),
	)
	return slackgo.ModalViewRequest{
		Type:            slackgo.VTModal,
		CallbackID:      grantCallbackID,
		Title:           plainTitle(say.GrantTitle),
		Submit:          slackgo.NewTextBlockObject(slackgo.PlainTextType, say.GrantSubmit, false, false),
		Close:           slackgo.NewTextBlockObject(slackgo.PlainTextType, say.DenyClose, false, false),
		PrivateMetadata: meta,
		Blocks:          slackgo.Blocks{BlockSet: blocks},
	}
}

func plainTitle(s string) *slackgo.TextBlockObject {
	return slackgo.NewTextBlockObject(slackgo.PlainTextType, utf16text.Cut(s, modalTitleMax), false, false)
}

// submitGrant records the grant dialog's choice: the core checks it as
// if crafted and records the approval with its grant before the ack; the
// modal stays open, saying why, when nothing was recorded and a retry may be.
func (a *Adapter) submitGrant(ctx context.Context, cb *slackgo.InteractionCallback, received time.Time) (ackBody, threads.Work) {
	var meta denyMeta
	err := strictjson.Check([]byte(cb.View.PrivateMetadata), denyMetaKeys)
	if err == nil {
		err = json.Unmarshal([]byte(cb.View.PrivateMetadata), &meta)
	}
	var act templates.Action
	if err == nil {
		act, err = templates.ParseAction(meta.Action)
	}
	if err == nil && act.Kind != templates.ActionGrant {
		err = errors.New("the dialog's action is not its own")
	}
	var ask threads.GrantAsk
	if err == nil {
		ask, err = grantChoice(cb.View.State)
	}
	if err != nil {
		a.log.Warn("slack: grant dialog with a payload the bot does not know", "slack_user", cb.User.ID, "err", err.Error())
		return slackgo.NewErrorsViewSubmissionResponse(map[string]string{grantScopeBlock: say.UnknownDialog.Text()}), threads.Work{}
	}
	who := person{user: cb.User.ID, channel: meta.Channel, reply: a.allowedReply(meta.Reply)}
	out := a.service.Click(ctx, threads.ClickRequest{Do: threads.ClickRecord, Action: act, Person: who.threads(),
		ReceivedAt: received, Grant: &ask})
	if out.Retry {
		return slackgo.NewErrorsViewSubmissionResponse(map[string]string{grantScopeBlock: out.Reason.String()}), threads.Work{}
	}
	return nil, threads.Work{Timeout: decideTimeout, Run: func(ctx context.Context) { a.afterRecord(ctx, act, who, out) }}
}

// grantChoice reads the dialog's three choices; the values are checked
// by the core against what it offers, so here only their form.
func grantChoice(st *slackgo.ViewState) (threads.GrantAsk, error) {
	if st == nil {
		return threads.GrantAsk{}, errors.New("no state")
	}
	pick := func(block string) string { return st.Values[block][grantActionID].SelectedOption.Value }
	ttl, err := time.ParseDuration(pick(grantTTLBlock))
	if err != nil {
		return threads.GrantAsk{}, errors.New("the lifetime is not a duration")
	}
	uses, err := strconv.Atoi(pick(grantUsesBlock))
	if err != nil {
		return threads.GrantAsk{}, errors.New("the uses are not a number")
	}
	return threads.GrantAsk{Scope: approval.GrantScope(pick(grantScopeBlock)), TTL: ttl, Uses: uses}, nil
}

// grantsText is one tenant's part of /approvals grants: each live grant
// the bot knows (who gave it, the scope in words, uses left, expiry, last
// use), each with a Revoke the core checks when pressed, shown to
// members who may decide (decides).
func (a *Adapter) grantsText(ctx context.Context, id string, t *tenant.Tenant, decides bool) section {
	gs, err := threads.ListGrants(ctx, a.store, id, t.Location(), a.now())
	if err != nil {
		a.log.Warn("slack: list grants", "tenant", id, "err", err.Error())
		return section{mrkdwn: fmt.Sprintf("*%s*: the bot cannot read its grants right now; try again in a moment.", mrkdwn(id))}
	}
	if len(gs) == 0 {
		return section{mrkdwn: fmt.Sprintf("*%s*: no live grants.", mrkdwn(id))}
	}
	out := section{lines: [][]elem{{boldElem(id), textElem(fmt.Sprintf(": %d live, soonest end first:", len(gs)))}}}
	for _, g := range gs {
		// The words and ids are the bot's, made of the backend's values:
		// literal text, never mrkdwn.
		line := []elem{textElem("• " + threads.GrantLine(g))}
		if g.Revoking || !decides {
			out.lines = append(out.lines, line)
			continue
		}
		act := templates.Action{Kind: templates.ActionRevokeGrant, ApprovalID: g.ID, Revision: 1}
		payload := templates.EncodeAction(act)
		btn := slackgo.NewButtonBlockElement(payload, payload,
			slackgo.NewTextBlockObject(slackgo.PlainTextType, say.GrantRevoke+" "+g.ID, false, false))
		btn.Style = slackgo.StyleDanger
		out.revoke = append(out.revoke, richText(line...), slackgo.NewActionBlock("", btn))
	}
	return out
}

// revokeGrant takes a Revoke from /approvals grants to the core, which
// records it before the person is told.
func (a *Adapter) revokeGrant(ctx context.Context, act templates.Action, who person) {
	out := a.service.Click(ctx, threads.ClickRequest{Do: threads.ClickRecord, Action: act, Person: who.threads()})
	a.answer(ctx, who, out.Reason.String())
}
