package threads_test

import (
	"context"
	"database/sql"
	"log/slog"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"approvalsbot/adapters/decidepage"
	"approvalsbot/config"
	"approvalsbot/internal/syncbuf"
	"approvalsbot/notify/push"
	"approvalsbot/notify/push/pushtest"
	"approvalsbot/store/sqlite"
	"approvalsbot/threads"
)

// Push notices end to end: a ladder's push step fires in threads over
// the real SQLite store, the outbox's push lane sends with the real
// sender, and a fake ntfy server and a webhook receiver on loopback take
// what a member's phone would get.

// pushWebhookKey signs lee's webhook bodies.
const pushWebhookKey = "lee-webhook-key-of-32-bytes-5b7d"

// pushConfig is testConfig in Berlin with a push step at 30m to kevin
// (an ntfy topic, and an email address: his notice links to his page),
// ada (another topic, no email: no link) twice over, by name and through
// the rotation that has her on duty, and lee (a webhook).
var pushConfig = strings.NewReplacer(
	"    forbid_self_approval: true\n", "    forbid_self_approval: true\n    zone: Europe/Berlin\n"+
		"    rotations:\n      primary: {members: [user:kevin, user:ada], every: 1w, handoff: \"mon 09:00\", start: 2026-11-30}\n",
	"        - after: 1h\n", "        - after: 30m\n          push: [user:kevin, user:ada, rotation:primary, user:lee]\n        - after: 1h\n",
	`slack: U0KEVIN, discord: "223344556677889900"}`, `slack: U0KEVIN, discord: "223344556677889900", email: kevin@acme.example, push: {ntfy: "${KEVIN_NTFY}"}}`,
	`{user: "user:ada", role: owner, content: true, governance: true, slack: U0ADA}`, `{user: "user:ada", role: owner, content: true, governance: true, slack: U0ADA, push: {ntfy: "${ADA_NTFY}"}}`,
	`{user: "user:lee", role: operator, content: true, slack: U0LEE}`, `{user: "user:lee", role: operator, content: true, slack: U0LEE, push: {webhook: "${LEE_HOOK}", secrets: ["${LEE_HOOK_KEY}"]}}`,
).Replace(testConfig)

// The topics of the tests: the secret part of each member's address.
const (
	kevinTopic = "kevin-7f3a9c2e1b"
	adaTopic   = "ada-0c4d2b9e8f"
)

// pushHarness is a decideHarness whose members' push addresses are the
// fake ntfy server's topics and the webhook receiver, and whose log is
// kept.
type pushHarness struct {
	*decideHarness
	ntfy *pushtest.Ntfy
	hook *pushtest.Webhook
	log  *syncbuf.Buffer
	env  map[string]string // the configuration's environment
	db   *sql.DB           // the store's file, read as it is
}

// newPushHarness builds the harness on text (pushConfig or a variant);
// ntfyAddr, when set, is where the members' topics are (a server that may
// be down), else the fake ntfy server's.
func newPushHarness(t *testing.T, text, ntfyAddr string) *pushHarness {
	t.Helper()
	h := &pushHarness{ntfy: pushtest.StartNtfy(t, nil), log: &syncbuf.Buffer{}}
	base := h.ntfy.URL()
	if ntfyAddr != "" {
		base = "http://" + ntfyAddr
	}
	// The receiver checks the signature's time against the bot's clock.
	h.hook = pushtest.StartWebhook(t, [][]byte{[]byte(pushWebhookKey)}, func() time.Time { return h.clock.Now() })
	h.env = maps.Clone(testSecrets)
	h.env["KEVIN_NTFY"], h.env["ADA_NTFY"] = base+"/"+kevinTopic, base+"/"+adaTopic
	h.env["LEE_HOOK"], h.env["LEE_HOOK_KEY"] = h.hook.URL(), pushWebhookKey
	links, err := decidepage.NewLinks("https://approvals.example", []string{testLinkSecret})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bot.db")
	st, err := sqlite.Open(context.Background(), sqlite.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if h.db, err = sql.Open("sqlite", sqlite.DSN(path)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.db.Close() })
	h.decideHarness = newDecideHarnessEnv(t, text, h.getenv, time.Minute, nil, func(o *threads.Options) {
		o.Store = st
		o.Links = links
		o.Logger = slog.New(slog.NewTextHandler(h.log, nil))
		o.Pusher = push.New(push.Options{Now: o.Clock.Now})
	})
	return h
}

