package backend_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"approvalsbot/adapters/backend"
)

var (
	// Secrets long enough that finding one by accident in a string is
	// impossible; none is a substring of another.
	secretOld = []byte("calls-secret-0123456789")
	secretNew = []byte("calls-secret-rotated-ABCDEFGH")
	// signNow is a whole second, so ±300 s edges are exact.
	signNow = time.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC)
)

func fixedNow() time.Time { return signNow }

// TestSignKnownAnswer pins Sign to a value computed outside Go (Python's
// hmac), so Sign and Verify cannot agree on the same mistake.
func TestSignKnownAnswer(t *testing.T) {
	t.Parallel()
	got := backend.Sign(secretOld, signNow, []byte(`{"approval_id":"a-7Q2K9"}`))
	want := "t=1796061600,v1=c3855023bf036bb7e86b95160684bad662794bff98a6a2fd77de1af5686ec950"
	if got != want {
		t.Errorf("Sign = %q, want %q", got, want)
	}
}

func TestSignAll(t *testing.T) {
	t.Parallel()
	body := []byte(`{}`)
	got := backend.SignAll([][]byte{secretOld, secretNew}, signNow, body)
	one := backend.Sign(secretOld, signNow, body)
	two := backend.Sign(secretNew, signNow, body)
	want := one + "," + strings.TrimPrefix(two, "t=1796061600,")
	if got != want {
		t.Errorf("SignAll = %q, want %q", got, want)
	}
	if got := backend.SignAll(nil, signNow, body); got != "t=1796061600" {
		t.Errorf("SignAll(no secrets) = %q", got)
	}
}

func TestVerify(t *testing.T) {
	t.Parallel()
	body := []byte(`{"approval_id":"a-7Q2K9","revision":1}`)
	at := func(d time.Duration) string { return backend.Sign(secretNew, signNow.Add(d), body) }
	good := at(0)
	goodV1 := strings.TrimPrefix(good, "t=1796061600,")
	otherV1 := strings.TrimPrefix(backend.Sign([]byte("someone else"), signNow, body), "t=1796061600,")
	both := [][]byte{secretOld, secretNew}

	tests := []struct {
		name    string
		secrets [][]byte
		header  string
		body    []byte // nil: body
		ok      bool
	}{
		{name: "valid", secrets: [][]byte{secretNew}, header: good, ok: true},
		{name: "rotation: second secret matches", secrets: [][]byte{secretOld, secretNew}, header: good, ok: true},
		{name: "rotation: sender signs with both", secrets: [][]byte{secretOld}, header: backend.SignAll(both, signNow, body), ok: true},
		{name: "rotation: matching v1 listed second", secrets: both, header: "t=1796061600," + otherV1 + "," + goodV1, ok: true},
		{name: "v1 before t", secrets: both, header: goodV1 + ",t=1796061600", ok: true},
		{name: "skew -300s", secrets: both, header: at(-300 * time.Second), ok: true},
		{name: "skew +300s", secrets: both, header: at(300 * time.Second), ok: true},
		{name: "skew -301s", secrets: both, header: at(-301 * time.Second)},
		{name: "skew +301s", secrets: both, header: at(301 * time.Second)},
		{name: "tampered body", secrets: both, header: good, body: []byte(`{"approval_id":"a-7Q2K9","revision":2}`)},
		{name: "empty body signed, body sent", secrets: both, header: backend.Sign(secretNew, signNow, nil)},
		{name: "unknown secret", secrets: [][]byte{secretOld}, header: good},
		{name: "no secrets configured", secrets: nil, header: good},
		{name: "empty secret is ignored", secrets: [][]byte{{}}, header: backend.Sign(nil, signNow, body)},
		{name: "uppercase key", secrets: both, header: "t=1796061600," + strings.ToUpper(goodV1[:3]) + goodV1[3:]},
		{name: "uppercase hex digits", secrets: both, header: "t=1796061600,v1=" + strings.ToUpper(goodV1[3:])},
		{name: "duplicate t", secrets: both, header: good + ",t=1796061600"},
		{name: "duplicate t, second one stale", secrets: both, header: "t=1796061600,t=1," + goodV1},
		{name: "empty header", secrets: both, header: ""},
		{name: "garbage", secrets: both, header: "garbage"},
		{name: "no t", secrets: both, header: goodV1},
		{name: "no v1", secrets: both, header: "t=1796061600"},
		{name: "empty v1", secrets: both, header: "t=1796061600,v1="},
		{name: "non-hex v1", secrets: both, header: "t=1796061600,v1=" + strings.Repeat("zz", 32)},
		{name: "short v1", secrets: both, header: "t=1796061600,v1=" + goodV1[3:63]},
		{name: "long v1", secrets: both, header: good + "00"},
		{name: "t not an integer", secrets: both, header: "t=1796061600.0," + goodV1},
		{name: "t with plus sign", secrets: both, header: "t=+1796061600," + goodV1},
		{name: "t with leading zero", secrets: both, header: "t=01796061600," + goodV1},
		{name: "t empty", secrets: both, header: "t=," + goodV1},
		{name: "t huge", secrets: both, header: "t=99999999999999999999," + goodV1},
		{name: "t most negative", secrets: both, header: "t=-9223372036854775808," + goodV1},
		{name: "space after comma", secrets: both, header: "t=1796061600, " + goodV1},
		{name: "trailing comma", secrets: both, header: good + ","},
		{name: "unknown key", secrets: both, header: good + ",v0=abc"},
		{name: "v1 cap reached", secrets: both, header: "t=1796061600" + strings.Repeat(","+otherV1, backend.MaxSignatures-1) + "," + goodV1, ok: true},
		{name: "too many v1", secrets: both, header: "t=1796061600" + strings.Repeat(","+otherV1, backend.MaxSignatures) + "," + goodV1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := tt.body
			if b == nil {
				b = body
			}
			v := backend.Verifier{Secrets: tt.secrets, Now: fixedNow}
			err := v.Verify(tt.header, b)
			if tt.ok {
				if err != nil {
					t.Fatalf("Verify: %v, want accepted", err)
				}
				return
			}
			if !errors.Is(err, backend.ErrBadSignature) {
				t.Fatalf("Verify = %v, want ErrBadSignature", err)
			}
			assertNoSecret(t, err.Error(), tt.header)
		})
	}
}

