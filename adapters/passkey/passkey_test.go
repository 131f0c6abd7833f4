package passkey_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/adapters/passkey"
	"approvalsbot/adapters/passkey/passkeytest"
	"approvalsbot/approval"
	"approvalsbot/store"
	"approvalsbot/tenant"
)

var kevinsYes = passkey.Binding{Tenant: "acme", ApprovalID: "ap-1", Revision: 2, Digest: "sha256:" + strings.Repeat("ab", 32), Member: "user:kevin"}

// An approval's ceremony: the options ask for user verification from
// the member's passkeys, and the answer to them approves exactly the
// binding, once, moving the passkey's count and last use.
func TestApprove(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cred := f.enrol(t, "user:kevin", "Laptop")
	f.enrol(t, "user:ana", "Ana's")
	req, err := f.svc.BeginApprove(t.Context(), kevinsYes)
	if err != nil {
		t.Fatal(err)
	}
	o := options(t, req)
	allowed := []string{}
	for _, c := range o["allowCredentials"].([]any) {
		allowed = append(allowed, c.(map[string]any)["id"].(string))
	}
	if o["userVerification"] != "required" || o["rpId"] != "localhost" || o["timeout"] != float64(300000) ||
		!cmp.Equal(allowed, []string{cred.IDText()}) {
		t.Errorf("request options %v", o)
	}
	if !req.Expires.Equal(f.clock.Now().Add(passkey.ChallengeTTL)) {
		t.Errorf("expires %v", req.Expires)
	}
	f.clock.Advance(passkey.ChallengeTTL - time.Millisecond)
	answer, err := f.auth.Get(req.Options, nil, passkeytest.Spoil{})
	if err != nil {
		t.Fatal(err)
	}
	used, err := f.svc.FinishApprove(t.Context(), kevinsYes, req.Ref, answer)
	if err != nil {
		t.Fatalf("FinishApprove: %v", err)
	}
	if used.ID != cred.IDText() || used.Name != "Laptop" {
		t.Errorf("used %+v", used)
	}
	pks, err := f.svc.List(t.Context(), "acme", "user:kevin")
	if err != nil || len(pks) != 1 || pks[0].SignCount != 1 || !pks[0].LastUsedAt.Equal(f.clock.Now()) {
		t.Fatalf("after the approval: %+v, %v", pks, err)
	}
	// Each approval asks again; the count moves on.
	for range 2 {
		req, err := f.svc.BeginApprove(t.Context(), kevinsYes)
		if err != nil {
			t.Fatal(err)
		}
		answer, err := f.auth.Get(req.Options, nil, passkeytest.Spoil{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.FinishApprove(t.Context(), kevinsYes, req.Ref, answer); err != nil {
			t.Fatalf("a later approval: %v", err)
		}
	}
}

// Every way an assertion may be wrong is refused with its own error, and
// none of them uses the passkey.
func TestApproveRefused(t *testing.T) {
	t.Parallel()
	other := func(change func(b *passkey.Binding)) passkey.Binding {
		b := kevinsYes
		change(&b)
		return b
	}
	for _, c := range []struct {
		name string
		// answer answers the request made for kevinsYes; it returns the
		// binding, reference and answer to finish with.
		answer func(t *testing.T, f *fixture, req *passkey.Request) (passkey.Binding, string, []byte)
		want   error
	}{
		{"another approval", finishAs(other(func(b *passkey.Binding) { b.ApprovalID = "ap-2" })), passkey.ErrWrongBinding},
		{"another revision", finishAs(other(func(b *passkey.Binding) { b.Revision = 3 })), passkey.ErrWrongBinding},
		{"another digest", finishAs(other(func(b *passkey.Binding) { b.Digest = "sha256:" + strings.Repeat("cd", 32) })), passkey.ErrWrongBinding},
		{"no digest", finishAs(other(func(b *passkey.Binding) { b.Digest = "" })), passkey.ErrWrongBinding},
		{"another member", finishAs(other(func(b *passkey.Binding) { b.Member = "user:ana" })), passkey.ErrWrongBinding},
		{"another tenant", finishAs(other(func(b *passkey.Binding) { b.Tenant = "other" })), passkey.ErrWrongBinding},
		{"expired", func(t *testing.T, f *fixture, req *passkey.Request) (passkey.Binding, string, []byte) {
			f.clock.Advance(passkey.ChallengeTTL)
			return kevinsYes, req.Ref, get(t, f, req, nil, passkeytest.Spoil{})
		}, passkey.ErrExpired},
		{"another member's passkey", func(t *testing.T, f *fixture, req *passkey.Request) (passkey.Binding, string, []byte) {
			return kevinsYes, req.Ref, get(t, f, req, f.enrol(t, "user:ana", "Ana's"), passkeytest.Spoil{})
		}, passkey.ErrNotYours},
		{"no user verification", answerWith(passkeytest.Spoil{NoUserVerification: true}), passkey.ErrNotVerified},
		{"another origin", answerWith(passkeytest.Spoil{Origin: "https://evil.example"}), passkey.ErrRefused},
		{"a framed page", answerWith(passkeytest.Spoil{CrossOrigin: true}), passkey.ErrRefused},
		{"another challenge", answerWith(passkeytest.Spoil{Challenge: []byte("0123456789abcdef0123456789abcdef")}), passkey.ErrRefused},
		{"a count that does not move", answerWith(passkeytest.Spoil{KeepCount: true}), passkey.ErrCloned},
		{"a count gone back", func(t *testing.T, f *fixture, req *passkey.Request) (passkey.Binding, string, []byte) {
			f.creds[0].Count = 0 // a clone made before the first use answers with its own next count
			return kevinsYes, req.Ref, get(t, f, req, nil, passkeytest.Spoil{})
		}, passkey.ErrCloned},
		{"a forged reference", func(t *testing.T, f *fixture, req *passkey.Request) (passkey.Binding, string, []byte) {
			return kevinsYes, strings.Repeat("A", 43), get(t, f, req, nil, passkeytest.Spoil{})
		}, passkey.ErrUnknownRequest},
		{"a reference not of ours", func(t *testing.T, f *fixture, req *passkey.Request) (passkey.Binding, string, []byte) {
			return kevinsYes, "../x", get(t, f, req, nil, passkeytest.Spoil{})
		}, passkey.ErrUnknownRequest},
		{"no answer (no script)", func(*testing.T, *fixture, *passkey.Request) (passkey.Binding, string, []byte) {
			return kevinsYes, "", nil
		}, passkey.ErrMissing},
		{"garbage", func(_ *testing.T, _ *fixture, req *passkey.Request) (passkey.Binding, string, []byte) {
			return kevinsYes, req.Ref, []byte(`{"id":"x"}`)
		}, passkey.ErrRefused},
		{"an enrolment's challenge", func(t *testing.T, f *fixture, req *passkey.Request) (passkey.Binding, string, []byte) {
			enrol, err := f.svc.BeginEnrol(t.Context(), "acme", "user:kevin")
			if err != nil {
				t.Fatal(err)
			}
			return kevinsYes, enrol.Ref, get(t, f, req, nil, passkeytest.Spoil{})
		}, passkey.ErrUnknownRequest},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			f.creds = append(f.creds, f.enrol(t, "user:kevin", "Laptop"))
			f.approve(t) // the passkey was used once: count 1
			before, _ := f.svc.List(t.Context(), "acme", "user:kevin")
			req, err := f.svc.BeginApprove(t.Context(), kevinsYes)
			if err != nil {
				t.Fatal(err)
			}
			b, ref, answer := c.answer(t, f, req)
			_, err = f.svc.FinishApprove(t.Context(), b, ref, answer)
			if !errors.Is(err, c.want) {
				t.Fatalf("FinishApprove: %v, want %v", err, c.want)
			}
			if got, want := passkey.Why(err), c.want.Error(); !strings.EqualFold(got[:1], want[:1]) || got[1:] != want[1:]+"." {
				t.Errorf("Why: %q, want %q as a sentence", got, want)
			}
			after, _ := f.svc.List(t.Context(), "acme", "user:kevin")
			if diff := cmp.Diff(before, after); diff != "" {
				t.Errorf("a refused assertion changed the passkey (-before +after):\n%s", diff)
			}
		})
	}
}

