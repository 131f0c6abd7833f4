package slack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	slackad "approvalsbot/adapters/slack"
	"approvalsbot/say"
	"approvalsbot/store"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// gatedService is threads with every decision held at a gate: entered
// receives when a decision's click begins, which then goes to threads
// (and is recorded there) only once release is closed. committed is set once
// threads has committed a decision.
type gatedService struct {
	*threads.Service
	entered   chan struct{}
	release   chan struct{}
	committed atomic.Bool
}

func newGatedService(svc *threads.Service) *gatedService {
	return &gatedService{Service: svc, entered: make(chan struct{}, 1), release: make(chan struct{})}
}

func (g *gatedService) Click(ctx context.Context, req threads.ClickRequest) threads.Clicked {
	if req.Do != threads.ClickRecord {
		return g.Service.Click(ctx, req)
	}
	g.entered <- struct{}{}
	select {
	case <-g.release:
	case <-ctx.Done():
		return threads.Clicked{Retry: true, Reason: say.Reason{Kind: say.NotInTime}}
	}
	out := g.Service.Click(ctx, req)
	if out.Sent {
		g.committed.Store(true)
	}
	return out
}

// failingTx is a store that refuses every transaction, recording
// nothing, as when the store refuses the decision's transaction.
type failingTx struct{ store.Store }

func (failingTx) InTx(context.Context, func(context.Context, store.Tx) error) error {
	return errors.New("record the decision: database is locked")
}

// brokenApprovals is a store whose ApprovalGet fails, as when the
// database cannot be reached.
type brokenApprovals struct{ store.Store }

func (brokenApprovals) ApprovalGet(context.Context, string) (*store.Approval, error) {
	return nil, store.ErrUnavailable
}

// snapshotStore is the store with one approval and its first revision as
// the test read them beforehand, whose transactions return only when
// their context ends, recording nothing: a store that cannot take the
// transaction in time. threads and an adapter inside a testing/synctest
// bubble read it rather than the harness's store, whose connection pool
// (and its goroutine) lives outside the bubble: a bubbled goroutine
// waiting for a connection from it would be woken from outside, which
// synctest forbids.
type snapshotStore struct {
	store.Store
	approval *store.Approval
	revision *store.Revision
	seen     *seenKeys
}

// ReplaySeen keeps the signed requests seen in the bubble, for the same
// reason: the harness's store cannot be reached from it.
func (s snapshotStore) ReplaySeen(_ context.Context, p store.ReplaySeenParams) (bool, error) {
	s.seen.mu.Lock()
	defer s.seen.mu.Unlock()
	if s.seen.keys == nil {
		s.seen.keys = map[string]time.Time{}
	}
	until, ok := s.seen.keys[string(p.Key)]
	if ok && until.After(p.Now) {
		return true, nil
	}
	s.seen.keys[string(p.Key)] = p.Until
	return false, nil
}

type seenKeys struct {
	mu   sync.Mutex
	keys map[string]time.Time
}

func (s snapshotStore) ApprovalGet(_ context.Context, id string) (*store.Approval, error) {
	if id != s.approval.ID {
		return nil, store.ErrNotFound
	}
	a := *s.approval
	return &a, nil
}

func (s snapshotStore) RevisionGet(_ context.Context, id string, rev int) (*store.Revision, error) {
	if id != s.revision.ApprovalID || rev != s.revision.Revision {
		return nil, store.ErrNotFound
	}
	r := *s.revision
	return &r, nil
}

func (snapshotStore) InTx(ctx context.Context, _ func(context.Context, store.Tx) error) error {
	<-ctx.Done()
	return ctx.Err()
}

// stuckAdapter is an in-process adapter, for a synctest bubble, whose
// clicks go to threads on a snapshotStore of the approval id (taken
// before the bubble, snap), and which keeps the requests seen there too.
func stuckAdapter(t *testing.T, h *harness, snap snapshotStore) *slackad.Adapter {
	t.Helper()
	snap.seen = &seenKeys{}
	return inProcessAdapterWith(t, h, h.threadsOn(t, snap), func(o *slackad.Options) { o.Store = snap })
}

// snapshot is the approval id and its first revision as the store holds
// them now, for stuckAdapter.
func (h *harness) snapshot(t *testing.T, id string) snapshotStore {
	t.Helper()
	rev, err := h.store.RevisionGet(context.Background(), id, 1)
	if err != nil {
		t.Fatal(err)
	}
	return snapshotStore{Store: h.store, approval: h.approval(t, id), revision: rev}
}

