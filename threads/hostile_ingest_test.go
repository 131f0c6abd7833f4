package threads_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"approvalsbot/approval"
	"approvalsbot/config"
	"approvalsbot/store"
	"approvalsbot/store/sqlite"
	"approvalsbot/templates"
	"approvalsbot/threads"
	"approvalsbot/threads/threadstest"
)

// A hostile call's arguments are shaped by whoever steers the agent, and
// the bot redacts them before the ingest transaction opens (the
// transaction, which holds the store's write lock, only reads and writes
// rows: TestIngestContentWorkOutsideTheTransaction). These tests hold
// that work to the size of the event, a click beside it to
// threads.RecordBound, and what the store keeps of free text to its
// redacted form.

// ingestMark marks the context of the ingest whose transaction
// txSignalStore reports.
type ingestMark struct{}

// txSignalStore is the store as the bot uses it, telling began when a
// transaction whose context carries ingestMark holds the write lock.
type txSignalStore struct {
	store.Store
	began chan struct{}
	once  sync.Once
}

func (s *txSignalStore) InTx(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	return s.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		if ctx.Value(ingestMark{}) != nil {
			s.once.Do(func() { close(s.began) })
		}
		return fn(ctx, tx)
	})
}

// OneWriter and Alone are the store's own: the wrapper must not change
// how the service commits or how long the deadline waits.
func (s *txSignalStore) OneWriter() bool {
	o, ok := s.Store.(store.OneWriter)
	return ok && o.OneWriter()
}

func (s *txSignalStore) Alone() bool {
	a, ok := s.Store.(store.Alone)
	return ok && a.Alone()
}

// hostileSize is the size of a hostile argument: near the 1 MiB bound of
// an event's body.
const hostileSize = 900 << 10

// hostileEvent is merge.json's request as another approval (id), its
// arguments one string of piece repeated to hostileSize bytes, signed as
// the backend signs it.
func hostileEvent(t *testing.T, id, piece string) ([]byte, *approval.Event) {
	t.Helper()
	body, _ := readEvent(t, "merge.json")
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	m["id"] = "evt-" + id
	data := m["data"].(map[string]any)
	data["id"] = id
	data["call"].(map[string]any)["arguments"] = map[string]any{
		"url": strings.Repeat(piece, hostileSize/len(piece)),
	}
	body, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := approval.Parse(body)
	if err != nil {
		t.Fatalf("parse the hostile event: %v", err)
	}
	return body, ev
}

// TestClickRecordedWhileHostileEventIngests: a person's click on another
// card is recorded within threads.RecordBound while the event slowest to
// redact is being ingested, on SQLite on disk: its arguments are 900 KiB
// of a shape each redaction rule once read again from every start
// ("https://a:" took seconds per 64 KiB, and stalled every write while
// it ran).
func TestClickRecordedWhileHostileEventIngests(t *testing.T) {
	pieces := []struct{ name, piece string }{
		{"url-password", "https://a:"},
		{"url-password-path", "https://a:b/"},
		{"quoted-token", `"token": "`},
		{"escaped-token", `\"token\": \"`},
		{"jwt-dashed", "eyJ-"},
		{"named-value", "a="},
		{"bearer", "Bearer "},
		{"pem-begin", "-----BEGIN "},
	}
	signal := &txSignalStore{}
	h := newDecideHarnessFrom(t, testConfig, time.Minute, func(o *threads.Options) {
		signal.Store = o.Store
		o.Store = signal
	})
	for i, p := range pieces {
		t.Run(p.name, func(t *testing.T) {
			signal.began, signal.once = make(chan struct{}), sync.Once{}
			// A card to click: merge.json as an approval of its own.
			card := "a-click" + string(rune('a'+i))
			body, _ := readEvent(t, "merge.json")
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil {
				t.Fatal(err)
			}
			m["id"] = "evt-" + card
			m["data"].(map[string]any)["id"] = card
			body, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			ev, err := approval.Parse(body)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := h.ingestBody(body, ev); err != nil {
				t.Fatal(err)
			}
			h.fake.AddApproval(card, 1, arguments(t, "a-merge1.json"), false)

			hostileBody, hostile := hostileEvent(t, "a-hostile-"+p.name, p.piece)
			sum := sha256.Sum256(hostileBody)
			ingested := make(chan error, 1)
			go func() {
				ctx := context.WithValue(context.Background(), ingestMark{}, true)
				_, err := h.svc.Ingest(ctx, threads.IngestRequest{Event: hostile, BodySHA256: hex.EncodeToString(sum[:])})
				ingested <- err
			}()
			// The click comes once the ingest holds the write lock.
			select {
			case <-signal.began:
			case err := <-ingested:
				t.Fatalf("the hostile event was ingested without a transaction: %v", err)
			}
			// A click the ingest stalls is given up after a few bounds,
			// so a slow redactor fails here, saying so, not at the test
			// binary's timeout.
			ctx, cancel := context.WithTimeout(context.Background(), 5*threads.RecordBound)
			defer cancel()
			start := time.Now()
			res, err := h.svc.Decide(ctx, threads.DecideRequest{Tenant: "acme", ApprovalID: card,
				Revision: 1, Approve: false, Person: slackPerson("U0KEVIN"), Comment: "no"})
			took := time.Since(start)
			if err != nil || !res.Sent || took > threads.RecordBound {
				t.Fatalf("the click took %v (%+v, %v) while %d bytes of %q were ingested: want it recorded within threads.RecordBound (%v)",
					took, res, err, hostileSize, p.piece, threads.RecordBound)
			}
			if ierr := <-ingested; ierr != nil {
				t.Fatalf("ingest the hostile event: %v", ierr)
			}
			if a := h.state(t, card); len(a.Deciding) == 0 {
				t.Fatalf("no decision in flight on %s after the click", card)
			}
			if a := h.state(t, hostile.Approval.ID); a.State != "pending" {
				t.Fatalf("the hostile approval is %s", a.State)
			}
		})
	}
}

