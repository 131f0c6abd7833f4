package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"approvalsbot/adapters/backend"
	"approvalsbot/adapters/backend/backendtest"
	"approvalsbot/adapters/slack/slacktest"
	"approvalsbot/templates"
)

// Several replicas of the built binary on one PostgreSQL database, behind
// the same fakes, as DESIGN.md's "Scale" runs them: any replica takes any
// event and any click, claims (outbox rows, due approvals) are leased with
// FOR UPDATE SKIP LOCKED, and a replica that dies leaves its claims to the
// others once their lease lapses.
//
// Cards, edits, thread replies and escalation mentions go to each
// replica's log surface (the tenant posts to a Discord channel and no
// discord section is configured), so a thousand cards are not held to
// Slack's real pace of one message a second per channel; they are counted
// across the replicas' stdout. Clicks come in through the Slack
// interactions endpoint, signed, at whichever replica the test picks (the
// adapter finds the approval's tenant in the shared store, so a click needs
// no card on Slack); the deny dialog opens at the fake Slack and its
// submission goes to another replica. Decisions, the people's and the
// deadline's, are counted at one fake job backend.

const (
	// replicaTarget is where every card goes: a Discord channel in a bot
	// without a discord section, so the log surface prints it.
	replicaTarget   = "discord:channel:112233445566778899"
	replicaLease    = 5 * time.Second
	replicaStep1    = 1 * time.Second // mentions @kevin
	replicaStep2    = 3 * time.Second // mentions @ada
	replicaDeadline = 12 * time.Second
	// replicaSenders bounds the events in flight at once, over all
	// replicas; replicaClickers the clicks being made (a click waits for
	// its answer at the fake Slack).
	replicaSenders  = 12
	replicaClickers = 48
	// replicaTakeover bounds how long after a dead replica's lease lapses
	// another replica takes its claim: the outbox's poll (1 s) or the next
	// tick (1 s), under the load of the run.
	replicaTakeover = 4 * time.Second
	// replicaDenyReason is what the people who deny type in the dialog.
	replicaDenyReason = "not during the freeze"
	// replicaCountEnv overrides how many approvals the test sends.
	replicaCountEnv = "BOT_TEST_REPLICAS_N"
)