// creds on the fixture: the kevin passkeys a case enrolled.
func (f *fixture) approve(t *testing.T) {
	t.Helper()
	req, err := f.svc.BeginApprove(t.Context(), kevinsYes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.FinishApprove(t.Context(), kevinsYes, req.Ref, get(t, f, req, nil, passkeytest.Spoil{})); err != nil {
		t.Fatalf("FinishApprove: %v", err)
	}
}

func get(t *testing.T, f *fixture, req *passkey.Request, c *passkeytest.Credential, spoil passkeytest.Spoil) []byte {
	t.Helper()
	answer, err := f.auth.Get(req.Options, c, spoil)
	if err != nil {
		t.Fatal(err)
	}
	return answer
}

func finishAs(b passkey.Binding) func(*testing.T, *fixture, *passkey.Request) (passkey.Binding, string, []byte) {
	return func(t *testing.T, f *fixture, req *passkey.Request) (passkey.Binding, string, []byte) {
		return b, req.Ref, get(t, f, req, nil, passkeytest.Spoil{})
	}
}

func answerWith(spoil passkeytest.Spoil) func(*testing.T, *fixture, *passkey.Request) (passkey.Binding, string, []byte) {
	return func(t *testing.T, f *fixture, req *passkey.Request) (passkey.Binding, string, []byte) {
		return kevinsYes, req.Ref, get(t, f, req, nil, spoil)
	}
}

// A challenge answers once: a replay of a good answer is refused, and so
// is a good answer after a refused one (it is used up either way), and an
// old answer to a new challenge.
func TestApproveOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.enrol(t, "user:kevin", "Laptop")
	req, err := f.svc.BeginApprove(t.Context(), kevinsYes)
	if err != nil {
		t.Fatal(err)
	}
	answer := get(t, f, req, nil, passkeytest.Spoil{})
	if _, err := f.svc.FinishApprove(t.Context(), kevinsYes, req.Ref, answer); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.FinishApprove(t.Context(), kevinsYes, req.Ref, answer); !errors.Is(err, passkey.ErrUsed) {
		t.Errorf("a replay: %v, want ErrUsed", err)
	}
	fresh, err := f.svc.BeginApprove(t.Context(), kevinsYes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.FinishApprove(t.Context(), kevinsYes, fresh.Ref, answer); !errors.Is(err, passkey.ErrRefused) {
		t.Errorf("an old answer to a new challenge: %v, want ErrRefused", err)
	}
	if _, err := f.svc.FinishApprove(t.Context(), kevinsYes, fresh.Ref, get(t, f, fresh, nil, passkeytest.Spoil{})); !errors.Is(err, passkey.ErrUsed) {
		t.Errorf("a good answer after a refused one: %v, want ErrUsed", err)
	}
}

// Of two answers to one challenge at once, one is taken.
func TestApproveOnceConcurrent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.enrol(t, "user:kevin", "Laptop")
	req, err := f.svc.BeginApprove(t.Context(), kevinsYes)
	if err != nil {
		t.Fatal(err)
	}
	answer := get(t, f, req, nil, passkeytest.Spoil{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, used := 0, 0
	for range 8 {
		wg.Go(func() {
			_, err := f.svc.FinishApprove(t.Context(), kevinsYes, req.Ref, answer)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, passkey.ErrUsed):
				used++
			default:
				t.Errorf("FinishApprove: %v", err)
			}
		})
	}
	wg.Wait()
	if ok != 1 || used != 7 {
		t.Errorf("%d taken, %d refused as used; want 1 and 7", ok, used)
	}
}

