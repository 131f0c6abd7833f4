package threads_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jonboulle/clockwork"

	"approvalsbot/approval"
	"approvalsbot/config"
	"approvalsbot/store"
	"approvalsbot/templates"
	"approvalsbot/threads"
	"approvalsbot/threads/threadstest"
)

// testCallsSecret is the calls secret testConfig names, and the one the
// fake backend of the tests that decide checks.
const testCallsSecret = "calls-secret-of-the-tests-0123456789"

// testSecrets is the environment testConfig reads its secrets from.
var testSecrets = map[string]string{
	"BOT_EVENTS_SECRET":    "events-secret-of-the-tests-0123456789",
	"BOT_CALLS_SECRET":     testCallsSecret,
	"SLACK_BOT_TOKEN":      "xoxb-test",
	"SLACK_SIGNING_SECRET": "signing-secret-of-the-tests",
	"DISCORD_BOT_TOKEN":    "discord-token",
}

// testEnv is the getenv testConfig is parsed with.
func testEnv(name string) (string, bool) {
	v, ok := testSecrets[name]
	return v, ok
}

const testConfig = `
backend:
  url: "http://127.0.0.1:9"
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
slack:
  bot_token: "${SLACK_BOT_TOKEN}"
  signing_secret: "${SLACK_SIGNING_SECRET}"
discord:
  bot_token: "${DISCORD_BOT_TOKEN}"
  application_id: "1100000000000000000"
tenants:
  acme:
    post: [slack:C0APPROVALS, discord:channel:112233445566778899]
    audit: slack:C0AUDIT
    digest: {cron: "0 9 * * 1-5", zone: Europe/Berlin, to: slack:C0APPROVALS}
    forbid_self_approval: true
    ladders:
      default:
        - after: 15m
          mention: [slack:U0KEVIN, slack:S0ONCALL]
        - after: 1h
          dm: [slack:U0LEE]
          email: [leads@acme.example]
        - after: 4h
          mention: [slack:U0ADA]
        - before_deadline: 1h
          mention: [slack:S0ONCALL]
    tools:
      "payments.*": {deadline: 2h, post: [slack:C0FINANCE]}
    members:
      - {user: "user:kevin", role: operator, content: true, slack: U0KEVIN, discord: "223344556677889900"}
      - {user: "user:ada", role: owner, content: true, governance: true, slack: U0ADA}
      - {user: "user:lee", role: operator, content: true, slack: U0LEE}
      - {user: "user:nocontent", role: admin, content: false, slack: U0NOC}
      - {user: "user:vic", role: viewer, slack: U0VIC}
  quiet:
    post: [slack:C0QUIET]
`

// recorder is a Surface that keeps what it was asked to do, numbering
// posts like a chat would, and can be told to fail.
type recorder struct {
	mu      sync.Mutex
	n       int
	posts   []threads.PostRequest
	edits   []threads.EditRequest
	replies []threads.ReplyRequest
	notices []threads.NoticeRequest
	tells   []threads.TellRequest
	mails   []threads.MailRequest
	fail    func(op string) error
}

func (r *recorder) Tell(_ context.Context, req threads.TellRequest) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tells = append(r.tells, req)
	return nil
}

func (r *recorder) Link(_ context.Context, p threads.PostRef) string {
	return "https://chat.example/" + p.Channel + "/" + p.Ref
}

func (r *recorder) Mail(_ context.Context, req threads.MailRequest) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mails = append(r.mails, req)
	return fmt.Sprintf("mail-%d@bot.test", len(r.mails)), nil
}

func (r *recorder) err(op string) error {
	if r.fail != nil {
		return r.fail(op)
	}
	return nil
}

func (r *recorder) Post(_ context.Context, req threads.PostRequest) (threads.PostResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.err("post"); err != nil {
		return threads.PostResult{}, err
	}
	r.n++
	r.posts = append(r.posts, req)
	return threads.PostResult{Channel: req.Target, Ref: fmt.Sprintf("m%d", r.n)}, nil
}

func (r *recorder) Edit(_ context.Context, req threads.EditRequest) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.err("edit"); err != nil {
		return err
	}
	r.edits = append(r.edits, req)
	return nil
}

