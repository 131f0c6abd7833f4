package ladder

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// Under synctest the scheduler runs in virtual time: no sleeps in real time.
func TestRunnerTicksSkipsOverlapsAndSurvivesPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ticks, slowRuns, afterPanic atomic.Int64
		panicked := atomic.Bool{}
		r, err := NewRunner(RunnerOptions{Jobs: []Job{
			{Name: "tick", Spec: Every(10 * time.Second), Run: func(context.Context) error { ticks.Add(1); return nil }},
			{Name: "slow", Spec: Every(time.Second), Run: func(ctx context.Context) error {
				slowRuns.Add(1)
				select { // runs 3.5 s: the runs due meanwhile are skipped
				case <-time.After(3500 * time.Millisecond):
				case <-ctx.Done():
				}
				return nil
			}},
			{Name: "panics once", Spec: Every(time.Second), Run: func(context.Context) error {
				if panicked.CompareAndSwap(false, true) {
					panic("boom")
				}
				afterPanic.Add(1)
				return nil
			}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { r.Run(ctx); close(done) }()
		time.Sleep(60*time.Second + 500*time.Millisecond)
		cancel()
		<-done
		if got := ticks.Load(); got != 6 {
			t.Errorf("ticks in 60 s: %d, want 6", got)
		}
		// A 3.5 s job every second starts about every 4 s when overlaps skip.
		if got := slowRuns.Load(); got < 13 || got > 16 {
			t.Errorf("slow runs in 60 s: %d, want about 15 (overlapping runs skipped)", got)
		}
		if got := afterPanic.Load(); got < 55 {
			t.Errorf("runs after a panic: %d: the panic stopped the job", got)
		}
	})
}

func TestRunnerRefusesBadSpecs(t *testing.T) {
	if _, err := NewRunner(RunnerOptions{Jobs: []Job{{Name: "x", Spec: "every ten seconds", Run: func(context.Context) error { return nil }}}}); err == nil {
		t.Fatal("a bad spec was accepted")
	}
	if _, err := NewRunner(RunnerOptions{Jobs: []Job{{Name: "digest", Spec: "CRON_TZ=Europe/Berlin 0 9 * * 1-5", Run: func(context.Context) error { return nil }}}}); err != nil {
		t.Fatalf("a zoned spec: %v", err)
	}
}
