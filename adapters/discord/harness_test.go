package discord_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jonboulle/clockwork"

	"approvalsbot/adapters/backend/backendtest"
	"approvalsbot/adapters/backend/standin"
	discordad "approvalsbot/adapters/discord"
	"approvalsbot/adapters/discord/discordtest"
	"approvalsbot/approval"
	"approvalsbot/config"
	"approvalsbot/internal/syncbuf"
	"approvalsbot/store"
	"approvalsbot/templates"
	"approvalsbot/tenant"
	"approvalsbot/threads"
	"approvalsbot/threads/threadstest"
)

const (
	botToken     = "MTEwMDAwMDAwMDAwMDAwMDAwMQ.Gx1234.fake-bot-token-0123456789"
	appID        = "1100000000000000001"
	callsSecret  = "calls-secret-0123456789abcdef0123"
	eventsSecret = "events-secret-0123456789abcdef012"

	guildID    = "110000000000000099"
	chApproval = "112233445566778899"
	chAudit    = "112233445566778800"
	chFinance  = "112233445566778811"
	chQuiet    = "112233445566778822"
	roleOncall = "998877665544332211"

	kevin    = "223344556677889900"
	ada      = "223344556677889901"
	noc      = "223344556677889902"
	vic      = "223344556677889903"
	lee      = "334455667788990011"
	stranger = "999999999999999999"
)

// testEnv is the bot's environment in these tests: the configuration
// names each secret, as a real one must.
func testEnv(name string) (string, bool) {
	v, ok := map[string]string{
		"BOT_EVENTS_SECRET": eventsSecret,
		"BOT_CALLS_SECRET":  callsSecret,
		"DISCORD_BOT_TOKEN": botToken,
	}[name]
	return v, ok
}

const testConfig = `
backend:
  url: "%s"
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
discord:
  bot_token: "${DISCORD_BOT_TOKEN}"
  application_id: "` + appID + `"
%s  api_url: "%s"
tenants:
  acme:
    post: [discord:channel:` + chApproval + `]
    audit: discord:channel:` + chAudit + `
    forbid_self_approval: true
    ladders:
      default:
        - after: 15m
          mention: [discord:user:` + kevin + `, discord:role:` + roleOncall + `]
        - after: 1h
          dm: [discord:user:` + lee + `]
    tools:
      "payments.*": {deadline: 2h, post: [discord:channel:` + chFinance + `]}
    members:
      - {user: "user:kevin", role: operator, content: true, discord: "` + kevin + `"}
      - {user: "user:ada", role: owner, content: true, governance: true, discord: "` + ada + `"}
      - {user: "user:lee", role: operator, content: true, discord: "` + lee + `"}
      - {user: "user:nocontent", role: admin, content: false, discord: "` + noc + `"}
      - {user: "user:vic", role: viewer, discord: "` + vic + `"}
  quiet:
    post: [discord:channel:` + chQuiet + `]
`

// syncBuffer collects log lines from every goroutine.
type syncBuffer = syncbuf.Buffer

// harness is the bot's Discord side for real: the adapter's HTTP
// endpoint on a loopback listener (or its gateway session), threads on
// SQLite in a temporary directory, the real backend client calling the
// fake job backend, and discordgo calling the fake Discord.
type harness struct {
	discord *discordtest.Server
	backend *backendtest.Fake
	svc     *threads.Service
	store   store.Store
	cfg     *config.Config
	adapter *discordad.Adapter
	// clicks is the service the adapter's clicks go to: threads, until
	// a test switches it.
	clicks *threadstest.Switch
	opts   discordad.Options
	http   *httptest.Server // nil on the gateway
	clock  *clockwork.FakeClock
	logs   *syncBuffer
	skew   *atomic.Int64 // added to the fake Discord's clock, in ns
}

type harnessOptions struct {
	gateway bool // no public key: interactions over the gateway
	manual  bool // with gateway: the test runs the adapter itself
	discord discordtest.Options
	adapter func(*discordad.Options)
	// alone opens the store as the bot serves it, the process's alone
	// (store.Alone): the deadline waits only for clicks open here.
	alone bool
	// config, when set, rewrites the configuration file before it is read.
	config func(yaml string) string
	// pinned puts the adapter and the fake Discord on the harness's
	// clock (threadstest.FixtureNow, as threads is) in place of time.Now,
	// for answers that word the time of day.
	pinned bool
	// features are the backend's optional parts the bot uses.
	features []string
	// turns: the backend takes a turn's batch (feature turns).
	turns bool
}

func newHarness(t *testing.T) *harness { return newHarnessWith(t, harnessOptions{}) }

