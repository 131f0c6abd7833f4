package postgres_test

import (
	"context"
	"log/slog"
	"os"
	"sync"

	"approvalsbot/store/postgres"
)

// A replica opens the store, migrates (replicas starting together migrate
// once), and listens for outbox rows beside its worker's periodic poll.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	s, err := postgres.Open(ctx, postgres.Options{
		DSN:    os.Getenv("BOT_STORE_DSN"), // e.g. postgres://bot:…@db:5432/bot?sslmode=verify-full
		Logger: log,
	})
	if err != nil {
		log.Error("open store", "err", err)
		return
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		log.Error("migrate store", "err", err)
		return
	}
	wake := make(chan struct{}, 1)
	var wg sync.WaitGroup
	wg.Go(func() {
		_ = s.Listen(ctx, func() {
			select {
			case wake <- struct{}{}: // the worker claims at once
			default: // it is already due to
			}
		})
	})
	defer wg.Wait()
	defer cancel()
	// … the outbox worker selects on wake and on its poll timer …
}