func (r *recorder) Reply(_ context.Context, req threads.ReplyRequest) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.err("reply"); err != nil {
		return err
	}
	r.replies = append(r.replies, req)
	return nil
}

func (r *recorder) Notice(_ context.Context, req threads.NoticeRequest) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.err("notice"); err != nil {
		return err
	}
	r.notices = append(r.notices, req)
	return nil
}

type harness struct {
	opts  threads.Options
	svc   *threads.Service
	store store.Store
	clock *clockwork.FakeClock
	surf  *recorder
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	return newHarnessWith(t, nil)
}

func newHarnessWith(t *testing.T, opt func(*threads.Options)) *harness {
	t.Helper()
	return newHarnessFrom(t, testConfig, opt)
}

// newHarnessFrom builds a harness on a configuration of the test's own.
func newHarnessFrom(t *testing.T, configText string, opt func(*threads.Options)) *harness {
	t.Helper()
	return newHarnessEnv(t, configText, testEnv, opt)
}

// newHarnessEnv is newHarnessFrom reading the configuration's secrets
// from env.
func newHarnessEnv(t *testing.T, configText string, env func(string) (string, bool), opt func(*threads.Options)) *harness {
	t.Helper()
	cfg, err := config.Parse("bot.yaml", []byte(configText), env)
	if err != nil {
		t.Fatal(err)
	}
	st := threadstest.OpenSQLite(t)
	clock := clockwork.NewFakeClockAt(time.Date(2026, 11, 29, 18, 0, 1, 0, time.UTC))
	surf := &recorder{}
	o := threads.Options{Store: st, Tenants: cfg, Clock: clock, Fallback: surf}
	if opt != nil {
		opt(&o)
	}
	svc, err := threads.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return &harness{opts: o, svc: svc, store: o.Store, clock: clock, surf: surf}
}

// restart builds a new Service on the same store, as a restarted process
// would (a fresh worker id, nothing in memory).
func (h *harness) restart(t *testing.T) {
	t.Helper()
	o := h.opts
	o.Worker = ""
	svc, err := threads.New(o)
	if err != nil {
		t.Fatal(err)
	}
	h.svc = svc
}

func readEvent(t *testing.T, name string) ([]byte, *approval.Event) {
	t.Helper()
	return threadstest.Event(t, name)
}

func (h *harness) ingest(t *testing.T, name string) threads.IngestResult {
	t.Helper()
	body, ev := readEvent(t, name)
	res, err := h.ingestBody(body, ev)
	if err != nil {
		t.Fatalf("ingest %s: %v", name, err)
	}
	return res
}

func (h *harness) ingestBody(body []byte, ev *approval.Event) (threads.IngestResult, error) {
	sum := sha256.Sum256(body)
	return h.svc.Ingest(context.Background(), threads.IngestRequest{Event: ev, BodySHA256: hex.EncodeToString(sum[:])})
}

func (h *harness) drain(t *testing.T) int {
	t.Helper()
	n, err := h.svc.DrainOutbox(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func (h *harness) state(t *testing.T, id string) *store.Approval {
	t.Helper()
	a, err := h.store.ApprovalGet(context.Background(), id)
	if err != nil {
		t.Fatalf("approval %s: %v", id, err)
	}
	return a
}

func TestRequestedPostsToEveryTarget(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	if got := h.state(t, "a-merge1"); got.State != "pending" || got.Revision != 1 || !got.Seen {
		t.Fatalf("stored %+v", got)
	}
	h.drain(t)
	var targets []string
	for _, p := range h.surf.posts {
		targets = append(targets, p.Target)
		if p.Card.Approval.ID != "a-merge1" || p.Card.State != approval.StatePending || p.Thread != nil {
			t.Errorf("post %+v", p)
		}
	}
	sort.Strings(targets)
	if strings.Join(targets, " ") != "discord:channel:112233445566778899 slack:C0APPROVALS" {
		t.Fatalf("posted to %v", targets)
	}
	posts, err := h.store.PostList(context.Background(), "a-merge1")
	if err != nil || len(posts) != 2 {
		t.Fatalf("recorded posts %v, %v", posts, err)
	}
	// The deadline and first step are frozen at request from the tenant's
	// default ladder and deadline.
	a := h.state(t, "a-merge1")
	want := time.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC)
	if !a.DeadlineAt.Equal(want) {
		t.Errorf("deadline %v, want %v", a.DeadlineAt, want)
	}
	if !a.NextStepAt.Equal(time.Date(2026, 11, 29, 18, 15, 0, 0, time.UTC)) {
		t.Errorf("next step %v", a.NextStepAt)
	}
}

func TestToolOverrideChoosesTargetsAndRequestDeadlineWins(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "refund.json")
	h.drain(t)
	if len(h.surf.posts) != 1 || h.surf.posts[0].Target != "slack:C0FINANCE" {
		t.Fatalf("posts %+v", h.surf.posts)
	}
	// refund.json carries its own deadline (20:00), which beats the tool's 2h.
	if got := h.state(t, "a-refund1").DeadlineAt; !got.Equal(time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC)) {
		t.Fatalf("deadline %v", got)
	}
}