// answerWatch wraps a handler and calls answered once per request, when
// the handler first writes its answer (status, header or body) or returns
// having written none (net/http then answers 200).
func answerWatch(next http.Handler, answered func()) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ww := &watchedWriter{ResponseWriter: w, answered: answered}
		next.ServeHTTP(ww, r)
		ww.once.Do(ww.answered)
	})
}

type watchedWriter struct {
	http.ResponseWriter
	once     sync.Once
	answered func()
}

func (w *watchedWriter) WriteHeader(code int) {
	w.once.Do(w.answered)
	w.ResponseWriter.WriteHeader(code)
}

func (w *watchedWriter) Write(b []byte) (int, error) {
	w.once.Do(w.answered)
	return w.ResponseWriter.Write(b)
}

// TestApproveIsAnsweredOnlyOnceRecorded: the HTTP answer to a click on
// Approve is written only after threads has committed the decision, so a
// 2xx to Slack means the decision will reach the backend. The decision is
// held at a gate inside Decide: until it is released nothing of the
// answer is written (the handler's writer says so, not a timer), and when
// the answer is written the commit has happened.
func TestApproveIsAnsweredOnlyOnceRecorded(t *testing.T) {
	var gated atomic.Pointer[gatedService]
	var answered, committedFirst atomic.Bool
	h := newHarnessWith(t, harnessOptions{handler: func(next http.Handler) http.Handler {
		return answerWatch(next, func() {
			committedFirst.Store(gated.Load().committed.Load())
			answered.Store(true)
		})
	}})
	h.ingest(t, "merge.json")
	h.drain(t)
	card := h.card(t, "a-merge1", "C0APPROVALS", 1)
	gate := newGatedService(h.svc)
	gated.Store(gate)
	h.clicks.Use(gate)

	type result struct {
		status int
		body   string
		err    error
	}
	done := make(chan result, 1)
	payload := interaction(h.clickPayload("U0KEVIN", "C0APPROVALS", button(t, card, templates.ActionApprove)))
	go func() {
		status, body, _, err := h.do(signedRequest{path: "/slack/interactions", body: payload})
		done <- result{status, body, err}
	}()
	select {
	case <-gate.entered:
	case r := <-done:
		t.Fatalf("the click was answered (%d %q, %v) without recording it", r.status, r.body, r.err)
	case <-time.After(10 * time.Second):
		t.Fatal("Decide was never called")
	}
	// Decide is held: the handler is inside it, and has written nothing.
	if answered.Load() {
		t.Fatal("the click was answered before its decision was recorded")
	}
	select {
	case r := <-done:
		t.Fatalf("Slack got an answer (%d %q) while the decision was held", r.status, r.body)
	default:
	}
	if h.committed(t, "a-merge1") {
		t.Fatal("a decision is recorded before Decide ran")
	}
	close(gate.release)
	r := <-done
	if r.err != nil || r.status != http.StatusOK || r.body != "" {
		t.Fatalf("click answered %d %q %v", r.status, r.body, r.err)
	}
	if !committedFirst.Load() || !h.committed(t, "a-merge1") {
		t.Fatal("the answer was written before threads committed the decision")
	}
	h.replaced(t, "C0APPROVALS", card.TS, "Recorded: user:kevin's approval is being sent to the job backend…")
	h.drain(t)
	if n := len(h.backend.Decisions()); n != 1 {
		t.Fatalf("%d decisions reached the backend", n)
	}
}

