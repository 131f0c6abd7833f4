package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
)

// lockClassSingleton is the advisory-lock class of work exactly one
// replica does at a time (the Discord gateway connection).
const lockClassSingleton = 2

// singletonPoll is how often a waiting replica tries the lock again, and
// how often the holder checks its session.
const singletonPoll = 2 * time.Second

// Singleton waits for the named session-level advisory lock of the
// store's schema, on a connection of its own, so one replica holds it. lost
// is closed when the lock's session dies and the server frees the lock.
func (s *Store) Singleton(ctx context.Context, name string) (lost <-chan struct{}, release func(), err error) {
	for {
		lost, release, err := s.trySingleton(ctx, name)
		if err != nil || release != nil {
			return lost, release, err
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(singletonPoll):
		}
	}
}

func (s *Store) trySingleton(ctx context.Context, name string) (<-chan struct{}, func(), error) {
	if s.closed.Load() {
		return nil, nil, fmt.Errorf("take lock %s: the store is closed", name)
	}
	conn, err := pgx.ConnectConfig(ctx, s.listenCfg.Copy())
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		s.log.Warn("take lock: cannot reach the database; trying again", "lock", name, "err", err.Error())
		return nil, nil, nil
	}
	var schema string
	var got bool
	err = conn.QueryRow(ctx, migrationSchema).Scan(&schema)
	if err == nil {
		err = conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1, $2)`, lockClassSingleton, lockKey(schema+"/"+name)).Scan(&got)
	}
	if err != nil || !got {
		_ = conn.Close(context.WithoutCancel(ctx))
		if err != nil && ctx.Err() == nil {
			s.log.Warn("take lock: query failed; trying again", "lock", name, "err", err.Error())
		}
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, nil
	}
	lost := make(chan struct{})
	done := make(chan struct{})
	go func() { // watch the session: a dead one has lost the lock
		defer close(lost)
		t := time.NewTicker(singletonPoll)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				pctx, cancel := context.WithTimeout(context.Background(), singletonPoll)
				err := conn.Ping(pctx)
				cancel()
				if err != nil {
					s.log.LogAttrs(context.Background(), slog.LevelWarn, "singleton lock lost with its session",
						slog.String("lock", name), slog.String("err", err.Error()))
					return
				}
			}
		}
	}()
	var released bool
	release := func() {
		if released {
			return
		}
		released = true
		close(done)
		<-lost
		cctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		_ = conn.Close(cctx) // ending the session frees the lock
	}
	return lost, release, nil
}