// replicaCount is how many approvals to send: 1,000 unless
// BOT_TEST_REPLICAS_N says otherwise, and 300 under the race detector,
// which slows each of the three replicas several times over: on two cores
// a thousand would no longer fit the second-scale ladder and deadline the
// test times everything against.
func replicaCount(t *testing.T) int {
	t.Helper()
	s := os.Getenv(replicaCountEnv)
	if s == "" {
		if raceEnabled {
			return 300
		}
		return 1000
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 30 {
		t.Fatalf("%s=%q: want a whole number of at least 30", replicaCountEnv, s)
	}
	return n
}

func replicaApprovalID(i int) string { return fmt.Sprintf("a-rep%04d", i) }

// The test's plan for approval i: half are clicked (a quarter approved by
// kevin, a quarter denied by ada through the dialog), half expire.
func replicaClicked(i int) bool  { return i%2 == 0 }
func replicaApproved(i int) bool { return i%4 == 0 }

// replicaClickDelay is how long after its event is accepted approval i is
// clicked: spread over 0.2–4 s, so clicks land before, between and after
// the ladder's steps (1 s, 3 s) and always well before the deadline.
func replicaClickDelay(i int) time.Duration {
	return 200*time.Millisecond + time.Duration(i*7919%3800)*time.Millisecond
}

// replicaConfig writes the configuration every replica runs: one
// PostgreSQL database, a 1 s tick, a 5 s lease, the fake backend and the
// fake Slack (for clicks), and acme's cards on the log surface with a
// second-scale ladder and deadline.
func replicaConfig(t *testing.T, dir, dsn, backendURL, slackAPI string) string {
	t.Helper()
	cfg := fmt.Sprintf(`listen: "127.0.0.1:0"
store:
  driver: postgres
  dsn: %q
tick: 1s
lease: %s
backend:
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
    post: [%s]
    ladders:
      default:
        - after: %s
          mention: [slack:U0KEVIN]
        - after: %s
          mention: [slack:U0ADA]
    members:
      - {user: "user:kevin", role: operator, content: true, slack: U0KEVIN}
      - {user: "user:ada", role: owner, content: true, slack: U0ADA}
`, dsn, replicaLease, backendURL, slackAPI, replicaDeadline, replicaTarget, replicaStep1, replicaStep2)
	path := filepath.Join(dir, "bot.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// replicaEvent is merge.json as the backend would send approval i, its
// request made at now: its own event and approval ids, no deadline of its
// own.
func replicaEvent(ev *fixtureEvents, i int, now time.Time) ([]byte, error) {
	return ev.requestedAt(now, "merge.json", func(e map[string]any) {
		data := e["data"].(map[string]any)
		e["id"] = fmt.Sprintf("evt-rep%04d", i)
		data["id"] = replicaApprovalID(i)
		data["console_url"] = "https://console.example/approvals/" + replicaApprovalID(i)
		delete(data, "deadline")
	})
}

// problems collects what goroutines found wrong; the test reports them.
type problems struct {
	mu   sync.Mutex
	list []string
}

func (p *problems) add(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.list = append(p.list, fmt.Sprintf(format, args...))
}

func (p *problems) all() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.list)
}

// replicaFleet is the replicas as the backend and Slack reach them: any
// live one takes a request; a dead one is out of the rotation.
type replicaFleet struct {
	bots   []*botProc
	dead   []atomic.Bool
	client *http.Client
	sl     *slacktest.Server
}

// live is the first live replica from index from on, round the fleet.
func (f *replicaFleet) live(from int) (int, bool) {
	for k := range len(f.bots) {
		r := (from + k) % len(f.bots)
		if !f.dead[r].Load() {
			return r, true
		}
	}
	return 0, false
}

// postEvent sends a signed event as the backend does: to replica first,
// and after a network error or 503 again (same id, same body) to the next
// live replica. It returns the answer's status, the replica that gave it
// and how many sends it took.
func (f *replicaFleet) postEvent(body []byte, first int) (int, int, int, error) {
	deadline := time.Now().Add(30 * time.Second)
	var last error
	for try := 0; time.Now().Before(deadline); try++ {
		r, ok := f.live(first + try)
		if !ok {
			return 0, 0, try, errors.New("no replica is alive")
		}
		req, _ := http.NewRequest(http.MethodPost, f.bots[r].base+"/v1/events", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(backend.SignatureHeader, backend.Sign([]byte(e2eEventsSecret), time.Now(), body))
		resp, err := f.client.Do(req)
		if err != nil {
			last = err
			continue // the backend retries elsewhere
		}
		var a answer
		derr := json.NewDecoder(resp.Body).Decode(&a)
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusOK:
			return resp.StatusCode, r, try + 1, nil
		case resp.StatusCode == http.StatusServiceUnavailable:
			last = fmt.Errorf("replica %d: 503 %s", r, a.Code)
			time.Sleep(100 * time.Millisecond)
			continue
		default:
			return resp.StatusCode, r, try + 1, fmt.Errorf("replica %d answered %d %s %q (%v)", r, resp.StatusCode, a.Code, a.Message, derr)
		}
	}
	return 0, 0, 0, fmt.Errorf("not accepted within 30s: %v", last)
}

// postSlack posts an interaction payload to replica r, signed as Slack
// signs, and returns the HTTP status.
func (f *replicaFleet) postSlack(r int, payload map[string]any) (int, error) {
	return postSlackInteraction(f.client, f.bots[r].base, payload)
}

// slackWatch follows what the fake Slack received that clickers wait
// for: the answers posted to each response_url and the dialogs opened,
// by trigger id.
type slackWatch struct {
	mu      sync.Mutex
	answers map[string][]string
	views   map[string]string
}

func watchSlack(ctx context.Context, sl *slacktest.Server) *slackWatch {
	w := &slackWatch{answers: map[string][]string{}, views: map[string]string{}}
	go func() {
		for ctx.Err() == nil {
			answers := map[string][]string{}
			for _, m := range sl.MessagesBy("response_url") {
				answers[m.ResponseURL] = append(answers[m.ResponseURL], m.Text)
			}
			views := map[string]string{}
			for _, v := range sl.Views() {
				views[v.TriggerID] = v.PrivateMetadata
			}
			w.mu.Lock()
			w.answers, w.views = answers, views
			w.mu.Unlock()
			time.Sleep(25 * time.Millisecond)
		}
	}()
	return w
}

// wait polls get until it finds something, or until within has passed,
// or until dead is set (and half a second more has passed: what the dead
// replica said before it died still arrives).
func (w *slackWatch) wait(get func() (string, bool), dead *atomic.Bool, within time.Duration) (string, bool) {
	deadline := time.Now().Add(within)
	var diedAt time.Time
	for time.Now().Before(deadline) {
		w.mu.Lock()
		v, ok := get()
		w.mu.Unlock()
		if ok {
			return v, true
		}
		if dead.Load() {
			if diedAt.IsZero() {
				diedAt = time.Now()
			} else if time.Since(diedAt) > 500*time.Millisecond {
				return "", false
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	return "", false
}

// clickOutcome is how one person's decision went, as they saw it.
type clickOutcome struct {
	tries  int    // clicks made (more than one when a replica died with one)
	answer string // the bot's first answer to the click that counted
	at     time.Time
	// missed says what became of a Deny click whose dialog did not open
	// within 20s at a live replica: the person clicked again, once.
	missed string
}

// decide is one person deciding approval id from its card: kevin clicks
// Approve; ada clicks Deny, and submits the dialog with a reason. A click
// that reaches no live replica, or whose replica dies before it answers,
// is made again at another, as a person does when the bot does not say
// it is sending their decision; so is a Deny whose dialog did not open,
// once (the test logs it).
func (f *replicaFleet) decide(w *slackWatch, id string, approve bool, first int) (clickOutcome, error) {
	user, kind := "U0ADA", templates.ActionDeny
	if approve {
		user, kind = "U0KEVIN", templates.ActionApprove
	}
	action := templates.EncodeAction(templates.Action{Kind: kind, ApprovalID: id, Revision: 1})
	var out clickOutcome
	deadline := time.Now().Add(40 * time.Second)
	for try := 0; time.Now().Before(deadline); try++ {
		r, ok := f.live(first + try)
		if !ok {
			return out, errors.New("no replica is alive")
		}
		out.tries++
		respURL := f.sl.ResponseURL("C0APPROVALS", user)
		trigger := fmt.Sprintf("trig-%s-%d", id, try)
		status, err := f.postSlack(r, map[string]any{
			"type": "block_actions", "trigger_id": trigger, "api_app_id": "A0APP",
			"user":         map[string]any{"id": user},
			"channel":      map[string]any{"id": "C0APPROVALS"},
			"container":    map[string]any{"type": "message", "channel_id": "C0APPROVALS", "message_ts": "1700000000.000001"},
			"response_url": respURL,
			"actions":      []any{map[string]any{"type": "button", "block_id": "b1", "action_id": action, "value": action}},
		})
		if err != nil || status != http.StatusOK {
			if err != nil || f.dead[r].Load() {
				continue // the click did not reach a live bot
			}
			return out, fmt.Errorf("click on replica %d answered %d", r, status)
		}
		answeredBy := r
		if !approve {
			var refused string
			meta, ok := w.wait(func() (string, bool) {
				if as := w.answers[respURL]; len(as) > 0 {
					refused = as[0] // told why not, instead of asked a reason
					return "", true
				}
				v, ok := w.views[trigger]
				return v, ok
			}, &f.dead[r], 20*time.Second)
			if ok && refused != "" {
				return out, fmt.Errorf("replica %d refused the Deny click instead of asking a reason: %q; its log of the click:\n%s",
					r, refused, linesWith(f.bots[r].stderr.String(), id))
			}
			if !ok {
				if f.dead[r].Load() {
					continue
				}
				miss := fmt.Sprintf("replica %d opened no deny dialog within 20s; its log of the click:\n%s", r,
					linesWith(f.bots[r].stderr.String(), id))
				if out.missed == "" {
					// A person whose dialog never opened clicks Deny again,
					// at whichever replica the load balancer picks; a
					// second miss fails the test.
					out.missed = miss
					continue
				}
				return out, fmt.Errorf("%s\n(and before it: %s)", miss, out.missed)
			}
			// Slack posts the submission to the request URL: any replica.
			r2, ok := f.live(r + 1)
			if !ok {
				return out, errors.New("no replica is alive")
			}
			status, answer, err := postSlackInteractionAnswer(f.client, f.bots[r2].base, map[string]any{
				"type": "view_submission", "api_app_id": "A0APP",
				"user": map[string]any{"id": user},
				"view": map[string]any{"id": "V1", "type": "modal", "callback_id": "ab1-deny", "private_metadata": meta,
					"state": map[string]any{"values": map[string]any{"reason": map[string]any{"reason": map[string]any{
						"type": "plain_text_input", "value": replicaDenyReason}}}}},
			})
			if err != nil || status != http.StatusOK {
				if err != nil || f.dead[r2].Load() {
					continue
				}
				return out, fmt.Errorf("dialog submission on replica %d answered %d", r2, status)
			}
			if bytes.Contains(answer, []byte(`"response_action":"errors"`)) {
				// Not recorded (a replica stopped while it held the
				// approval, say): the dialog stays open and says why,
				// and the person tries again.
				continue
			}
			answeredBy = r2
		}
		text, ok := w.wait(func() (string, bool) {
			if as := w.answers[respURL]; len(as) > 0 {
				return as[0], true
			}
			return "", false
		}, &f.dead[answeredBy], 20*time.Second)
		if !ok {
			if f.dead[answeredBy].Load() {
				continue
			}
			return out, fmt.Errorf("replica %d never answered the click within 20s", answeredBy)
		}
		out.answer, out.at = text, time.Now()
		switch {
		// The clicked card, replaced through the click's response_url:
		// the decision recorded and on its way…
		case strings.HasSuffix(text, ": a decision is being sent"),
			// …or already decided: the backend answered before the
			// click's own answer was posted (another replica's worker
			// took the decision row at once).
			strings.HasSuffix(text, " was approved"), strings.HasSuffix(text, " was denied"),
			// Without the card (the response_url refused it), in words.
			strings.HasPrefix(text, "Sending your "), strings.HasPrefix(text, "Recorded: your "),
			// An earlier click was recorded, though its answer was lost
			// with its replica: this one is refused, nothing is sent.
			strings.Contains(text, " is deciding this call already"),
			strings.Contains(text, "This call was already approved by user:kevin"),
			strings.Contains(text, "This call was already denied by user:ada"):
			return out, nil
		}
		if strings.Contains(text, "try again in a moment") && strings.HasSuffix(text, "Nothing was sent.") {
			// Not recorded (a replica stopped while it held the
			// approval, say), and the person is told so: they try again.
			continue
		}
		return out, fmt.Errorf("the click was answered %q", text)
	}
	return out, errors.New("not decided within 40s")
}

// heldClaim is one claim a replica held: an outbox row or a due approval.
type heldClaim struct {
	table      string // outbox or approvals
	id         string
	kind       string // the outbox row's kind
	approvalID string
	mentions   []string // a reply row's people
	until      time.Time
}

// claimsOf lists the pending claims held by worker (its outbox rows) and
// worker+"-ladder" (its due approvals); with live set, only those whose
// lease has not lapsed at now.
func claimsOf(ctx context.Context, pool *pgxpool.Pool, worker string, now time.Time, live bool) ([]heldClaim, error) {
	minUntil := int64(0)
	if live {
		minUntil = now.UnixMilli()
	}
	var out []heldClaim
	rows, err := pool.Query(ctx, `SELECT id, kind, approval_id, payload, claimed_until FROM outbox
WHERE state = 'pending' AND claimed_by = $1 AND claimed_until > $2`, worker, minUntil)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var c heldClaim
		var payload string
		var until int64
		if err := rows.Scan(&c.id, &c.kind, &c.approvalID, &payload, &until); err != nil {
			rows.Close()
			return nil, err
		}
		var p struct{ Mentions []string }
		_ = json.Unmarshal([]byte(payload), &p)
		c.table, c.mentions, c.until = "outbox", p.Mentions, time.UnixMilli(until)
		out = append(out, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = pool.Query(ctx, `SELECT id, claimed_until FROM approvals
WHERE state = 'pending' AND claimed_by = $1 AND claimed_until > $2`, worker+"-ladder", minUntil)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var c heldClaim
		var until int64
		if err := rows.Scan(&c.id, &until); err != nil {
			rows.Close()
			return nil, err
		}
		c.table, c.approvalID, c.until = "approvals", c.id, time.UnixMilli(until)
		out = append(out, c)
	}
	rows.Close()
	return out, rows.Err()
}

// replicaWorker finds the worker id a replica claims under (random per
// process): the one that completed the post_card rows of the cards its
// stdout shows.
func replicaWorker(ctx context.Context, pool *pgxpool.Pool, p *botProc) (string, error) {
	printed := map[string]bool{}
	for _, c := range replicaCards(p.stdout.String()) {
		printed[c.approval] = true
	}
	rows, err := pool.Query(ctx, `SELECT approval_id, claimed_by FROM outbox WHERE kind = 'post_card' AND state = 'done'`)
	if err != nil {
		return "", err
	}
	count := map[string]int{}
	for rows.Next() {
		var id, by string
		if err := rows.Scan(&id, &by); err != nil {
			rows.Close()
			return "", err
		}
		if printed[id] {
			count[by]++
		}
	}
	rows.Close()
	if len(count) != 1 {
		return "", fmt.Errorf("the cards this replica printed were completed by %v, want one worker", count)
	}
	for w := range count {
		return w, nil
	}
	return "", nil
}

// killHolding SIGKILLs p at a moment it holds claims: it stops the
// process (SIGSTOP), looks in the database for claims of its worker whose
// lease has not lapsed, and kills it there, or lets it go on (SIGCONT) and
// looks again a moment later. For the first preferFor it waits for a
// moment when the claims include both outbox rows and due approvals (a
// tick in progress); after that any claim will do. Stopping first changes
// nothing the process did; it only lets the test pick a moment when the
// kill leaves work behind. It returns the claims seen while the process
// was stopped, when it died, and how many looks it took.
func killHolding(t *testing.T, pool *pgxpool.Pool, p *botProc, worker string, preferFor time.Duration) ([]heldClaim, time.Time, int) {
	t.Helper()
	began := time.Now()
	for probe := 1; ; probe++ {
		if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatalf("SIGSTOP: %v", err)
		}
		held, err := claimsOf(t.Context(), pool, worker, time.Now(), true)
		if err != nil {
			t.Fatalf("read claims: %v", err)
		}
		tables := map[string]bool{}
		for _, c := range held {
			tables[c.table] = true
		}
		giveUp := time.Since(began) > preferFor+10*time.Second
		if len(tables) == 2 || (len(held) > 0 && time.Since(began) > preferFor) || giveUp {
			if err := p.cmd.Process.Kill(); err != nil { // SIGKILL: no shutdown at all
				t.Fatal(err)
			}
			<-p.done
			return held, time.Now(), probe
		}
		if err := p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
			t.Fatalf("SIGCONT: %v", err)
		}
		time.Sleep(15 * time.Millisecond)
	}
}

// takeover is what became of one claim the dead replica held.
type takeover struct {
	claim    heldClaim
	seenAt   time.Time // first seen out of the dead worker's hands
	by       string    // the outbox row's worker when seen done
	doneAt   time.Time // the outbox row's done_at
	byVictim bool      // the dead replica finished it itself (its commit landed)
	decided  bool      // the approval was decided while the claim still stood
}

// watchTakeovers polls the claims the dead worker still held after its
// death until each has left its hands, and says when and to whom.
func watchTakeovers(ctx context.Context, pool *pgxpool.Pool, worker string, held []heldClaim) <-chan []takeover {
	done := make(chan []takeover, 1)
	go func() {
		res := make([]takeover, len(held))
		open := len(held)
		for i, c := range held {
			res[i].claim = c
		}
		for open > 0 && ctx.Err() == nil {
			now := time.Now()
			for i := range res {
				tk := &res[i]
				if !tk.seenAt.IsZero() || tk.decided {
					continue
				}
				var by, state string
				var doneAt *int64
				var deciding *string
				var err error
				if tk.claim.table == "outbox" {
					err = pool.QueryRow(ctx, `SELECT claimed_by, state, done_at FROM outbox WHERE id = $1`, tk.claim.id).Scan(&by, &state, &doneAt)
				} else {
					err = pool.QueryRow(ctx, `SELECT claimed_by, state, deciding FROM approvals WHERE id = $1`, tk.claim.id).Scan(&by, &state, &deciding)
				}
				if err != nil {
					continue
				}
				switch {
				case tk.claim.table == "outbox" && state != "pending" && by == worker:
					tk.seenAt, tk.byVictim = now, true
				case tk.claim.table == "outbox" && (by != worker || state != "pending"):
					tk.seenAt, tk.by = now, by
					if doneAt != nil {
						tk.doneAt = time.UnixMilli(*doneAt)
					}
				case tk.claim.table == "approvals" && by != worker+"-ladder":
					tk.seenAt, tk.by = now, by
				case tk.claim.table == "approvals" && state != "pending":
					tk.decided = true // a click's decision closed it; nothing was due any more
				default:
					continue
				}
				open--
			}
			time.Sleep(100 * time.Millisecond)
		}
		// Outbox rows seen claimed by another worker: read when it finished.
		for i := range res {
			tk := &res[i]
			if tk.claim.table == "outbox" && !tk.byVictim && tk.doneAt.IsZero() {
				var by string
				var doneAt *int64
				if pool.QueryRow(context.Background(), `SELECT claimed_by, done_at FROM outbox WHERE id = $1`, tk.claim.id).Scan(&by, &doneAt) == nil && doneAt != nil {
					tk.by, tk.doneAt = by, time.UnixMilli(*doneAt)
				}
			}
		}
		done <- res
	}()
	return done
}

// replicaCard is one card the log surface printed.
type replicaCard struct{ approval, target, revision string }

var (
	replicaCardHeader  = regexp.MustCompile(`^card log-\d+ for (\S+) \(approval ([A-Za-z0-9._:-]+), revision (\d+)\)`)
	replicaReplyHeader = regexp.MustCompile(`^reply in the thread of log-\d+ for (\S+) \(approval ([A-Za-z0-9._:-]+)\)$`)
	replicaEscalation  = regexp.MustCompile(`^((?:@\S+ )*@\S+): waiting \S+$`)
)

// replicaCards lists the new cards (not edits) in a replica's stdout.
func replicaCards(out string) []replicaCard {
	var cs []replicaCard
	for _, e := range logEntries(out) {
		if m := replicaCardHeader.FindStringSubmatch(e.header); m != nil && !strings.Contains(e.header, " edited ") {
			cs = append(cs, replicaCard{target: m[1], approval: m[2], revision: m[3]})
		}
	}
	return cs
}

// replicaMentions lists, per approval, each escalation reply's people
// (one entry per reply printed).
func replicaMentions(out string) map[string][][]string {
	got := map[string][][]string{}
	for _, e := range logEntries(out) {
		m := replicaReplyHeader.FindStringSubmatch(e.header)
		if m == nil {
			continue
		}
		first, _, _ := strings.Cut(e.body, "\n")
		if em := replicaEscalation.FindStringSubmatch(first); em != nil {
			got[m[2]] = append(got[m[2]], strings.Fields(em[1]))
		}
	}
	return got
}

// TestReplicasShareOneDatabase: three replicas on one database take 1,000
// approvals spread over them; every card is printed once, every ladder
// step fires once, every deadline denies once, every click decides once.
// Mid-run one replica is SIGKILLed while it holds claims; the others take
// them over once the lease lapses and finish its work.
func TestReplicasShareOneDatabase(t *testing.T) {
	db := newPGDatabase(t)
	n := replicaCount(t)
	start := time.Now()
	dir := t.TempDir()

	sl := slacktest.New(t, slacktest.Options{Token: "xoxb-e2e"})
	sl.AddChannel("C0APPROVALS", "approvals", true)
	sl.AddUser("U0KEVIN")
	sl.AddUser("U0ADA")
	fake := backendtest.New(t, backendtest.Options{Secrets: [][]byte{[]byte(e2eCallsSecret)}})
	args := readArguments(t, "a-merge1.json")
	events := eventsNow(t)
	digest := eventDigest(t, events.event(t, "merge.json"))
	for i := range n {
		fake.AddApproval(replicaApprovalID(i), 1, args, false)
		fake.SetFunction(replicaApprovalID(i), "acme_github.merge")
	}
	if got := fake.Digest(replicaApprovalID(0)); got != digest {
		t.Fatalf("the fake backend's digest %s differs from the event's %s", got, digest)
	}

	t.Setenv("SLACK_BOT_TOKEN", "xoxb-e2e")
	t.Setenv("SLACK_SIGNING_SECRET", e2eSigningSecret)
	cfg := replicaConfig(t, dir, db.dsn, fake.URL(), sl.APIURL())
	f := &replicaFleet{sl: sl, dead: make([]atomic.Bool, 3),
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	for range 3 {
		f.bots = append(f.bots, startBot(t, cfg)) // they migrate once, under the advisory lock
	}
	t.Logf("%d replicas serving %v after the start", len(f.bots), time.Since(start).Round(time.Millisecond))
	pool := pgPool(t, db.dsn)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watch := watchSlack(ctx, sl)

	// Send the events over the three replicas, replicaSenders at once;
	// each accepted approval to be clicked is clicked after its delay, at
	// another replica than the one that took its event.
	var bad problems
	type sentEvent struct {
		requested time.Time
		status    int
		replica   int
		tries     int
	}
	sent := make([]sentEvent, n)
	clicks := make([]clickOutcome, n)
	var accepted atomic.Int64
	var sendWG, clickWG sync.WaitGroup
	clickSem := make(chan struct{}, replicaClickers)
	next := make(chan int)
	go func() {
		for i := range n {
			next <- i
		}
		close(next)
	}()
	for range replicaSenders {
		sendWG.Go(func() {
			for i := range next {
				now := time.Now().UTC().Truncate(time.Millisecond) // the store keeps milliseconds
				body, err := replicaEvent(events, i, now)
				if err != nil {
					bad.add("event %d: %v", i, err)
					continue
				}
				status, r, tries, err := f.postEvent(body, i%3)
				if err != nil {
					bad.add("event %d: %v", i, err)
					continue
				}
				sent[i] = sentEvent{requested: now, status: status, replica: r, tries: tries}
				accepted.Add(1)
				if !replicaClicked(i) {
					continue
				}
				clickWG.Go(func() {
					time.Sleep(replicaClickDelay(i))
					clickSem <- struct{}{}
					defer func() { <-clickSem }()
					out, err := f.decide(watch, replicaApprovalID(i), replicaApproved(i), r+1)
					clicks[i] = out
					if err != nil {
						bad.add("click on %s: %v", replicaApprovalID(i), err)
					}
				})
			}
		})
	}

	// Mid-run, half the events in: kill replica 1 while it holds claims.
	const victim = 1
	pollUntil(t, 60*time.Second, "half the events accepted", func() bool { return accepted.Load() >= int64(n/2) },
		func() string { return strings.Join(bad.all(), "\n") })
	worker, err := replicaWorker(t.Context(), pool, f.bots[victim])
	if err != nil {
		t.Fatalf("replica %d's worker: %v", victim, err)
	}
	stoppedHeld, killedAt, probes := killHolding(t, pool, f.bots[victim], worker, 3*time.Second)
	f.dead[victim].Store(true) // out of the rotation, as a health check takes it out
	acceptedAtKill := accepted.Load()
	// What the dead replica still held once the server has seen its
	// connections go: those claims return only when their lease lapses.
	time.Sleep(200 * time.Millisecond)
	afterHeld, err := claimsOf(t.Context(), pool, worker, time.Now(), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(afterHeld) == 0 {
		t.Fatalf("replica %d held no claim after its SIGKILL (%d seen while it was stopped): nothing shows the lease", victim, len(stoppedHeld))
	}
	takeovers := watchTakeovers(ctx, pool, worker, afterHeld)
	t.Logf("SIGKILL of replica %d (worker %s) %v after the start, %d events accepted, after %d probe(s); it held %d claim(s) while stopped, %d after its death",
		victim, worker, killedAt.Sub(start).Round(time.Millisecond), acceptedAtKill, probes, len(stoppedHeld), len(afterHeld))

	sendWG.Wait()
	sentAll := time.Now()
	clickWG.Wait()
	clickedAll := time.Now()
	for _, p := range bad.all() {
		t.Error(p)
	}
	if t.Failed() {
		t.FailNow()
	}
	var lastRequested time.Time
	for _, s := range sent {
		if s.requested.After(lastRequested) {
			lastRequested = s.requested
		}
	}

	// Everything finishes: every approval decided, nothing in flight,
	// nothing left in the outbox, every card posted.
	bound := time.Until(lastRequested.Add(replicaDeadline + replicaLease + 20*time.Second))
	var state struct{ open, total, pending, dead, posted int }
	readState := func() error {
		return pool.QueryRow(t.Context(), `SELECT
    (SELECT COUNT(*) FROM approvals WHERE state = 'pending' OR deciding IS NOT NULL),
    (SELECT COUNT(*) FROM approvals),
    (SELECT COUNT(*) FROM outbox WHERE state = 'pending'),
    (SELECT COUNT(*) FROM outbox WHERE state = 'dead'),
    (SELECT COUNT(DISTINCT approval_id) FROM posts WHERE revision = 1)`).Scan(
			&state.open, &state.total, &state.pending, &state.dead, &state.posted)
	}
	finished := pollUntil(t, bound, "every approval decided and the outbox drained", func() bool {
		if err := readState(); err != nil {
			return false
		}
		return state.open == 0 && state.total == n && state.pending == 0 && state.posted == n
	}, func() string {
		return fmt.Sprintf("%+v (want %d approvals, none open, none pending, %d posted)", state, n, n)
	})
	if state.dead != 0 {
		t.Errorf("%d outbox rows are dead", state.dead)
	}
	var tks []takeover
	select {
	case tks = <-takeovers:
	case <-time.After(10 * time.Second):
		t.Fatal("the dead replica's claims are still not taken over")
	}

	// The claims the dead replica held return after the lease, not before
	// (FOR UPDATE SKIP LOCKED passes over unexpired claims), and promptly
	// after it (the worker's poll, the next tick), not never.
	allowed := map[string]bool{} // effects in flight at the kill: "kind/approval" may repeat once
	for _, c := range append(slices.Clone(stoppedHeld), afterHeld...) {
		if c.table != "outbox" {
			continue
		}
		allowed[c.kind+"/"+c.approvalID] = true
		allowed["id/"+c.id] = true
		for _, m := range c.mentions {
			allowed["mention/"+c.approvalID+"/"+m] = true
		}
	}
	var lastTaken time.Time
	var minLag, maxLag time.Duration
	kinds := map[string]int{}
	finishedByVictim, decidedWhileHeld := 0, 0
	for _, tk := range tks {
		c := tk.claim
		kinds[c.table+":"+c.kind]++
		switch {
		case tk.byVictim:
			finishedByVictim++
			continue
		case tk.decided:
			decidedWhileHeld++
			continue
		case tk.seenAt.IsZero():
			t.Errorf("claim %s %s %s of the dead replica was never taken over", c.table, c.kind, c.id)
			continue
		}
		at := tk.seenAt
		if !tk.doneAt.IsZero() {
			at = tk.doneAt
			if tk.by == worker {
				t.Errorf("outbox row %s was completed by the dead worker after its death", c.id)
			}
		}
		if at.Before(c.until) {
			t.Errorf("claim %s %s %s (lease until %s) was taken over at %s, before the lease lapsed",
				c.table, c.kind, c.id, c.until.Format("15:04:05.000"), at.Format("15:04:05.000"))
		}
		lag := at.Sub(c.until)
		if lag > replicaTakeover {
			t.Errorf("claim %s %s %s was taken over %v after its lease lapsed, want within %v", c.table, c.kind, c.id, lag, replicaTakeover)
		}
		if minLag == 0 || lag < minLag {
			minLag = lag
		}
		maxLag = max(maxLag, lag)
		if at.After(lastTaken) {
			lastTaken = at
		}
	}

	// At the fakes: count the cards and the escalations across the
	// replicas' stdout, and the decisions at the backend.
	cards := map[string][]int{}               // approval → replicas that printed its revision-1 card
	mentions := map[string]map[string][]int{} // approval → @name → replicas that printed a reply naming them
	printedBy := make([]int, len(f.bots))
	for r, b := range f.bots {
		out := b.stdout.String()
		for _, c := range replicaCards(out) {
			if c.revision != "1" || c.target != replicaTarget {
				t.Errorf("replica %d printed a card %+v, want only revision 1 at %s", r, c, replicaTarget)
				continue
			}
			cards[c.approval] = append(cards[c.approval], r)
			printedBy[r]++
		}
		for id, replies := range replicaMentions(out) {
			if mentions[id] == nil {
				mentions[id] = map[string][]int{}
			}
			for _, names := range replies {
				for _, name := range names {
					mentions[id][name] = append(mentions[id][name], r)
				}
			}
		}
	}
	step := map[string]string{"@kevin": "slack:U0KEVIN", "@ada": "slack:U0ADA"}
	// once checks that an effect shows once, or twice when the second is
	// the repeat a crash allows: the dead replica held its row at the
	// kill and printed it before dying.
	repeats := 0
	once := func(what string, by []int, allowKey string, want int) {
		t.Helper()
		switch {
		case len(by) == want:
		case len(by) == want+1 && want == 1 && allowed[allowKey] && slices.Contains(by, victim):
			repeats++
		default:
			t.Errorf("%s: shown %d times (by replicas %v), want %d", what, len(by), by, want)
		}
	}
	escalations := 0
	for i := range n {
		id := replicaApprovalID(i)
		once("the card of "+id, cards[id], "post_card/"+id, 1)
		for name, target := range step {
			by := mentions[id][name]
			escalations += len(by)
			want := 1
			if replicaClicked(i) && len(by) <= 1 {
				want = len(by) // a click may come before the step: then it never fires
			}
			once(fmt.Sprintf("the step mentioning %s of %s", name, id), by, "mention/"+id+"/"+target, want)
		}
	}
	for id := range cards {
		if k, err := strconv.Atoi(strings.TrimPrefix(id, "a-rep")); err != nil || replicaApprovalID(k) != id || k >= n {
			t.Errorf("a card for an approval nobody sent: %s", id)
		}
	}

	decisions := map[string][]backendtest.ReceivedDecision{}
	keys := map[string]string{}
	replays := 0
	for _, d := range fake.Decisions() {
		decisions[d.ApprovalID] = append(decisions[d.ApprovalID], d)
		if !d.SignatureOK || d.Status != http.StatusOK {
			t.Errorf("decision on %s: signature ok %v, answered %d %s", d.ApprovalID, d.SignatureOK, d.Status, d.Code)
		}
		if d.Request.Decision == backend.Approve && (d.Request.Actor == "system:deadline" || d.Request.Via.Surface == "deadline") {
			t.Errorf("the deadline sent approve on %s: nothing automatic may approve", d.ApprovalID)
		}
		if other, ok := keys[d.IdempotencyKey]; ok && other != d.ApprovalID {
			t.Errorf("idempotency key %s used for %s and %s", d.IdempotencyKey, other, d.ApprovalID)
		}
		keys[d.IdempotencyKey] = d.ApprovalID
		if d.Replay {
			replays++
			if !allowed["id/"+d.IdempotencyKey] {
				t.Errorf("decision on %s sent again (key %s) though no replica died holding it", d.ApprovalID, d.IdempotencyKey)
			}
		}
	}
	if len(decisions) != n {
		t.Errorf("the backend got decisions on %d approvals, want %d", len(decisions), n)
	}
	var decisionRows []struct {
		id, state string
		decision  []byte
	}
	rows, err := pool.Query(t.Context(), `SELECT id, state, decision FROM approvals`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var r struct {
			id, state string
			decision  []byte
		}
		var dec *string
		if err := rows.Scan(&r.id, &r.state, &dec); err != nil {
			t.Fatal(err)
		}
		if dec != nil {
			r.decision = []byte(*dec)
		}
		decisionRows = append(decisionRows, r)
	}
	rows.Close()
	stored := map[string]int{}
	for k, r := range decisionRows {
		stored[r.id] = k
	}
	reclicks, deadlines, approvals, denials := 0, 0, 0, 0
	var recordedFirst []string // clicks whose first answer was the backend's, with when, from the kill
	for i := range n {
		id := replicaApprovalID(i)
		ds := decisions[id]
		firsts := 0
		var first backendtest.DecisionRequest
		for _, d := range ds {
			if !d.Replay {
				firsts++
				first = d.Request
			}
			if d.IdempotencyKey != ds[0].IdempotencyKey {
				t.Errorf("%s: decisions with keys %s and %s: one intent, one key", id, ds[0].IdempotencyKey, d.IdempotencyKey)
			}
		}
		if firsts != 1 {
			t.Errorf("%s: the backend recorded %d decisions, want exactly 1: %+v", id, firsts, ds)
			continue
		}
		type want struct {
			decision, actor, surface, user, comment, digest, state string
		}
		w := want{"deny", "system:deadline", "deadline", "", "nobody answered", "", "expired"}
		switch {
		case replicaApproved(i):
			w = want{"approve", "user:kevin", "slack", "U0KEVIN", "", digest, "approved"}
			approvals++
		case replicaClicked(i):
			w = want{"deny", "user:ada", "slack", "U0ADA", replicaDenyReason, digest, "denied"}
			denials++
		default:
			deadlines++
		}
		got := want{first.Decision, first.Actor, first.Via.Surface, first.Via.User, first.Comment, first.ArgsSHA256, ""}
		k, ok := stored[id]
		if ok {
			got.state = decisionRows[k].state
		}
		if got != w {
			t.Errorf("%s: decided %+v, want %+v", id, got, w)
		}
		if first.Revision != 1 {
			t.Errorf("%s: decision for revision %d, want 1", id, first.Revision)
		}
		if ok && w.state == "expired" {
			var dec struct{ At time.Time }
			_ = json.Unmarshal(decisionRows[k].decision, &dec)
			if due := sent[i].requested.Add(replicaDeadline); dec.At.Before(due) {
				t.Errorf("%s: the deadline denied at %s, before it was due at %s", id, dec.At.Format("15:04:05.000"), due.Format("15:04:05.000"))
			}
		}
		if clicks[i].tries > 1 {
			reclicks++
		}
		if m := clicks[i].missed; m != "" {
			t.Logf("%s: clicked Deny again: %s", id, m)
		}
		if a := clicks[i].answer; strings.HasPrefix(a, "Recorded: ") || strings.HasSuffix(a, " was approved") || strings.HasSuffix(a, " was denied") {
			recordedFirst = append(recordedFirst, fmt.Sprintf("%s %+.1fs", id, clicks[i].at.Sub(killedAt).Seconds()))
		}
	}

	perReplica := make([]int, len(f.bots))
	retried, duplicates := 0, 0
	for i, s := range sent {
		perReplica[s.replica]++
		if s.tries > 1 {
			retried++
		}
		switch {
		case s.status == http.StatusOK && s.tries > 1:
			duplicates++ // an earlier send committed at the dead replica before it died
		case s.status != http.StatusAccepted:
			t.Errorf("event %d: answered %d on its first send", i, s.status)
		}
	}
	t.Logf("%d approvals: events accepted per replica %v (%d sent again after a failed send, %d of them found already stored); all sent %v after the start",
		n, perReplica, retried, duplicates, sentAll.Sub(start).Round(time.Millisecond))
	t.Logf("cards printed per replica %v (%d repeats of an effect in flight at the kill); %d escalation mentions",
		printedBy, repeats, escalations)
	t.Logf("decisions: %d approved and %d denied by a click (%d clicked again after their replica died; all answered %v after the start), %d denied by the deadline; %d repeated sends with the same key",
		approvals, denials, reclicks, clickedAll.Sub(start).Round(time.Millisecond), deadlines, replays)
	if len(recordedFirst) > 0 {
		t.Logf("%d click(s) saw the decided card before the card being sent (answered at, from the kill): %v", len(recordedFirst), recordedFirst)
	}
	t.Logf("dead replica's claims after its death: %v; %d finished by it before it died, %d closed by a decision while held; taken over %v–%v after their lease lapsed, the last %v after the kill",
		kinds, finishedByVictim, decidedWhileHeld, minLag.Round(time.Millisecond), maxLag.Round(time.Millisecond), lastTaken.Sub(killedAt).Round(time.Millisecond))
	t.Logf("everything done %v after the start (%v after the last request, whose deadline was %v)",
		finished.Sub(start).Round(time.Millisecond), finished.Sub(lastRequested).Round(time.Millisecond), replicaDeadline)
	for r, b := range f.bots {
		if r == victim {
			continue
		}
		for _, line := range strings.Split(b.stderr.String(), "\n") {
			var l struct{ Level, Msg string }
			if json.Unmarshal([]byte(line), &l) == nil && l.Level == "ERROR" {
				t.Errorf("replica %d logged an error: %s", r, line)
			}
		}
	}
}

// TestReplicaDatabaseOutage: a replica whose database goes away (the
// proxy in front of PostgreSQL refuses connections and the server ends
// the sessions it had) says so: /readyz 503, and POST /v1/events 503
// {"error":"unavailable"}, so the backend retries. When the database is
// back, the same event is accepted without restarting the bot, and its
// card is printed.
func TestReplicaDatabaseOutage(t *testing.T) {
	db := newPGDatabase(t)
	proxy := startPGProxy(t)
	app := db.name + "-bot"
	host, port := proxy.HostPort()
	dsn := pgDSN(t, pgBaseURL(t), db.name, map[string]string{"host": host, "port": port,
		"connect_timeout": "2", "application_name": app})
	dir := t.TempDir()
	cfg := fmt.Sprintf(`listen: "127.0.0.1:0"
store:
  driver: postgres
  dsn: %q
tick: 1s
lease: 5s
backend:
  url: "http://127.0.0.1:9"
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
tenants:
  acme:
    post: [%s]
`, dsn, replicaTarget)
	path := filepath.Join(dir, "bot.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	bot := startBot(t, path)
	events := eventsNow(t)
	event := func(i int) []byte {
		body, err := replicaEvent(events, i, time.Now().UTC().Truncate(time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		return body
	}
	if a := bot.send(t, event(1), nil); a.Status != http.StatusAccepted {
		t.Fatalf("event before the outage: %+v", a)
	}
	bot.waitFor(t, "(approval "+replicaApprovalID(1)+", revision 1)")
	if code, body := bot.get(t, "/readyz"); code != http.StatusOK {
		t.Fatalf("readyz before the outage: %d %s", code, body)
	}

	// The database goes: nothing new connects, and every session the bot
	// had (its pool's and its listener's) is ended.
	proxy.Refuse()
	ended := pgTerminate(t, app) + pgTerminate(t, app+" listen")
	proxy.Cut()
	if ended == 0 {
		t.Fatal("no session of the bot to end")
	}
	down := time.Now()
	body := event(2)
	for k := range 3 {
		start := time.Now()
		code, text := bot.get(t, "/readyz")
		if code != http.StatusServiceUnavailable {
			t.Errorf("readyz during the outage (%d): %d %q, want 503", k, code, text)
		}
		a := bot.send(t, body, nil)
		if a.Status != http.StatusServiceUnavailable || a.Code != "unavailable" || a.Message == "" {
			t.Errorf("event during the outage (%d): %+v, want 503 unavailable with a message", k, a)
		}
		if took := time.Since(start); took > 6*time.Second {
			t.Errorf("readyz and the event took %v during the outage, want an answer within the connect timeout", took)
		}
	}
	if code, _ := bot.get(t, "/healthz"); code != http.StatusOK {
		t.Errorf("healthz during the outage: %d, want 200 (the process is alive)", code)
	}

	// Back, at the same address: the backend's retry of the same event is
	// accepted at once, and its card printed, by the same process.
	proxy.Listen(t)
	back := time.Now()
	a := bot.send(t, body, nil)
	acceptedAfter := time.Since(back)
	if a.Status != http.StatusAccepted {
		t.Fatalf("the same event after the database came back: %+v, want 202", a)
	}
	if code, text := bot.get(t, "/readyz"); code != http.StatusOK {
		t.Errorf("readyz after the outage: %d %q", code, text)
	}
	bot.waitFor(t, "(approval "+replicaApprovalID(2)+", revision 1)")
	select {
	case err := <-bot.done:
		t.Fatalf("the bot exited: %v", err)
	default:
	}
	t.Logf("down for %v; the same event accepted %v after the database came back, and its card printed %v after",
		back.Sub(down).Round(time.Millisecond), acceptedAfter.Round(time.Millisecond), time.Since(back).Round(time.Millisecond))
}
