package refusal_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/internal/refusal"
	"approvalsbot/internal/syncbuf"
)

type line struct {
	Msg, Source, Reason, Path string
	Refused                   int
}

func lines(t *testing.T, out *syncbuf.Buffer) []line {
	t.Helper()
	var got []line
	for _, raw := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
		if len(raw) == 0 {
			continue
		}
		var l line
		if err := json.Unmarshal(raw, &l); err != nil {
			t.Fatalf("log line %q: %v", raw, err)
		}
		got = append(got, l)
	}
	return got
}

func TestOneLinePerSourceAndReasonPerInterval(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	var out syncbuf.Buffer
	l := refusal.New(refusal.Options{Logger: slog.New(slog.NewJSONHandler(&out, nil)), Message: "x: requests refused",
		Now: func() time.Time { return now }})
	for range 1000 {
		l.Refused("192.0.2.1:4000", "signature does not match", "path", "/a")
	}
	l.Refused("192.0.2.2:4000", "signature does not match", "path", "/a")           // another source
	l.Refused("192.0.2.1:4001", "body over 1 MiB", "path", "/a")                    // another reason
	l.Refused("[2001:db8:0:1ff::1]:4000", "signature does not match", "path", "/b") // an IPv6 /56 …
	l.Refused("[2001:db8:0:100::9]:4000", "signature does not match", "path", "/b") // … is one source
	now = now.Add(refusal.Every - time.Second)
	l.Refused("192.0.2.1:4000", "signature does not match", "path", "/a")
	now = now.Add(time.Second)
	l.Refused("192.0.2.1:4000", "signature does not match", "path", "/a") // due: counts the 1,001 since the first line
	l.Refused("192.0.2.2:4000", "signature does not match", "path", "/a") // due: its first since its line

	const msg = "x: requests refused"
	want := []line{
		{msg, "192.0.2.1", "signature does not match", "/a", 1},
		{msg, "192.0.2.2", "signature does not match", "/a", 1},
		{msg, "192.0.2.1", "body over 1 MiB", "/a", 1},
		{msg, "2001:db8:0:100::/56", "signature does not match", "/b", 1},
		{msg, "192.0.2.1", "signature does not match", "/a", 1001},
		{msg, "192.0.2.2", "signature does not match", "/a", 1},
	}
	if d := cmp.Diff(want, lines(t, &out)); d != "" {
		t.Errorf("lines (-want +got):\n%s", d)
	}
}

func TestManySourcesShareALine(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	var out syncbuf.Buffer
	l := refusal.New(refusal.Options{Logger: slog.New(slog.NewJSONHandler(&out, nil)), Message: "m",
		Now: func() time.Time { return now }})
	const n = 5000 // more sources than a Log remembers
	for i := range n {
		l.Refused(fmt.Sprintf("10.%d.%d.1:1", i/256, i%256), "r")
	}
	got := lines(t, &out)
	if len(got) >= n {
		t.Fatalf("%d sources in an interval wrote %d lines; want the ones past the memory to share one", n, len(got))
	}
	if last := got[len(got)-1]; last.Source != "others" || last.Refused != 1 {
		t.Errorf("the last line: %+v, want the first of the source \"others\"", last)
	}
}
