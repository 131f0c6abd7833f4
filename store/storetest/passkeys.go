package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/store"
)

// testPasskeys runs the passkey checks on one store; their keys are apart.
func testPasskeys(t *testing.T, s store.Store) {
	for _, c := range []struct {
		name string
		run  func(*testing.T, store.Store)
	}{
		{"RoundTrip", testPasskeyRoundTrip},
		{"Use", testPasskeyUse},
		{"UseConcurrent", testPasskeyUseConcurrent},
		{"Challenge", testPasskeyChallenge},
		{"ChallengeForgets", testPasskeyChallengeForgets},
		{"ChallengeConcurrent", testPasskeyChallengeConcurrent},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, s) })
	}
}

func addPasskey(t *testing.T, s store.Store, p store.PasskeyAddParams) {
	t.Helper()
	if err := s.PasskeyAdd(t.Context(), p); err != nil {
		t.Fatalf("PasskeyAdd(%s): %v", p.ID, err)
	}
}

func listPasskeys(t *testing.T, s store.Store, tenant, member string) []*store.Passkey {
	t.Helper()
	got, err := s.PasskeyList(t.Context(), store.PasskeyListParams{Tenant: tenant, Member: member})
	if err != nil {
		t.Fatalf("PasskeyList(%s, %s): %v", tenant, member, err)
	}
	return got
}

// testPasskeyRoundTrip: every field comes back; a member's list holds
// theirs only, oldest first, a tenant's every member's; an id is held
// once across tenants; removal is by the member holding it only.
func testPasskeyRoundTrip(t *testing.T, s store.Store) {
	ctx := t.Context()
	if got := listPasskeys(t, s, "rt", "user:kevin"); got == nil || len(got) != 0 {
		t.Fatalf("a member without passkeys: got %#v, want an empty list", got)
	}
	a := store.PasskeyAddParams{ID: "rt-a", Tenant: "rt", Member: "user:kevin", Name: "Laptop",
		Credential: []byte(`{"publicKey":"pQECAyYg"}`), SignCount: 7, Now: at(2 * time.Minute)}
	b := store.PasskeyAddParams{ID: "rt-b", Tenant: "rt", Member: "user:kevin", Name: "Phone ÅŠ",
		Credential: []byte(`{"k":2}`), Now: at(time.Minute)}
	c := store.PasskeyAddParams{ID: "rt-c", Tenant: "rt", Member: "user:ana", Name: "Key",
		Credential: []byte(`{"k":3}`), Now: at(3 * time.Minute)}
	d := store.PasskeyAddParams{ID: "rt-d", Tenant: "rt-other", Member: "user:kevin", Name: "Elsewhere",
		Credential: []byte(`{"k":4}`), Now: at(0)}
	for _, p := range []store.PasskeyAddParams{a, b, c, d} {
		addPasskey(t, s, p)
	}
	want := []*store.Passkey{
		{ID: "rt-b", Tenant: "rt", Member: "user:kevin", Name: "Phone ÅŠ", Credential: []byte(`{"k":2}`), CreatedAt: at(time.Minute)},
		{ID: "rt-a", Tenant: "rt", Member: "user:kevin", Name: "Laptop", Credential: []byte(`{"publicKey":"pQECAyYg"}`),
			SignCount: 7, CreatedAt: at(2 * time.Minute)},
	}
	if diff := cmp.Diff(want, listPasskeys(t, s, "rt", "user:kevin")); diff != "" {
		t.Errorf("a member's passkeys (-want +got):\n%s", diff)
	}
	var ids []string
	for _, p := range listPasskeys(t, s, "rt", "") {
		ids = append(ids, p.ID)
	}
	wantIDs(t, "a tenant's passkeys", ids, []string{"rt-b", "rt-a", "rt-c"})

	again := c
	again.Tenant, again.Member = "rt-other", "user:ana"
	if err := s.PasskeyAdd(ctx, again); !errors.Is(err, store.ErrExists) {
		t.Errorf("PasskeyAdd of an id held in another tenant: %v, want ErrExists", err)
	}
	for name, p := range map[string]store.PasskeyRemoveParams{
		"another member":  {Tenant: "rt", Member: "user:ana", ID: "rt-a"},
		"another tenant":  {Tenant: "rt-other", Member: "user:kevin", ID: "rt-a"},
		"an unknown id":   {Tenant: "rt", Member: "user:kevin", ID: "rt-x"},
		"an empty member": {Tenant: "rt", ID: "rt-a"},
	} {
		wantErr(t, "PasskeyRemove by "+name, s.PasskeyRemove(ctx, p), store.ErrNotFound)
	}
	if err := s.PasskeyRemove(ctx, store.PasskeyRemoveParams{Tenant: "rt", Member: "user:kevin", ID: "rt-a"}); err != nil {
		t.Fatalf("PasskeyRemove: %v", err)
	}
	wantErr(t, "PasskeyRemove again", s.PasskeyRemove(ctx, store.PasskeyRemoveParams{Tenant: "rt", Member: "user:kevin", ID: "rt-a"}), store.ErrNotFound)
	ids = nil
	for _, p := range listPasskeys(t, s, "rt", "user:kevin") {
		ids = append(ids, p.ID)
	}
	wantIDs(t, "a member's passkeys after a removal", ids, []string{"rt-b"})

	for name, p := range map[string]store.PasskeyAddParams{
		"no id":         {Tenant: "rt", Member: "m", Credential: []byte("{}"), Now: at(0)},
		"no tenant":     {ID: "x", Member: "m", Credential: []byte("{}"), Now: at(0)},
		"no member":     {ID: "x", Tenant: "rt", Credential: []byte("{}"), Now: at(0)},
		"no credential": {ID: "x", Tenant: "rt", Member: "m", Now: at(0)},
		"no time":       {ID: "x", Tenant: "rt", Member: "m", Credential: []byte("{}")},
	} {
		if err := s.PasskeyAdd(ctx, p); err == nil {
			t.Errorf("PasskeyAdd with %s: accepted", name)
		}
	}
}