func newHarnessWith(t *testing.T, ho harnessOptions) *harness {
	t.Helper()
	skew := &atomic.Int64{}
	clock := clockwork.NewFakeClockAt(threadstest.FixtureNow)
	now := time.Now
	if ho.pinned {
		now = clock.Now
	}
	ho.discord.Token, ho.discord.ApplicationID = botToken, appID
	ho.discord.Now = func() time.Time { return now().Add(time.Duration(skew.Load())) }
	fake := discordtest.New(t, ho.discord)
	fake.AddGuild(guildID, "acme", discordad.Permissions)
	for _, c := range []string{chApproval, chAudit, chFinance, chQuiet} {
		fake.AddChannel(guildID, c, "channel-"+c[len(c)-2:])
	}
	fake.AddRole(guildID, roleOncall, "oncall", true)
	for _, u := range []string{kevin, ada, noc, vic, lee, stranger} {
		fake.AddUser(u)
	}
	back := backendtest.New(t, standin.Options{Secrets: [][]byte{[]byte(callsSecret)}, GrantNow: clock.Now})
	keyLine := ""
	if !ho.gateway {
		keyLine = fmt.Sprintf("  public_key: %q\n", fake.PublicKeyHex())
	}
	yaml := fmt.Sprintf(testConfig, back.URL(), keyLine, fake.URL())
	if ho.config != nil {
		yaml = ho.config(yaml)
	}
	cfg, err := config.Parse("bot.yaml", []byte(yaml), testEnv)
	if err != nil {
		t.Fatal(err)
	}
	open := threadstest.OpenSQLite
	if ho.alone {
		open = threadstest.OpenExclusiveSQLite
	}
	st := open(t)
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	o := discordad.Options{Credentials: discordad.Credentials{BotToken: cfg.Discord.BotToken.Reveal(), ApplicationID: cfg.Discord.ApplicationID, PublicKey: cfg.Discord.PublicKey.Reveal()}, APIURL: cfg.Discord.APIURL, Tenants: func() map[string]*tenant.Tenant { return cfg.Tenants },
		Store: st, Logger: log, PerChannelRate: 1000, Burst: 50}
	if ho.pinned {
		o.Now = clock.Now
	}
	if ho.adapter != nil {
		ho.adapter(&o)
	}
	surface, err := discordad.NewSurface(o)
	if err != nil {
		t.Fatal(err)
	}
	so := threadstest.ServiceOptions{Store: st, Tenants: cfg, Backend: back, CallsSecret: callsSecret,
		Clock: clock, Logger: log, Surfaces: map[string]threads.Surface{"discord": surface}, Features: ho.features, Turns: ho.turns}
	svc := threadstest.Service(t, so)
	clicks := threadstest.NewSwitch(svc)
	ad, err := discordad.New(surface, clicks)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{discord: fake, backend: back, svc: svc, store: st, cfg: cfg, adapter: ad, clicks: clicks, opts: o, clock: clock,
		logs: logs, skew: skew}
	switch {
	case ho.gateway && ho.manual:
	case ho.gateway:
		h.runGateway(t, ad)
	default:
		mux := http.NewServeMux()
		ad.Routes(mux)
		h.http = httptest.NewServer(mux)
		t.Cleanup(h.http.Close)
		fake.SetInteractionsURL(h.http.URL + "/discord/interactions")
	}
	t.Cleanup(func() {
		ad.Close()
		// No token, secret or interaction token ever reaches a log line.
		out := logs.String()
		for _, secret := range []string{botToken, callsSecret, eventsSecret, "aW50ZXJhY3Rpb24"} {
			if strings.Contains(out, secret) {
				t.Errorf("the logs carry %q:\n%s", secret, out)
			}
		}
	})
	return h
}

// runGateway runs the adapter's gateway until the test ends, and waits
// for its session.
// threadsOn is threads as the harness builds it, on st: the harness's
// store, or one that fails as a test needs.
func (h *harness) threadsOn(t *testing.T, st store.Store) *threads.Service {
	t.Helper()
	return threadstest.Service(t, threadstest.ServiceOptions{Store: st, Tenants: h.cfg, Backend: h.backend,
		CallsSecret: callsSecret, Clock: h.clock, Logger: slog.New(slog.NewTextHandler(h.logs, nil))})
}

func (h *harness) runGateway(t *testing.T, ad *discordad.Adapter) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ad.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	threadstest.Eventually(t, "the gateway session", func() bool { return h.discord.GatewaySessions() == 1 })
}

// ingest feeds a fixture event to threads, with the arguments behind it
// known to the fake job backend.
func (h *harness) ingest(t *testing.T, name string) *approval.Event {
	t.Helper()
	ev := threadstest.Ingest(t, h.svc, name, nil)
	threadstest.Backed(t, h.backend, ev)
	return ev
}