func TestDuplicateAndReusedID(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	if res := h.ingest(t, "merge.json"); !res.Duplicate {
		t.Fatalf("second delivery: %+v, want duplicate", res)
	}
	body, ev := readEvent(t, "merge.json")
	body = append([]byte(" "), body...) // same id, another body
	if _, err := h.ingestBody(body, ev); !errors.Is(err, threads.ErrIDReused) {
		t.Fatalf("reused id: %v", err)
	}
	if n := h.drain(t); n != 2 {
		t.Fatalf("performed %d rows, want the 2 posts of the first delivery only", n)
	}
}

func TestUnknownTenant(t *testing.T) {
	h := newHarness(t)
	body, ev := readEvent(t, "merge.json")
	ev.Tenant = "nobody"
	if _, err := h.ingestBody(body, ev); !errors.Is(err, threads.ErrUnknownTenant) {
		t.Fatalf("err %v", err)
	}
}

func TestResolvedEditsEveryCopyAndReplies(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	h.ingest(t, "merge-reasked.json")
	h.drain(t)
	// Reasked: both revision-1 copies edited as superseded, the new card
	// posted under each first card.
	if len(h.surf.edits) != 2 {
		t.Fatalf("edits after reask: %d", len(h.surf.edits))
	}
	for _, e := range h.surf.edits {
		if !e.Card.Superseded || e.Post.Revision != 1 {
			t.Errorf("edit %+v", e)
		}
	}
	if len(h.surf.posts) != 4 {
		t.Fatalf("posts after reask: %d", len(h.surf.posts))
	}
	for _, p := range h.surf.posts[2:] {
		if p.Thread == nil || p.Thread.Revision != 1 || p.Card.Approval.Revision != 2 {
			t.Errorf("reasked post %+v", p)
		}
	}
	h.ingest(t, "merge-resolved.json")
	h.drain(t)
	a := h.state(t, "a-merge1")
	if a.State != "denied" || !a.NextStepAt.IsZero() || !a.DeadlineAt.IsZero() {
		t.Fatalf("after resolved: %+v", a)
	}
	// Both copies of revision 2 edited again; the superseded copies of
	// revision 1 already say so, and would only be sent the same text.
	if len(h.surf.edits) != 4 {
		t.Fatalf("edits: %d", len(h.surf.edits))
	}
	for _, e := range h.surf.edits[2:] {
		if e.Card.State != approval.StateDenied || e.Card.Decision == nil || e.Card.Decision.Actor != "user:kevin" {
			t.Errorf("edit %+v", e.Card)
		}
		if e.Post.Revision != 2 || e.Card.Superseded {
			t.Errorf("revision %d copy edited (superseded=%v), want only revision 2's", e.Post.Revision, e.Card.Superseded)
		}
	}
	if len(h.surf.replies) != 2 || !strings.Contains(h.surf.replies[0].Text, "user:kevin denied it") {
		t.Fatalf("replies %+v", h.surf.replies)
	}
	for _, r := range h.surf.replies {
		if r.Root.Revision != 1 {
			t.Errorf("reply under revision %d, want the thread's first card", r.Root.Revision)
		}
	}
}

