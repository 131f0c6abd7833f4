package pacing

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/time/rate"

	"approvalsbot/threads"
)

func TestPacesPerKeyHoldsAfter429AndNeverOutwaitsTheContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := New(rate.Limit(1), 1, "Chat")
		ctx := context.Background()
		start := time.Now()
		for range 3 {
			if err := p.Wait(ctx, "C1"); err != nil {
				t.Fatal(err)
			}
		}
		if got := time.Since(start); got != 2*time.Second {
			t.Fatalf("three calls at 1/s took %s, want 2s", got)
		}
		// Another key has its own bucket.
		start = time.Now()
		if err := p.Wait(ctx, "C2"); err != nil || time.Since(start) != 0 {
			t.Fatalf("another key waited %s (%v)", time.Since(start), err)
		}
		// A 429 holds the key for its Retry-After.
		p.Hold("C2", 30*time.Second)
		start = time.Now()
		if err := p.Wait(ctx, "C2"); err != nil || time.Since(start) < 30*time.Second {
			t.Fatalf("held key waited %s (%v)", time.Since(start), err)
		}
		// A wait longer than the context allows is not started.
		p.Hold("C3", time.Minute)
		short, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		start = time.Now()
		err := p.Wait(short, "C3")
		var de *threads.DeliveryError
		if !errors.As(err, &de) || de.RetryAfter != time.Minute || time.Since(start) != 0 {
			t.Fatalf("err %v after %s, want RetryAfter(1m) at once", err, time.Since(start))
		}
	})
}
