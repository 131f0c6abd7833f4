package discord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"approvalsbot/approval"
	"approvalsbot/internal/utf16text"
	"approvalsbot/ladder"
	"approvalsbot/say"
	"approvalsbot/templates"
	"approvalsbot/tenant"
	"approvalsbot/threads"
)

// "Approve and allow…" on Discord (docs/discord.md#approve-and-allow):
// the card's button opens a modal with three string selects (scope,
// lifetime, uses) under the scopes in words, as the core worded them; its
// submission is the core's to check and record. /approvals grants lists
// the tenant's live grants with a Revoke each.

// Component type of a string select:
// https://discord.com/developers/docs/components/reference#string-select
const componentStringSelect = 3

// The grant modal's select ids, and Discord's limits it meets.
const (
	grantScopeID = "grant_scope"
	grantTTLID   = "grant_ttl"
	grantUsesID  = "grant_uses"
	// selectOptionMax is a select option's label and value
	// (https://discord.com/developers/docs/components/reference#string-select-select-option-structure).
	selectOptionMax = 100
)

// StringSelect is a select menu; in a modal it sits in a Label.
type StringSelect struct {
	CustomID string
	Options  []SelectOption
}

// SelectOption is one choice of a StringSelect.
type SelectOption struct {
	Label, Value string
	Default      bool
}

func (StringSelect) component() {}

// MarshalJSON writes a string select that takes exactly one choice.
func (s StringSelect) MarshalJSON() ([]byte, error) {
	type option struct {
		Label   string `json:"label"`
		Value   string `json:"value"`
		Default bool   `json:"default,omitempty"`
	}
	opts := make([]option, len(s.Options))
	for i, o := range s.Options {
		opts[i] = option{Label: utf16text.Cut(o.Label, selectOptionMax), Value: o.Value, Default: o.Default}
	}
	return json.Marshal(struct {
		Type      int      `json:"type"`
		CustomID  string   `json:"custom_id"`
		Options   []option `json:"options"`
		MinValues int      `json:"min_values"`
		MaxValues int      `json:"max_values"`
		Required  bool     `json:"required"`
	}{componentStringSelect, s.CustomID, opts, 1, 1, true})
}

// askGrant answers Approve and allow… with its modal for a person who may
// grant this call; anyone else is told at once why not.
func (a *Adapter) askGrant(ctx context.Context, act templates.Action, who person) (*answer, threads.Work) {
	out := a.click(ctx, threads.ClickAsk, act, who, "")
	if out.Dialog == nil || out.Dialog.Grant == nil {
		return a.revealOr(act, who, out)
	}
	return grantModal(*out.Dialog, act), threads.Work{}
}

// grantModal is the grant dialog: the question and each scope in words,
// then the three choices, each defaulting to the narrowest.
func grantModal(d threads.Dialog, act templates.Action) *answer {
	g := d.Grant
	text := say.GrantQuestion("**"+markdown(utf16text.Cut(d.Function, 200))+"**", markdown(act.ApprovalID), act.Revision, markdown(d.Effect)) +
		"\n" + say.GrantScopeCallLabel + ": **" + markdown(g.Call) + "**"
	scopes := []SelectOption{{Label: say.GrantScopeCallLabel, Value: string(approval.GrantScopeCall), Default: true}}
	if g.Values != "" {
		text += "\n" + say.GrantScopeValuesLabel + ": **" + markdown(g.Values) + "**"
		scopes = append(scopes, SelectOption{Label: say.GrantScopeValuesLabel, Value: string(approval.GrantScopeValues)})
	} else {
		text += "\n" + markdown(say.GrantNoValues(g.ValuesWhyNot))
	}
	text += "\n" + say.GrantFootnote
	var ttls []SelectOption
	for i, ttl := range g.TTLs {
		ttls = append(ttls, SelectOption{Label: approval.TTLWords(ttl), Value: ttl.String(), Default: i == 0})
	}
	var uses []SelectOption
	for i, n := range g.Uses {
		uses = append(uses, SelectOption{Label: say.GrantUsesWords(n), Value: strconv.Itoa(n), Default: i == 0})
	}
	label := func(l string) string { return utf16text.Cut(l, textInputLabelMax) }
	return &answer{Type: answerModal, Data: modal{
		CustomID: templates.EncodeAction(act),
		Title:    utf16text.Cut(say.GrantTitle, modalTitleMax),
		Components: []Component{
			TextDisplay{Content: utf16text.Cut(text, textDisplayMax)},
			Label{Label: label(say.GrantScopeLabel), Component: StringSelect{CustomID: grantScopeID, Options: scopes}},
			Label{Label: label(say.GrantTTLLabel), Component: StringSelect{CustomID: grantTTLID, Options: ttls}},
			Label{Label: label(say.GrantUsesLabel), Component: StringSelect{CustomID: grantUsesID, Options: uses}},
		},
	}}
}

// grantSubmitted is a modal submission as the grant dialog reads it: the
// selects' values, wherever they sit.
type grantSubmitted struct {
	Type       int              `json:"type"`
	CustomID   string           `json:"custom_id"`
	Values     []string         `json:"values"`
	Component  *grantSubmitted  `json:"component"`
	Components []grantSubmitted `json:"components"`
}

