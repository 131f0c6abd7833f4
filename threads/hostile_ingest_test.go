package threads_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
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

// A hostile call's arguments are shaped by whoever steers the agent. The
// bot redacts them as it ingests the event, in the content work done
// before the ingest transaction (prepare); the transaction then holds the
// store's write lock only to read and write rows
// (TestIngestContentWorkOutsideTheTransaction). These tests hold a
// person's click to its bound during either part of that ingest, and
// what the store keeps of free text to its redacted form. That each pass
// over call data stays linear in its size is held by approval's
// TestRedactionCostPerByteFlat and templates' TestRenderCostPerByteFlat,
// which compare costs per byte on a small and a large input.

// ingestGate holds the ingest whose context carries it at two points, so
// that a click is sure to overlap each part: just before its content work
// (once prepare has read the approval, before StoredForm redacts it), and
// in its transaction, with the write lock held. Each point is reported
// (reading, inTx) and holds the ingest until the test lets it go on. The
// transaction begins only once the test arms it (armTx), when the click
// made during the content work is done: were it to begin first, it would
// hold the write lock at its point while that click, which the test waits
// for before letting it go on, waited for the lock.
type ingestGate struct {
	reading, inTx           chan struct{} // closed when the ingest reaches the point
	afterRead, afterTxBegan chan struct{} // closed by the test to let it go on
	txArmed                 chan struct{} // closed by the test to let the transaction begin
	readOnce, txOnce        sync.Once
	goRead, goTx, armTx     func()
}

func newIngestGate() *ingestGate {
	g := &ingestGate{reading: make(chan struct{}), inTx: make(chan struct{}),
		afterRead: make(chan struct{}), afterTxBegan: make(chan struct{}), txArmed: make(chan struct{})}
	g.goRead = sync.OnceFunc(func() { close(g.afterRead) })
	g.goTx = sync.OnceFunc(func() { close(g.afterTxBegan) })
	g.armTx = sync.OnceFunc(func() { close(g.txArmed) })
	return g
}

// release lets the ingest past every point, should a test end first.
func (g *ingestGate) release() { g.goRead(); g.armTx(); g.goTx() }

// ingestGateKey marks the context of the ingest a gate holds.
type ingestGateKey struct{}

func gateOf(ctx context.Context) *ingestGate {
	g, _ := ctx.Value(ingestGateKey{}).(*ingestGate)
	return g
}

// ingestGateStore is the store as the bot uses it, holding an ingest whose
// context carries an ingestGate at the gate's points.
type ingestGateStore struct {
	store.Store
}

// ApprovalGet is prepare's read of the approval, outside any transaction;
// the content work (redaction) follows it.
func (s *ingestGateStore) ApprovalGet(ctx context.Context, id string) (*store.Approval, error) {
	row, err := s.Store.ApprovalGet(ctx, id)
	if g := gateOf(ctx); g != nil {
		g.readOnce.Do(func() {
			close(g.reading)
			<-g.afterRead
		})
	}
	return row, err
}

func (s *ingestGateStore) InTx(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	if g := gateOf(ctx); g != nil {
		select {
		case <-g.txArmed: // before the write lock is taken
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return s.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		if g := gateOf(ctx); g != nil {
			g.txOnce.Do(func() {
				close(g.inTx)
				<-g.afterTxBegan
			})
		}
		return fn(ctx, tx)
	})
}

// OneWriter and Alone are the store's own: the wrapper must not change
// how the service commits or how long the deadline waits.
func (s *ingestGateStore) OneWriter() bool {
	o, ok := s.Store.(store.OneWriter)
	return ok && o.OneWriter()
}

func (s *ingestGateStore) Alone() bool {
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
// redact is being ingested, on SQLite on disk, whichever part of the
// ingest it meets: one click starts as the event's redaction does (its
// content work, before the transaction: "https://a:" once took seconds
// per 64 KiB there, and stalled every write while it ran inside the
// transaction), another while its transaction holds the write lock. The
// event's arguments are 900 KiB of a shape each redaction rule once read
// again from every start. A redactor made slow again, but kept outside
// the transaction, stalls no click; the cost tests in approval and
// templates are what fail then.
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
	h := newDecideHarnessFrom(t, testConfig, time.Minute, func(o *threads.Options) {
		o.Store = &ingestGateStore{Store: o.Store}
	})
	// card ingests merge.json as an approval of its own (id), for a click.
	card := func(t *testing.T, id string) {
		t.Helper()
		body, _ := readEvent(t, "merge.json")
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		m["id"] = "evt-" + id
		m["data"].(map[string]any)["id"] = id
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
		h.fake.AddApproval(id, 1, arguments(t, "a-merge1.json"), false)
	}
	// click denies card id once let go, and checks it was recorded within
	// the bound while part of the hostile ingest ran.
	click := func(t *testing.T, id, during string, letGo func()) {
		t.Helper()
		// A click the ingest stalls is given up after a few bounds, so a
		// stall fails here, saying so, not at the test binary's timeout.
		ctx, cancel := context.WithTimeout(context.Background(), 5*threads.RecordBound)
		defer cancel()
		letGo()
		start := time.Now()
		res, err := h.svc.Decide(ctx, threads.DecideRequest{Tenant: "acme", ApprovalID: id,
			Revision: 1, Approve: false, Person: slackPerson("U0KEVIN"), Comment: "no"})
		took := time.Since(start)
		if err != nil || !res.Sent || took > threads.RecordBound {
			t.Fatalf("the click took %v (%+v, %v), started %s: want it recorded within threads.RecordBound (%v)",
				took, res, err, during, threads.RecordBound)
		}
		if a := h.state(t, id); len(a.Deciding) == 0 {
			t.Fatalf("no decision in flight on %s after the click", id)
		}
	}
	for i, p := range pieces {
		t.Run(p.name, func(t *testing.T) {
			inWork, inTx := fmt.Sprintf("a-click%c-work", 'a'+i), fmt.Sprintf("a-click%c-tx", 'a'+i)
			card(t, inWork)
			card(t, inTx)

			hostileBody, hostile := hostileEvent(t, "a-hostile-"+p.name, p.piece)
			sum := sha256.Sum256(hostileBody)
			gate := newIngestGate()
			defer gate.release()
			ingested := make(chan error, 1)
			go func() {
				ctx := context.WithValue(context.Background(), ingestGateKey{}, gate)
				_, err := h.svc.Ingest(ctx, threads.IngestRequest{Event: hostile, BodySHA256: hex.EncodeToString(sum[:])})
				ingested <- err
			}()
			// One click as the content work (redaction) begins ...
			select {
			case <-gate.reading:
			case err := <-ingested:
				t.Fatalf("the hostile event was ingested without reading its approval first: %v", err)
			}
			click(t, inWork, fmt.Sprintf("as the redaction of %d bytes of %q began", hostileSize, p.piece), gate.goRead)
			// ... and one while the transaction holds the write lock.
			gate.armTx()
			select {
			case <-gate.inTx:
			case err := <-ingested:
				t.Fatalf("the hostile event was ingested without a transaction: %v", err)
			}
			click(t, inTx, fmt.Sprintf("while the transaction ingesting %d bytes of %q held the write lock", hostileSize, p.piece), gate.goTx)
			if ierr := <-ingested; ierr != nil {
				t.Fatalf("ingest the hostile event: %v", ierr)
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