// testPasskeyUse: a count moves forward only; one that does not changes
// nothing and says so; an authenticator that counts nothing (0 each
// time) is used as often as it likes; another member's or an unknown id
// is not found.
func testPasskeyUse(t *testing.T, s store.Store) {
	ctx := t.Context()
	addPasskey(t, s, store.PasskeyAddParams{ID: "use-a", Tenant: "use", Member: "user:kevin", Name: "a", Credential: []byte("{}"), SignCount: 3, Now: at(0)})
	addPasskey(t, s, store.PasskeyAddParams{ID: "use-z", Tenant: "use", Member: "user:kevin", Name: "z", Credential: []byte("{}"), Now: at(0)})
	use := func(id, member string, count uint32, now time.Time) error {
		return s.PasskeyUse(ctx, store.PasskeyUseParams{Tenant: "use", Member: member, ID: id, SignCount: count, Now: now})
	}
	if err := use("use-a", "user:kevin", 4, at(time.Minute)); err != nil {
		t.Fatalf("PasskeyUse forward: %v", err)
	}
	wantErr(t, "PasskeyUse with the same count", use("use-a", "user:kevin", 4, at(2*time.Minute)), store.ErrSignCount)
	wantErr(t, "PasskeyUse with a lower count", use("use-a", "user:kevin", 2, at(2*time.Minute)), store.ErrSignCount)
	wantErr(t, "PasskeyUse with 0 after a count", use("use-a", "user:kevin", 0, at(2*time.Minute)), store.ErrSignCount)
	wantErr(t, "PasskeyUse of another member's", use("use-a", "user:ana", 9, at(2*time.Minute)), store.ErrNotFound)
	wantErr(t, "PasskeyUse of an unknown id", use("use-x", "user:kevin", 9, at(2*time.Minute)), store.ErrNotFound)
	for _, now := range []time.Time{at(3 * time.Minute), at(4 * time.Minute)} {
		if err := use("use-z", "user:kevin", 0, now); err != nil {
			t.Fatalf("PasskeyUse of an authenticator that counts nothing: %v", err)
		}
	}
	got := map[string]*store.Passkey{}
	for _, p := range listPasskeys(t, s, "use", "user:kevin") {
		got[p.ID] = p
	}
	if a := got["use-a"]; a == nil || a.SignCount != 4 || !a.LastUsedAt.Equal(at(time.Minute)) {
		t.Errorf("after refused uses: %+v, want count 4 last used at %v", a, at(time.Minute))
	}
	if z := got["use-z"]; z == nil || z.SignCount != 0 || !z.LastUsedAt.Equal(at(4*time.Minute)) {
		t.Errorf("an authenticator that counts nothing: %+v, want last used at %v", z, at(4*time.Minute))
	}
}