// A member without a passkey gets no challenge; a passkey removed after
// the challenge was made no longer approves, the others still do.
func TestApproveWithoutPasskey(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if _, err := f.svc.BeginApprove(t.Context(), kevinsYes); !errors.Is(err, passkey.ErrNoPasskey) {
		t.Fatalf("BeginApprove without a passkey: %v", err)
	}
	laptop := f.enrol(t, "user:kevin", "Laptop")
	phoneAuth := passkeytest.New(origin)
	phone := f.enrolOn(t, phoneAuth, "user:kevin", "Phone")
	req, err := f.svc.BeginApprove(t.Context(), kevinsYes)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.svc.Remove(t.Context(), "acme", "user:kevin", laptop.IDText()); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.FinishApprove(t.Context(), kevinsYes, req.Ref, get(t, f, req, laptop, passkeytest.Spoil{})); !errors.Is(err, passkey.ErrNotYours) {
		t.Errorf("a removed passkey: %v, want ErrNotYours", err)
	}
	req, err = f.svc.BeginApprove(t.Context(), kevinsYes)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.svc.Remove(t.Context(), "acme", "user:kevin", laptop.IDText()); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("removing twice: %v", err)
	}
	answer, err := phoneAuth.Get(req.Options, phone, passkeytest.Spoil{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.FinishApprove(t.Context(), kevinsYes, req.Ref, answer); err != nil {
		t.Errorf("the passkey left: %v", err)
	}
}

// Enrolment takes a verified new credential of a member's, once, under
// a clean name, and excludes the member's own passkeys.
func TestEnrol(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	req, err := f.svc.BeginEnrol(t.Context(), "acme", "user:kevin")
	if err != nil {
		t.Fatal(err)
	}
	o := options(t, req)
	sel := o["authenticatorSelection"].(map[string]any)
	if o["rp"].(map[string]any)["id"] != "localhost" || sel["userVerification"] != "required" || sel["residentKey"] != "preferred" {
		t.Errorf("creation options %v", o)
	}
	att, cred, err := f.auth.Create(req.Options, passkeytest.Spoil{})
	if err != nil {
		t.Fatal(err)
	}
	pk, err := f.svc.FinishEnrol(t.Context(), "acme", "user:kevin", req.Ref, "  work\nlaptop\u2028 <b>", att)
	if err != nil {
		t.Fatal(err)
	}
	if pk.ID != cred.IDText() || pk.Name != "work laptop <b>" {
		t.Errorf("enrolled %+v", pk)
	}
	if _, err := f.svc.FinishEnrol(t.Context(), "acme", "user:kevin", req.Ref, "", att); !errors.Is(err, passkey.ErrUsed) {
		t.Errorf("the same enrolment again: %v, want ErrUsed", err)
	}
	again, err := f.svc.BeginEnrol(t.Context(), "acme", "user:kevin")
	if err != nil {
		t.Fatal(err)
	}
	ex := options(t, again)["excludeCredentials"].([]any)
	if len(ex) != 1 || ex[0].(map[string]any)["id"] != cred.IDText() {
		t.Errorf("excluded %v", ex)
	}
	if _, _, err := f.auth.Create(again.Options, passkeytest.Spoil{}); err == nil {
		t.Error("the authenticator enrolled a second passkey for the same member")
	}
	// An unnamed passkey is named by when it was added.
	named := f.enrol(t, "user:ana", "")
	pks, _ := f.svc.List(t.Context(), "acme", "user:ana")
	if len(pks) != 1 || pks[0].ID != named.IDText() || pks[0].Name != "Passkey added 2025-06-01 12:00 UTC" {
		t.Errorf("an unnamed passkey: %+v", pks)
	}
}

func TestEnrolRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if _, err := f.svc.BeginEnrol(t.Context(), "acme", "user:mallory"); !errors.Is(err, passkey.ErrNotMember) {
		t.Errorf("BeginEnrol of a stranger: %v", err)
	}
	if _, err := f.svc.BeginEnrol(t.Context(), "nope", "user:kevin"); !errors.Is(err, passkey.ErrNotMember) {
		t.Errorf("BeginEnrol in an unknown tenant: %v", err)
	}
	for _, c := range []struct {
		name   string
		spoil  passkeytest.Spoil
		member string
		wait   time.Duration
		want   error
	}{
		{"no user verification", passkeytest.Spoil{NoUserVerification: true}, "user:kevin", 0, passkey.ErrNotVerified},
		{"another origin", passkeytest.Spoil{Origin: "https://evil.example"}, "user:kevin", 0, passkey.ErrRefused},
		{"another member", passkeytest.Spoil{}, "user:ana", 0, passkey.ErrWrongBinding},
		{"expired", passkeytest.Spoil{}, "user:kevin", passkey.ChallengeTTL, passkey.ErrExpired},
	} {
		req, err := f.svc.BeginEnrol(t.Context(), "acme", "user:kevin")
		if err != nil {
			t.Fatal(err)
		}
		att, _, err := f.auth.Create(req.Options, c.spoil)
		if err != nil {
			t.Fatal(err)
		}
		f.clock.Advance(c.wait)
		if _, err := f.svc.FinishEnrol(t.Context(), "acme", c.member, req.Ref, "x", att); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if pks, _ := f.svc.List(t.Context(), "acme", ""); len(pks) != 0 {
		t.Errorf("refused enrolments kept %d passkeys", len(pks))
	}
}

// A store that cannot be reached is said as a wait, never as a refusal.
func TestWhyUnavailable(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.store.Close()
	_, err := f.svc.BeginApprove(t.Context(), kevinsYes)
	if err == nil || !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("BeginApprove on a closed store: %v", err)
	}
	if got := passkey.Why(err); !strings.Contains(got, "could not be checked just now") {
		t.Errorf("Why: %q", got)
	}
}

