package app

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

func TestGroupFailsWhenAPartReturnsBeforeTheStop(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	cases := []struct {
		name string
		ret  error
		want error
	}{
		{"with an error", boom, boom},
		{"with none", nil, errReturned},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			g := newGroup(t.Context(), slog.New(slog.DiscardHandler))
			g.Go("a part that runs", func(ctx context.Context) error { <-ctx.Done(); return nil })
			g.Go("the outbox worker", func(context.Context) error { return c.ret })
			<-g.Failed()
			err := g.Err()
			if !errors.Is(err, c.want) || !strings.HasPrefix(err.Error(), "the outbox worker stopped: ") {
				t.Errorf("Err: %v, want the part named and %v", err, c.want)
			}
			g.Cancel()
			if !g.Wait(t.Context()) {
				t.Fatal("Wait: the parts did not return")
			}
			if g.Err() != err {
				t.Errorf("Err after the stop: %v, want the first failure %v", g.Err(), err)
			}
		})
	}
}

// Parts that return once the stop has begun (the HTTP server when it is
// shut down, before the others are cancelled) have finished, not failed.
func TestGroupStopIsNoFailure(t *testing.T) {
	t.Parallel()
	g := newGroup(t.Context(), slog.New(slog.DiscardHandler))
	shutdown := make(chan struct{})
	g.Go("the HTTP server", func(context.Context) error { <-shutdown; return nil })
	g.Go("the scheduler", func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
	g.Stop()
	close(shutdown)
	g.Cancel()
	if !g.Wait(t.Context()) {
		t.Fatal("Wait: the parts did not return")
	}
	select {
	case <-g.Failed():
		t.Fatalf("a stopped group failed: %v", g.Err())
	default:
	}
	if g.Err() != nil {
		t.Fatalf("Err: %v", g.Err())
	}
}

// Wait gives up when its context ends before the parts return.
func TestGroupWaitIsBounded(t *testing.T) {
	t.Parallel()
	g := newGroup(t.Context(), slog.New(slog.DiscardHandler))
	release := make(chan struct{})
	g.Go("a part stuck in its work", func(context.Context) error { <-release; return nil })
	g.Cancel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if g.Wait(ctx) {
		t.Fatal("Wait returned true with a part still running")
	}
	close(release)
	if !g.Wait(t.Context()) {
		t.Fatal("Wait: the part did not return once released")
	}
}