// testPasskeyUseConcurrent: of many uses with one count at once, exactly
// one succeeds; the others find the count moved.
func testPasskeyUseConcurrent(t *testing.T, s store.Store) {
	ctx := t.Context()
	addPasskey(t, s, store.PasskeyAddParams{ID: "race-pk", Tenant: "race", Member: "user:kevin", Name: "a", Credential: []byte("{}"), Now: at(0)})
	const callers = 16
	for round := range 5 {
		var mu sync.Mutex
		ok, failed := 0, 0
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range callers {
			wg.Go(func() {
				<-start
				err := s.PasskeyUse(ctx, store.PasskeyUseParams{Tenant: "race", Member: "user:kevin", ID: "race-pk",
					SignCount: uint32(round + 1), Now: at(time.Minute)})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					ok++
				case !errors.Is(err, store.ErrSignCount):
					failed++
					t.Errorf("PasskeyUse: %v", err)
				}
			})
		}
		close(start)
		wg.Wait()
		if failed == 0 && ok != 1 {
			t.Fatalf("round %d: %d of %d uses with one count succeeded, want 1", round, ok, callers)
		}
	}
}

func challenge(id string, created time.Time) *store.PasskeyChallenge {
	return &store.PasskeyChallenge{ID: id, Purpose: store.PurposeApprove, Tenant: "ch", Member: "user:kevin",
		ApprovalID: "a1", Revision: 2, Digest: "sha256:ab", Session: []byte(`{"challenge":"x"}`),
		CreatedAt: created, ExpiresAt: created.Add(5 * time.Minute)}
}

