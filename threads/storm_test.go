package threads_test

import (
	"bytes"
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jonboulle/clockwork"
	"golang.org/x/time/rate"

	"approvalsbot/adapters/backend"
	"approvalsbot/adapters/backend/backendtest"
	"approvalsbot/adapters/backend/standin"
	"approvalsbot/adapters/logsurface"
	slackad "approvalsbot/adapters/slack"
	"approvalsbot/adapters/slack/slacktest"
	"approvalsbot/approval"
	"approvalsbot/config"
	"approvalsbot/internal/fixtures"
	"approvalsbot/store"
	"approvalsbot/store/postgres"
	"approvalsbot/store/sqlite"
	"approvalsbot/templates"
	"approvalsbot/tenant"
	"approvalsbot/threads"
)

// The step storm: many pending approvals over many Slack channels, a
// ladder step falling due for all of them at once (a thread mention each),
// people clicking while those replies drain at Slack's pace, and the
// deadline closing the rest. Everything runs on the real clock against
// the real Slack adapter, the real backend client, a fake Slack that
// enforces a per-channel post pace and the workspace's chat.update pace
// with 429s, and a fake job backend; the store is SQLite on disk, or
// PostgreSQL when BOT_TEST_POSTGRES_URL is set.
//
// The CI test scales Slack's limits up (stormOptions.scale) and shrinks
// the ladder's times alike, so a run takes seconds; the benchmark runs at
// Slack's own pace. Every figure is relative to the limit in force.
const (
	stormSigning      = "storm-signing-secret-0123456789"
	stormBotToken     = "xoxb-storm-0123456789"
	stormEventsSecret = "storm-events-secret-0123456789abcdef"
	stormCallsSecret  = "storm-calls-secret-0123456789abcdef"
	stormPostBurst    = 3
	stormUpdateBurst  = 10
	stormTickInterval = 250 * time.Millisecond
)

// stormOptions size one storm.
type stormOptions struct {
	// scale multiplies Slack's limits (1: Slack's own pace, a post a
	// second per channel, chat.update 50 a minute).
	scale                       float64
	approvals, channels, clicks int
	step, deadline              time.Duration // after the request
	clicksFrom, clicksTo        time.Duration // when the clicks come, after the request
	// fakePostBurst is the burst the fake Slack allows a channel's posts;
	// 0: the bot's own (stormPostBurst).
	fakePostBurst int
	// questions: the first channel's approvals are agents' questions
	// (which post to the tenant's channel, the first): a click on one
	// presses its first choice, and its deadline tells the job nobody
	// answered.
	questions bool
}

// stormQuestion reports whether approval i is a question.
func (o stormOptions) stormQuestion(i int) bool { return o.questions && i%o.channels == 0 }

// storm is one running bot and its fakes.
type storm struct {
	o       stormOptions
	slack   *slacktest.Server
	back    *backendtest.Fake
	svc     *threads.Service
	st      store.Store
	http    *httptest.Server
	t0      time.Time
	stop    func()
	seenMu  sync.Mutex
	decided map[string]time.Time // approval → when its decision reached the backend
	writes  *writeCounter
}

// writeCounter is the storm's store, noting when each write transaction
// began: how many commits the deadline's denies cost does not depend on
// how busy the machine is, unlike how long they take.
type writeCounter struct {
	store.Store
	mu sync.Mutex
	at []time.Time
}

// OneWriter is the store's own: the counter must not change how the
// service commits.
func (w *writeCounter) OneWriter() bool {
	o, ok := w.Store.(store.OneWriter)
	return ok && o.OneWriter()
}

// Alone is the store's own: the bot serves SQLite as the process's
// alone, and the counter must not take that from it.
func (w *writeCounter) Alone() bool {
	a, ok := w.Store.(store.Alone)
	return ok && a.Alone()
}

func (w *writeCounter) note() {
	w.mu.Lock()
	w.at = append(w.at, time.Now())
	w.mu.Unlock()
}

// between counts the writes that began in [from, to].
func (w *writeCounter) between(from, to time.Time) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, at := range w.at {
		if !at.Before(from) && !at.After(to) {
			n++
		}
	}
	return n
}