// selected finds a select's one value among a submission's components.
func selected(cs []grantSubmitted, id string) (string, bool) {
	for _, c := range cs {
		switch {
		case c.Type == componentStringSelect && c.CustomID == id:
			if len(c.Values) != 1 {
				return "", false
			}
			return c.Values[0], true
		case c.Component != nil:
			if v, ok := selected([]grantSubmitted{*c.Component}, id); ok {
				return v, true
			}
		case len(c.Components) > 0:
			if v, ok := selected(c.Components, id); ok {
				return v, true
			}
		}
	}
	return "", false
}

// submitGrant records the grant dialog's choice, checked by the core as
// if crafted, before the click is answered.
func (a *Adapter) submitGrant(ctx context.Context, in *inbound, act templates.Action, who person) (*answer, threads.Work) {
	var data struct {
		Components []grantSubmitted `json:"components"`
	}
	err := in.data(&data)
	var ask threads.GrantAsk
	if err == nil {
		ask, err = grantChoice(data.Components)
	}
	if err != nil {
		a.log.Warn("discord: grant dialog the bot does not know", "discord_user", who.user, "err", err.Error())
		return ephemeral(say.UnknownDialog.Text()), threads.Work{}
	}
	rctx, cancel := who.receipt.Bound(ctx)
	defer cancel()
	out := a.service.Click(rctx, threads.ClickRequest{Do: threads.ClickRecord, Action: act, Person: who.threads(), Grant: &ask})
	return a.revealOr(act, who, out)
}

func grantChoice(cs []grantSubmitted) (threads.GrantAsk, error) {
	scope, ok1 := selected(cs, grantScopeID)
	rawTTL, ok2 := selected(cs, grantTTLID)
	rawUses, ok3 := selected(cs, grantUsesID)
	if !ok1 || !ok2 || !ok3 {
		return threads.GrantAsk{}, errors.New("a choice is missing")
	}
	ttl, err := time.ParseDuration(rawTTL)
	if err != nil {
		return threads.GrantAsk{}, errors.New("the lifetime is not a duration")
	}
	uses, err := strconv.Atoi(rawUses)
	if err != nil {
		return threads.GrantAsk{}, errors.New("the uses are not a number")
	}
	return threads.GrantAsk{Scope: approval.GrantScope(scope), TTL: ttl, Uses: uses}, nil
}

// revokeGrant records /approvals grants' Revoke before answering it.
func (a *Adapter) revokeGrant(ctx context.Context, act templates.Action, who person) *answer {
	rctx, cancel := who.receipt.Bound(ctx)
	defer cancel()
	out := a.service.Click(rctx, threads.ClickRequest{Do: threads.ClickRecord, Action: act, Person: who.threads()})
	return ephemeral(out.Reason.String())
}

// grantsMessages is /approvals grants' answer: each tenant's live grants
// as lines, each with a Revoke button, within a message's components.
func (a *Adapter) grantsMessages(ctx context.Context, ids []string, tenants map[string]*tenant.Tenant, member func(*tenant.Tenant) bool,
	who string) []*Message {
	var msgs []*Message
	for _, id := range ids {
		t := tenants[id]
		if !member(t) {
			msgs = append(msgs, textMessages([]string{say.MembersOnly("**" + markdown(id) + "**")})...)
			continue
		}
		m, _ := t.MemberOn(ladder.SurfaceDiscord, who)
		decides := m.Role.CanDecide() // Revoke is offered to them only
		gs, err := threads.ListGrants(ctx, a.store, id, t.Location(), a.now())
		if err != nil {
			a.log.Warn("discord: list grants", "tenant", id, "err", err.Error())
			msgs = append(msgs, textMessages([]string{fmt.Sprintf("**%s**: the bot cannot read its grants right now; try again in a moment.", markdown(id))})...)
			continue
		}
		if len(gs) == 0 {
			msgs = append(msgs, textMessages([]string{fmt.Sprintf("**%s**: no live grants.", markdown(id))})...)
			continue
		}
		// One message per rowsMax×buttonsPerRow grants: each line
		// and its Revoke in the same message.
		per := rowsMax * buttonsPerRow
		for start := 0; start < len(gs); start += per {
			part := gs[start:min(start+per, len(gs))]
			lines := []string{fmt.Sprintf("**%s**: %d live, soonest end first:", markdown(id), len(gs))}
			var rows []Component
			var row []Component
			for _, g := range part {
				lines = append(lines, "• "+markdown(threads.GrantLine(g)))
				if g.Revoking || !decides {
					continue
				}
				act := templates.Action{Kind: templates.ActionRevokeGrant, ApprovalID: g.ID, Revision: 1}
				row = append(row, Button{Style: buttonDanger, Label: say.GrantRevoke + " " + g.ID, CustomID: templates.EncodeAction(act)})
				if len(row) == buttonsPerRow {
					rows, row = append(rows, ActionRow{Components: row}), nil
				}
			}
			if len(row) > 0 {
				rows = append(rows, ActionRow{Components: row})
			}
			msgs = append(msgs, &Message{Content: utf16text.Cut(strings.Join(lines, "\n"), contentMax), Components: rows,
				Flags: ephemeralText, AllowedMentions: noMentions()})
		}
	}
	if len(msgs) == 0 {
		msgs = textMessages(nil)
	}
	return msgs
}
