package discord

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"approvalsbot/adapters/discord/discordtest"
	"approvalsbot/approval"
	"approvalsbot/internal/fixtures"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// TestEveryBodyIsWhatDiscordTakes renders every body the adapter sends
// (each fixture's card in every state, as a new message, an edit, an
// @original edit and an UPDATE_MESSAGE answer; every thread reply; the
// notices and answers to one person; the deny, comment and confirmation
// modals; the deferred and autocomplete answers; a thread's start; the
// command registration) and checks each against what Discord's API
// takes, field by field (discordtest's types from discord-api-types
// 0.38): no field it does not take, no null where the field is to be
// left out.
func TestEveryBodyIsWhatDiscordTakes(t *testing.T) {
	check := func(what string, f func([]byte) string, v any) {
		t.Helper()
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if p := f(b); p != "" {
			t.Errorf("%s: %s\n%s", what, p, b)
		}
	}
	files, err := fixtures.EventFiles()
	if err != nil {
		t.Fatal(err)
	}
	bodies := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := approval.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Approval == nil {
			if m, ok := templates.ThreadFromEvent(ev); ok {
				msg := RenderThread(m)
				msg.Flags |= noPreviews
				check(f+" thread reply", discordtest.CheckMessageCreate, msg)
				bodies++
			}
			continue
		}
		for _, state := range templates.PreviewStatesOf(ev.Approval) {
			in, err := templates.PreviewInput(ev.Approval, state, ev.Approval.RequestedAt.Add(time.Minute), templates.LadderPlan{})
			if err != nil {
				t.Fatal(err)
			}
			msg := RenderCard(templates.Build(in))
			name := f + " " + state
			check(name+" post", discordtest.CheckMessageCreate, msg)
			check(name+" edit", discordtest.CheckMessageEdit, msg.Edit())
			check(name+" @original edit", discordtest.CheckOriginalEdit, msg.Edit())
			check(name+" UPDATE_MESSAGE", discordtest.CheckResponse, &answer{Type: answerUpdate, Data: msg.Edit()})
			in.RevealContent = true
			check(name+" details", discordtest.CheckFollowup, (&Surface{}).details(in))
			bodies += 5
		}
		act := templates.Action{Kind: templates.ActionApprove, ApprovalID: ev.Approval.ID, Revision: ev.Approval.Revision}
		d := threads.Dialog{Function: ev.Approval.Call.Function, Effect: approval.EffectLine(ev.Approval.Call.Annotations),
			Destructive: ev.Approval.Destructive(), Restricted: ev.Approval.Content.Restricted}
		check(f+" confirmation", discordtest.CheckResponse, confirmModal(d, act))
		act.Kind = templates.ActionApproveNote
		check(f+" comment modal", discordtest.CheckResponse, commentModal(d, act))
		act.Kind = templates.ActionDeny
		check(f+" deny modal", discordtest.CheckResponse, denyModal(d, act))
		bodies += 3
	}
	escalation := RenderThread(templates.Escalation("a-1", []templates.Mention{{Target: "discord:user:1", Name: "k"},
		{Target: "discord:role:2", Name: "o"}}, 15*time.Minute))
	check("escalation", discordtest.CheckMessageCreate, escalation)
	check("ephemeral answer", discordtest.CheckResponse, ephemeral("no"))
	check("ephemeral follow-up", discordtest.CheckFollowup, ephemeralMessage(strings.Repeat("x", 3000)))
	check("notice", discordtest.CheckMessageCreate, &Message{Content: "n", AllowedMentions: noMentions(),
		Flags: noPreviews})
	check("deferred update", discordtest.CheckResponse, deferUpdate())
	check("deferred ephemeral", discordtest.CheckResponse, &answer{Type: answerDeferredMessage, Data: flagsOnly{Flags: ephemeralText}})
	check("autocomplete", discordtest.CheckResponse, &answer{Type: answerChoices, Data: choices{Choices: []struct{}{}}})
	check("pong", discordtest.CheckResponse, &answer{Type: answerPong})
	check("thread start", discordtest.CheckThreadStart, threadStart{Name: "t", AutoArchiveDuration: threadArchiveMinutes})
	check("commands", discordtest.CheckCommands, commands())
	for i, m := range textMessages([]string{"a", strings.Repeat("b\n", 3000)}) {
		check("command answer", discordtest.CheckFollowup, m)
		if i == 0 {
			check("command answer's @original edit", discordtest.CheckOriginalEdit, m.Edit())
		}
	}
	if bodies < 100 {
		t.Fatalf("%d bodies checked: the fixtures were not all rendered", bodies)
	}
}
