// Package threadstest holds what the tests around threads share: a
// migrated SQLite store on disk, fixture events fed to a service as the
// backend's event handler feeds them, the backend's full arguments of a
// fixture approval, and a bounded wait for something a goroutine does.
// The Slack, Discord, click and decision-page tests build their bots
// from these, so one fixture rule holds for all of them.
package threadstest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"approvalsbot/adapters/backend"
	"approvalsbot/adapters/backend/backendtest"
	"approvalsbot/adapters/logsurface"
	"approvalsbot/approval"
	"approvalsbot/internal/fixtures"
	"approvalsbot/store"
	"approvalsbot/store/sqlite"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// OpenSQLite is a migrated SQLite store in a file of the test's own
// temporary directory, closed when the test ends. It is opened as a
// store other processes may share (not store.Alone), so the deadline
// keeps its grace for clicks a replica may be recording.
func OpenSQLite(t testing.TB) *sqlite.Store { return openSQLite(t, false) }

// OpenExclusiveSQLite is OpenSQLite opened as `bot serve` opens it:
// Exclusive, holding its lock file, so the store is the process's alone
// (store.Alone).
func OpenExclusiveSQLite(t testing.TB) *sqlite.Store { return openSQLite(t, true) }

func openSQLite(t testing.TB, exclusive bool) *sqlite.Store {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "bot.db"), Exclusive: exclusive})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(ctx); err != nil {
		st.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// Renderer is the bot's card templates, loaded.
func Renderer(t testing.TB) *templates.Renderer {
	t.Helper()
	r, err := templates.New(templates.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// ServiceOptions say what Service builds a threads.Service on.
type ServiceOptions struct {
	Store   store.Store
	Tenants threads.Tenants
	// Backend is the fake job backend the service decides at, through
	// the real client, its calls signed with CallsSecret.
	Backend     *backendtest.Fake
	CallsSecret string
	// Clock is the service's; nil means a fake clock at FixtureNow.
	Clock threads.Clock
	// Logger gets the service's lines; nil discards.
	Logger *slog.Logger
	// Surfaces are the chat surfaces; anything else goes to the log
	// surface, written nowhere.
	Surfaces map[string]threads.Surface
	// Features are the backend's optional parts the client uses
	// (backend.features); grants and questions turn threads' grants and
	// questions on too, as the bot does.
	Features []string
	// Turns: the backend takes a turn's batch decision (feature turns),
	// so a turn's calls share one card.
	Turns bool
}

// Service is threads.Service as the bot builds it, on o: the real
// backend client (its retries given up after 5 s) calling the fake
// backend.
func Service(t testing.TB, o ServiceOptions) *threads.Service {
	t.Helper()
	features := slices.Clone(o.Features)
	if o.Turns && !slices.Contains(features, backend.FeatureTurns) {
		features = append(features, backend.FeatureTurns)
	}
	client, err := backend.NewClient(backend.ClientOptions{BaseURL: o.Backend.URL(), Secrets: [][]byte{[]byte(o.CallsSecret)},
		MaxElapsed: 5 * time.Second, Features: features})
	if err != nil {
		t.Fatal(err)
	}
	if o.Clock == nil {
		o.Clock = clockwork.NewFakeClockAt(FixtureNow)
	}
	svc, err := threads.New(threads.Options{Store: o.Store, Tenants: o.Tenants, Clock: o.Clock, Logger: o.Logger,
		Surfaces: o.Surfaces, Backend: client.ForThreads(), FingerprintSecrets: [][]byte{[]byte(o.CallsSecret)}, Turns: o.Turns,
		Fallback:  logsurface.New(logsurface.Options{Out: io.Discard, Renderer: Renderer(t)}),
		Grants:    slices.Contains(o.Features, backend.FeatureGrants),
		Questions: slices.Contains(o.Features, backend.FeatureQuestions)})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// Event reads the fixture event name (events/NAME) and parses it as the
// backend's event handler does: the body as sent, and the event.
func Event(t testing.TB, name string) ([]byte, *approval.Event) {
	t.Helper()
	p, err := fixtures.Path("events", name)
	if err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := approval.Parse(body)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return body, ev
}

// FixtureNow is the fixtures' own time: their requests were made just
// before it, and their deadlines lie after it.
var FixtureNow = time.Date(2026, 11, 29, 18, 0, 1, 0, time.UTC)

// Card is the waiting card of fixture event name at FixtureNow, its first
// revision the newest, for calling a surface directly.
func Card(t testing.TB, name string) threads.Card {
	t.Helper()
	_, ev := Event(t, name)
	return threads.Card{Tenant: ev.Tenant, Approval: ev.Approval, State: approval.StatePending, HeldRevision: 1,
		Now: FixtureNow}
}

// Delivery says how a surface classified err for the outbox: whether it
// is permanent, the wait the platform asked for, and whether it was
// classified at all (false: a plain error, retried with backoff).
func Delivery(err error) (permanent bool, after time.Duration, classified bool) {
	var de *threads.DeliveryError
	if errors.As(err, &de) {
		return de.Permanent, de.RetryAfter, true
	}
	return false, 0, false
}

// Ingest feeds the fixture event name (events/NAME), changed by edit
// (the envelope as a map) when edit is set, to svc, as the backend's
// event handler does once it has verified the event, and returns it as
// parsed. The fixture's times are kept: a test that ingests it runs the
// service on a clock at the fixtures' date.
func Ingest(t testing.TB, svc *threads.Service, name string, edit func(ev map[string]any)) *approval.Event {
	t.Helper()
	body, ev := Event(t, name)
	if edit != nil {
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		edit(m)
		var err error
		if body, err = json.Marshal(m); err != nil {
			t.Fatal(err)
		}
		if ev, err = approval.Parse(body); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	sum := sha256.Sum256(body)
	if _, err := svc.Ingest(context.Background(), threads.IngestRequest{Event: ev, BodySHA256: hex.EncodeToString(sum[:])}); err != nil {
		t.Fatalf("ingest %s: %v", name, err)
	}
	return ev
}

// Backed tells the fake backend what stands behind ev's request, when it
// carries one: the full arguments of its revision (Arguments), whether
// its content is restricted, and its function, so clicks and argument
// look-ups find the call there as the backend holds it.
func Backed(t testing.TB, back *backendtest.Fake, ev *approval.Event) {
	t.Helper()
	if a := ev.Approval; a != nil {
		back.AddApproval(a.ID, a.Revision, Arguments(t, a.ID, a.Revision), a.ContentRestricted())
		back.SetFunction(a.ID, a.Call.Function)
	}
}

// Arguments is the backend's truth for a revision of a fixture approval:
// the full arguments of arguments/ID.json, or ID.rN.json for revision N
// above 1.
func Arguments(t testing.TB, id string, revision int) json.RawMessage {
	t.Helper()
	name := id + ".json"
	if revision > 1 {
		name = fmt.Sprintf("%s.r%d.json", id, revision)
	}
	args, err := fixtures.Arguments(name)
	if err != nil {
		t.Fatal(err)
	}
	return args
}

// EventuallyWithin bounds Eventually's wait: long enough for a loaded
// machine running the race detector, and only ever spent when the test
// fails.
const EventuallyWithin = 20 * time.Second

// Eventually waits until cond holds, checking every 10 ms, and fails the
// test with what when it has not held within EventuallyWithin.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(EventuallyWithin)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// HeldPastTheDeadline is the part of a surface's test of a click
// received just before a deadline and held (release lets it go on,
// answered waits for the surface's answer) while the deadline passes:
// the deadline's tick sends nothing while the click is held, and once
// it is answered and the grace is over, the backend has the click's
// decision alone, by actor.
func HeldPastTheDeadline(t testing.TB, svc *threads.Service, clock *clockwork.FakeClock, back *backendtest.Fake,
	release, answered func(), actor, decision string) {
	t.Helper()
	drain := func() {
		t.Helper()
		if _, err := svc.DrainOutbox(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(6 * time.Millisecond) // the deadline has passed
	if r, err := svc.Tick(context.Background()); err != nil || r.Deadlines != 1 {
		t.Fatalf("the deadline's tick: %+v %v", r, err)
	}
	drain()
	if got := back.Decisions(); len(got) != 0 {
		t.Fatalf("the backend got %d decisions while a click that arrived before the deadline was being recorded", len(got))
	}
	release()
	answered()
	drain()
	clock.Advance(2 * threads.RecordBound)
	if _, err := svc.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	drain()
	if got := back.Decisions(); len(got) != 1 || got[0].Request.Actor != actor || got[0].Request.Decision != decision {
		t.Fatalf("the backend got %+v, want %s's %s alone", got, actor, decision)
	}
}