func TestOrphanResolvedThenLateRequestedPostsNothing(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "orphan-resolved.json")
	res := h.ingest(t, "late-requested.json")
	if res.Ignored == "" {
		t.Fatalf("late request applied: %+v", res)
	}
	if n := h.drain(t); n != 0 {
		t.Fatalf("performed %d rows for a tombstone", n)
	}
	if a := h.state(t, "a-late1"); a.State != "approved" || a.Seen {
		t.Fatalf("tombstone %+v", a)
	}
}

func TestAutoGrantedGoesToAudit(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "auto.json")
	h.drain(t)
	if len(h.surf.notices) != 1 {
		t.Fatalf("notices %+v", h.surf.notices)
	}
	n := h.surf.notices[0]
	for _, want := range []string{"run_command", "j-42", "release-bot", "sandbox.workspace.v1"} {
		if !strings.Contains(n.Text, want) {
			t.Errorf("notice %q lacks %q", n.Text, want)
		}
	}
	if n.Target != "slack:C0AUDIT" {
		t.Errorf("target %s", n.Target)
	}
}

// The sandbox policy covers only the sandbox's three tools: a call of any
// other function granted under it is posted as a warning that says so,
// while the three stay routine notices, as does a policy the bot does not
// know.
func TestAutoGrantedOutsideItsPolicyWarns(t *testing.T) {
	for i, tt := range []struct {
		function, policy string
		warn             bool
	}{
		{"run_command", "sandbox.workspace.v1", false},
		{"write_file", "sandbox.workspace.v1", false},
		{"edit_file", "sandbox.workspace.v1", false},
		{"request_approval", "sandbox.workspace.v1", true},
		{"acme_github.merge", "sandbox.workspace.v1", true},
		{"Run_Command", "sandbox.workspace.v1", true},
		{"acme_github.merge", "tenant.nightly", false},
		// Ids that read as the sandbox policy without being it warn
		// whatever the function, the id in visible form.
		{"run_command", "Sandbox.Workspace.V1", true},
		{"run_command", " sandbox.workspace.v1", true},
		{"run_command", "sandbox.workspace.v1\u200b", true},
	} {
		t.Run(tt.function+" under "+tt.policy, func(t *testing.T) {
			h := newHarness(t)
			threadstest.Ingest(t, h.svc, "auto.json", func(ev map[string]any) {
				ev["id"] = fmt.Sprintf("evt-auto-%d", i)
				data := ev["data"].(map[string]any)
				data["call"].(map[string]any)["function"] = tt.function
				data["policy_id"] = tt.policy
			})
			h.drain(t)
			if len(h.surf.notices) != 1 {
				t.Fatalf("notices %+v", h.surf.notices)
			}
			text := h.surf.notices[0].Text
			want := "Ran unattended: " + tt.function + " · job j-42 · agent release-bot · policy " + tt.policy
			switch {
			case tt.warn && tt.policy != "sandbox.workspace.v1":
				want = "Warning: " + tt.function + " ran unattended under policy \"" + templates.VisibleLine(tt.policy) +
					"\", which looks like sandbox.workspace.v1 but is not it · job j-42 · agent release-bot"
			case tt.warn:
				want = "Warning: " + tt.function + " ran unattended under policy sandbox.workspace.v1, which does not cover it" +
					" (it covers only run_command, write_file and edit_file) · job j-42 · agent release-bot"
			}
			if text != want {
				t.Errorf("notice\n%q\nwant\n%q", text, want)
			}
		})
	}
}

func TestFinishedAndRecheckGoToThread(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "search.json")
	h.ingest(t, "search-finished.json")
	h.ingest(t, "refund.json")
	h.ingest(t, "refund-recheck.json")
	h.drain(t)
	texts := map[string]bool{}
	for _, r := range h.surf.replies {
		texts[r.Text] = true
	}
	if !texts["The call completed: 10 results"] {
		t.Errorf("replies %v lack the outcome", texts)
	}
	if a := h.state(t, "a-refund1"); a.State != "refused" {
		t.Errorf("refund state %s", a.State)
	}
}

