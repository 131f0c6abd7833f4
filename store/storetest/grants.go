package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/store"
)

func grantOf(id, tenant string, created time.Time, ttl time.Duration) *store.Grant {
	return &store.Grant{ID: id, Tenant: tenant, ApprovalID: "a-" + id, Revision: 2, Actor: "user:kevin",
		Scope: "values", Words: "for 1 h: acme_github.merge to acme/api only, 5 uses",
		Body: []byte(`{"id":"` + id + `","scope":"values"}`), State: store.GrantPending,
		CreatedAt: created, ExpiresAt: created.Add(ttl), UsesAllowed: 5}
}

// testGrants: a grant is kept once, in the transaction that makes it;
// read back whole; updated under its lock; listed by tenant and state,
// soonest expiry first; and the live ones past their time are found
// across tenants.
func testGrants(t *testing.T, s store.Store) {
	ctx := t.Context()
	g := grantOf("g-1", "acme", at(0), time.Hour)
	inTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.GrantInsert(ctx, g) })
	got, err := s.GrantGet(ctx, "g-1")
	if err != nil {
		t.Fatalf("GrantGet: %v", err)
	}
	if diff := cmp.Diff(g, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	// The same id again is refused, and the first kept.
	again := grantOf("g-1", "other", at(time.Minute), time.Hour)
	err = s.InTx(ctx, func(ctx context.Context, tx store.Tx) error { return tx.GrantInsert(ctx, again) })
	if !errors.Is(err, store.ErrExists) {
		t.Errorf("GrantInsert of a held id: %v, want ErrExists", err)
	}
	if got, _ := s.GrantGet(ctx, "g-1"); got == nil || got.Tenant != "acme" {
		t.Errorf("the held grant changed: %+v", got)
	}
	// A grant that fails its check is refused before the database.
	bad := grantOf("g-bad", "acme", at(0), 0)
	if err := s.InTx(ctx, func(ctx context.Context, tx store.Tx) error { return tx.GrantInsert(ctx, bad) }); err == nil {
		t.Error("GrantInsert of a grant that expires when made: no error")
	}
	// A transaction that fails keeps nothing of its grant.
	boom := errors.New("boom")
	err = s.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.GrantInsert(ctx, grantOf("g-rolled", "acme", at(0), time.Hour)); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("InTx: %v", err)
	}
	if _, err := s.GrantGet(ctx, "g-rolled"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GrantGet of a rolled-back grant: %v, want ErrNotFound", err)
	}

	// Updated under its lock: every field that may change.
	inTx(t, s, func(ctx context.Context, tx store.Tx) error {
		cur, err := tx.GrantGetForUpdate(ctx, "g-1")
		if err != nil {
			return err
		}
		cur.State, cur.UsesSeen, cur.LastUseAt = store.GrantRevoked, 3, at(10*time.Minute)
		cur.RevokedAt, cur.RevokedBy, cur.EndedPosted = at(20*time.Minute), "user:ana", true
		return tx.GrantUpdate(ctx, cur)
	})
	want := *g
	want.State, want.UsesSeen, want.LastUseAt = store.GrantRevoked, 3, at(10*time.Minute)
	want.RevokedAt, want.RevokedBy, want.EndedPosted = at(20*time.Minute), "user:ana", true
	if got, err := s.GrantGet(ctx, "g-1"); err != nil || !cmp.Equal(&want, got) {
		t.Errorf("after update: %v (-want +got):\n%s", err, cmp.Diff(&want, got))
	}
	if err := s.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.GrantGetForUpdate(ctx, "g-none")
		return err
	}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GrantGetForUpdate of none: %v, want ErrNotFound", err)
	}

	// Listing: by tenant, by state, soonest expiry first.
	inTx(t, s, func(ctx context.Context, tx store.Tx) error {
		for _, g := range []*store.Grant{
			grantOf("g-late", "acme", at(0), 8*time.Hour),
			grantOf("g-soon", "acme", at(0), 15*time.Minute),
			grantOf("g-else", "beta", at(0), time.Minute),
		} {
			g.State = store.GrantLive
			if err := tx.GrantInsert(ctx, g); err != nil {
				return err
			}
		}
		return nil
	})
	ids := func(gs []*store.Grant, err error) []string {
		t.Helper()
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		out := []string{}
		for _, g := range gs {
			out = append(out, g.ID)
		}
		return out
	}
	if diff := cmp.Diff([]string{"g-soon", "g-late"}, ids(s.GrantList(ctx, store.GrantListParams{Tenant: "acme",
		States: []string{store.GrantLive, store.GrantRevoking}}))); diff != "" {
		t.Errorf("live grants of acme (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"g-soon", "g-1", "g-late"}, ids(s.GrantList(ctx, store.GrantListParams{Tenant: "acme"}))); diff != "" {
		t.Errorf("every grant of acme (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"g-soon"}, ids(s.GrantList(ctx, store.GrantListParams{Tenant: "acme", Limit: 1}))); diff != "" {
		t.Errorf("limit 1 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{}, ids(s.GrantList(ctx, store.GrantListParams{Tenant: "nobody"}))); diff != "" {
		t.Errorf("no grants (-want +got):\n%s", diff)
	}
	// Past their time at +30m: the beta one and acme's soonest; the
	// revoked one is not live, the 8 h one not due.
	if diff := cmp.Diff([]string{"g-else", "g-soon"}, ids(s.GrantListExpired(ctx, store.GrantListExpiredParams{Now: at(30 * time.Minute), Limit: 10}))); diff != "" {
		t.Errorf("expired (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"g-else"}, ids(s.GrantListExpired(ctx, store.GrantListExpiredParams{Now: at(time.Minute), Limit: 10}))); diff != "" {
		t.Errorf("expired at its very time (-want +got):\n%s", diff)
	}
}
