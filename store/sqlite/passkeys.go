package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"approvalsbot/store"
	"approvalsbot/store/internal/query"
)

// PasskeyAdd enrols one credential (store.Store.PasskeyAdd).
func (s *Store) PasskeyAdd(ctx context.Context, p store.PasskeyAddParams) error {
	const op = "enrol a passkey"
	if err := p.Check(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	var n int64
	err := s.batch(ctx, op, func(ctx context.Context, q querier) error {
		res, err := q.ExecContext(ctx, query.PasskeyInsert, query.PasskeyArgs(p)...)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return err
	}
	if n == 0 {
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
	rows, err := preparedDB{s.stmts}.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, s.fail(op, err)
	}
	defer rows.Close()
	out := []*store.Passkey{}
	for rows.Next() {
		pk, err := query.ScanPasskey(rows)
		if err != nil {
			return nil, s.fail(op, err)
		}
		out = append(out, pk)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail(op, err)
	}
	return out, nil
}

// PasskeyRemove deletes one member's passkey (store.Store.PasskeyRemove).
func (s *Store) PasskeyRemove(ctx context.Context, p store.PasskeyRemoveParams) error {
	const op = "remove a passkey"
	var n int64
	err := s.batch(ctx, op, func(ctx context.Context, q querier) error {
		res, err := q.ExecContext(ctx, query.PasskeyDelete, p.ID, p.Tenant, p.Member)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", op, store.ErrNotFound)
	}
	return nil
}

// PasskeyUse records a verified assertion (store.Store.PasskeyUse), in
// one IMMEDIATE transaction: the single writer orders two uses.
func (s *Store) PasskeyUse(ctx context.Context, p store.PasskeyUseParams) error {
	const op = "record a passkey's use"
	var moved bool
	var held int64
	err := s.batch(ctx, op, func(ctx context.Context, q querier) error {
		res, err := q.ExecContext(ctx, query.PasskeyUse, p.ID, p.Tenant, p.Member, int64(p.SignCount), query.Millis(p.Now))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if moved = n > 0; err != nil || moved {
			return err
		}
		return q.QueryRowContext(ctx, query.PasskeyCount, p.ID, p.Tenant, p.Member).Scan(&held)
	})
	switch {
	case err != nil:
		return err
	case moved:
		return nil
	case held == 0:
		return fmt.Errorf("%s: %w", op, store.ErrNotFound)
	}
	return fmt.Errorf("%s: %w", op, store.ErrSignCount)
}

// PasskeyChallengeAdd keeps a new challenge and forgets a few expired
// ones (store.Store.PasskeyChallengeAdd).
func (s *Store) PasskeyChallengeAdd(ctx context.Context, c *store.PasskeyChallenge) error {
	const op = "keep a passkey challenge"
	if err := store.CheckChallenge(c); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return s.batch(ctx, op, func(ctx context.Context, q querier) error {
		if _, err := q.ExecContext(ctx, query.ChallengePrune(""), query.Millis(c.CreatedAt), query.ChallengePruneBatch); err != nil {
			return err
		}
		_, err := q.ExecContext(ctx, query.ChallengeInsert, query.ChallengeArgs(c)...)
		return err
	})
}

// PasskeyChallengeTake takes a challenge (store.Store.PasskeyChallengeTake)
// in one IMMEDIATE transaction: the single writer orders two takes.
func (s *Store) PasskeyChallengeTake(ctx context.Context, p store.PasskeyChallengeTakeParams) (*store.PasskeyChallenge, error) {
	const op = "take a passkey challenge"
	var c *store.PasskeyChallenge
	err := s.batch(ctx, op, func(ctx context.Context, q querier) error {
		var err error
		c, err = query.ScanChallenge(q.QueryRowContext(ctx, query.ChallengeTake, p.ID, query.Millis(p.Now)))
		if err == nil {
			c.UsedAt = time.Time{} // as it was: this call took it
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		c, err = query.ScanChallenge(q.QueryRowContext(ctx, query.ChallengeGet, p.ID))
		if errors.Is(err, sql.ErrNoRows) {
			c = nil
			return nil
		}
		return err
	})
	switch {
	case err != nil:
		return nil, err
	case c == nil:
		return nil, fmt.Errorf("%s: %w", op, store.ErrNotFound)
	}
	return c, nil
}