// A re-check's refusal names the member who approved in the reply of
// every thread, by their user on that thread's surface, and puts the card
// before them directly: on the chat surface they decided on, or, for a
// decision from elsewhere (the console), on each surface the cards are on.
// A decision by someone the tenant does not know mentions nobody.
func TestRecheckRefusalMentionsAndTellsTheApprover(t *testing.T) {
	const kevinDiscord = "discord:user:223344556677889900"
	for _, tt := range []struct {
		actor, via string
		mentions   map[string][]string // thread: mentions
		direct     []string
	}{
		{"user:kevin", "console",
			map[string][]string{"slack:C0APPROVALS": {"slack:U0KEVIN"}, "discord:channel:112233445566778899": {kevinDiscord}},
			[]string{kevinDiscord, "slack:U0KEVIN"}},
		{"user:kevin", "slack",
			map[string][]string{"slack:C0APPROVALS": {"slack:U0KEVIN"}, "discord:channel:112233445566778899": {kevinDiscord}},
			[]string{"slack:U0KEVIN"}},
		{"user:lee", "discord", // on Slack only
			map[string][]string{"slack:C0APPROVALS": {"slack:U0LEE"}},
			[]string{"slack:U0LEE"}},
		{"user:stranger", "console", nil, nil},
	} {
		t.Run(tt.actor+" via "+tt.via, func(t *testing.T) {
			h := newHarness(t)
			h.ingest(t, "merge.json")
			h.drain(t)
			threadstest.Ingest(t, h.svc, "merge-resolved.json", func(ev map[string]any) {
				data := ev["data"].(map[string]any)
				data["revision"], data["status"], data["actor"], data["via"] = 1, "approved", tt.actor, tt.via
				data["comment"], data["message"] = "", "approved"
			})
			h.drain(t)
			replies, posts := len(h.surf.replies), len(h.surf.posts)
			threadstest.Ingest(t, h.svc, "refund-recheck.json", func(ev map[string]any) {
				ev["data"].(map[string]any)["approval_id"] = "a-merge1"
			})
			h.drain(t)
			got := map[string][]string{}
			for _, r := range h.surf.replies[replies:] {
				if r.Kind != templates.ThreadRecheckRefused {
					t.Errorf("reply %+v", r)
				}
				for _, m := range r.Mentions {
					got[r.Root.Target] = append(got[r.Root.Target], m.Target)
				}
			}
			if diff := cmp.Diff(tt.mentions, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("mentions by thread (-want +got):\n%s", diff)
			}
			var direct []string
			for _, p := range h.surf.posts[posts:] {
				direct = append(direct, p.Target)
			}
			slices.Sort(direct)
			if diff := cmp.Diff(tt.direct, direct, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("cards posted directly (-want +got):\n%s", diff)
			}
		})
	}
}

// A card posted while its approval moved on is edited right after.
func TestPostRacingADecisionIsEditedAfter(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "mail.json")
	h.surf.fail = func(op string) error {
		if op == "post" {
			h.surf.fail = nil
			// The decision commits while the post is in flight.
			h.ingest(t, "mail-cancelled.json")
		}
		return nil
	}
	h.drain(t)
	h.drain(t)
	if len(h.surf.edits) == 0 {
		t.Fatal("the card posted as pending was never edited to cancelled")
	}
	last := h.surf.edits[len(h.surf.edits)-1]
	if last.Card.State != approval.StateCancelled {
		t.Fatalf("last edit shows %s", last.Card.State)
	}
}