// TestFreeTextAtRestIsRedacted: the free text of the backend's events (a
// cancel's reason, a resolution's comment and message, a re-check's
// message, a finished call's summary) reaches the database file only
// redacted, in the approval's decision and in the outbox's replies.
func TestFreeTextAtRestIsRedacted(t *testing.T) {
	cfg, err := config.Parse("bot.yaml", []byte(testConfig), testEnv)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(dir, "bot.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	svc, err := threads.New(threads.Options{Store: st, Tenants: cfg, Clock: clockwork.NewFakeClockAt(threadstest.FixtureNow), Fallback: &recorder{}})
	if err != nil {
		t.Fatal(err)
	}
	// Each field holds a secret of its own and a word that shows the
	// field reached the file.
	type field struct{ seen, secret, text string }
	fields := []field{
		{"cancel-reason-seen", "ghp_Cancel0reason0secret0000000000", "cancel-reason-seen: stopped, token ghp_Cancel0reason0secret0000000000"},
		{"resolved-comment-seen", "comment-secret-7731", "resolved-comment-seen password=comment-secret-7731"},
		{"resolved-message-seen", "message-secret-9917", "resolved-message-seen via https://deploy:message-secret-9917@ci.acme.example/x"},
		{"recheck-message-seen", "eyJhbGciOiJIUzI1NiJ9.cmVjaGVjaw.c2ln", "recheck-message-seen: Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.cmVjaGVjaw.c2ln"},
		{"finished-summary-seen", "xoxb-1234-finished-summary-secret", "finished-summary-seen with SLACK_TOKEN=xoxb-1234-finished-summary-secret"},
	}
	steps := []struct {
		name string
		edit func(m map[string]any)
	}{
		{"mail.json", nil},
		{"mail-cancelled.json", func(m map[string]any) { eventData(m)["reason"] = fields[0].text }},
		{"merge.json", nil},
		{"merge-resolved.json", func(m map[string]any) {
			eventData(m)["comment"], eventData(m)["message"] = fields[1].text, fields[2].text
		}},
		{"refund.json", nil},
		{"refund-recheck.json", func(m map[string]any) { eventData(m)["message"] = fields[3].text }},
		{"search.json", nil},
		{"search-finished.json", func(m map[string]any) { eventData(m)["summary"] = fields[4].text }},
	}
	for _, s := range steps {
		threadstest.Ingest(t, svc, s.name, s.edit)
	}
	for _, id := range []string{"a-mail1", "a-merge1", "a-refund1"} {
		if a, err := st.ApprovalGet(ctx, id); err != nil || len(a.Decision) == 0 {
			t.Fatalf("approval %s holds no decision: %+v, %v", id, a, err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	// Every byte the store left on disk: the database, and its journal
	// should one remain.
	var disk []byte
	files, err := filepath.Glob(filepath.Join(dir, "bot.db*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		disk = append(disk, b...)
	}
	for _, f := range fields {
		if !bytes.Contains(disk, []byte(f.seen)) {
			t.Errorf("%s is not in the database file: the test reads nothing of that field", f.seen)
		}
		if bytes.Contains(disk, []byte(f.secret)) {
			t.Errorf("the database file keeps %q, from the field %s", f.secret, f.seen)
		}
	}
}

// eventData is an event envelope's data object.
func eventData(m map[string]any) map[string]any { return m["data"].(map[string]any) }

// A restricted call keeps none of its role values, but the warning its
// values called for (a hidden character, mixed scripts) stays on every
// card posted from the stored revision, which is what the decider sees.
func TestRestrictedCardKeepsTheValuesWarning(t *testing.T) {
	h := newHarness(t)
	threadstest.Ingest(t, h.svc, "private.json", func(ev map[string]any) {
		ev["data"].(map[string]any)["roles"] = []any{map[string]any{
			"argument": "where.email", "role": "recipient",
			"values": []any{map[string]any{"value": "bea.priv\u200bate@exаmple.com", "origin": "request"}},
		}}
	})
	h.drain(t)
	if len(h.surf.posts) == 0 {
		t.Fatal("no card was posted")
	}
	for _, p := range h.surf.posts {
		c := templates.Build(p.Card.Input())
		got := strings.Join(c.Warnings, "\n")
		if !strings.Contains(got, "A value of where.email (recipient) holds an invisible character (U+200B)") ||
			!strings.Contains(got, "mixes scripts (Latin, Cyrillic)") {
			t.Errorf("the card posted to %s warns %q, want the hidden character and the mixed scripts", p.Target, c.Warnings)
		}
		if strings.Contains(got, "bea.priv") || !c.Restricted {
			t.Errorf("the card posted to %s (restricted %v) quotes the value: %q", p.Target, c.Restricted, got)
		}
	}
}
