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
	"approvalsbot/adapters/backend/standin"
	"approvalsbot/adapters/slack/slacktest"
	"approvalsbot/templates"
)

// Several replicas of the built binary on one PostgreSQL database, behind
// the same fakes, as docs/operations.md's "Running several replicas" runs them: any replica takes any
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
	replicaTarget = "discord:channel:112233445566778899"
	replicaLease  = 5 * time.Second
	replicaStep1  = 1 * time.Second // mentions @kevin
	replicaStep2  = 3 * time.Second // mentions @ada
	// replicaDeadline leaves every step time to show before it, even for
	// an approval the killed replica held: its lease (5 s) and the
	// takeover (replicaTakeover) come after the step was due, and a
	// tick behind a thousand events' ingest on two busy cores may start
	// seconds late. A step still due at the deadline is never shown
	// (the deadline's deny goes instead), so a shorter deadline would
	// make the count of steps depend on the machine's load. On two
	// cores busy with other work, 20 s proved too short: the one
	// channel's outbox, printing a thousand cards and their mentions,
	// fell behind the deadline, which closed the calls before their
	// second step was printed (as it should: a closed call's step is
	// dropped). 40 s keeps the step well before the deadline.
	replicaDeadline = 40 * time.Second
	// replicaSenders bounds the events in flight at once, over all
	// replicas; replicaClickers the clicks being made (a click waits for
	// its answer at the fake Slack).
	replicaSenders  = 12
	replicaClickers = 48
	// replicaTakeover bounds how long after a dead replica's lease lapses
	// another replica takes its claim: the outbox's poll (1 s) or the next
	// tick (1 s), under the load of the run, where a replica's tick may be
	// busy with a batch for seconds before it claims again.
	replicaTakeover = 8 * time.Second
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
}