func (w *writeCounter) InTx(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	w.note()
	return w.Store.InTx(ctx, fn)
}

func (w *writeCounter) ApprovalClaimDue(ctx context.Context, p store.ApprovalClaimDueParams) ([]*store.Approval, error) {
	w.note()
	return w.Store.ApprovalClaimDue(ctx, p)
}

func (w *writeCounter) OutboxClaim(ctx context.Context, p store.OutboxClaimParams) ([]*store.OutboxRow, error) {
	w.note()
	return w.Store.OutboxClaim(ctx, p)
}

func (w *writeCounter) OutboxComplete(ctx context.Context, p store.OutboxCompleteParams) error {
	w.note()
	return w.Store.OutboxComplete(ctx, p)
}

func (w *writeCounter) OutboxRetry(ctx context.Context, p store.OutboxRetryParams) error {
	w.note()
	return w.Store.OutboxRetry(ctx, p)
}

func (w *writeCounter) OutboxDead(ctx context.Context, p store.OutboxDeadParams) error {
	w.note()
	return w.Store.OutboxDead(ctx, p)
}

func stormChannel(i int) string  { return fmt.Sprintf("C0STORM%02d", i) }
func stormApproval(i int) string { return fmt.Sprintf("a-storm%04d", i) }

// stormIndex is stormApproval's i.
func stormIndex(id string) int {
	i, _ := strconv.Atoi(strings.TrimPrefix(id, "a-storm"))
	return i
}

// stormEnv is the environment stormConfig reads its secrets from.
func stormEnv(name string) (string, bool) {
	v, ok := map[string]string{
		"BOT_EVENTS_SECRET":    stormEventsSecret,
		"BOT_CALLS_SECRET":     stormCallsSecret,
		"SLACK_BOT_TOKEN":      stormBotToken,
		"SLACK_SIGNING_SECRET": stormSigning,
	}[name]
	return v, ok
}

func stormConfig(o stormOptions, backendURL, slackURL string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `backend:
  url: %q
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
slack:
  bot_token: "${SLACK_BOT_TOKEN}"
  signing_secret: "${SLACK_SIGNING_SECRET}"
  api_url: %q
tenants:
  acme:
    deadline: %s
    post: [slack:%s]
    ladders:
      default:
        - after: %s
          mention: [slack:U0KEVIN]
    members:
      - {user: "user:kevin", role: operator, content: true, slack: U0KEVIN}
    tools:
`, backendURL, slackURL, o.deadline, stormChannel(0), o.step)
	for c := range o.channels {
		fmt.Fprintf(&b, "      \"storm.c%02d\": {post: [slack:%s]}\n", c, stormChannel(c))
	}
	return b.String()
}

// openStormStore opens SQLite in dir as the bot serves it (Exclusive:
// the process's alone), or a fresh PostgreSQL database when pg is set.
func openStormStore(tb testing.TB, pg bool) store.Store {
	tb.Helper()
	ctx := context.Background()
	if !pg {
		st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(tb.TempDir(), "bot.db"), Exclusive: true})
		if err != nil {
			tb.Fatal(err)
		}
		if err := st.Migrate(ctx); err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { st.Close() })
		return st
	}
	base := os.Getenv("BOT_TEST_POSTGRES_URL")
	if base == "" {
		tb.Skip("BOT_TEST_POSTGRES_URL is not set: the storm on PostgreSQL is skipped")
	}
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		tb.Fatalf("connect to %s: %v", base, err)
	}
	name := fmt.Sprintf("bot_storm_%d", time.Now().UnixNano())
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		tb.Fatal(err)
	}
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatal(err)
	}
	u.Path = "/" + name
	st, err := postgres.Open(ctx, postgres.Options{DSN: u.String()})
	if err != nil {
		tb.Fatal(err)
	}
	if err := st.Migrate(ctx); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		st.Close()
		_, _ = admin.Exec(context.Background(), "DROP DATABASE "+name+" WITH (FORCE)")
		admin.Close(context.Background())
	})
	return st
}