func TestRelyingParty(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ url, rpID, origin string }{
		{"http://localhost:8080", "localhost", "http://localhost:8080"},
		{"https://approvals.acme.example", "approvals.acme.example", "https://approvals.acme.example"},
		{"https://approvals.acme.example:8443/bot/", "approvals.acme.example", "https://approvals.acme.example:8443"},
	} {
		rp, o, err := passkey.RelyingParty(c.url)
		if err != nil || rp != c.rpID || o != c.origin {
			t.Errorf("%s: %q %q %v", c.url, rp, o, err)
		}
	}
	for _, u := range []string{"http://127.0.0.1:8080", "https://[::1]/", "ftp://localhost", "", "localhost"} {
		if _, _, err := passkey.RelyingParty(u); err == nil {
			t.Errorf("%q: accepted", u)
		}
	}
}

// The facts a rule reads come from what the card shows.
func TestFactsOf(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	plain := &approval.Approval{}
	destructive := &approval.Approval{}
	destructive.Call.Annotations = approval.Annotations{ReadOnlyHint: &no, DestructiveHint: &yes}
	typed := &approval.Approval{Confirm: &approval.Confirm{Argument: "name"}}
	flagged := &approval.Approval{Flags: approval.Flags{NewToJob: []approval.NewToJob{{Argument: "to"}}}}
	for _, c := range []struct {
		name string
		a    *approval.Approval
		want tenant.PasskeyFacts
	}{
		{"plain", plain, tenant.PasskeyFacts{}},
		{"destructive", destructive, tenant.PasskeyFacts{Destructive: true, Flagged: true}},
		{"typed", typed, tenant.PasskeyFacts{Typed: true}},
		{"flagged", flagged, tenant.PasskeyFacts{Flagged: true}},
	} {
		if got := passkey.FactsOf(c.a); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
	if !passkey.Required(tenant.PasskeysTyped, passkey.FactsOf(typed)) || passkey.Required(tenant.PasskeysFlagged, passkey.FactsOf(typed)) {
		t.Error("Required does not read the rule as tenant.PasskeyRequired")
	}
}