func (h *pushHarness) getenv(k string) (string, bool) {
	v, ok := h.env[k]
	return v, ok
}

// pushRow is how the store holds the push to member.
type pushRow struct {
	State, LastError string
	Attempts         int
	NextAttemptAt    time.Time
}

// pushRow reads the push to member from the store's file.
func (h *pushHarness) pushRow(t *testing.T, member string) pushRow {
	t.Helper()
	var r pushRow
	var next int64
	err := h.db.QueryRow(`SELECT state, last_error, attempts, next_attempt_at FROM outbox
		WHERE approval_id = 'a-merge1' AND kind = ? AND target = ?`, threads.KindPush, member).Scan(&r.State, &r.LastError, &r.Attempts, &next)
	if err != nil {
		t.Fatalf("the push row to %s: %v", member, err)
	}
	r.NextAttemptAt = time.UnixMilli(next).UTC()
	return r
}

// fire ingests merge.json and fires its steps up to the push step at
// 30m, whose rows it leaves in the outbox.
func (h *pushHarness) fire(t *testing.T) {
	t.Helper()
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	h.drain(t)
	h.at(t, 15*time.Minute)
	h.tick(t)
	h.drain(t)
	h.at(t, 30*time.Minute)
	if r := h.tick(t); r.Steps != 1 {
		t.Fatalf("the 30m tick fired %d steps", r.Steps)
	}
}

// topics are the notices the fake ntfy server took, by topic.
func (h *pushHarness) topics() map[string][]pushtest.Notice {
	out := map[string][]pushtest.Notice{}
	for _, n := range h.ntfy.Notices() {
		out[n.Topic] = append(out[n.Topic], n)
	}
	return out
}

// TestPushStepNotifiesEachMemberOnce: the step's push reaches each member
// once, however many ways it names them: kevin's notice opens his own
// decision page, ada's (no email, so no page of hers) says where to
// decide, lee's webhook gets it signed; none carries an argument value.
func TestPushStepNotifiesEachMemberOnce(t *testing.T) {
	t.Parallel()
	h := newPushHarness(t, pushConfig, "")
	h.fire(t)
	h.drain(t)
	h.drain(t) // nothing is sent twice

	got := h.topics()
	if len(got) != 2 || len(got[kevinTopic]) != 1 || len(got[adaTopic]) != 1 || len(h.ntfy.Refused()) != 0 {
		t.Fatalf("notices by topic %v, refused %q", got, h.ntfy.Refused())
	}
	kevin, ada := got[kevinTopic][0], got[adaTopic][0]
	for _, n := range []pushtest.Notice{kevin, ada} {
		if n.Title != "Approval needed: acme_github.merge" || n.Priority != 4 ||
			!strings.Contains(n.Message, "DESTRUCTIVE · reaches outside the tenant\n") ||
			!strings.Contains(n.Message, "Deadline 2026-11-30 19:00 CET: denied unless someone decides first.") {
			t.Errorf("notice to %s: %+v", n.Topic, n.NtfyMessage)
		}
	}
	if len(kevin.Actions) != 1 || kevin.Actions[0].Action != "view" || kevin.Actions[0].Label != "Open the decision page" {
		t.Fatalf("kevin's actions %+v", kevin.Actions)
	}
	checkLink(t, kevin.Actions[0].URL, decidepage.Claims{Tenant: "acme", ApprovalID: "a-merge1", Revision: 1,
		Member: "user:kevin"}, h.clock.Now())
	if !strings.HasSuffix(kevin.Message, "Open the decision page to see the call and decide as user:kevin.") {
		t.Errorf("kevin's notice:\n%s", kevin.Message)
	}
	if len(ada.Actions) != 0 || !strings.HasSuffix(ada.Message, "Decide in the console or in the chat thread.") {
		t.Errorf("ada's notice, who has no decision page: %+v", ada.NtfyMessage)
	}

	hooks := h.hook.Hooks()
	if len(hooks) != 1 || len(h.hook.Refused()) != 0 {
		t.Fatalf("webhook: %d bodies, refused %q", len(hooks), h.hook.Refused())
	}
	if b := hooks[0]; b.Member != "user:lee" || b.ApprovalID != "a-merge1" || b.Revision != 1 || b.Title != kevin.Title ||
		b.URL != "" || b.Deadline != "2026-11-30T18:00:00Z" || !b.Destructive || b.ID == "" {
		t.Errorf("lee's webhook body %+v", b.WebhookBody)
	}

	// Nothing of the call's arguments, whoever's notice it is.
	bodies := string(kevin.Raw) + string(ada.Raw) + string(hooks[0].Raw)
	for _, v := range []string{"acme/api", "1234", "squash", "CI is green", "sha256:", "acme_github.comment"} {
		if strings.Contains(bodies, v) {
			t.Errorf("a notice carries %q", v)
		}
	}
	// And no log line carries an address.
	for _, s := range []string{kevinTopic, adaTopic, pushWebhookKey} {
		if strings.Contains(h.log.String(), s) {
			t.Errorf("the log carries %s:\n%s", s, h.log.String())
		}
	}
}