func newStorm(tb testing.TB, o stormOptions, pg bool) *storm {
	tb.Helper()
	sl := slacktest.New(tb, slacktest.Options{Token: stormBotToken,
		PostRate: rate.Limit(o.scale), PostBurst: cmp.Or(o.fakePostBurst, stormPostBurst),
		UpdateRate: rate.Limit(50.0 / 60 * o.scale), UpdateBurst: stormUpdateBurst})
	for c := range o.channels {
		sl.AddChannel(stormChannel(c), strings.ToLower(stormChannel(c)), true)
	}
	sl.AddUser("U0KEVIN")
	back := backendtest.New(tb, standin.Options{Secrets: [][]byte{[]byte(stormCallsSecret)}})
	cfg, err := config.Parse("bot.yaml", []byte(stormConfig(o, back.URL(), sl.APIURL())), stormEnv)
	if err != nil {
		tb.Fatal(err)
	}
	st := &writeCounter{Store: openStormStore(tb, pg)}
	renderer, err := templates.New(templates.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	surface, err := slackad.NewSurface(slackad.Options{Credentials: slackad.Credentials{BotToken: cfg.Slack.BotToken.Reveal(), SigningSecret: cfg.Slack.SigningSecret.Reveal(), AppToken: cfg.Slack.AppToken.Reveal()}, APIURL: cfg.Slack.APIURL, Tenants: func() map[string]*tenant.Tenant { return cfg.Tenants },
		Store: st, Logger: log,
		PerChannelRate: rate.Limit(o.scale), Burst: stormPostBurst,
		UpdateRate: rate.Limit(50.0 / 60 * o.scale), UpdateBurst: stormUpdateBurst})
	if err != nil {
		tb.Fatal(err)
	}
	var features []string
	if o.questions {
		features = []string{backend.FeatureQuestions}
	}
	client, err := backend.NewClient(backend.ClientOptions{BaseURL: back.URL(), Secrets: [][]byte{[]byte(stormCallsSecret)},
		MaxElapsed: 5 * time.Second, Features: features})
	if err != nil {
		tb.Fatal(err)
	}
	svc, err := threads.New(threads.Options{Store: st, Tenants: cfg, Clock: clockwork.NewRealClock(), Logger: log,
		Surfaces: map[string]threads.Surface{"slack": surface}, Backend: client.ForThreads(), Questions: o.questions,
		Fallback: logsurface.New(logsurface.Options{Out: io.Discard, Renderer: renderer})})
	if err != nil {
		tb.Fatal(err)
	}
	ad, err := slackad.New(surface, svc)
	if err != nil {
		tb.Fatal(err)
	}
	mux := http.NewServeMux()
	ad.Routes(mux)
	srv := httptest.NewServer(mux)
	s := &storm{o: o, slack: sl, back: back, svc: svc, st: st, http: srv, decided: map[string]time.Time{}, writes: st}

	// The bot's loops: the outbox's lanes, the ladder's tick (cron's
	// @every, on the real clock), and a watch on the backend that notes
	// when each decision arrived.
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = svc.RunOutbox(ctx, threads.WorkerOptions{}) })
	wg.Go(func() {
		tick := time.NewTicker(stormTickInterval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				_, _ = svc.Tick(ctx)
			}
		}
	})
	wg.Go(func() {
		for ctx.Err() == nil {
			now := time.Now()
			for _, d := range back.Decisions() {
				s.seenMu.Lock()
				if _, ok := s.decided[d.ApprovalID]; !ok && d.Status == http.StatusOK {
					s.decided[d.ApprovalID] = now
				}
				s.seenMu.Unlock()
			}
			for _, a := range back.Answers() {
				s.seenMu.Lock()
				if _, ok := s.decided[a.QuestionID]; !ok && a.Status == http.StatusOK {
					s.decided[a.QuestionID] = now
				}
				s.seenMu.Unlock()
			}
			time.Sleep(2 * time.Millisecond)
		}
	})
	s.stop = func() {
		cancel()
		wg.Wait()
		ad.Close()
		srv.Close()
	}
	tb.Cleanup(s.stop)

	// The approvals, all requested now, spread over the channels.
	var merge []byte
	if p, err := fixtures.Path("events", "merge.json"); err != nil {
		tb.Fatal(err)
	} else if merge, err = os.ReadFile(p); err != nil {
		tb.Fatal(err)
	}
	var asked []byte
	if p, err := fixtures.Path("events", "question.json"); err != nil {
		tb.Fatal(err)
	} else if asked, err = os.ReadFile(p); err != nil {
		tb.Fatal(err)
	}
	args := arguments(tb, "a-merge1.json")
	s.t0 = time.Now().UTC().Truncate(time.Millisecond)
	var reqs []threads.IngestRequest
	for i := range o.approvals {
		var ev map[string]any
		from := merge
		if o.stormQuestion(i) {
			from = asked
		}
		if err := json.Unmarshal(from, &ev); err != nil {
			tb.Fatal(err)
		}
		data := ev["data"].(map[string]any)
		ev["id"] = fmt.Sprintf("evt-storm-%04d", i)
		ev["time"] = s.t0.Format(time.RFC3339Nano)
		data["id"] = stormApproval(i)
		data["requested_at"] = s.t0.Format(time.RFC3339Nano)
		if !o.stormQuestion(i) {
			data["call"].(map[string]any)["function"] = fmt.Sprintf("storm.c%02d", i%o.channels)
		}
		delete(data, "deadline")
		delete(data, "console_url")
		delete(data, "ladder")
		body, _ := json.Marshal(ev)
		parsed, err := approval.Parse(body)
		if err != nil {
			tb.Fatal(err)
		}
		sum := sha256.Sum256(body)
		if o.stormQuestion(i) {
			back.AddQuestion(stormApproval(i), 1, *parsed.Approval.Question, false)
		} else {
			back.AddApproval(stormApproval(i), 1, args, false)
		}
		reqs = append(reqs, threads.IngestRequest{Event: parsed, BodySHA256: hex.EncodeToString(sum[:])})
	}
	// Ingested as the backend sends them, several at once, so that the
	// group commit takes them together: one by one, 200 ingests took 9 s
	// under the race detector, past the clicks' time.
	var ingestWG sync.WaitGroup
	next := make(chan threads.IngestRequest)
	for range 8 {
		ingestWG.Go(func() {
			for req := range next {
				if _, err := svc.Ingest(ctx, req); err != nil {
					tb.Error(err)
				}
			}
		})
	}
	for _, req := range reqs {
		next <- req
	}
	close(next)
	ingestWG.Wait()
	if tb.Failed() {
		tb.FailNow()
	}
	svc.Wake()
	return s
}

