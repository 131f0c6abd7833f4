package click

import (
	"testing"
	"time"
)

func TestWaited(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second: "0s", 45 * time.Second: "45s", 15 * time.Minute: "15m", 2 * time.Hour: "2h",
		2*time.Hour + 5*time.Minute: "2h5m", 76 * time.Hour: "3d4h",
	} {
		if got := Waited(d); got != want {
			t.Errorf("Waited(%s) = %q, want %q", d, got, want)
		}
	}
}

// TestDeadlineAt: a deadline is worded in the tenant's zone, its date
// left out only when it falls on today's date there, whatever the date
// in UTC.
func TestDeadlineAt(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name     string
		deadline time.Time
		zone     *time.Location
		want     string
	}{
		{"UTC today", now.Add(2 * time.Hour), nil, "20:00 UTC"},
		{"UTC tomorrow", now.Add(24 * time.Hour), time.UTC, "2026-11-30 18:00 UTC"},
		{"Berlin today", now.Add(2 * time.Hour), berlin, "21:00 CET"},
		{"Berlin: today in UTC, tomorrow there", now.Add(5*time.Hour + 30*time.Minute), berlin, "2026-11-30 00:30 CET"},
		{"Berlin in summer time", time.Date(2027, 7, 1, 12, 0, 0, 0, time.UTC), berlin, "2027-07-01 14:00 CEST"},
		// At 03:00 on the 30th in Tokyo, 05:00 there is today, though
		// UTC's today is the 29th.
		{"Tokyo: today there", now.Add(2 * time.Hour), tokyo, "05:00 JST"},
		{"Tokyo: the 29th there is not today", now.Add(-10 * time.Hour), tokyo, "2026-11-29 17:00 JST"},
	} {
		if got := DeadlineAt(c.deadline, now, c.zone); got != c.want {
			t.Errorf("%s: DeadlineAt(%s) = %q, want %q", c.name, c.deadline, got, c.want)
		}
	}
}