func TestVerifierDefaultsToWallClock(t *testing.T) {
	t.Parallel()
	body := []byte(`{}`)
	v := backend.Verifier{Secrets: [][]byte{secretOld}}
	if err := v.Verify(backend.Sign(secretOld, time.Now(), body), body); err != nil {
		t.Errorf("Verify(now) = %v", err)
	}
	if err := v.Verify(backend.Sign(secretOld, time.Now().Add(-time.Hour), body), body); err == nil {
		t.Error("Verify(an hour ago) accepted")
	}
}

// TestSecretsDoNotPrint proves the types holding secrets never show them,
// whichever way they are printed or logged.
func TestSecretsDoNotPrint(t *testing.T) {
	t.Parallel()
	v := backend.Verifier{Secrets: [][]byte{secretOld, secretNew}}
	o := backend.ClientOptions{BaseURL: "http://127.0.0.1:1", Secrets: [][]byte{secretOld, secretNew}}
	c, err := backend.NewClient(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []any{v, &v, o, &o, c} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
			assertNoSecret(t, fmt.Sprintf(verb, x), "")
		}
		var buf bytes.Buffer
		slog.New(slog.NewJSONHandler(&buf, nil)).Info("x", "v", x)
		slog.New(slog.NewTextHandler(&buf, nil)).Info("x", "v", x)
		assertNoSecret(t, buf.String(), "")
	}
}

// assertNoSecret fails when s carries a test secret (raw or hex) or any
// signature value out of header.
func assertNoSecret(t *testing.T, s, header string) {
	t.Helper()
	for _, sec := range [][]byte{secretOld, secretNew} {
		if strings.Contains(s, string(sec)) || strings.Contains(s, hex.EncodeToString(sec)) {
			t.Errorf("%q carries a secret", s)
		}
	}
	for _, part := range strings.Split(header, ",") {
		if sig, ok := strings.CutPrefix(part, "v1="); ok && len(sig) >= 8 && strings.Contains(s, sig) {
			t.Errorf("%q carries a signature", s)
		}
	}
}

// FuzzVerify: Verify never panics, fails only with ErrBadSignature, and
// accepts only a header that holds t=T and v1=HMAC(secret, T.body) for a
// configured secret and a T within MaxSkew, checked here independently of
// the package's parser.
func FuzzVerify(f *testing.F) {
	body := []byte(`{"approval_id":"a-7Q2K9","revision":1,"decision":"deny"}`)
	f.Add(backend.Sign(secretOld, signNow, body), body)
	f.Add(backend.SignAll([][]byte{secretNew, secretOld}, signNow.Add(-200*time.Second), body), body)
	f.Add(backend.Sign(secretOld, signNow, body), []byte(`{}`))
	f.Add("t=1796061600,v1=", body)
	f.Add("t=1796061600,t=1796061600,v1=00", body)
	f.Add("", []byte(nil))
	f.Add(",,,,,,,,,,,,", body)
	f.Add("t=-1,v1="+strings.Repeat("0", 64), body)
	secrets := [][]byte{secretOld, secretNew, {}}
	f.Fuzz(func(t *testing.T, header string, body []byte) {
		err := backend.Verifier{Secrets: secrets, Now: fixedNow}.Verify(header, body)
		if err != nil {
			if !errors.Is(err, backend.ErrBadSignature) {
				t.Fatalf("Verify = %v, not ErrBadSignature", err)
			}
			assertNoSecret(t, err.Error(), header)
			return
		}
		if !signedBy(header, body, secrets) {
			t.Fatalf("Verify accepted %q for body %q", header, body)
		}
	})
}

// signedBy is the oracle: some element t=T, T within MaxSkew of signNow,
// and some element v1 equal to the lowercase hex HMAC of T.body.
func signedBy(header string, body []byte, secrets [][]byte) bool {
	parts := strings.Split(header, ",")
	for _, p := range parts {
		ts, ok := strings.CutPrefix(p, "t=")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(ts, 10, 64)
		if err != nil || n < signNow.Unix()-300 || n > signNow.Unix()+300 {
			continue
		}
		for _, s := range secrets {
			if len(s) == 0 {
				continue
			}
			m := hmac.New(sha256.New, s)
			m.Write([]byte(ts + "."))
			m.Write(body)
			want := "v1=" + hex.EncodeToString(m.Sum(nil))
			for _, q := range parts {
				if q == want {
					return true
				}
			}
		}
	}
	return false
}