// cardTS is the ts of approval i's card in its channel ("" before it is
// posted).
func (s *storm) cardTS(i int) string {
	act := s.clickAction(i)
	for _, m := range s.slack.Channel(stormChannel(i % s.o.channels)) {
		if m.Method == "chat.postMessage" && m.ThreadTS == "" && strings.Contains(string(m.Blocks), act) {
			return m.TS
		}
	}
	return ""
}

// click is kevin's signed Approve on approval i's card, answered by the
// bot's interactions endpoint, with a response_url tied to the card; it
// returns when the click was sent, its response_url and the HTTP status.
func (s *storm) click(i int) (time.Time, string, int, error) {
	act := s.clickAction(i)
	ch := stormChannel(i % s.o.channels)
	respURL := s.slack.ResponseURLFor(ch, "U0KEVIN", s.cardTS(i))
	payload, _ := json.Marshal(map[string]any{
		"type": "block_actions", "trigger_id": "trig-" + stormApproval(i), "api_app_id": "A0APP",
		"user":         map[string]any{"id": "U0KEVIN"},
		"channel":      map[string]any{"id": ch},
		"container":    map[string]any{"type": "message", "channel_id": ch, "message_ts": s.cardTS(i)},
		"response_url": respURL,
		"actions":      []any{map[string]any{"type": "button", "block_id": "b1", "action_id": act, "value": act}},
	})
	body := []byte(url.Values{"payload": {string(payload)}}.Encode())
	ts := time.Now().Unix()
	mac := hmac.New(sha256.New, []byte(stormSigning))
	fmt.Fprintf(mac, "v0:%d:", ts)
	mac.Write(body)
	req, _ := http.NewRequest(http.MethodPost, s.http.URL+"/slack/interactions", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
	at := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return at, respURL, 0, err
	}
	res.Body.Close()
	return at, respURL, res.StatusCode, nil
}

