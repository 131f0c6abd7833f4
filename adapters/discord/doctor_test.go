package discord_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	discordad "approvalsbot/adapters/discord"
)

const inviteURL = "https://discord.com/oauth2/authorize?client_id=" + appID +
	"&scope=bot+applications.commands&permissions=309237664768"

func TestInviteURLHasExactlyThePermissionsUsed(t *testing.T) {
	want := int64(discordgo.PermissionViewChannel | discordgo.PermissionSendMessages | discordgo.PermissionSendMessagesInThreads |
		discordgo.PermissionCreatePublicThreads | discordgo.PermissionEmbedLinks)
	if discordad.Permissions != want || discordad.InviteURL(appID) != inviteURL {
		t.Fatalf("permissions %d, invite %s", discordad.Permissions, discordad.InviteURL(appID))
	}
}

func TestDoctorAllGood(t *testing.T) {
	h := newHarness(t)
	var out bytes.Buffer
	if err := h.adapter.Doctor(context.Background(), &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	text := out.String()
	for _, want := range []string{
		"the bot token works: bot approvals (" + appID + ")",
		"interactions: HTTP at " + h.http.URL + "/discord/interactions",
		"discord:channel:" + chApproval + " #channel-99 (acme post): the bot can post cards, start their threads and reply in them",
		"discord:channel:" + chFinance + " #channel-11 (acme post for payments.*): the bot can post cards",
		"discord:channel:" + chAudit + " #channel-00 (acme audit): the bot can post notices",
		"discord:channel:" + chQuiet + " #channel-22 (quiet post)",
		"discord:role:" + roleOncall + " @oncall (acme ladder default step 1 mention): mentionable",
		"invite URL (exactly the permissions used: View Channel, Send Messages, Send Messages in Threads, Create Public Threads, Embed Links): " + inviteURL,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("doctor does not say %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, botToken) || strings.Contains(text, "PROBLEM") {
		t.Fatalf("doctor output:\n%s", text)
	}
}

func TestDoctorFindsProblems(t *testing.T) {
	// The gateway configured, but the application still sends
	// interactions to a URL: the gateway would get none.
	h := newHarnessWith(t, harnessOptions{gateway: true, manual: true})
	h.discord.SetInteractionsURL("https://old.example/discord/interactions")
	h.discord.Deny(chFinance, discordgo.PermissionSendMessagesInThreads|discordgo.PermissionEmbedLinks)
	h.discord.Hide(chQuiet)
	h.discord.Deny(chAudit, discordgo.PermissionSendMessages)
	h.discord.SetMentionable(guildID, roleOncall, false)
	h.discord.AddChannelOfType(guildID, chApproval, "forum", discordgo.ChannelTypeGuildForum)
	var out bytes.Buffer
	err := h.adapter.Doctor(context.Background(), &out)
	text := out.String()
	if err == nil || !strings.Contains(err.Error(), "6 problem(s)") {
		t.Fatalf("Doctor: %v\n%s", err, text)
	}
	for _, want := range []string{
		"PROBLEM: interactions: public_key is not set, so the bot takes interactions over the gateway, but the application sends them to https://old.example/discord/interactions",
		"PROBLEM: discord:channel:" + chFinance + " #channel-11 (acme post for payments.*): the bot lacks Send Messages in Threads, Embed Links",
		"PROBLEM: discord:channel:" + chQuiet + " (quiet post): the bot cannot see this channel",
		"PROBLEM: discord:channel:" + chAudit + " #channel-00 (acme audit): the bot lacks Send Messages",
		"PROBLEM: discord:channel:" + chApproval + " #forum (acme post): not a text or announcement channel",
		"PROBLEM: discord:role:" + roleOncall + " @oncall (acme ladder default step 1 mention): not mentionable",
		inviteURL,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("doctor does not say %q:\n%s", want, text)
		}
	}
}

func TestDoctorBadToken(t *testing.T) {
	h := newHarness(t)
	o := h.opts
	o.Credentials.BotToken = "wrong-token"
	ad, err := discordad.NewSurface(o)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = ad.Doctor(context.Background(), &out)
	if err == nil || !strings.Contains(out.String(), "PROBLEM: the bot token does not work") ||
		!strings.Contains(out.String(), inviteURL) || strings.Contains(out.String(), "wrong-token") {
		t.Fatalf("Doctor: %v\n%s", err, out.String())
	}
}

func TestDoctorPublicKeyWithoutEndpoint(t *testing.T) {
	h := newHarness(t)
	h.discord.SetInteractionsURL("")
	var out bytes.Buffer
	if err := h.adapter.Doctor(context.Background(), &out); err == nil ||
		!strings.Contains(out.String(), "the application has no Interactions Endpoint URL") {
		t.Fatalf("Doctor: %v\n%s", err, out.String())
	}
}