// decide is one person deciding approval id from its card: kevin clicks
// Approve; ada clicks Deny, and submits the dialog with a reason. A click
// that reaches no live replica, or whose replica dies before it answers,
// is made again at another, as a person does when the bot does not say
// it is sending their decision. A click made again may find the
// decision an earlier one recorded, just before its replica died: the
// bot then says so instead of asking a reason.
func (f *replicaFleet) decide(w *slackWatch, id string, approve bool, first int) (clickOutcome, error) {
	user, kind := "U0ADA", templates.ActionDeny
	if approve {
		user, kind = "U0KEVIN", templates.ActionApprove
	}
	action := templates.EncodeAction(templates.Action{Kind: kind, ApprovalID: id, Revision: 1})
	actor, verb := "user:ada", "denied"
	if approve {
		actor, verb = "user:kevin", "approved"
	}
	var out clickOutcome
	// sent counts the requests that record the decision (an Approve
	// click, a Deny dialog's submission) that may have reached a bot: all
	// but those whose connection was refused.
	sent := 0
	reached := func(err error) bool { return !errors.Is(err, syscall.ECONNREFUSED) }
	deadline := time.Now().Add(40 * time.Second)
	for try := 0; time.Now().Before(deadline); try++ {
		r, ok := f.live(first + try)
		if !ok {
			return out, errors.New("no replica is alive")
		}
		out.tries++
		sentBefore := sent
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
		if approve && reached(err) {
			sent++
		}
		if err != nil || status != http.StatusOK {
			if err != nil || f.dead[r].Load() {
				continue // the click did not reach a live bot
			}
			return out, fmt.Errorf("click on replica %d answered %d", r, status)
		}
		answeredBy := r
		var told bool // a Deny answered at once, without a dialog
		if !approve {
			meta, ok := w.wait(func() (string, bool) {
				if as := w.answers[respURL]; len(as) > 0 {
					told = true
					return "", true
				}
				v, ok := w.views[trigger]
				return v, ok
			}, &f.dead[r], 20*time.Second)
			if !ok {
				if f.dead[r].Load() {
					continue
				}
				return out, fmt.Errorf("replica %d opened no deny dialog within 20s; its log of the click:\n%s", r,
					linesWith(f.bots[r].stderr.String(), id))
			}
			if !told {
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
				if reached(err) {
					sent++
				}
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
			strings.HasPrefix(text, "Sending your "), strings.HasPrefix(text, "Recorded: your "):
			if told {
				return out, fmt.Errorf("replica %d answered a Deny click %q without asking a reason", r, text)
			}
			return out, nil
		// An earlier click of this person's was recorded, though its
		// answer was lost with its replica: this one is refused (a Deny
		// at once, without asking a reason that would be refused),
		// nothing is sent.
		case strings.HasPrefix(text, actor+" is deciding this call already"),
			strings.Contains(text, "This call was already "+verb+" by "+actor):
			if sentBefore == 0 {
				return out, fmt.Errorf("click %d on %s was answered %q, but no earlier try of it reached a bot", out.tries, id, text)
			}
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
				// Read the clock after the row: whatever the row shows had
				// happened by now, so a change seen here at a time before
				// the lease's end certainly came before it. (One time for
				// the whole pass, read before its first query, dated
				// changes up to a pass's length too early.)
				now := time.Now()
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
	f := startReplicaFleet(t)
	load := f.sendAndClick()
	kill := f.killOneHoldingClaims(t, load, 1)
	load.waitSentAndClicked(t)

	var sum replicaSummary
	sum.finished = f.waitFinished(t, load)
	sum.takeovers = kill.checkTakeovers(t)
	sum.printed = f.checkPrinted(t, kill)
	sum.decided = f.checkBackendSaw(t, load, kill)
	sum.sends = load.checkSends(t, len(f.bots))
	f.logSummary(t, load, kill, sum)
	f.checkNoErrorsLogged(t, kill.victim)
}

// replicaRig is the fleet of TestReplicasShareOneDatabase with what the
// test set up around it: the fake backend and Slack, the database, and
// the approvals it sends.
type replicaRig struct {
	*replicaFleet
	n      int       // approvals sent
	start  time.Time // when the test began; the logs count from it
	fake   *backendtest.Fake
	pool   *pgxpool.Pool
	events *fixtureEvents
	digest string // the arguments' digest every decision by a click carries
	watch  *slackWatch
	ctx    context.Context // ends with the test: the watchers stop
}

// startReplicaFleet sets up the fake Slack (the approvals channel, kevin
// and ada) and the fake backend (every approval the test will send, with
// merge.json's arguments), and starts three replicas of the bot on one new
// PostgreSQL database. It checks that the fake backend's digest of the
// arguments is the event's.
func startReplicaFleet(t *testing.T) *replicaRig {
	const replicas = 3
	db := newPGDatabase(t)
	f := &replicaRig{n: replicaCount(t), start: time.Now()}
	dir := t.TempDir()

	sl := slacktest.New(t, slacktest.Options{Token: "xoxb-e2e"})
	sl.AddChannel("C0APPROVALS", "approvals", true)
	sl.AddUser("U0KEVIN")
	sl.AddUser("U0ADA")
	f.fake = backendtest.New(t, standin.Options{Secrets: [][]byte{[]byte(e2eCallsSecret)}})
	args := readArguments(t, "a-merge1.json")
	f.events = eventsNow(t)
	f.digest = eventDigest(t, f.events.event(t, "merge.json"))
	for i := range f.n {
		f.fake.AddApproval(replicaApprovalID(i), 1, args, false)
		f.fake.SetFunction(replicaApprovalID(i), "acme_github.merge")
	}
	if got := f.fake.Digest(replicaApprovalID(0)); got != f.digest {
		t.Fatalf("the fake backend's digest %s differs from the event's %s", got, f.digest)
	}

	t.Setenv("SLACK_BOT_TOKEN", "xoxb-e2e")
	t.Setenv("SLACK_SIGNING_SECRET", e2eSigningSecret)
	cfg := replicaConfig(t, dir, db.dsn, f.fake.URL(), sl.APIURL())
	f.replicaFleet = &replicaFleet{sl: sl, dead: make([]atomic.Bool, replicas),
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	for range replicas {
		f.bots = append(f.bots, startBot(t, cfg)) // they migrate once, under the advisory lock
	}
	t.Logf("%d replicas serving %v after the start", len(f.bots), time.Since(f.start).Round(time.Millisecond))
	f.pool = pgPool(t, db.dsn)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f.ctx = ctx
	f.watch = watchSlack(ctx, sl)
	return f
}

// sentEvent is how approval i's event went: when its request was made,
// the answer that counted, the replica that gave it, and the sends it took.
type sentEvent struct {
	requested time.Time
	status    int
	replica   int
	tries     int
}

// replicaLoad is the events and clicks sendAndClick set going, and what
// became of each, by approval index.
type replicaLoad struct {
	bad             problems
	sent            []sentEvent
	clicks          []clickOutcome // the zero value for an approval not clicked
	accepted        atomic.Int64
	sendWG, clickWG sync.WaitGroup
	// Set by waitSentAndClicked.
	sentAll, clickedAll time.Time // when the last event was sent, the last click answered
	lastRequested       time.Time // the latest request time of any event
}

// sendAndClick sends the events over the replicas, replicaSenders at
// once, and returns at once; each accepted approval to be clicked is
// clicked after its delay, at another replica than the one that took its
// event. What goes wrong is collected in the load's problems, for
// waitSentAndClicked to report.
func (f *replicaRig) sendAndClick() *replicaLoad {
	load := &replicaLoad{sent: make([]sentEvent, f.n), clicks: make([]clickOutcome, f.n)}
	clickSem := make(chan struct{}, replicaClickers)
	next := make(chan int)
	go func() {
		for i := range f.n {
			next <- i
		}
		close(next)
	}()
	for range replicaSenders {
		load.sendWG.Go(func() {
			for i := range next {
				now := time.Now().UTC().Truncate(time.Millisecond) // the store keeps milliseconds
				body, err := replicaEvent(f.events, i, now)
				if err != nil {
					load.bad.add("event %d: %v", i, err)
					continue
				}
				status, r, tries, err := f.postEvent(body, i%len(f.bots))
				if err != nil {
					load.bad.add("event %d: %v", i, err)
					continue
				}
				load.sent[i] = sentEvent{requested: now, status: status, replica: r, tries: tries}
				load.accepted.Add(1)
				if !replicaClicked(i) {
					continue
				}
				load.clickWG.Go(func() {
					time.Sleep(replicaClickDelay(i))
					clickSem <- struct{}{}
					defer func() { <-clickSem }()
					out, err := f.decide(f.watch, replicaApprovalID(i), replicaApproved(i), r+1)
					load.clicks[i] = out
					if err != nil {
						load.bad.add("click on %s: %v", replicaApprovalID(i), err)
					}
				})
			}
		})
	}
	return load
}

// replicaKill is the replica killed mid-run and the claims it left.
type replicaKill struct {
	victim      int
	worker      string    // the worker id it claimed under
	at          time.Time // when it died
	stoppedHeld []heldClaim
	afterHeld   []heldClaim // still its own 200 ms after its death
	takeovers   <-chan []takeover
}

// killOneHoldingClaims waits until half the events are accepted, then
// SIGKILLs replica victim at a moment it holds claims and takes it out of
// the rotation. It checks that some claims are still the dead worker's
// after its death (else nothing shows the lease), and starts watching
// them be taken over.
func (f *replicaRig) killOneHoldingClaims(t *testing.T, load *replicaLoad, victim int) *replicaKill {
	pollUntil(t, 60*time.Second, "half the events accepted", func() bool { return load.accepted.Load() >= int64(f.n/2) },
		func() string { return strings.Join(load.bad.all(), "\n") })
	worker, err := replicaWorker(t.Context(), f.pool, f.bots[victim])
	if err != nil {
		t.Fatalf("replica %d's worker: %v", victim, err)
	}
	stoppedHeld, killedAt, probes := killHolding(t, f.pool, f.bots[victim], worker, 3*time.Second)
	f.dead[victim].Store(true) // out of the rotation, as a health check takes it out
	acceptedAtKill := load.accepted.Load()
	// What the dead replica still held once the server has seen its
	// connections go: those claims return only when their lease lapses.
	time.Sleep(200 * time.Millisecond)
	afterHeld, err := claimsOf(t.Context(), f.pool, worker, time.Now(), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(afterHeld) == 0 {
		t.Fatalf("replica %d held no claim after its SIGKILL (%d seen while it was stopped): nothing shows the lease", victim, len(stoppedHeld))
	}
	takeovers := watchTakeovers(f.ctx, f.pool, worker, afterHeld)
	t.Logf("SIGKILL of replica %d (worker %s) %v after the start, %d events accepted, after %d probe(s); it held %d claim(s) while stopped, %d after its death",
		victim, worker, killedAt.Sub(f.start).Round(time.Millisecond), acceptedAtKill, probes, len(stoppedHeld), len(afterHeld))
	return &replicaKill{victim: victim, worker: worker, at: killedAt,
		stoppedHeld: stoppedHeld, afterHeld: afterHeld, takeovers: takeovers}
}

// allowedRepeats is the effects in flight at the kill, which may show
// twice: "kind/approval", "id/row id" and "mention/approval/target" of
// each outbox row the dead replica held, stopped or after its death.
func (k *replicaKill) allowedRepeats() map[string]bool {
	allowed := map[string]bool{}
	for _, c := range append(slices.Clone(k.stoppedHeld), k.afterHeld...) {
		if c.table != "outbox" {
			continue
		}
		allowed[c.kind+"/"+c.approvalID] = true
		allowed["id/"+c.id] = true
		for _, m := range c.mentions {
			allowed["mention/"+c.approvalID+"/"+m] = true
		}
	}
	return allowed
}

// waitSentAndClicked waits until every event is sent and every click
// answered, and notes when. It reports each problem the senders and
// clickers found, and stops the test if there was any (or it had
// failed already).
func (load *replicaLoad) waitSentAndClicked(t *testing.T) {
	load.sendWG.Wait()
	load.sentAll = time.Now()
	load.clickWG.Wait()
	load.clickedAll = time.Now()
	for _, p := range load.bad.all() {
		t.Error(p)
	}
	if t.Failed() {
		t.FailNow()
	}
	for _, s := range load.sent {
		if s.requested.After(load.lastRequested) {
			load.lastRequested = s.requested
		}
	}
}

// waitFinished waits until everything finishes: every approval decided,
// nothing in flight, nothing left in the outbox, every card posted, by
// the last request's deadline plus a lease plus 20 s. It returns when,
// and checks that no outbox row is dead.
func (f *replicaRig) waitFinished(t *testing.T, load *replicaLoad) time.Time {
	n := f.n
	bound := time.Until(load.lastRequested.Add(replicaDeadline + replicaLease + 20*time.Second))
	var state struct{ open, total, pending, dead, posted int }
	readState := func() error {
		return f.pool.QueryRow(t.Context(), `SELECT
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
	return finished
}

// takeoverTally is what checkTakeovers counted.
type takeoverTally struct {
	kinds                              map[string]int // claims by "table:kind"
	finishedByVictim, decidedWhileHeld int
	minLag, maxLag                     time.Duration // from lease lapsed to taken over
	lastTaken                          time.Time
}

// checkTakeovers waits (10 s at most) until every claim the dead replica
// held after its death has left its hands, and checks that each returned
// after its lease, not before (FOR UPDATE SKIP LOCKED passes over
// unexpired claims), and promptly after it (within replicaTakeover: the
// worker's poll, the next tick), not never; and that no outbox row was
// completed by the dead worker after its death.
func (k *replicaKill) checkTakeovers(t *testing.T) takeoverTally {
	var tks []takeover
	select {
	case tks = <-k.takeovers:
	case <-time.After(10 * time.Second):
		t.Fatal("the dead replica's claims are still not taken over")
	}

	tally := takeoverTally{kinds: map[string]int{}}
	for _, tk := range tks {
		c := tk.claim
		tally.kinds[c.table+":"+c.kind]++
		switch {
		case tk.byVictim:
			tally.finishedByVictim++
			continue
		case tk.decided:
			tally.decidedWhileHeld++
			continue
		case tk.seenAt.IsZero():
			t.Errorf("claim %s %s %s of the dead replica was never taken over", c.table, c.kind, c.id)
			continue
		}
		at := tk.seenAt
		if !tk.doneAt.IsZero() {
			at = tk.doneAt
			if tk.by == k.worker {
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
		if tally.minLag == 0 || lag < tally.minLag {
			tally.minLag = lag
		}
		tally.maxLag = max(tally.maxLag, lag)
		if at.After(tally.lastTaken) {
			tally.lastTaken = at
		}
	}
	return tally
}

// printTally is what checkPrinted counted.
type printTally struct {
	printedBy            []int // cards printed, by replica
	repeats, escalations int
}

// checkPrinted counts the cards and the escalations across the
// replicas' stdout. It checks that every card is revision 1 at
// replicaTarget; that every approval's card shows once, and each ladder
// step's mention once (or never, for a clicked approval whose click came
// before the step), save the one repeat a crash allows; and that there
// is no card for an approval nobody sent.
func (f *replicaRig) checkPrinted(t *testing.T, kill *replicaKill) printTally {
	allowed := kill.allowedRepeats()
	cards := map[string][]int{}               // approval → replicas that printed its revision-1 card
	mentions := map[string]map[string][]int{} // approval → @name → replicas that printed a reply naming them
	tally := printTally{printedBy: make([]int, len(f.bots))}
	for r, b := range f.bots {
		out := b.stdout.String()
		for _, c := range replicaCards(out) {
			if c.revision != "1" || c.target != replicaTarget {
				t.Errorf("replica %d printed a card %+v, want only revision 1 at %s", r, c, replicaTarget)
				continue
			}
			cards[c.approval] = append(cards[c.approval], r)
			tally.printedBy[r]++
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
	once := func(what string, by []int, allowKey string, want int) {
		t.Helper()
		switch {
		case len(by) == want:
		case len(by) == want+1 && want == 1 && allowed[allowKey] && slices.Contains(by, kill.victim):
			tally.repeats++
		default:
			t.Errorf("%s: shown %d times (by replicas %v), want %d", what, len(by), by, want)
		}
	}
	for i := range f.n {
		id := replicaApprovalID(i)
		once("the card of "+id, cards[id], "post_card/"+id, 1)
		for name, target := range step {
			by := mentions[id][name]
			tally.escalations += len(by)
			want := 1
			if replicaClicked(i) && len(by) <= 1 {
				want = len(by) // a click may come before the step: then it never fires
			}
			once(fmt.Sprintf("the step mentioning %s of %s", name, id), by, "mention/"+id+"/"+target, want)
		}
	}
	for id := range cards {
		if k, err := strconv.Atoi(strings.TrimPrefix(id, "a-rep")); err != nil || replicaApprovalID(k) != id || k >= f.n {
			t.Errorf("a card for an approval nobody sent: %s", id)
		}
	}
	return tally
}

// decisionTally is what checkBackendSaw counted.
type decisionTally struct {
	approvals, denials, deadlines int
	reclicks                      int // clicks made again after their replica died
	replays                       int // repeated sends with the same key
	// recordedFirst is the clicks whose first answer was the backend's,
	// with when, from the kill.
	recordedFirst []string
}

// checkBackendSaw checks the decisions at the fake backend: each signed
// and answered 200, none an approve by the deadline, one idempotency key
// per approval and one approval per key, a repeated send only of a
// decision the dead replica held; exactly one recorded decision for every
// approval, the one the test planned (kevin's approve, ada's deny with
// her reason, or the deadline's deny, no earlier than it was due), for
// revision 1, and the approval's stored state to match. It logs each
// Deny clicked again because its dialog did not open.
func (f *replicaRig) checkBackendSaw(t *testing.T, load *replicaLoad, kill *replicaKill) decisionTally {
	var tally decisionTally
	var decisions map[string][]standin.ReceivedDecision
	decisions, tally.replays = f.checkDecisionCalls(t, kill.allowedRepeats())
	stored := f.storedApprovals(t)
	for i := range f.n {
		id := replicaApprovalID(i)
		ds := decisions[id]
		firsts := 0
		var first standin.DecisionRequest
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
			w = want{"approve", "user:kevin", "slack", "U0KEVIN", "", f.digest, "approved"}
			tally.approvals++
		case replicaClicked(i):
			w = want{"deny", "user:ada", "slack", "U0ADA", replicaDenyReason, f.digest, "denied"}
			tally.denials++
		default:
			tally.deadlines++
		}
		got := want{first.Decision, first.Actor, first.Via.Surface, first.Via.User, first.Comment, first.ArgsSHA256, ""}
		row, ok := stored[id]
		if ok {
			got.state = row.state
		}
		if got != w {
			t.Errorf("%s: decided %+v, want %+v", id, got, w)
		}
		if first.Revision != 1 {
			t.Errorf("%s: decision for revision %d, want 1", id, first.Revision)
		}
		if ok && w.state == "expired" {
			var dec struct{ At time.Time }
			_ = json.Unmarshal(row.decision, &dec)
			if due := load.sent[i].requested.Add(replicaDeadline); dec.At.Before(due) {
				t.Errorf("%s: the deadline denied at %s, before it was due at %s", id, dec.At.Format("15:04:05.000"), due.Format("15:04:05.000"))
			}
		}
		if load.clicks[i].tries > 1 {
			tally.reclicks++
		}
		if a := load.clicks[i].answer; strings.HasPrefix(a, "Recorded: ") || strings.HasSuffix(a, " was approved") || strings.HasSuffix(a, " was denied") {
			tally.recordedFirst = append(tally.recordedFirst, fmt.Sprintf("%s %+.1fs", id, load.clicks[i].at.Sub(kill.at).Seconds()))
		}
	}
	return tally
}

// checkDecisionCalls checks each decision the fake backend received: signed
// and answered 200, no approve by the deadline, no idempotency key used
// for two approvals, and a replay only of a key the dead replica held
// (allowed is its allowedRepeats). It checks that the backend got
// decisions on every approval, and returns them by approval with the
// number of replays.
func (f *replicaRig) checkDecisionCalls(t *testing.T, allowed map[string]bool) (map[string][]standin.ReceivedDecision, int) {
	decisions := map[string][]standin.ReceivedDecision{}
	keys := map[string]string{}
	replays := 0
	for _, d := range f.fake.Decisions() {
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
	if len(decisions) != f.n {
		t.Errorf("the backend got decisions on %d approvals, want %d", len(decisions), f.n)
	}
	return decisions, replays
}

// storedApproval is one approval's row as the store keeps it.
type storedApproval struct {
	state    string
	decision []byte // the decision's JSON; nil while undecided
}

// storedApprovals reads every approval's state and decision from the
// shared database, by approval id.
func (f *replicaRig) storedApprovals(t *testing.T) map[string]storedApproval {
	rows, err := f.pool.Query(t.Context(), `SELECT id, state, decision FROM approvals`)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]storedApproval{}
	for rows.Next() {
		var id string
		var r storedApproval
		var dec *string
		if err := rows.Scan(&id, &r.state, &dec); err != nil {
			t.Fatal(err)
		}
		if dec != nil {
			r.decision = []byte(*dec)
		}
		stored[id] = r
	}
	rows.Close()
	return stored
}

// sendTally is what checkSends counted.
type sendTally struct {
	perReplica          []int // events accepted, by replica
	retried, duplicates int
}

// checkSends counts the events each replica accepted and those sent
// again; it checks that every event was accepted (202) on its first send,
// or found already stored (200) when an earlier send committed at the
// dead replica before it died.
func (load *replicaLoad) checkSends(t *testing.T, replicas int) sendTally {
	tally := sendTally{perReplica: make([]int, replicas)}
	for i, s := range load.sent {
		tally.perReplica[s.replica]++
		if s.tries > 1 {
			tally.retried++
		}
		switch {
		case s.status == http.StatusOK && s.tries > 1:
			tally.duplicates++ // an earlier send committed at the dead replica before it died
		case s.status != http.StatusAccepted:
			t.Errorf("event %d: answered %d on its first send", i, s.status)
		}
	}
	return tally
}

// replicaSummary is what the checks counted, for logSummary.
type replicaSummary struct {
	finished  time.Time // when waitFinished saw everything done
	takeovers takeoverTally
	printed   printTally
	decided   decisionTally
	sends     sendTally
}

// logSummary logs how the run went: the events per replica, the cards and
// escalations, the decisions, the clicks that saw the decided card first,
// the dead replica's claims and their takeover, and when everything was
// done. It checks nothing.
func (f *replicaRig) logSummary(t *testing.T, load *replicaLoad, kill *replicaKill, sum replicaSummary) {
	sd, pr, dc, tk := sum.sends, sum.printed, sum.decided, sum.takeovers
	t.Logf("%d approvals: events accepted per replica %v (%d sent again after a failed send, %d of them found already stored); all sent %v after the start",
		f.n, sd.perReplica, sd.retried, sd.duplicates, load.sentAll.Sub(f.start).Round(time.Millisecond))
	t.Logf("cards printed per replica %v (%d repeats of an effect in flight at the kill); %d escalation mentions",
		pr.printedBy, pr.repeats, pr.escalations)
	t.Logf("decisions: %d approved and %d denied by a click (%d clicked again after their replica died; all answered %v after the start), %d denied by the deadline; %d repeated sends with the same key",
		dc.approvals, dc.denials, dc.reclicks, load.clickedAll.Sub(f.start).Round(time.Millisecond), dc.deadlines, dc.replays)
	if len(dc.recordedFirst) > 0 {
		t.Logf("%d click(s) saw the decided card before the card being sent (answered at, from the kill): %v", len(dc.recordedFirst), dc.recordedFirst)
	}
	t.Logf("dead replica's claims after its death: %v; %d finished by it before it died, %d closed by a decision while held; taken over %v–%v after their lease lapsed, the last %v after the kill",
		tk.kinds, tk.finishedByVictim, tk.decidedWhileHeld, tk.minLag.Round(time.Millisecond), tk.maxLag.Round(time.Millisecond), tk.lastTaken.Sub(kill.at).Round(time.Millisecond))
	t.Logf("everything done %v after the start (%v after the last request, whose deadline was %v)",
		sum.finished.Sub(f.start).Round(time.Millisecond), sum.finished.Sub(load.lastRequested).Round(time.Millisecond), replicaDeadline)
}

// checkNoErrorsLogged checks that no replica but the victim logged an
// error.
func (f *replicaRig) checkNoErrorsLogged(t *testing.T, victim int) {
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