func TestRetryAfterAndPermanentFailures(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "search.json")
	h.surf.fail = func(op string) error { return threads.RetryAfter(errors.New("rate limited"), 30*time.Second) }
	h.drain(t)
	if len(h.surf.posts) != 0 {
		t.Fatal("posted despite the failure")
	}
	st, err := h.store.OutboxStats(context.Background(), h.clock.Now())
	if err != nil || st.Pending != 2 {
		t.Fatalf("stats %+v %v", st, err)
	}
	// Not due before its Retry-After.
	h.surf.fail = nil
	h.clock.Advance(29 * time.Second)
	if n := h.drain(t); n != 0 {
		t.Fatalf("retried %d rows before Retry-After", n)
	}
	h.clock.Advance(2 * time.Second)
	if n := h.drain(t); n != 2 || len(h.surf.posts) != 2 {
		t.Fatalf("after Retry-After: performed %d, posts %d", n, len(h.surf.posts))
	}
	h.ingest(t, "search-finished.json")
	h.surf.fail = func(string) error { return threads.Permanent(errors.New("channel_not_found")) }
	h.drain(t)
	h.clock.Advance(time.Hour)
	if n := h.drain(t); n != 0 {
		t.Fatalf("a permanent failure was retried (%d rows)", n)
	}
	st, _ = h.store.OutboxStats(context.Background(), h.clock.Now())
	if st.Dead != 2 || st.Pending != 0 {
		t.Fatalf("stats %+v, want 2 dead", st)
	}
}