// TestSocketModeAcksOnlyOnceRecorded: over Socket Mode too, a click is
// acked only after its decision is recorded: while Decide is held, no ack
// has reached Slack; once released, the ack arrives within 3 s and the
// decision is committed.
func TestSocketModeAcksOnlyOnceRecorded(t *testing.T) {
	h := newHarnessWith(t, harnessOptions{socket: true})
	h.ingest(t, "merge.json")
	h.drain(t)
	card := h.card(t, "a-merge1", "C0APPROVALS", 1)
	gate := newGatedService(h.svc)
	h.clicks.Use(gate)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- h.adapter.Run(ctx) }()
	defer func() {
		cancel()
		<-ran
	}()
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := h.slack.WaitSocket(wctx); err != nil {
		t.Fatal(err)
	}
	env, err := h.slack.SendInteractive(h.clickPayload("U0KEVIN", "C0APPROVALS", button(t, card, templates.ActionApprove)))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-gate.entered:
	case <-wctx.Done():
		t.Fatal("Decide was never called")
	}
	now, stop := context.WithCancel(ctx)
	stop()
	if ack, err := h.slack.WaitAck(now, env); err == nil {
		t.Fatalf("acked (%+v) while the decision was held", ack)
	}
	close(gate.release)
	ack, err := h.slack.WaitAck(wctx, env)
	if err != nil {
		t.Fatal(err)
	}
	if ack.After > 3*time.Second || !gate.committed.Load() || !h.committed(t, "a-merge1") {
		t.Fatalf("ack %+v: want it within 3 s, after the commit", ack)
	}
	h.replaced(t, "C0APPROVALS", card.TS, "Recorded: user:kevin's approval is being sent to the job backend…")
}

// TestUnrecordedApproveIsAnsweredInTime: when the decision cannot be
// recorded, the click is still answered within Slack's 3 s; the person is
// told privately that nothing was sent, the card keeps its buttons for
// them to try again, and nothing reaches the backend.
func TestUnrecordedApproveIsAnsweredInTime(t *testing.T) {
	t.Run("Decide fails", func(t *testing.T) {
		h := newHarness(t)
		h.ingest(t, "merge.json")
		h.drain(t)
		card := h.card(t, "a-merge1", "C0APPROVALS", 1)
		h.clicks.Use(h.threadsOn(t, failingTx{h.store}))
		h.click(t, "U0KEVIN", "C0APPROVALS", button(t, card, templates.ActionApprove)) // within 1 s
		h.told(t, "U0KEVIN", say.NotRecorded.Text())
		h.adapter.Close() // the answer's work has ended
		h.untouched(t, "C0APPROVALS", card.TS)
		h.drain(t)
		if n := len(h.backend.Decisions()); n != 0 || h.committed(t, "a-merge1") {
			t.Fatalf("%d decisions reached the backend", n)
		}
	})

	// A Decide that takes longer than threads.RecordBound is cut off at
	// the bound. Under testing/synctest (the adapter calls the fake in
	// process, the handler is called in process) the bound passes in
	// virtual time, and the answer's delay is measured exactly.
	t.Run("Decide outlasts RecordBound", func(t *testing.T) {
		h := newHarness(t)
		h.ingest(t, "merge.json")
		h.drain(t)
		card := h.card(t, "a-merge1", "C0APPROVALS", 1)
		payload := interaction(h.clickPayload("U0KEVIN", "C0APPROVALS", button(t, card, templates.ActionApprove)))
		snap := h.snapshot(t, "a-merge1")
		synctest.Test(t, func(t *testing.T) {
			ad := stuckAdapter(t, h, snap)
			status, body, took := serveInProcess(t, ad, payload)
			if status != http.StatusOK || body != "" {
				t.Fatalf("click answered %d %q", status, body)
			}
			if took < threads.RecordBound || took >= 3*time.Second {
				t.Fatalf("answered after %s: want the record cut off at %s, within Slack's 3 s", took, threads.RecordBound)
			}
			ad.Close() // the answer's work has ended
		})
		h.told(t, "U0KEVIN", say.NotInTime.Text())
		h.untouched(t, "C0APPROVALS", card.TS)
		h.drain(t)
		if n := len(h.backend.Decisions()); n != 0 || h.committed(t, "a-merge1") {
			t.Fatalf("%d decisions reached the backend", n)
		}
	})
}

