package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"approvalsbot/store"
)

// OutboxChannel is the channel OutboxInsert notifies and Listen listens
// on. It is per database, so stores of several schemas wake each other,
// harmlessly.
const OutboxChannel = "bot_outbox"

// outboxNotify notifies a channel at commit, a transaction's identical
// ones merged. $1 channel.
const outboxNotify = `SELECT pg_notify($1, '')`

// The listener's timing: a connection silent for listenIdle is pinged;
// reconnections back off, doubling with jitter, and a connection that
// lasted listenBackoffMax resets the backoff.
const (
	listenIdle        = 30 * time.Second
	listenPingTimeout = 5 * time.Second
	listenBackoffMin  = 100 * time.Millisecond
	listenBackoffMax  = 10 * time.Second
	listenSuffix      = " listen" // the listener's application_name suffix
)

// Listen listens on OutboxChannel on a connection of its own and calls
// wake for each notification, and each time it has (re)connected, since
// notifications sent while nobody listened are lost: keep the periodic
// poll. wake must not block; wake-ups may be merged. Listen reconnects
// with backoff until ctx ends (nil) or the store closes
// (store.ErrUnavailable).
func (s *Store) Listen(ctx context.Context, wake func()) error {
	parent := ctx
	ctx, cancel := context.WithCancel(ctx) // also cancelled by Close
	defer cancel()
	id, ok := s.addListener(cancel)
	if !ok {
		return fmt.Errorf("listen for outbox rows: %w: %w", store.ErrUnavailable, errClosed)
	}
	defer s.removeListener(id)

	// ended says why ctx ended: the caller's ctx (nil) or Close.
	ended := func() error {
		if parent.Err() != nil {
			return nil
		}
		return fmt.Errorf("listen for outbox rows: %w: %w", store.ErrUnavailable, errClosed)
	}
	backoff := listenBackoffMin
	for {
		began := time.Now()
		err := s.listenOnce(ctx, wake)
		if ctx.Err() != nil {
			return ended()
		}
		if time.Since(began) >= listenBackoffMax {
			backoff = listenBackoffMin
		}
		wait := backoff/2 + rand.N(backoff/2+1)
		s.log.LogAttrs(ctx, slog.LevelWarn, "outbox listener disconnected; reconnecting",
			slog.String("err", err.Error()), slog.Duration("retry_in", wait))
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ended()
		case <-timer.C:
		}
		backoff = min(2*backoff, listenBackoffMax)
	}
}

// listenOnce connects, listens and waits for notifications until the
// connection fails or ctx ends, and says why it stopped.
func (s *Store) listenOnce(ctx context.Context, wake func()) error {
	conn, err := pgx.ConnectConfig(ctx, s.listenCfg)
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{OutboxChannel}.Sanitize()); err != nil {
		return err
	}
	s.log.LogAttrs(ctx, slog.LevelDebug, "outbox listener listening", slog.String("channel", OutboxChannel))
	wake()
	for {
		wctx, cancel := context.WithTimeout(ctx, listenIdle)
		_, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil:
			wake()
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, context.DeadlineExceeded) && pgconn.Timeout(err):
			// Silence for listenIdle: a cut-short wait leaves the
			// connection usable, so ask it whether it still answers.
			pctx, cancel := context.WithTimeout(ctx, listenPingTimeout)
			err := conn.Ping(pctx)
			cancel()
			if err != nil && ctx.Err() == nil {
				return err
			}
		default:
			return err
		}
	}
}

func (s *Store) addListener(stop context.CancelFunc) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return 0, false
	}
	s.nextID++
	s.listeners[s.nextID] = stop
	return s.nextID, true
}

func (s *Store) removeListener(id int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.listeners, id)
}