// clickAction is the payload kevin presses on approval i's card:
// Approve, or a question's first choice.
func (s *storm) clickAction(i int) string {
	if s.o.stormQuestion(i) {
		return templates.EncodeAction(templates.Action{Kind: templates.ActionAnswer, ApprovalID: stormApproval(i), Revision: 1})
	}
	return templates.EncodeAction(templates.Action{Kind: templates.ActionApprove, ApprovalID: stormApproval(i), Revision: 1})
}

// stormResult is what a storm measured.
type stormResult struct {
	clickToBackend []time.Duration // a click → its decision at the backend
	clickToCard    []time.Duration // a click → the clicked card replaced
	deadlineLate   []time.Duration // the deadline → its deny at the backend
	// denyWrites: write transactions (of every kind, chat's too) begun
	// from the deadline until its last deny reached the backend.
	denyWrites  int
	replyRate   float64 // the slowest channel's step replies, as a share of its pace
	rateLimited int     // 429s the fake answered
	clicked     map[string]bool
}

// run makes the clicks on their schedule, waits for every approval to
// be decided, and measures.
func (s *storm) run(tb testing.TB) stormResult {
	tb.Helper()
	res := stormResult{clicked: map[string]bool{}}
	// The clicked approvals, spread over the channels and over the click
	// window.
	var clickWG sync.WaitGroup
	var mu sync.Mutex
	clickedAt := map[string]time.Time{}
	urlOf := map[string]string{} // response_url → approval
	for k := range s.o.clicks {
		// Spread over the channels too: the k-th click's approval moves
		// along by one channel each time.
		stride := s.o.approvals / s.o.clicks
		i := k*stride + k%stride
		when := s.t0.Add(s.o.clicksFrom + time.Duration(k)*(s.o.clicksTo-s.o.clicksFrom)/time.Duration(s.o.clicks))
		res.clicked[stormApproval(i)] = true
		clickWG.Go(func() {
			time.Sleep(time.Until(when))
			at, respURL, status, err := s.click(i)
			if err != nil || status != http.StatusOK {
				tb.Errorf("click on %s: %d %v", stormApproval(i), status, err)
				return
			}
			mu.Lock()
			clickedAt[stormApproval(i)] = at
			urlOf[respURL] = stormApproval(i)
			mu.Unlock()
		})
	}
	clickWG.Wait()
	// Everything decided: the clicked by kevin, the rest by the deadline.
	deadline := time.Now().Add(s.o.deadline + 60*time.Second)
	for {
		s.seenMu.Lock()
		n := len(s.decided)
		s.seenMu.Unlock()
		if n == s.o.approvals {
			break
		}
		if time.Now().After(deadline) {
			tb.Fatalf("only %d of %d approvals decided at the backend", n, s.o.approvals)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Let the clicked cards' replacements land.
	time.Sleep(200 * time.Millisecond)

	due := s.t0.Add(s.o.deadline)
	lastDeny := due
	for id, at := range s.decided {
		if c, ok := clickedAt[id]; ok {
			res.clickToBackend = append(res.clickToBackend, at.Sub(c))
		} else {
			res.deadlineLate = append(res.deadlineLate, at.Sub(due))
			lastDeny = later(lastDeny, at)
		}
	}
	res.denyWrites = s.writes.between(due, lastDeny)
	// The first replacement of each clicked card: the decision being
	// sent, or already its outcome when the backend answered first.
	replaced := map[string]bool{}
	for _, m := range s.slack.MessagesBy("response_url") {
		if !m.ReplaceOriginal || replaced[m.ResponseURL] {
			continue
		}
		mu.Lock()
		c, ok := clickedAt[urlOf[m.ResponseURL]]
		mu.Unlock()
		if ok {
			replaced[m.ResponseURL] = true
			res.clickToCard = append(res.clickToCard, m.Received.Sub(c))
		}
	}
	// Each channel's step replies: how fast they drained against the
	// pace, past the bot's own burst (Slack's less the one call the
	// adapter keeps in hand).
	res.replyRate = 1
	interval := time.Duration(float64(time.Second) / s.o.scale)
	botBurst := stormPostBurst - 1
	for c := range s.o.channels {
		var at []time.Time
		for _, m := range s.slack.Channel(stormChannel(c)) {
			if m.Method == "chat.postMessage" && m.ThreadTS != "" && strings.Contains(m.AllText(), "waiting") {
				at = append(at, m.Received)
			}
		}
		if len(at) < botBurst+8 {
			continue // too few to measure a pace (most of its approvals were clicked)
		}
		slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
		ideal := time.Duration(len(at)-botBurst) * interval
		if got := at[len(at)-1].Sub(at[0]); got > 0 {
			res.replyRate = min(res.replyRate, float64(ideal)/float64(got))
		}
	}
	res.rateLimited = s.slack.RateLimited()
	return res
}

func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// TestStepStorm checks what people rely on under a storm, by outcome
// rather than by timing: every clicked approval ends approved by the
// person who clicked (never "nobody answered"), every other one denied by
// the deadline, each decided once, and the fake Slack never answered 429.
// One channel's approvals are agents' questions: a clicked one ends
// answered with the choice pressed, every other one closed by the
// deadline with nobody's answer, each once.
func TestStepStorm(t *testing.T) {
	for _, pg := range []bool{false, true} {
		name := "sqlite"
		if pg {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) {
			// The fake allows one post more than Slack's burst: the call the
			// bot keeps in hand covers a claim reaching Slack up to one
			// interval late, 1 s at Slack's pace but only 500 ms at twice
			// it, which a loaded machine can stall a worker for; the extra
			// one gives the scaled run the same second.
			o := stormOptions{scale: 2, approvals: 200, channels: 20, clicks: 40,
				step: 6 * time.Second, deadline: 12 * time.Second,
				clicksFrom: 6 * time.Second, clicksTo: 8 * time.Second, questions: true,
				fakePostBurst: stormPostBurst + 1}
			s := newStorm(t, o, pg)
			res := s.run(t)
			for _, d := range s.back.Decisions() {
				want, actor := "deny", "system:deadline"
				if res.clicked[d.ApprovalID] {
					want, actor = "approve", "user:kevin"
				}
				if d.Request.Decision != want || d.Request.Actor != actor {
					t.Errorf("%s: the backend got %s by %s, want %s by %s", d.ApprovalID, d.Request.Decision, d.Request.Actor, want, actor)
				}
			}
			questions := 0
			for _, a := range s.back.Answers() {
				questions++
				switch {
				case res.clicked[a.QuestionID]:
					if a.Request.Answer == nil || a.Request.Answer.Choice == nil || *a.Request.Answer.Choice != 0 || a.Request.Actor != "user:kevin" {
						t.Errorf("%s: the backend got %+v, want kevin's first choice", a.QuestionID, a.Request)
					}
				case !a.Request.Unanswered || a.Request.Actor != "system:deadline":
					t.Errorf("%s: the backend got %+v, want nobody's answer from the deadline", a.QuestionID, a.Request)
				}
			}
			if n := len(s.back.Decisions()) + questions; n != o.approvals {
				t.Errorf("the backend got %d decisions and answers for %d approvals and questions", n, o.approvals)
			}
			clickedQuestions := 0
			for id := range res.clicked {
				if o.stormQuestion(stormIndex(id)) {
					clickedQuestions++
				}
			}
			if clickedQuestions == 0 || clickedQuestions == questions || questions != o.approvals/o.channels {
				t.Errorf("%d questions answered or closed, %d of them clicked: the storm must hold both", questions, clickedQuestions)
			}
			if res.rateLimited != 0 {
				by := map[string]int{}
				for _, c := range s.slack.Calls() {
					if c.Status == http.StatusTooManyRequests {
						by[c.Method+" "+c.Channel]++
					}
				}
				t.Errorf("the fake Slack answered 429 %d times: %v", res.rateLimited, by)
			}
			if len(res.clickToCard) != o.clicks {
				t.Errorf("%d of %d clicked cards were replaced through their response_url", len(res.clickToCard), o.clicks)
			}
			t.Logf("click → backend p50 %v p99 %v; click → card p99 %v; deadline late max %v; replies at %.0f%% of the pace; %d 429s",
				quantile(res.clickToBackend, .5), quantile(res.clickToBackend, .99), quantile(res.clickToCard, .99),
				quantile(res.deadlineLate, 1), 100*res.replyRate, res.rateLimited)
		})
	}
}

// BenchmarkStepStorm is the storm at full size: 1,000 approvals over 50
// channels, the step due for all at once, 100 clicks while its replies
// drain. It reports the latencies people wait on, and the same click's
// latency on an idle bot in the same run (its baseline):
//
//	go test ./threads -run '^$' -bench StepStorm -benchtime 1x
func BenchmarkStepStorm(b *testing.B) {
	for _, pg := range []bool{false, true} {
		name := "sqlite"
		if pg {
			name = "postgres"
		}
		b.Run(name, func(b *testing.B) {
			for range b.N {
				idle := newStorm(b, stormOptions{scale: 1, approvals: 20, channels: 20, clicks: 20,
					step: time.Hour, deadline: 2 * time.Hour, clicksFrom: 500 * time.Millisecond, clicksTo: 1500 * time.Millisecond}, pg)
				base := idle.runClicksOnly(b)
				idle.stop()

				s := newStorm(b, stormOptions{scale: 1, approvals: 1000, channels: 50, clicks: 100,
					step: 30 * time.Second, deadline: 60 * time.Second,
					clicksFrom: 30 * time.Second, clicksTo: 45 * time.Second}, pg)
				res := s.run(b)
				b.ReportMetric(float64(quantile(res.clickToBackend, .5).Milliseconds()), "click-p50-ms")
				b.ReportMetric(float64(quantile(res.clickToBackend, .99).Milliseconds()), "click-p99-ms")
				b.ReportMetric(float64(quantile(base, .99).Milliseconds()), "idle-click-p99-ms")
				b.ReportMetric(float64(quantile(res.clickToCard, .99).Milliseconds()), "card-p99-ms")
				b.ReportMetric(float64(quantile(res.deadlineLate, 0).Milliseconds()), "deadline-late-first-ms")
				b.ReportMetric(float64(quantile(res.deadlineLate, .5).Milliseconds()), "deadline-late-p50-ms")
				b.ReportMetric(float64(quantile(res.deadlineLate, 1).Milliseconds()), "deadline-late-max-ms")
				b.ReportMetric(float64(res.denyWrites)/float64(len(res.deadlineLate)), "writes-per-deny")
				b.ReportMetric(100*res.replyRate, "reply-pace-%")
				b.ReportMetric(float64(res.rateLimited), "429s")
			}
		})
	}
}

// runClicksOnly makes the clicks of an idle bot (no step, no deadline
// due) and returns click → backend latencies.
func (s *storm) runClicksOnly(tb testing.TB) []time.Duration {
	tb.Helper()
	var out []time.Duration
	for k := range s.o.clicks {
		time.Sleep(time.Until(s.t0.Add(s.o.clicksFrom + time.Duration(k)*(s.o.clicksTo-s.o.clicksFrom)/time.Duration(s.o.clicks))))
		at, _, status, err := s.click(k)
		if err != nil || status != http.StatusOK {
			tb.Fatalf("idle click: %d %v", status, err)
		}
		id := stormApproval(k)
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			s.seenMu.Lock()
			got, ok := s.decided[id]
			s.seenMu.Unlock()
			if ok {
				out = append(out, got.Sub(at))
				break
			}
		}
	}
	return out
}