// TestPush429ThenSuccess: a 429 with Retry-After reschedules the row,
// counting no attempt; the notice goes once the wait is over, not
// before.
func TestPush429ThenSuccess(t *testing.T) {
	t.Parallel()
	h := newPushHarness(t, pushConfig, "")
	h.ntfy.Answer(pushtest.Answer{Status: 429, RetryAfter: "30"})
	h.fire(t)
	h.drain(t)
	kevinFirst := len(h.topics()[kevinTopic]) == 0 // the 429 went to whichever row went first
	row := h.pushRow(t, "user:kevin")
	if !kevinFirst {
		row = h.pushRow(t, "user:ada")
	}
	if row.State != "pending" || row.Attempts != 0 || !row.NextAttemptAt.Equal(h.clock.Now().Add(30*time.Second)) {
		t.Fatalf("the row the 429 answered: state %s, attempts %d, next at %v (now %v)", row.State, row.Attempts, row.NextAttemptAt, h.clock.Now())
	}
	requests := h.ntfy.Requests()
	h.clock.Advance(29 * time.Second)
	h.drain(t)
	if h.ntfy.Requests() != requests {
		t.Fatalf("a request before the wait asked for was over")
	}
	h.clock.Advance(time.Second)
	h.drain(t)
	if got := h.topics(); len(got[kevinTopic]) != 1 || len(got[adaTopic]) != 1 {
		t.Fatalf("after the wait: %v", got)
	}
}

// TestPushToADownServer: a server that is down is retried with backoff,
// and the notice goes once, when it is back.
func TestPushToADownServer(t *testing.T) {
	t.Parallel()
	addr := pushtest.DownAddr(t)
	h := newPushHarness(t, pushConfig, addr)
	h.fire(t)
	h.drain(t)
	row := h.pushRow(t, "user:kevin")
	if row.State != "pending" || row.Attempts != 1 || !row.NextAttemptAt.After(h.clock.Now()) || strings.Contains(row.LastError, kevinTopic) {
		t.Fatalf("after the first try: state %s, attempts %d, next at %v, error %q", row.State, row.Attempts, row.NextAttemptAt, row.LastError)
	}
	h.clock.Advance(time.Minute)
	h.drain(t) // still down
	if row = h.pushRow(t, "user:kevin"); row.State != "pending" || row.Attempts != 2 {
		t.Fatalf("after the second try: state %s, attempts %d", row.State, row.Attempts)
	}
	back := pushtest.StartNtfyAt(t, addr, nil)
	h.clock.Advance(time.Minute)
	h.drain(t)
	h.drain(t)
	if n := back.Notices(); len(n) != 2 || n[0].Topic == n[1].Topic {
		t.Fatalf("the server back up took %d notices: %+v", len(n), n)
	}
	if row = h.pushRow(t, "user:kevin"); row.State != "done" {
		t.Errorf("kevin's row is %s", row.State)
	}
}

