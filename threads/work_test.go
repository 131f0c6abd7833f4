package threads_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"approvalsbot/internal/syncbuf"
	"approvalsbot/threads"
)

func TestCloseWaitsForTheWorkInFlight(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := threads.NewRunner(nil)
		release := make(chan struct{})
		var deadline time.Time
		start := time.Now()
		if !r.Start(threads.Work{Timeout: 20 * time.Second, Run: func(ctx context.Context) {
			deadline, _ = ctx.Deadline()
			<-release
		}}) {
			t.Fatal("Start refused work before Close")
		}
		closed := make(chan struct{})
		go func() {
			r.Close()
			close(closed)
		}()
		synctest.Wait()
		select {
		case <-closed:
			t.Fatal("Close returned while work was in flight")
		default:
		}
		if !r.Closing() {
			t.Fatal("Closing is false once Close has begun")
		}
		if r.Start(threads.Work{Timeout: time.Second, Run: func(context.Context) { t.Error("work started after Close ran") }}) {
			t.Fatal("Start took work after Close began")
		}
		if done, ok := r.Enter(); ok || done != nil {
			t.Fatal("Enter took work after Close began")
		}
		close(release)
		<-closed
		if !deadline.Equal(start.Add(20 * time.Second)) {
			t.Fatalf("the work's context ends at %v, want its timeout after the start %v", deadline, start)
		}
	})
}

func TestWorkEndsWithItsTimeout(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := threads.NewRunner(nil)
		start := time.Now()
		var took time.Duration
		r.Start(threads.Work{Timeout: 90 * time.Second, Run: func(ctx context.Context) {
			<-ctx.Done()
			took = time.Since(start)
		}})
		r.Close()
		if took != 90*time.Second {
			t.Fatalf("the work ran %v, want its 90 s timeout", took)
		}
	})
}

func TestEnterIsWaitedForUntilDone(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := threads.NewRunner(nil)
		done, ok := r.Enter()
		if !ok {
			t.Fatal("Enter refused before Close")
		}
		closed := make(chan struct{})
		go func() {
			r.Close()
			close(closed)
		}()
		synctest.Wait()
		select {
		case <-closed:
			t.Fatal("Close returned before done")
		default:
		}
		done()
		done() // a second call is harmless
		<-closed
	})
}

// lockedBuffer collects log lines from every goroutine.
type lockedBuffer = syncbuf.Buffer

func TestPanickingWorkIsLoggedAndWaitedFor(t *testing.T) {
	t.Parallel()
	logs := &lockedBuffer{}
	r := threads.NewRunner(slog.New(slog.NewTextHandler(logs, nil)))
	if !r.Start(threads.Work{Timeout: time.Second, Run: func(context.Context) { panic("boom") }}) {
		t.Fatal("Start refused")
	}
	ran := false
	r.Start(threads.Work{Timeout: time.Second, Run: func(context.Context) { ran = true }})
	r.Close()
	if !strings.Contains(logs.String(), "panicked") || !strings.Contains(logs.String(), "boom") || !ran {
		t.Fatalf("after a panic, ran the next work %v; logs %q", ran, logs.String())
	}
	if !r.Start(threads.Work{}) {
		t.Fatal("work with nothing to run is refused after Close: want it done at once")
	}
}