// testPasskeyChallenge: a challenge comes back whole to the take that
// used it, and marked used to every later take; an enrolment challenge
// names no approval; an unknown id is not found; malformed ones are
// refused.
func testPasskeyChallenge(t *testing.T, s store.Store) {
	ctx := t.Context()
	c := challenge("ch-1", at(0))
	if err := s.PasskeyChallengeAdd(ctx, c); err != nil {
		t.Fatalf("PasskeyChallengeAdd: %v", err)
	}
	got, err := s.PasskeyChallengeTake(ctx, store.PasskeyChallengeTakeParams{ID: "ch-1", Now: at(time.Minute)})
	if err != nil {
		t.Fatalf("PasskeyChallengeTake: %v", err)
	}
	if diff := cmp.Diff(c, got); diff != "" {
		t.Errorf("the first take (-want +got):\n%s", diff)
	}
	for i := range 2 {
		got, err := s.PasskeyChallengeTake(ctx, store.PasskeyChallengeTakeParams{ID: "ch-1", Now: at(2 * time.Minute)})
		if err != nil || !got.UsedAt.Equal(at(time.Minute)) {
			t.Fatalf("take %d after the first: %+v, %v; want it used at %v", i+2, got, err, at(time.Minute))
		}
	}
	enrol := &store.PasskeyChallenge{ID: "ch-enrol", Purpose: store.PurposeEnrol, Tenant: "ch", Member: "user:kevin",
		Session: []byte("{}"), CreatedAt: at(0), ExpiresAt: at(15 * time.Minute)}
	if err := s.PasskeyChallengeAdd(ctx, enrol); err != nil {
		t.Fatalf("PasskeyChallengeAdd of an enrolment: %v", err)
	}
	if got, err := s.PasskeyChallengeTake(ctx, store.PasskeyChallengeTakeParams{ID: "ch-enrol", Now: at(time.Minute)}); err != nil || got.Purpose != store.PurposeEnrol || !got.UsedAt.IsZero() {
		t.Errorf("take of an enrolment: %+v, %v", got, err)
	}
	_, err = s.PasskeyChallengeTake(ctx, store.PasskeyChallengeTakeParams{ID: "ch-unknown", Now: at(time.Minute)})
	wantErr(t, "take of an unknown id", err, store.ErrNotFound)

	bad := map[string]func(c *store.PasskeyChallenge){
		"no id":                func(c *store.PasskeyChallenge) { c.ID = "" },
		"no member":            func(c *store.PasskeyChallenge) { c.Member = "" },
		"an unknown purpose":   func(c *store.PasskeyChallenge) { c.Purpose = "login" },
		"no approval":          func(c *store.PasskeyChallenge) { c.ApprovalID = "" },
		"no revision":          func(c *store.PasskeyChallenge) { c.Revision = 0 },
		"no session":           func(c *store.PasskeyChallenge) { c.Session = nil },
		"expiry not after":     func(c *store.PasskeyChallenge) { c.ExpiresAt = c.CreatedAt },
		"used before it lives": func(c *store.PasskeyChallenge) { c.UsedAt = c.CreatedAt },
	}
	for name, spoil := range bad {
		c := challenge("ch-bad", at(0))
		spoil(c)
		if err := s.PasskeyChallengeAdd(ctx, c); err == nil {
			t.Errorf("PasskeyChallengeAdd with %s: accepted", name)
		}
	}
}

// testPasskeyChallengeForgets: new challenges forget, a few at a time,
// only those past their time: after fifty have expired and fifty live
// ones were added, each live one is there to take, each expired one is
// gone.
func testPasskeyChallengeForgets(t *testing.T, s store.Store) {
	ctx := t.Context()
	const n = 50
	for i := range n {
		if err := s.PasskeyChallengeAdd(ctx, challenge(fmt.Sprintf("old-%d", i), at(0))); err != nil {
			t.Fatal(err)
		}
	}
	later := at(time.Hour)
	for i := range n {
		if err := s.PasskeyChallengeAdd(ctx, challenge(fmt.Sprintf("new-%d", i), later)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		if got, err := s.PasskeyChallengeTake(ctx, store.PasskeyChallengeTakeParams{ID: fmt.Sprintf("new-%d", i), Now: later}); err != nil || !got.UsedAt.IsZero() {
			t.Fatalf("live challenge %d: %+v, %v", i, got, err)
		}
		_, err := s.PasskeyChallengeTake(ctx, store.PasskeyChallengeTakeParams{ID: fmt.Sprintf("old-%d", i), Now: later})
		if !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("challenge %d long past its time: %v, want ErrNotFound", i, err)
		}
	}
}

// testPasskeyChallengeConcurrent: of many takes of one challenge at
// once, exactly one finds it unused.
func testPasskeyChallengeConcurrent(t *testing.T, s store.Store) {
	ctx := t.Context()
	const callers = 16
	for round := range 5 {
		id := fmt.Sprintf("race-%d", round)
		if err := s.PasskeyChallengeAdd(ctx, challenge(id, at(0))); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		unused, failed := 0, 0
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range callers {
			wg.Go(func() {
				<-start
				got, err := s.PasskeyChallengeTake(ctx, store.PasskeyChallengeTakeParams{ID: id, Now: at(time.Minute)})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err != nil:
					failed++
					t.Errorf("PasskeyChallengeTake: %v", err)
				case got.UsedAt.IsZero():
					unused++
				}
			})
		}
		close(start)
		wg.Wait()
		if failed == 0 && unused != 1 {
			t.Fatalf("round %d: %d of %d takes found the challenge unused, want 1", round, unused, callers)
		}
	}
}