func (h *harness) drain(t *testing.T) {
	t.Helper()
	if _, err := h.svc.DrainOutbox(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// post is the post threads recorded for an approval's card of a revision
// at a target.
func (h *harness) post(t *testing.T, approvalID, target string, revision int) *store.Post {
	t.Helper()
	posts, err := h.store.PostList(context.Background(), approvalID)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range posts {
		if p.Target == target && p.Revision == revision {
			return p
		}
	}
	t.Fatalf("no card of %s revision %d at %s; posts %+v", approvalID, revision, target, posts)
	return nil
}

// card is the message of an approval's card as it stands now, found
// through the post threads recorded.
func (h *harness) card(t *testing.T, approvalID, target string, revision int) discordtest.Message {
	t.Helper()
	p := h.post(t, approvalID, target, revision)
	m, ok := h.discord.Message(p.Ref)
	if !ok || m.ChannelID != p.Channel {
		t.Fatalf("post %+v names no message in its channel", p)
	}
	return m
}

// button finds the card's button of a kind.
func button(t *testing.T, m discordtest.Message, kind templates.ActionKind) string {
	t.Helper()
	for _, b := range m.Buttons {
		if strings.HasPrefix(b.CustomID, "ab1|"+string(kind)+"|") {
			return b.CustomID
		}
	}
	t.Fatalf("no %s button on %+v", kind, m.Buttons)
	return ""
}

// click presses a button (on the newest message in channel that carries
// it) and checks Discord accepted the answer: its type fits, within its
// limits, within 3 s.
func (h *harness) click(t *testing.T, user, channel, customID string) discordtest.Result {
	t.Helper()
	res := h.discord.ClickButton(discordtest.Click{User: user, Channel: channel, CustomID: customID})
	if !res.Answered() {
		t.Fatalf("click not answered: %+v", res)
	}
	return res
}

// confirmTitle is the title of the modal a destructive call's Approve
// opens: Discord's buttons cannot ask again as Slack's confirm dialog
// does.
const confirmTitle = "Approve a destructive call?"

// approve presses Approve on the message messageID ("" for the newest in
// channel with the button) and, where it asks for confirmation first (a
// destructive call), checks that nothing was recorded yet and confirms
// with comment: the result is the answer that recorded the decision, or
// refused it.
func (h *harness) approve(t *testing.T, user, channel, customID, messageID, comment string) discordtest.Result {
	t.Helper()
	return h.approveClick(t, discordtest.Click{User: user, Channel: channel, CustomID: customID, MessageID: messageID}, comment)
}

// approveAnswer is approve on a private answer the bot gave user: an
// ephemeral message.
func (h *harness) approveAnswer(t *testing.T, user, channel, customID, comment string) discordtest.Result {
	t.Helper()
	return h.approveClick(t, discordtest.Click{User: user, Channel: channel, CustomID: customID, Ephemeral: true}, comment)
}

func (h *harness) approveClick(t *testing.T, c discordtest.Click, comment string) discordtest.Result {
	t.Helper()
	user, channel, customID := c.User, c.Channel, c.CustomID
	res := h.discord.ClickButton(c)
	if !res.Answered() {
		t.Fatalf("click not answered: %+v", res)
	}
	if res.Response.Type != discordgo.InteractionResponseModal {
		return res
	}
	r := res.Response
	if r.Title != confirmTitle || r.CustomID != customID || len(r.Inputs) != 1 || r.Inputs[0].CustomID != "comment" ||
		r.Inputs[0].Required || len(r.Texts) != 1 || !strings.Contains(plain(r.Texts[0]), "DESTRUCTIVE") {
		t.Fatalf("confirmation %+v, want the destructive call's confirmation with an optional comment", r)
	}
	if a, err := h.store.ApprovalGet(context.Background(), mustAction(t, customID).ApprovalID); err != nil || len(a.Deciding) != 0 {
		t.Fatalf("the confirmation opened with a decision in flight (%v)", err)
	}
	sub := h.discord.SubmitModal(discordtest.Submit{User: user, Channel: channel, CustomID: r.CustomID,
		Values: map[string]string{"comment": comment}})
	if !sub.Answered() {
		t.Fatalf("confirmation not answered: %+v", sub)
	}
	return sub
}

func mustAction(t *testing.T, customID string) templates.Action {
	t.Helper()
	a, err := templates.ParseAction(customID)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// deciding checks the first answer to a click that recorded a decision:
// an UPDATE_MESSAGE (type 7), seen by everyone, carrying the card as it
// now stands, its status want (the decision on its way to the backend)
// and its Approve and Deny gone; and that the answer itself changed the
// clicked message to exactly that, with no follow-up and no REST edit.
func (h *harness) deciding(t *testing.T, res discordtest.Result, messageID, want string) discordtest.Message {
	t.Helper()
	r := res.Response
	if !res.Answered() || r.Type != discordgo.InteractionResponseUpdateMessage || r.Ephemeral() {
		t.Fatalf("answer %+v (%s), want UPDATE_MESSAGE with the card", r, res.Problem)
	}
	if !strings.HasPrefix(r.Content, "**"+want+"**") || !r.Components || decisionButtons(r.Buttons) != 0 || len(r.Embeds) != 1 {
		t.Fatalf("UPDATE_MESSAGE %q, components set %v %+v, %d embeds: want the card saying %q without Approve and Deny",
			r.Content, r.Components, r.Buttons, len(r.Embeds), want)
	}
	m, ok := h.discord.Message(messageID)
	edits := h.discord.EditsOf(messageID)
	if !ok || m.Content != r.Content || decisionButtons(m.Buttons) != 0 || len(m.Buttons) != len(r.Buttons) || len(m.Embeds) != 1 ||
		len(edits) == 0 || edits[len(edits)-1].Via != discordtest.EditUpdate || edits[len(edits)-1].Token != res.Token {
		t.Fatalf("clicked message %+v after edits %+v: want it changed by the answer to the card it carried", m, edits)
	}
	for _, f := range h.discord.AllFollowups() {
		if f.Token == res.Token {
			t.Fatalf("a follow-up %q beside the answer: the card itself is the answer", f.Content)
		}
	}
	return m
}

// decisionButtons counts the Approve and Deny buttons among bs.
func decisionButtons(bs []discordtest.Button) int {
	n := 0
	for _, b := range bs {
		if strings.HasPrefix(b.CustomID, "ab1|approve|") || strings.HasPrefix(b.CustomID, "ab1|deny|") {
			n++
		}
	}
	return n
}

// outcome checks what the person who clicked was shown once the backend
// answered (after the outbox ran): the clicked message edited once
// through the interaction's webhook (@original, the click's own token) to
// the final card, saying card and without buttons, and after that edit
// the ephemeral follow-up on the same token saying told.
func (h *harness) outcome(t *testing.T, res discordtest.Result, messageID, card, told string) {
	t.Helper()
	var original []discordtest.Edit
	for _, e := range h.discord.EditsOf(messageID) {
		if e.Via == discordtest.EditOriginal {
			original = append(original, e)
		}
	}
	if len(original) != 1 || original[0].Token != res.Token || !strings.Contains(plain(original[0].Message.Text()), card) ||
		len(original[0].Message.Buttons) != 0 {
		t.Fatalf("edits of the clicked message through @original %+v: want one, with the token, to the card saying %q without buttons",
			original, card)
	}
	var answers []discordtest.Followup
	for _, f := range h.discord.AllFollowups() {
		if f.Token == res.Token {
			answers = append(answers, f)
		}
	}
	if len(answers) != 1 || !answers[0].Ephemeral() || !strings.Contains(plain(answers[0].Text()), told) || answers[0].Seq < original[0].Seq {
		t.Fatalf("follow-ups of the click %+v: want one ephemeral %q, after the @original edit", answers, told)
	}
}

// told waits for an ephemeral follow-up to one person containing want,
// and returns it.
func (h *harness) told(t *testing.T, user, want string) discordtest.Followup {
	t.Helper()
	var got []string
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		got = got[:0]
		for _, f := range h.discord.Followups(user) {
			if !f.Ephemeral() {
				t.Fatalf("an answer to %s was not ephemeral: %+v", user, f)
			}
			if strings.Contains(plain(f.Text()), want) {
				return f
			}
			got = append(got, plain(f.Text()))
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s was not told %q; was told %q", user, want, got)
	return discordtest.Followup{}
}

// answeredAtOnce checks an interaction was answered with an ephemeral
// message (type 4, flag 64) holding want.
func answeredAtOnce(t *testing.T, res discordtest.Result, want string) {
	t.Helper()
	r := res.Response
	if !res.Answered() || r.Type != discordgo.InteractionResponseChannelMessageWithSource || !r.Ephemeral() ||
		!strings.Contains(plain(r.Content), want) {
		t.Fatalf("answer %+v (%s), want an ephemeral message with %q", r, res.Problem, want)
	}
}

// plain is text as a person reads it: Discord's markdown escapes and the
// zero width spaces gone.
func plain(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\\*_~`|<>[]#-+", s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return strings.ReplaceAll(b.String(), "\u200b", "")
}

// newAdapter builds a whole adapter from o, its clicks going to svc: a
// second replica, or one with other options; Close runs at the test's end.
func newAdapter(t *testing.T, o discordad.Options, svc discordad.Service) *discordad.Adapter {
	t.Helper()
	surface, err := discordad.NewSurface(o)
	if err != nil {
		t.Fatal(err)
	}
	ad, err := discordad.New(surface, svc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ad.Close)
	return ad
}