// TestReplicasShareAChannelsPace: three replicas on one PostgreSQL
// database post a burst of cards into one Slack channel, against a fake
// that enforces the channel's pace with 429s. The budget lives in the
// database, so together they keep one channel's pace: no 429, every card
// once, and the burst takes as long as one channel's pace needs, not a
// third of it.
func TestReplicasShareAChannelsPace(t *testing.T) {
	if os.Getenv("BOT_TEST_POSTGRES_URL") == "" {
		t.Skip("BOT_TEST_POSTGRES_URL is not set: the replicas' shared pace needs PostgreSQL")
	}
	const (
		cards     = 60
		postRate  = 10 // a second: Slack's pace scaled up, so the run takes seconds
		postBurst = 3
	)
	// The fake allows two posts more than the bot's burst. Each replica
	// spends the shared budget when it claims a row and calls Slack a
	// moment later; on two loaded cores a replica held up for a few of
	// the scaled pace's 100 ms slots sends its claimed posts together
	// with the next replica's, closer than the budget spaced them (at
	// Slack's own pace, a slot is a second). The call the bot keeps in
	// hand absorbs a slot of that, these two slots more. Replicas that
	// each spent a pace of their own would post at three times the
	// channel's pace and meet dozens of 429s, and the span check below
	// would fail too.
	o := stormOptions{scale: postRate, approvals: cards, channels: 1, step: time.Hour, deadline: 2 * time.Hour,
		fakePostBurst: postBurst + 2}
	// The first replica, with the fakes and the database; it ingests.
	first := newStorm(t, o, true)
	cfg, err := config.Parse("bot.yaml", []byte(stormConfig(o, first.back.URL(), first.slack.APIURL())), stormEnv)
	if err != nil {
		t.Fatal(err)
	}
	renderer, err := templates.New(templates.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Two more replicas on the same database and fakes, each with its own
	// adapter, outbox lanes and worker name.
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	for range 2 {
		ad, err := slackad.NewSurface(slackad.Options{Credentials: slackad.Credentials{BotToken: cfg.Slack.BotToken.Reveal(), SigningSecret: cfg.Slack.SigningSecret.Reveal(), AppToken: cfg.Slack.AppToken.Reveal()}, APIURL: cfg.Slack.APIURL, Tenants: func() map[string]*tenant.Tenant { return cfg.Tenants },
			Store: first.st, Logger: slog.New(slog.DiscardHandler), PerChannelRate: postRate, Burst: postBurst})
		if err != nil {
			t.Fatal(err)
		}
		svc, err := threads.New(threads.Options{Store: first.st, Tenants: cfg, Clock: clockwork.NewRealClock(),
			Surfaces: map[string]threads.Surface{"slack": ad},
			Fallback: logsurface.New(logsurface.Options{Out: io.Discard, Renderer: renderer})})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { _ = svc.RunOutbox(ctx, threads.WorkerOptions{}) })
	}
	deadline := time.Now().Add(60 * time.Second)
	var msgs []slacktest.Message
	for {
		msgs = nil
		for _, m := range first.slack.Channel(stormChannel(0)) {
			if m.Method == "chat.postMessage" && m.ThreadTS == "" {
				msgs = append(msgs, m)
			}
		}
		if len(msgs) >= cards || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(msgs) != cards {
		t.Fatalf("%d of %d cards posted", len(msgs), cards)
	}
	seen := map[string]bool{}
	for _, m := range msgs {
		for i := range cards {
			if act := templates.EncodeAction(templates.Action{Kind: templates.ActionApprove, ApprovalID: stormApproval(i), Revision: 1}); strings.Contains(string(m.Blocks), act) {
				if seen[stormApproval(i)] {
					t.Errorf("%s posted twice", stormApproval(i))
				}
				seen[stormApproval(i)] = true
			}
		}
	}
	if n := first.slack.RateLimited(); n != 0 {
		t.Errorf("the fake answered 429 %d times: the replicas overspent the channel's pace", n)
	}
	span := msgs[len(msgs)-1].Received.Sub(msgs[0].Received)
	// One channel's pace at the bot's burst (one in hand): (cards−2)/rate.
	if least := time.Duration(cards-(postBurst-1)) * time.Second / postRate; span < least*9/10 {
		t.Errorf("three replicas posted %d cards in %v; one channel's pace needs %v", cards, span, least)
	}
	t.Logf("%d cards from three replicas over %v, %d 429s", cards, span.Round(time.Millisecond), first.slack.RateLimited())
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