// TestPushToABadAddress: a 4xx other than 429 fails the row at once, for
// good, logged once; nothing tries again.
func TestPushToABadAddress(t *testing.T) {
	t.Parallel()
	h := newPushHarness(t, pushConfig, "")
	h.ntfy.Answer(pushtest.Answer{Status: 403}, pushtest.Answer{Status: 403})
	h.fire(t)
	h.drain(t)
	for _, m := range []string{"user:kevin", "user:ada"} {
		if row := h.pushRow(t, m); row.State != "dead" || row.Attempts != 1 {
			t.Errorf("%s's row: state %s, attempts %d, want dead after one", m, row.State, row.Attempts)
		}
	}
	requests := h.ntfy.Requests()
	h.clock.Advance(time.Hour)
	h.drain(t)
	if h.ntfy.Requests() != requests {
		t.Error("a dead row was tried again")
	}
	if n := strings.Count(h.log.String(), "outbox row failed for good"); n != 2 {
		t.Errorf("%d lines say a row failed for good, want one per row:\n%s", n, h.log.String())
	}
}

// TestPushAfterTheDecisionSendsNothing: a push still queued when the call
// is decided goes nowhere; one sent after it is not.
func TestPushAfterTheDecisionSendsNothing(t *testing.T) {
	t.Parallel()
	h := newPushHarness(t, pushConfig, "")
	h.fire(t)
	if res := h.decide(t, "a-merge1", 1, true, "U0LEE"); !res.Sent {
		t.Fatalf("approve: %+v", res)
	}
	h.drain(t)
	if n := h.ntfy.Requests() + len(h.hook.Hooks()); n != 0 {
		t.Errorf("%d notices went out about a decided call", n)
	}
}

// TestPushSkipsWhomTheConfigurationDropped: a member a reload removed
// between the step and its notice is skipped, logged, and the row is
// done, not failed.
func TestPushSkipsWhomTheConfigurationDropped(t *testing.T) {
	t.Parallel()
	h := newPushHarness(t, pushConfig, "")
	h.fire(t)
	// ada leaves the tenant, her rotation and the step.
	without := strings.NewReplacer(
		"members: [user:kevin, user:ada]", "members: [user:kevin]",
		"push: [user:kevin, user:ada, rotation:primary, user:lee]", "push: [user:kevin, rotation:primary, user:lee]",
	).Replace(pushConfig)
	var kept []string
	for _, l := range strings.Split(without, "\n") {
		if !strings.Contains(l, `user: "user:ada"`) {
			kept = append(kept, l)
		}
	}
	cfg, err := config.Parse("bot.yaml", []byte(strings.Join(kept, "\n")), h.getenv)
	if err != nil {
		t.Fatal(err)
	}
	h.opts.Tenants = cfg
	h.restart(t)
	h.drain(t)
	if got := h.topics(); len(got[kevinTopic]) != 1 || len(got[adaTopic]) != 0 {
		t.Errorf("notices after ada left: %v", got)
	}
	if row := h.pushRow(t, "user:ada"); row.State != "done" {
		t.Errorf("ada's row is %s, want done", row.State)
	}
	if !strings.Contains(h.log.String(), "a push skips a member the tenant no longer has") {
		t.Errorf("no line says ada was skipped:\n%s", h.log.String())
	}
}

// TestPushToApproversSkipsMembersWithoutAnAddress: approvers reach the
// members a quorum still waits for who have a push address; one who has
// none is skipped, logged, as a member without an address is for mail.
func TestPushToApproversSkipsMembersWithoutAnAddress(t *testing.T) {
	t.Parallel()
	text := strings.NewReplacer(
		"    zone: Europe/Berlin\n", "    zone: Europe/Berlin\n    quorum: {approvals: 2}\n",
		"push: [user:kevin, user:ada, rotation:primary, user:lee]", "push: [approvers]",
	).Replace(pushConfig)
	h := newPushHarness(t, text, "")
	h.fire(t)
	h.drain(t)
	if got := h.topics(); len(got[kevinTopic]) != 1 || len(h.hook.Hooks()) != 1 {
		t.Errorf("approvers with an address: ntfy %v, webhook %d", got, len(h.hook.Hooks()))
	}
	if !strings.Contains(h.log.String(), `msg="a push step skips a member who has no push address to be sent a push" tenant=acme approval_id=a-merge1 member=user:nocontent`) {
		t.Errorf("no line says user:nocontent was skipped:\n%s", h.log.String())
	}
}
