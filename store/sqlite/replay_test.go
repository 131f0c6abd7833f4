package sqlite_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"approvalsbot/store"
)

// TestReplaySeenForgetsAsItGoes: keys past their time leave the table as
// later calls come (a few each), so it holds what is live, not every
// request ever signed; a key is stored as lower-case hex of its bytes.
func TestReplaySeenForgetsAsItGoes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bot.db")
	s := openAt(t, path)
	base := time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)
	record := func(key string, now time.Time) {
		t.Helper()
		if _, err := s.ReplaySeen(t.Context(), store.ReplaySeenParams{Key: []byte(key), Now: now, Until: now.Add(10 * time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 200 {
		record(fmt.Sprint("old-", i), base)
	}
	later := base.Add(time.Hour)
	for i := range 30 {
		record(fmt.Sprint("new-", i), later)
	}
	db := openRaw(t, path)
	var total, past int
	if err := db.QueryRowContext(t.Context(), `SELECT COUNT(*), COALESCE(SUM(forget_at <= ?), 0) FROM replay_seen`, later.UnixMilli()).Scan(&total, &past); err != nil {
		t.Fatal(err)
	}
	// 30 calls forget up to 8 each: all 200 past keys would go in 25.
	if past != 0 || total != 30 {
		t.Fatalf("replay_seen holds %d keys, %d of them past their time; want the 30 live ones", total, past)
	}
	var key string
	if err := db.QueryRowContext(t.Context(), `SELECT key FROM replay_seen ORDER BY key LIMIT 1`).Scan(&key); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%x", "new-0"); key != want {
		t.Fatalf("key stored as %q, want %q", key, want)
	}
}
