package main

import (
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"approvalsbot/store/sqlite"
)

// TestKillDuringIngestLosesNoAcceptedEvent kills the bot (SIGKILL) every
// 300–900 ms while eight senders post new approvals without pause, so
// that kills land while events are being committed, several at a time.
// The promise to the backend: an event answered 202 (or 200 duplicate)
// is on disk, with its approval, whatever the kill interrupted. An event
// whose connection died, or that was answered 503, may or may not be
// recorded; the sender posts it again to whichever bot is up, as the
// backend does.
func TestKillDuringIngestLosesNoAcceptedEvent(t *testing.T) {
	const senders = 8
	load := 7 * time.Second
	if raceEnabled {
		// A raced binary starts several times slower: the same number of
		// kills needs a longer load.
		load = 14 * time.Second
	}
	dir := t.TempDir()
	cfg := e2eConfig(t, dir) // no chat surface: cards go to the log surface
	dbPath := filepath.Join(dir, "bot.db")

	var current atomic.Pointer[botProc]
	current.Store(startBot(t, cfg))
	events := eventsNow(t)
	start := time.Now()

	// The killer: SIGKILL and restart on the same file until the load ends.
	// Right before each kill it reads the bot's bot_ingest_group_events,
	// so the test knows the kills fell among groups of several events.
	var kills atomic.Int64
	var groups, shared atomic.Int64 // ingest transactions; those of more than one event
	killerDone := make(chan struct{})
	go func() {
		defer close(killerDone)
		rnd := rand.New(rand.NewPCG(7, 11))
		for {
			wait := 300*time.Millisecond + time.Duration(rnd.Int64N(int64(600*time.Millisecond)))
			if time.Since(start)+wait >= load {
				return
			}
			time.Sleep(wait)
			bot := current.Load()
			if n, many, ok := ingestGroups(bot.base); ok {
				groups.Add(n)
				shared.Add(many)
			}
			_ = bot.cmd.Process.Kill()
			<-bot.done
			kills.Add(1)
			current.Store(startBot(t, cfg))
		}
	}()

	// The senders: each posts one new approval after another, and an
	// event that got no 2xx again until it does or the load ends.
	type sent struct {
		id, approval string
		body         []byte
		status       int // the 2xx it was answered, or 0
	}
	var (
		mu       sync.Mutex
		all      []*sent
		failures atomic.Int64 // attempts that died with the bot or got 5xx
	)
	var wg sync.WaitGroup
	for g := range senders {
		wg.Go(func() {
			for n := 0; time.Since(start) < load; n++ {
				e := &sent{id: fmt.Sprintf("evt-ingest-%d-%05d", g, n), approval: fmt.Sprintf("a-ingest-%d-%05d", g, n)}
				body, err := events.requestedAt(time.Now(), "merge.json", func(ev map[string]any) {
					ev["id"] = e.id
					ev["data"].(map[string]any)["id"] = e.approval
				})
				if err != nil {
					t.Error(err)
					return
				}
				e.body = body
				mu.Lock()
				all = append(all, e)
				mu.Unlock()
				for try := 0; try == 0 || time.Since(start) < load; try++ {
					status := postEvent(current.Load().base, body)
					if status == http.StatusAccepted || status == http.StatusOK {
						mu.Lock()
						e.status = status
						mu.Unlock()
						break
					}
					if status != 0 && status < 500 {
						t.Errorf("%s: answered %d, want 202, or 5xx while the bot cannot take it", e.id, status)
						break
					}
					failures.Add(1)
					time.Sleep(20 * time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
	<-killerDone
	// The last bot is killed too, right after the last answers, while
	// what it answered may still be on its way to the file.
	last := current.Load()
	_ = last.cmd.Process.Kill()
	<-last.done

	var answered []*sent
	accepted, duplicates := 0, 0
	for _, e := range all {
		switch e.status {
		case http.StatusAccepted:
			accepted++
		case http.StatusOK:
			duplicates++
		default:
			continue
		}
		answered = append(answered, e)
	}
	if len(answered) == 0 {
		t.Fatal("no event was answered 2xx")
	}

	// What is on disk, read with the bot down: the events table through
	// the store's own DSN, read-only, and the approvals through the store.
	db, err := sql.Open("sqlite", sqlite.DSN(dbPath)+"&_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(t.Context(), `SELECT id, approval_id FROM events WHERE id LIKE 'evt-ingest-%'`)
	if err != nil {
		t.Fatal(err)
	}
	recorded := map[string]string{} // event id → approval id
	for rows.Next() {
		var id, approvalID string
		if err := rows.Scan(&id, &approvalID); err != nil {
			t.Fatal(err)
		}
		recorded[id] = approvalID
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(t.Context(), sqlite.Options{Path: dbPath})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	lost := 0
	for _, e := range answered {
		if approvalID, ok := recorded[e.id]; !ok {
			lost++
			if lost <= 10 {
				t.Errorf("%s was answered %d, yet it is not in the events table", e.id, e.status)
			}
		} else if approvalID != e.approval {
			t.Errorf("%s is recorded for approval %s, want %s", e.id, approvalID, e.approval)
		}
	}
	// Every event on disk, answered or not, carries its approval: an
	// event recorded without it would be answered "duplicate" when the
	// backend sends it again, and the approval would never exist.
	noApproval := 0
	for id, approvalID := range recorded {
		a, err := st.ApprovalGet(t.Context(), approvalID)
		if err == nil && a.Revision == 1 {
			_, err = st.RevisionGet(t.Context(), approvalID, 1)
		}
		if err != nil || a.Revision != 1 {
			noApproval++
			if noApproval <= 10 {
				t.Errorf("%s is recorded, yet its approval %s is not there at revision 1: %+v, %v", id, approvalID, a, err)
			}
		}
	}
	if lost > 0 || noApproval > 0 {
		t.Errorf("%d of %d events answered 2xx are not recorded; %d recorded events lack their approval", lost, len(answered), noApproval)
	}
	unanswered := 0
	for _, e := range all {
		if _, ok := recorded[e.id]; ok && e.status == 0 {
			unanswered++
		}
	}
	if k := kills.Load(); k < 3 {
		t.Errorf("only %d kills during the load", k)
	}
	if shared.Load() == 0 {
		t.Errorf("the bots killed committed %d ingest transactions, none of more than one event: the kills fell on no group commit", groups.Load())
	}
	t.Logf("%d kills; %d events sent, %d answered 2xx (%d 202, %d 200 duplicate); %d attempts died with a bot or got 5xx; %d recorded though never answered; the bots killed ran %d ingest transactions, %d of them of several events",
		kills.Load(), len(all), len(answered), accepted, duplicates, failures.Load(), unanswered, groups.Load(), shared.Load())
	st.Close()
	db.Close()

	// The bot, restarted one last time, knows the latest events each
	// sender had answered (those nearest a kill): 200 duplicate.
	bot := startBot(t, cfg)
	latest := map[string]*sent{}
	for _, e := range answered {
		latest[e.id[:len("evt-ingest-0")]] = e // ids grow within a sender
	}
	keys := make([]string, 0, len(latest))
	for k := range latest {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		e := latest[k]
		if a := bot.send(t, e.body, nil); a.Status != http.StatusOK || a.State != "duplicate" {
			t.Errorf("%s sent again after the restarts: %d %+v, want 200 duplicate", e.id, a.Status, a)
		}
	}
}

// ingestGroups reads a bot's /metrics: how many ingest transactions it
// ran, and how many of them committed more than one event
// (bot_ingest_group_events). ok is false when the bot did not answer.
func ingestGroups(base string) (txs, many int64, ok bool) {
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(base + "/metrics")
	if err != nil {
		return 0, 0, false
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return 0, 0, false
	}
	var alone int64
	for line := range strings.Lines(string(b)) {
		var n int64
		switch {
		case strings.HasPrefix(line, `bot_ingest_group_events_bucket{le="1"} `):
			_, err = fmt.Sscan(strings.TrimPrefix(line, `bot_ingest_group_events_bucket{le="1"} `), &n)
			alone = n
		case strings.HasPrefix(line, "bot_ingest_group_events_count "):
			_, err = fmt.Sscan(strings.TrimPrefix(line, "bot_ingest_group_events_count "), &n)
			txs = n
		}
		if err != nil {
			return 0, 0, false
		}
	}
	return txs, txs - alone, true
}