// serveInProcess signs body as Slack would now (the bubble's now, under
// synctest) and serves it to the adapter's interactions endpoint on this
// goroutine, returning the answer and how long it took.
func serveInProcess(t *testing.T, ad *slackad.Adapter, body []byte) (int, string, time.Duration) {
	t.Helper()
	mux := http.NewServeMux()
	ad.Routes(mux)
	ts := time.Now().Unix()
	req := httptest.NewRequest(http.MethodPost, "/slack/interactions", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("X-Slack-Signature", sign(signingSecret, ts, body))
	rec := httptest.NewRecorder()
	start := time.Now()
	mux.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String(), time.Since(start)
}

// denySubmission is the deny modal's view_submission as Slack sends it,
// for the modal the bot opens on a click on deny (the action) in channel
// with the click's response_url.
func denySubmission(user, deny, channel, responseURL, reason string) []byte {
	meta, _ := json.Marshal(map[string]string{"a": deny, "c": channel, "r": responseURL})
	return interaction(map[string]any{"type": "view_submission", "user": map[string]any{"id": user},
		"view": map[string]any{"id": "V1", "type": "modal", "callback_id": "ab1-deny", "private_metadata": string(meta),
			"state": map[string]any{"values": map[string]any{"reason": map[string]any{"reason": map[string]any{
				"type": "plain_text_input", "value": reason}}}}}})
}

// errorsView reads a view_submission answer of response_action errors:
// the sentence on each block; nil when the answer is not one.
func errorsView(t *testing.T, body string) map[string]string {
	t.Helper()
	if body == "" {
		return nil
	}
	var v struct {
		Action string            `json:"response_action"`
		Errors map[string]string `json:"errors"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("submission answered %q: %v", body, err)
	}
	if v.Action != "errors" {
		t.Fatalf("submission answered %q, want response_action errors", body)
	}
	return v.Errors
}

// TestDenySubmissionThatCannotBeRecordedStaysOpen: the deny modal's
// submission is recorded before it is answered. When the denial cannot be
// recorded for a reason that may pass (the bot starting, the store down,
// Decide failing or outlasting threads.RecordBound) the answer is a
// response_action errors on the reason block, so the modal stays open
// with the sentence and the person can submit again; nothing is recorded,
// nothing reaches the backend, the card keeps its buttons and no other
// answer is sent. A refusal no retry changes (threads' own) closes the
// modal and is told privately.
func TestDenySubmissionThatCannotBeRecordedStaysOpen(t *testing.T) {
	cases := []struct {
		name  string
		store func(store.Store) store.Store
		want  string
	}{
		{name: "store down", store: func(s store.Store) store.Store { return brokenApprovals{s} }, want: say.StoreDown.Text()},
		{name: "Decide fails", store: func(s store.Store) store.Store { return failingTx{s} }, want: say.NotRecorded.Text()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			h.ingest(t, "merge.json")
			h.drain(t)
			card := h.card(t, "a-merge1", "C0APPROVALS", 1)
			deny := button(t, card, templates.ActionDeny)
			h.clicks.Use(h.threadsOn(t, c.store(h.store)))
			ru := h.slack.ResponseURLFor("C0APPROVALS", "U0KEVIN", card.TS)
			status, body := h.send(t, signedRequest{path: "/slack/interactions",
				body: denySubmission("U0KEVIN", deny, "C0APPROVALS", ru, "not before the release")})
			if errs := errorsView(t, body); status != http.StatusOK || errs["reason"] != c.want || len(errs) != 1 {
				t.Fatalf("submission answered %d %q, want the errors view %q on the reason", status, body, c.want)
			}
			h.adapter.Close() // whatever the answer set off has ended
			h.drain(t)
			if n := len(h.backend.Decisions()); n != 0 || h.committed(t, "a-merge1") {
				t.Fatalf("%d decisions reached the backend", n)
			}
			h.untouched(t, "C0APPROVALS", card.TS)
			for _, m := range h.slack.Messages() {
				if m.User == "U0KEVIN" {
					t.Fatalf("told besides the modal: %+v", m.AllText())
				}
			}
		})
	}

	t.Run("Decide outlasts RecordBound", func(t *testing.T) {
		h := newHarness(t)
		h.ingest(t, "merge.json")
		h.drain(t)
		card := h.card(t, "a-merge1", "C0APPROVALS", 1)
		body := denySubmission("U0KEVIN", button(t, card, templates.ActionDeny), "C0APPROVALS",
			h.slack.ResponseURLFor("C0APPROVALS", "U0KEVIN", card.TS), "")
		snap := h.snapshot(t, "a-merge1")
		synctest.Test(t, func(t *testing.T) {
			ad := stuckAdapter(t, h, snap)
			status, answer, took := serveInProcess(t, ad, body)
			if errs := errorsView(t, answer); status != http.StatusOK || errs["reason"] != say.NotInTime.Text() {
				t.Fatalf("submission answered %d %q, want the errors view %q", status, answer, say.NotInTime.Text())
			}
			if took < threads.RecordBound || took >= 3*time.Second {
				t.Fatalf("answered after %s: want the record cut off at %s, within Slack's 3 s", took, threads.RecordBound)
			}
			ad.Close()
		})
		h.untouched(t, "C0APPROVALS", card.TS)
		if n := len(h.slack.Messages()); n != 1 {
			t.Fatalf("%d messages, want the card alone", n)
		}
	})

	t.Run("refused by threads: the modal closes", func(t *testing.T) {
		h := newHarness(t)
		h.ingest(t, "merge.json") // started by user:ada; the tenant forbids deciding one's own job
		h.drain(t)
		card := h.card(t, "a-merge1", "C0APPROVALS", 1)
		status, body := h.send(t, signedRequest{path: "/slack/interactions", body: denySubmission("U0ADA",
			button(t, card, templates.ActionDeny), "C0APPROVALS", h.slack.ResponseURLFor("C0APPROVALS", "U0ADA", card.TS), "")})
		if status != http.StatusOK || body != "" {
			t.Fatalf("submission answered %d %q, want an empty 200: the modal closes", status, body)
		}
		h.told(t, "U0ADA", "forbids deciding your own job's calls")
		h.drain(t)
		if n := len(h.backend.Decisions()); n != 0 || h.committed(t, "a-merge1") {
			t.Fatalf("%d decisions reached the backend", n)
		}
		h.untouched(t, "C0APPROVALS", card.TS)
	})
}

// TestBackendRefusalGivesTheClickedCardItsButtonsBack: the clicked card
// lost its buttons when the approval was recorded; when the backend then
// refuses it (the person may not decide this call), the outbox's answer
// puts the card back as it stands, buttons and all, through the same
// response_url, and tells the person why.
func TestBackendRefusalGivesTheClickedCardItsButtonsBack(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	card := h.card(t, "a-merge1", "C0APPROVALS", 1)
	h.backend.SetForbidden("user:kevin")
	h.click(t, "U0KEVIN", "C0APPROVALS", button(t, card, templates.ActionApprove))
	h.replaced(t, "C0APPROVALS", card.TS, "Recorded: user:kevin's approval is being sent to the job backend…")
	h.adapter.Close() // the click's work has ended: the outbox's answer comes after it
	h.drain(t)
	h.told(t, "U0KEVIN", "The platform refused your decision")
	r := h.replacements("C0APPROVALS", card.TS)
	if len(r) != 2 || !strings.Contains(r[1].AllText(), "Waiting for a decision") {
		t.Fatalf("the clicked card was replaced %d times; last %q", len(r), r[len(r)-1].AllText())
	}
	if m := h.card(t, "a-merge1", "C0APPROVALS", 1); !strings.Contains(m.AllText(), "Waiting for a decision") ||
		len(decisionButtons(m)) != 2 {
		t.Fatalf("the channel shows the card as %q with %v", m.AllText(), decisionButtons(m))
	}
	if h.committed(t, "a-merge1") {
		t.Fatal("the refused decision is still in flight")
	}
}

// TestExpiredResponseURLLeavesTheClickedCardToChatUpdate: a backend that
// answers after the click's response_url has expired (Slack's 30
// minutes) cannot show the outcome through it; the card still shows it,
// edited with chat.update, and the person is told with
// chat.postEphemeral.
func TestExpiredResponseURLLeavesTheClickedCardToChatUpdate(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	card := h.card(t, "a-merge1", "C0APPROVALS", 1)
	h.click(t, "U0KEVIN", "C0APPROVALS", button(t, card, templates.ActionApprove))
	h.replaced(t, "C0APPROVALS", card.TS, "Recorded: user:kevin's approval is being sent to the job backend…")
	h.adapter.Close()
	h.slack.ExpireResponseURLs()
	h.drain(t)
	if m := h.told(t, "U0KEVIN", "Recorded: your approval reached the job backend."); m.Method != "chat.postEphemeral" {
		t.Fatalf("told through %s, want chat.postEphemeral", m.Method)
	}
	if n := len(h.replacements("C0APPROVALS", card.TS)); n != 1 {
		t.Fatalf("%d replacements through an expired response_url", n)
	}
	m := h.card(t, "a-merge1", "C0APPROVALS", 1)
	if !strings.Contains(m.AllText(), "Approved by user:kevin") || len(m.Buttons()) != 0 {
		t.Fatalf("card %q %+v, want it approved by chat.update", m.AllText(), m.Buttons())
	}
}
