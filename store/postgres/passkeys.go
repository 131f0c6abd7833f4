package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"approvalsbot/store"
	"approvalsbot/store/internal/query"
)

// PasskeyAdd enrols one credential (store.Store.PasskeyAdd).
func (s *Store) PasskeyAdd(ctx context.Context, p store.PasskeyAddParams) error {
	const op = "enrol a passkey"
	if err := p.Check(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	c, done := s.on(ctx)
	defer done()
	tag, err := c.Exec(ctx, query.PasskeyInsert, query.PasskeyArgs(p)...)
	if err != nil {
		return s.fail(ctx, op, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%s: %w", op, store.ErrExists)
	}
	return nil
}

// PasskeyList lists passkeys (store.Store.PasskeyList).
func (s *Store) PasskeyList(ctx context.Context, p store.PasskeyListParams) ([]*store.Passkey, error) {
	const op = "list passkeys"
	q, args := query.PasskeyListTenant, []any{p.Tenant}
	if p.Member != "" {
		q, args = query.PasskeyListMember, []any{p.Tenant, p.Member}
	}
	c, done := s.on(ctx)
	defer done()
	rows, err := c.Query(ctx, q, args...)
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*store.Passkey, error) {
		return query.ScanPasskey(r)
	})
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	if out == nil {
		out = []*store.Passkey{}
	}
	return out, nil
}

// PasskeyRemove deletes one member's passkey (store.Store.PasskeyRemove).
func (s *Store) PasskeyRemove(ctx context.Context, p store.PasskeyRemoveParams) error {
	const op = "remove a passkey"
	c, done := s.on(ctx)
	defer done()
	tag, err := c.Exec(ctx, query.PasskeyDelete, p.ID, p.Tenant, p.Member)
	if err != nil {
		return s.fail(ctx, op, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%s: %w", op, store.ErrNotFound)
	}
	return nil
}

// PasskeyUse records a verified assertion (store.Store.PasskeyUse): one
// conditional UPDATE, so two uses with one count at once meet at the
// row's lock and the second finds the count moved.
func (s *Store) PasskeyUse(ctx context.Context, p store.PasskeyUseParams) error {
	const op = "record a passkey's use"
	c, done := s.on(ctx)
	defer done()
	tag, err := c.Exec(ctx, query.PasskeyUse, p.ID, p.Tenant, p.Member, int64(p.SignCount), query.Millis(p.Now))
	if err != nil {
		return s.fail(ctx, op, err)
	}
	if tag.RowsAffected() > 0 {
		return nil
	}
	var held int64
	if err := c.QueryRow(ctx, query.PasskeyCount, p.ID, p.Tenant, p.Member).Scan(&held); err != nil {
		return s.fail(ctx, op, err)
	}
	if held == 0 {
		return fmt.Errorf("%s: %w", op, store.ErrNotFound)
	}
	return fmt.Errorf("%s: %w", op, store.ErrSignCount)
}

// PasskeyChallengeAdd keeps a new challenge and forgets a few expired
// ones, in one round trip (store.Store.PasskeyChallengeAdd). Replicas
// pruning at once skip each other's rows.
func (s *Store) PasskeyChallengeAdd(ctx context.Context, ch *store.PasskeyChallenge) error {
	const op = "keep a passkey challenge"
	if err := store.CheckChallenge(ch); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	b := &pgx.Batch{}
	b.Queue(query.ChallengePrune(skipLocked), query.Millis(ch.CreatedAt), query.ChallengePruneBatch)
	b.Queue(query.ChallengeInsert, query.ChallengeArgs(ch)...)
	c, done := s.on(ctx)
	defer done()
	if err := c.SendBatch(ctx, b).Close(); err != nil {
		return s.fail(ctx, op, err)
	}
	return nil
}

// PasskeyChallengeTake takes a challenge (store.Store.PasskeyChallengeTake):
// one conditional UPDATE, so of takes at once exactly one finds it unused.
func (s *Store) PasskeyChallengeTake(ctx context.Context, p store.PasskeyChallengeTakeParams) (*store.PasskeyChallenge, error) {
	const op = "take a passkey challenge"
	c, done := s.on(ctx)
	defer done()
	ch, err := query.ScanChallenge(c.QueryRow(ctx, query.ChallengeTake, p.ID, query.Millis(p.Now)))
	if err == nil {
		ch.UsedAt = time.Time{} // as it was: this call took it
		return ch, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return nil, s.fail(ctx, op, err)
	}
	ch, err = query.ScanChallenge(c.QueryRow(ctx, query.ChallengeGet, p.ID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound(op)
	}
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	return ch, nil
}
