package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"approvalsbot/internal/fixtures"
)

// fixtureEvents hands one test's fixture events to a bot that runs on the
// real clock. The fixtures are written at fixed instants; a bot that gets
// them as they are would find them long past their deadline. Every event
// it gives is moved by the one delta taken when it was made, which brings
// the fixtures' earliest instant to that moment (now): the instants of
// all of the test's events keep their offsets, so a deadline keeps its
// distance from its request and a reask or resolve still lines up with
// it, and no test depends on the dates the fixtures were written with.
//
// It is the only way the end-to-end tests read fixture events: they never
// send one as it is on disk.
type fixtureEvents struct {
	raw   map[string][]byte // the event files by name, as on disk
	now   time.Time         // where the fixtures' earliest instant lands
	delta time.Duration     // what moves them there
}

// eventsNow reads the fixture events and moves them to now.
func eventsNow(t *testing.T) *fixtureEvents {
	t.Helper()
	dir, err := fixtures.Dir()
	if err != nil {
		t.Fatal(err)
	}
	return eventsNowFrom(t, dir)
}

// eventsNowFrom is eventsNow over the fixtures in dir.
func eventsNowFrom(t *testing.T, dir string) *fixtureEvents {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "events", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixture events in %s: %v", dir, err)
	}
	f := &fixtureEvents{raw: map[string][]byte{}}
	var earliest time.Time
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		at, err := eventTime(b)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if earliest.IsZero() || at.Before(earliest) {
			earliest = at
		}
		f.raw[filepath.Base(p)] = b
	}
	f.now = time.Now().UTC().Truncate(time.Millisecond) // the store keeps milliseconds
	f.delta = f.now.Sub(earliest)
	return f
}

// names lists the fixture events by file name.
func (f *fixtureEvents) names() []string {
	var ns []string
	for n := range f.raw {
		ns = append(ns, n)
	}
	return ns
}

// event is the fixture event name, moved by the test's delta.
func (f *fixtureEvents) event(t *testing.T, name string) []byte {
	t.Helper()
	return f.eventWith(t, name, nil)
}

// eventWith is event, changed by edit after the move (other ids, a
// field taken out).
func (f *fixtureEvents) eventWith(t *testing.T, name string, edit func(ev map[string]any)) []byte {
	t.Helper()
	b, err := f.move(name, f.delta, edit)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// requestedAt is the fixture event name moved so that its own time is at
// (rather than by the shared delta) and changed by edit: for a test that
// makes many approvals of one fixture, each requested when it is sent.
// It does not fail the test, so goroutines may call it.
func (f *fixtureEvents) requestedAt(at time.Time, name string, edit func(ev map[string]any)) ([]byte, error) {
	raw, ok := f.raw[name]
	if !ok {
		return nil, fmt.Errorf("no fixture event %s", name)
	}
	own, err := eventTime(raw)
	if err != nil {
		return nil, err
	}
	return f.move(name, at.Sub(own), edit)
}

func (f *fixtureEvents) move(name string, delta time.Duration, edit func(ev map[string]any)) ([]byte, error) {
	raw, ok := f.raw[name]
	if !ok {
		return nil, fmt.Errorf("no fixture event %s", name)
	}
	m, err := moveEventTimes(raw, delta, edit)
	if err != nil {
		return nil, fmt.Errorf("move %s: %w", name, err)
	}
	return m.Body, nil
}

// instant reads the instant at path (e.g. "data", "requested_at") of an
// event body.
func instant(t *testing.T, body []byte, path ...string) time.Time {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	for _, k := range path {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	s, _ := v.(string)
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("%v of the event: %q: %v", path, s, err)
	}
	return at
}

// fixturesDated copies the fixtures into a new directory with every
// event's instants moved by years, as if they had been written then: a
// test run on them proves that no test depends on the fixtures' dates.
func fixturesDated(t *testing.T, years int) string {
	t.Helper()
	src, err := fixtures.Dir()
	if err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	for _, sub := range []string{"events", "arguments"} {
		if err := os.MkdirAll(filepath.Join(dst, sub), 0o755); err != nil {
			t.Fatal(err)
		}
		files, _ := filepath.Glob(filepath.Join(src, sub, "*.json"))
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if sub == "events" {
				at, err := eventTime(b)
				if err != nil {
					t.Fatal(err)
				}
				m, err := moveEventTimes(b, at.AddDate(years, 0, 0).Sub(at), nil)
				if err != nil {
					t.Fatal(err)
				}
				b = m.Body
			}
			if err := os.WriteFile(filepath.Join(dst, sub, filepath.Base(p)), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dst
}

// readArguments reads the full arguments behind an approval's digest, as
// the backend's look-up returns them (fixtures/arguments).
func readArguments(t *testing.T, name string) json.RawMessage {
	t.Helper()
	p, err := fixtures.Path("arguments", name)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var fx struct {
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return fx.Arguments
}