// The outbox loop performs committed rows promptly and stops with its context.
func TestRunOutboxLoop(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.svc.RunOutbox(ctx, threads.WorkerOptions{Poll: 10 * time.Millisecond}) }()
	h.ingest(t, "merge.json")
	deadline := time.Now().Add(10 * time.Second)
	for {
		h.surf.mu.Lock()
		n := len(h.surf.posts)
		h.surf.mu.Unlock()
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("posts after 10s: %d", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A resolve that names a revision the bot never saw (its reask comes
// later, out of order) shows who decided, not "superseded".
func TestResolveOfAnUnseenRevisionShowsTheDecision(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	h.ingest(t, "merge-resolved.json") // revision 2, before its reask
	h.ingest(t, "merge-reasked.json")
	h.drain(t)
	if len(h.surf.edits) == 0 {
		t.Fatal("no card edited")
	}
	for _, e := range h.surf.edits {
		if e.Card.Superseded || e.Card.State != approval.StateDenied || e.Card.Decision.Actor != "user:kevin" {
			t.Fatalf("edit shows superseded=%v %s %+v", e.Card.Superseded, e.Card.State, e.Card.Decision)
		}
	}
}

// A shared thread of a content-restricted approval is never told the
// backend's message, which can carry the content the card keeps out.
func TestRestrictedApprovalsRepliesSayNoContent(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "private.json")
	ev := &approval.Event{ID: "evt-priv-resolved", Type: approval.EventResolved, Tenant: "acme",
		Resolved: &approval.Resolved{ApprovalID: "a-priv1", Revision: 1, Status: approval.StateDenied, Actor: "user:kevin",
			Message: "The call to db.delete_rows was not made: user:kevin denied it: not bea.private@example.com"}}
	if _, err := h.ingestBody([]byte("priv-resolved"), ev); err != nil {
		t.Fatal(err)
	}
	h.drain(t)
	if len(h.surf.replies) == 0 {
		t.Fatal("no reply in the thread")
	}
	for _, r := range h.surf.replies {
		if strings.Contains(r.Text, "bea.private") || !strings.Contains(r.Text, "only in the console") {
			t.Fatalf("a restricted approval's thread was told %q", r.Text)
		}
	}
}

// Every replica's scheduler fires the digest; it is sent once.
func TestDigestIsSentOncePerSlotAcrossReplicas(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	for range 3 {
		h.restart(t) // another replica on the same store
		if err := h.svc.Digest(context.Background(), "acme"); err != nil {
			t.Fatal(err)
		}
	}
	h.drain(t)
	if len(h.surf.notices) != 1 || !strings.Contains(h.surf.notices[0].Text, "acme_github.merge (a-merge1)") {
		t.Fatalf("notices %+v", h.surf.notices)
	}
	h.clock.Advance(24 * time.Hour)
	if err := h.svc.Digest(context.Background(), "acme"); err != nil {
		t.Fatal(err)
	}
	h.drain(t)
	if len(h.surf.notices) != 2 {
		t.Fatalf("the next day's digest: %d notices", len(h.surf.notices))
	}
}

// blocking is a surface whose posts wait until released.
type blocking struct {
	*recorder
	started chan struct{}
	release chan struct{}
}

func (b blocking) Post(ctx context.Context, req threads.PostRequest) (threads.PostResult, error) {
	b.started <- struct{}{}
	<-b.release
	return b.recorder.Post(ctx, req)
}

// A worker claims only as many rows as it can perform now: the rest stay
// free for other replicas instead of waiting out their lease.
func TestOutboxClaimsOnlyWhatItCanPerform(t *testing.T) {
	surf := blocking{recorder: &recorder{}, started: make(chan struct{}, 8), release: make(chan struct{})}
	h := newHarnessWith(t, func(o *threads.Options) { o.Fallback = surf })
	h.ingest(t, "merge.json") // 2 cards
	h.ingest(t, "mail.json")  // 2 more
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- h.svc.RunOutbox(ctx, threads.WorkerOptions{Concurrency: 2, Batch: 32, Poll: 10 * time.Millisecond})
	}()
	<-surf.started
	<-surf.started
	// Two rows are in flight; the other two must be claimable elsewhere.
	rows, err := h.store.OutboxClaim(context.Background(), store.OutboxClaimParams{Worker: "other-replica",
		Now: h.clock.Now(), Lease: time.Minute, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	close(surf.release)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("another replica could claim %d rows, want the 2 not in flight", len(rows))
	}
}

// A tenant's max_deadline bounds a request's own deadline against the
// service's clock: further away, Ingest refuses it naming the field and
// keeps nothing of it.
func TestIngestBoundsTheDeadlineByTheTenant(t *testing.T) {
	h := newHarnessFrom(t, strings.Replace(testConfig, "    audit: slack:C0AUDIT\n", "    audit: slack:C0AUDIT\n    max_deadline: 48h\n", 1), nil)
	for _, tt := range []struct {
		after time.Duration
		ok    bool
	}{{49 * time.Hour, false}, {47 * time.Hour, true}} {
		body, ev := readEvent(t, "merge.json")
		dl := h.clock.Now().Add(tt.after)
		ev.Approval.Deadline = &dl
		_, err := h.ingestBody(body, ev)
		var ve *approval.ValidationError
		switch {
		case tt.ok && err != nil:
			t.Errorf("deadline %s away: %v", tt.after, err)
		case !tt.ok && (!errors.As(err, &ve) || len(ve.Problems) != 1 || ve.Problems[0].Path != "data.deadline" ||
			!strings.Contains(ve.Problems[0].Msg, "48h")):
			t.Errorf("deadline %s away: %v, want data.deadline refused under 48h", tt.after, err)
		}
	}
	if a := h.state(t, "a-merge1"); a.DeadlineAt.IsZero() || a.DeadlineAt.Sub(h.clock.Now()) != 47*time.Hour {
		t.Errorf("stored deadline %v, want the one in bounds", a.DeadlineAt)
	}
}

// Every event's envelope time is bounded as requested_at is: at most the
// signature's skew after the service's clock, or Ingest refuses it naming
// "time" and keeps nothing of it.
func TestIngestBoundsTheEnvelopeTime(t *testing.T) {
	h := newHarness(t)
	now := h.clock.Now()
	for _, tt := range []struct {
		name string
		at   time.Time
		ok   bool
	}{
		{"merge.json", time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), false},
		{"merge.json", now.Add(threads.RequestAhead + time.Second), false},
		{"merge.json", now.Add(threads.RequestAhead), true},
		{"merge-resolved.json", now.Add(threads.RequestAhead + time.Second), false},
	} {
		body, ev := readEvent(t, tt.name)
		ev.Time = tt.at
		_, err := h.ingestBody(body, ev)
		var ve *approval.ValidationError
		switch {
		case tt.ok && err != nil:
			t.Errorf("%s at %s: %v", tt.name, tt.at, err)
		case !tt.ok && (!errors.As(err, &ve) || len(ve.Problems) != 1 || ve.Problems[0].Path != "time"):
			t.Errorf("%s at %s: %v, want time refused", tt.name, tt.at, err)
		}
	}
	if a := h.state(t, "a-merge1"); a.State != string(approval.StatePending) {
		t.Errorf("a-merge1 %s: the resolved event from the future was applied", a.State)
	}
}
