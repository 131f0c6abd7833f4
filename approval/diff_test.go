package approval_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/approval"
	"approvalsbot/templates"
)

// callsSecrets stand for the bot's backend.calls_secrets, which key the
// fingerprints of what a projection hides; the first keys new revisions.
var callsSecrets = [][]byte{[]byte("calls-secret-of-the-tests-0123456789")}

// revision is an approval of one revision with these arguments, stored as
// ingest stores it and read back from the store: the revision a reask
// compares with.
func revision(t testing.TB, rev int, args string, restricted bool) *approval.Approval {
	t.Helper()
	return readBack(t, arriving(t, rev, args, restricted))
}

// readBack is a as the store gives it back: encoded and decoded, without
// its arguments as received.
func readBack(t testing.TB, a *approval.Approval) *approval.Approval {
	t.Helper()
	body, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var back approval.Approval
	if err := json.Unmarshal(body, &back); err != nil {
		t.Fatal(err)
	}
	return &back
}

// arriving is an approval of one revision with these arguments as ingest
// holds it when it arrives: its stored form just made under callsSecrets,
// the arguments as received beside it.
func arriving(t testing.TB, rev int, args string, restricted bool) *approval.Approval {
	t.Helper()
	return arrivingUnder(t, rev, args, restricted, callsSecrets...)
}

// arrivingUnder is arriving with its fingerprints keyed from secrets.
func arrivingUnder(t testing.TB, rev int, args string, restricted bool, secrets ...[]byte) *approval.Approval {
	t.Helper()
	a := &approval.Approval{ID: "a-1", Revision: rev, Tenant: "acme", Kind: approval.KindCall,
		Call: approval.Call{Function: "f.x", Arguments: json.RawMessage(args),
			ArgsSHA256: fmt.Sprintf("sha256:%064x", len(args)*7+rev)},
		Content: approval.Content{Restricted: restricted}}
	s, err := approval.StoredForm(a, secrets...)
	if err != nil {
		t.Fatal(err)
	}
	return &s.Approval
}

func TestCompareRevisions(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 300)
	tests := []struct {
		name       string
		old, new   string
		restricted bool
		sameDigest bool // the arguments differ only in a way the digest does not see
		want       []approval.ArgumentChange
		unshown    bool
		withheld   bool
	}{
		{name: "one value", old: `{"repo":"acme/api","pr":1234,"method":"squash"}`, new: `{"repo":"acme/api","pr":1234,"method":"rebase"}`,
			want: []approval.ArgumentChange{{Path: "method", Kind: approval.ChangeChanged, Old: `"squash"`, New: `"rebase"`}}},
		{name: "added and removed, where they stand", old: `{"a":1,"b":2,"c":3}`, new: `{"a":1,"c":3,"d":4}`,
			want: []approval.ArgumentChange{
				{Path: "b", Kind: approval.ChangeRemoved, Old: `2`},
				{Path: "d", Kind: approval.ChangeAdded, New: `4`},
			}},
		{name: "nested objects and arrays", old: `{"opts":{"labels":["a","b"],"draft":true},"to":[{"addr":"x@a.example"}]}`,
			new: `{"opts":{"labels":["a","c","d"]},"to":[{"addr":"y@a.example"}]}`,
			want: []approval.ArgumentChange{
				{Path: "opts.labels[1]", Kind: approval.ChangeChanged, Old: `"b"`, New: `"c"`},
				{Path: "opts.labels[2]", Kind: approval.ChangeAdded, New: `"d"`},
				{Path: "opts.draft", Kind: approval.ChangeRemoved, Old: `true`},
				{Path: "to[0].addr", Kind: approval.ChangeChanged, Old: `"x@a.example"`, New: `"y@a.example"`},
			}},
		{name: "keys that are not plain names", old: `{"a b":1,"x.y":{"k":1}}`, new: `{"a b":2,"x.y":{"k":2}}`,
			want: []approval.ArgumentChange{
				{Path: `["a b"]`, Kind: approval.ChangeChanged, Old: `1`, New: `2`},
				{Path: `["x.y"].k`, Kind: approval.ChangeChanged, Old: `1`, New: `2`},
			}},
		{name: "a value that changes type", old: `{"a":[1,2]}`, new: `{"a":{"b":1}}`,
			want: []approval.ArgumentChange{{Path: "a", Kind: approval.ChangeChanged, Old: `[1,2]`, New: `{"b":1}`}}},
		{name: "a redacted key's change shows redacted", old: `{"api_key":"sk-old-0123456789","n":1}`, new: `{"api_key":"sk-new-0123456789","n":1}`,
			want: []approval.ArgumentChange{{Path: "api_key", Kind: approval.ChangeChanged, Old: `"[redacted]"`, New: `"[redacted]"`, Hidden: true}}},
		{name: "a password and a plain value change", old: `{"body":{"password":"hunter2-old","note":"first"},"headers":{"X-Api-Key":"k-0ld-31337","Accept":"json"}}`,
			new: `{"body":{"password":"hunter2-new","note":"second"},"headers":{"X-Api-Key":"k-n3w-31337","Accept":"json"}}`,
			want: []approval.ArgumentChange{
				{Path: "body.password", Kind: approval.ChangeChanged, Old: `"[redacted]"`, New: `"[redacted]"`, Hidden: true},
				{Path: "body.note", Kind: approval.ChangeChanged, Old: `"first"`, New: `"second"`},
				{Path: "headers.X-Api-Key", Kind: approval.ChangeChanged, Old: `"[redacted]"`, New: `"[redacted]"`, Hidden: true},
			}},
		{name: "only the secret changes", old: `{"to":"ops","auth":{"user":"deploy","pass":"s3cr3t-0ne"}}`, new: `{"to":"ops","auth":{"user":"deploy","pass":"s3cr3t-tw0"}}`,
			want: []approval.ArgumentChange{{Path: "auth", Kind: approval.ChangeChanged, Old: `"[redacted]"`, New: `"[redacted]"`, Hidden: true}}},
		{name: "a secret that stays is not a change", old: `{"password":"hunter2-same","note":"first"}`, new: `{"password":"hunter2-same","note":"second"}`,
			want: []approval.ArgumentChange{{Path: "note", Kind: approval.ChangeChanged, Old: `"first"`, New: `"second"`}}},
		{name: "a secret's keys sent in another order are not a change", old: `{"auth":{"user":"deploy","pass":"p4ss-w0rd"},"n":1}`,
			new: `{"auth":{"pass":"p4ss-w0rd","user":"deploy"},"n":1}`, sameDigest: true},
		{name: "a token in text that changes shows redacted", old: `{"h":"Bearer abcdefghijklmnop1234"}`, new: `{"h":"Bearer zyxwvutsrqponmlk9876"}`,
			want: []approval.ArgumentChange{{Path: "h", Kind: approval.ChangeChanged, Old: `"Bearer [redacted]"`, New: `"Bearer [redacted]"`, Hidden: true}}},
		{name: "a secret key added beside a changed one", old: `{"token":"t-0ld-0123456789"}`, new: `{"token":"t-n3w-0123456789","password":"hunter2-hunter2"}`,
			want: []approval.ArgumentChange{
				{Path: "token", Kind: approval.ChangeChanged, Old: `"[redacted]"`, New: `"[redacted]"`, Hidden: true},
				{Path: "password", Kind: approval.ChangeAdded, New: `"[redacted]"`},
			}},
		{name: "a redacted key added shows as redacted", old: `{"n":1}`, new: `{"n":1,"password":"hunter2-hunter2"}`,
			want: []approval.ArgumentChange{{Path: "password", Kind: approval.ChangeAdded, New: `"[redacted]"`}}},
		{name: "a bearer token in text is redacted", old: `{"h":"Bearer abcdefghijklmnop1234"}`, new: `{"h":"see Bearer zyxwvutsrqponmlk9876 now"}`,
			want: []approval.ArgumentChange{{Path: "h", Kind: approval.ChangeChanged, Old: `"Bearer [redacted]"`, New: `"see Bearer [redacted] now"`}}},
		{name: "a cut value shows cut", old: `{"body":"a` + long + `"}`, new: `{"body":"b` + long + `"}`,
			want: []approval.ArgumentChange{{Path: "body", Kind: approval.ChangeChanged,
				Old: `"a` + strings.Repeat("x", 57) + "…", New: `"b` + strings.Repeat("x", 57) + "…"}}},
		{name: "a change past a cut shows cut", old: `{"body":"` + long + `a"}`, new: `{"body":"` + long + `b"}`,
			want: []approval.ArgumentChange{{Path: "body", Kind: approval.ChangeChanged,
				Old: `"` + strings.Repeat("x", 58) + "…", New: `"` + strings.Repeat("x", 58) + "…", Hidden: true}}},
		{name: "a cut value that stays is not a change", old: `{"body":"` + long + `a","n":1}`, new: `{"body":"` + long + `a","n":2}`,
			want: []approval.ArgumentChange{{Path: "n", Kind: approval.ChangeChanged, Old: `1`, New: `2`}}},
		{name: "a change in members left out", old: members(40, 35, "a"), new: members(40, 35, "b"),
			want: []approval.ArgumentChange{{Path: `["…"]`, Kind: approval.ChangeChanged,
				Old: `"[9 more left out]"`, New: `"[9 more left out]"`, Hidden: true}}},
		{name: "a change nested past the depth shown", old: `{"a":{"b":{"c":{"d":{"e":{"f":{"g":1}}}}}}}`, new: `{"a":{"b":{"c":{"d":{"e":{"f":{"g":2}}}}}}}`,
			want: []approval.ArgumentChange{{Path: "a.b.c.d.e.f", Kind: approval.ChangeChanged,
				Old: `"[nested deeper than 6 levels]"`, New: `"[nested deeper than 6 levels]"`, Hidden: true}}},
		{name: "restricted: only the digest is compared", old: `{"to":"x@a.example"}`, new: `{"to":"y@a.example"}`, restricted: true,
			unshown: true, withheld: true},
		{name: "no change", old: `{"a":1}`, new: `{"a":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			prev, next := revision(t, 1, tt.old, tt.restricted), arriving(t, 2, tt.new, tt.restricted)
			if tt.old == tt.new || tt.sameDigest {
				next.Call.ArgsSHA256 = prev.Call.ArgsSHA256
			}
			next.Why = approval.WhyArgumentsChanged
			r := approval.CompareRevisions(prev, next, callsSecrets...)
			if diff := cmp.Diff(tt.want, r.Arguments); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
			if r.Unshown != tt.unshown || r.Withheld != tt.withheld || r.From != 1 || r.Revision != 2 || r.Why != approval.WhyArgumentsChanged {
				t.Errorf("reask %+v: want unshown %v, withheld %v, from 1 to 2, why arguments_changed", r, tt.unshown, tt.withheld)
			}
			if got, want := r.ArgumentsChanged(), tt.old != tt.new && !tt.sameDigest; got != want {
				t.Errorf("ArgumentsChanged = %v, want %v", got, want)
			}
		})
	}
}

// members is an object of n members "k0"… whose member at is v.
func members(n, at int, v string) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		val := "v"
		if i == at {
			val = v
		}
		fmt.Fprintf(&b, `"k%d":%q`, i, val)
	}
	b.WriteString("}")
	return b.String()
}

// TestCompareRevisionsWithoutFingerprints: where a hidden value cannot be
// compared (the earlier revision was stored before fingerprints, or by a
// build that kept their key in the row, or without a secret; the bot has
// no secret; or the new revision is read back from the store, without the
// arguments received), a change only there is said to be in values the
// card does not show, and no path is said to have changed.
func TestCompareRevisionsWithoutFingerprints(t *testing.T) {
	t.Parallel()
	old, new := `{"password":"hunter2-old","n":1}`, `{"password":"hunter2-new","n":1}`
	arrivingNew := func(t *testing.T) *approval.Approval { return arriving(t, 2, new, false) }
	tests := []struct {
		name       string
		prev, next func(t *testing.T) *approval.Approval
		secrets    [][]byte // the bot's at the reask
	}{
		{"a revision stored without fingerprints", func(t *testing.T) *approval.Approval {
			prev := revision(t, 1, old, false)
			if prev.Call.Fingerprints == nil {
				t.Fatal("no fingerprints stored of a redacted value")
			}
			// As a release before fingerprints stored it.
			return withFingerprints(t, prev, nil)
		}, arrivingNew, callsSecrets},
		{"a revision that kept its fingerprints' key", func(t *testing.T) *approval.Approval {
			// As the build before the keys were derived stored it: a
			// random key in the row, the fingerprints made under it. A
			// reader that used it would see the password change.
			key := []byte(strings.Repeat("k", 32))
			return withFingerprints(t, revision(t, 1, old, false), map[string]any{"key": key,
				"values": []map[string]any{{"path": "password", "mac": testFingerprint(key, "password", `"hunter2-old"`)}}})
		}, arrivingNew, callsSecrets},
		{"a revision stored without a secret", func(t *testing.T) *approval.Approval {
			return readBack(t, arrivingUnder(t, 1, old, false))
		}, arrivingNew, callsSecrets},
		{"a bot without a secret", func(t *testing.T) *approval.Approval { return revision(t, 1, old, false) },
			arrivingNew, nil},
		{"a bot whose secrets are empty", func(t *testing.T) *approval.Approval {
			return readBack(t, arrivingUnder(t, 1, old, false, []byte{}))
		}, func(t *testing.T) *approval.Approval { return arrivingUnder(t, 2, new, false, []byte{}) }, [][]byte{{}}},
		{"the new revision read back from the store", func(t *testing.T) *approval.Approval { return revision(t, 1, old, false) },
			func(t *testing.T) *approval.Approval { return revision(t, 2, new, false) }, callsSecrets},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := approval.CompareRevisions(tt.prev(t), tt.next(t), tt.secrets...)
			if len(r.Arguments) != 0 || r.More != 0 || !r.Unshown || !r.ArgumentsChanged() {
				t.Errorf("reask %+v: want no path and the change unshown", r)
			}
		})
	}
}

// withFingerprints is a with its stored call's fingerprints replaced by fp
// (none for nil), as the store would give them back.
func withFingerprints(t *testing.T, a *approval.Approval, fp map[string]any) *approval.Approval {
	t.Helper()
	body, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	call := m["call"].(map[string]any)
	delete(call, "fingerprints")
	if fp != nil {
		call["fingerprints"] = fp
	}
	body, err = json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back approval.Approval
	if err := json.Unmarshal(body, &back); err != nil {
		t.Fatal(err)
	}
	return &back
}

// testFingerprint is a fingerprint as fingerprint.go makes one, of the
// canonical text value at path under key: the HMAC-SHA256 of each part
// prefixed by its length, cut to 16 bytes.
func testFingerprint(key []byte, path, value string) []byte {
	m := hmac.New(sha256.New, key)
	for _, part := range []string{path, value} {
		m.Write(binary.AppendUvarint(nil, uint64(len(part))))
		m.Write([]byte(part))
	}
	return m.Sum(nil)[:16]
}

// TestCompareRevisionsAcrossARotation: a revision's fingerprints are keyed
// from the calls secret that signed when it was stored. After a rotation
// that keeps that secret listed, a reask still compares what the card
// hides; once it is rotated out, a reask says only that the change is in
// values the card does not show, and reports no hidden value changed.
func TestCompareRevisionsAcrossARotation(t *testing.T) {
	t.Parallel()
	before, after := []byte("calls-secret-before-the-rotation"), []byte("calls-secret-after-the-rotation")
	rotating, rotated := [][]byte{after, before}, [][]byte{after}
	pw := func(password, note string) string { return `{"password":"` + password + `","note":"` + note + `"}` }
	note := approval.ArgumentChange{Path: "note", Kind: approval.ChangeChanged, Old: `"first"`, New: `"second"`}
	tests := []struct {
		name     string
		old, new string
		secrets  [][]byte // the bot's at the reask
		want     []approval.ArgumentChange
		unshown  bool
	}{
		{name: "still listed: a changed secret shows", old: pw("hunter2-old", "first"), new: pw("hunter2-new", "first"), secrets: rotating,
			want: []approval.ArgumentChange{{Path: "password", Kind: approval.ChangeChanged, Old: `"[redacted]"`, New: `"[redacted]"`, Hidden: true}}},
		{name: "still listed: a secret that stays is not a change", old: pw("hunter2-same", "first"), new: pw("hunter2-same", "second"), secrets: rotating,
			want: []approval.ArgumentChange{note}},
		{name: "rotated out: a changed secret leaves the note", old: pw("hunter2-old", "first"), new: pw("hunter2-new", "first"), secrets: rotated,
			unshown: true},
		{name: "rotated out: a secret that stays is not a change", old: pw("hunter2-same", "first"), new: pw("hunter2-same", "second"), secrets: rotated,
			want: []approval.ArgumentChange{note}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			prev := readBack(t, arrivingUnder(t, 1, tt.old, false, before))
			next := arrivingUnder(t, 2, tt.new, false, tt.secrets...)
			if p, n := prev.Call.Fingerprints, next.Call.Fingerprints; p == nil || n == nil || bytes.Equal(p.KeyID, n.KeyID) {
				t.Fatalf("fingerprints %+v and %+v: want both, under the secrets that signed", p, n)
			}
			r := approval.CompareRevisions(prev, next, tt.secrets...)
			if diff := cmp.Diff(tt.want, r.Arguments); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
			if r.Unshown != tt.unshown || r.More != 0 {
				t.Errorf("reask %+v: want unshown %v", r, tt.unshown)
			}
		})
	}
}

// TestCompareRevisionsRestrictedDigest: of a content-restricted call asked
// again for another reason than its arguments, the reask says the
// arguments changed too when, and only when, their digest changed; the
// restricted card says so and shows nothing of them.
func TestCompareRevisionsRestrictedDigest(t *testing.T) {
	t.Parallel()
	r, err := templates.New(templates.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, why := range []approval.Why{approval.WhyPolicyChanged, approval.WhySnapshotChanged, approval.WhyHookChanged} {
		for _, changed := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s, digest changed %v", why, changed), func(t *testing.T) {
				prev, next := revision(t, 1, `{"to":"x@a.example"}`, true), arriving(t, 2, `{"to":"y@a.example"}`, true)
				if !changed {
					next.Call.ArgsSHA256 = prev.Call.ArgsSHA256
				}
				next.Why = why
				change := approval.CompareRevisions(prev, next, callsSecrets...)
				if !change.Withheld || len(change.Arguments) != 0 || change.ArgumentsChanged() != changed {
					t.Fatalf("reask %+v: want withheld, no path, arguments changed %v", change, changed)
				}
				c := templates.Build(templates.Input{Approval: next, Reask: &change})
				if c.Reask == nil {
					t.Fatal("the card says nothing of the reask")
				}
				text := r.Text(c)
				if got := strings.Contains(c.Reask.Line, "the arguments changed too") && strings.Contains(text, "the arguments changed too"); got != changed {
					t.Errorf("reask line %q, card:\n%s\nwant it to say the arguments changed too: %v", c.Reask.Line, text, changed)
				}
				if strings.Contains(text, "a.example") {
					t.Errorf("the restricted card shows an argument:\n%s", text)
				}
			})
		}
	}
}

func TestCompareRevisionsSnapshotAndBounds(t *testing.T) {
	t.Parallel()
	prev, next := revision(t, 1, `{}`, false), revision(t, 3, `{}`, false)
	prev.Call.Snapshot = "sha256:" + strings.Repeat("1", 64)
	next.Call.Snapshot = "sha256:" + strings.Repeat("2", 64)
	next.Call.ArgsSHA256 = prev.Call.ArgsSHA256
	next.Why = approval.WhySnapshotChanged
	r := approval.CompareRevisions(prev, next, callsSecrets...)
	if r.SnapshotFrom != prev.Call.Snapshot || r.SnapshotTo != next.Call.Snapshot || r.ArgumentsChanged() || r.From != 1 || r.Revision != 3 {
		t.Errorf("reask %+v: want the snapshot change alone", r)
	}

	var a, b strings.Builder
	a.WriteString("{")
	b.WriteString("{")
	for i := range 30 {
		if i > 0 {
			a.WriteString(",")
			b.WriteString(",")
		}
		fmt.Fprintf(&a, `"k%d":[%d,%d]`, i, i, i)
		fmt.Fprintf(&b, `"k%d":[%d,%d]`, i, i+1, i+1)
	}
	a.WriteString("}")
	b.WriteString("}")
	r = approval.CompareRevisions(revision(t, 1, a.String(), false), revision(t, 2, b.String(), false), callsSecrets...)
	if len(r.Arguments) != approval.ReaskChangesMax || r.More != 60-approval.ReaskChangesMax {
		t.Errorf("%d changes kept and %d more, want %d and %d", len(r.Arguments), r.More, approval.ReaskChangesMax, 60-approval.ReaskChangesMax)
	}
}

// TestCompareRevisionsNeverShowsASecret is a property test: whatever the
// arguments of two revisions, nested however deep, a value under a key
// that names a secret never appears in what the reask keeps, nor any part
// of it four characters long, neither before nor after the change,
// whether the secret changed, moved, came or went; and a secret that
// changed in place is reported at its path, one that did not is not.
func TestCompareRevisionsNeverShowsASecret(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(15, 2026))
	secretKeys := []string{"api_key", "password", "Authorization", "client_secret", "X-Api-Key", "private_key",
		"refreshToken", "db passwd", "session_cookie", "auth", "credentials"}
	plainKeys := []string{"repo", "to", "body", "labels", "opts", "n", "a b", "x.y", "list"}
	isSecretKey := map[string]bool{}
	for _, k := range secretKeys {
		if !approval.SensitiveKey(k) {
			t.Fatalf("%q does not name a secret", k)
		}
		isSecretKey[k] = true
	}
	// A secret's letters are none the reask could hold otherwise (the
	// only capitals of its keys are A, K, T and X, each beside a
	// lowercase letter or a sign), so four of them in a row in the
	// reask are a part of a secret.
	secret := func() string {
		const alpha = "BCDEFGHJLMNPQRSUVWYZ"
		b := make([]byte, 16+rng.IntN(40))
		for i := range b {
			b[i] = alpha[rng.IntN(len(alpha))]
		}
		return "Zq" + string(b)
	}
	var secrets []string
	newSecret := func() any {
		s := secret()
		secrets = append(secrets, s)
		if rng.IntN(4) == 0 {
			return map[string]any{"v": s, "w": []any{s}}
		}
		return s
	}
	var value func(depth int) any
	object := func(depth int) map[string]any {
		m := map[string]any{}
		for range 1 + rng.IntN(4) {
			if rng.IntN(3) == 0 {
				m[secretKeys[rng.IntN(len(secretKeys))]] = newSecret()
				continue
			}
			m[plainKeys[rng.IntN(len(plainKeys))]] = value(depth + 1)
		}
		return m
	}
	value = func(depth int) any {
		switch k := rng.IntN(5); {
		case depth > 4 || k == 0:
			return rng.IntN(100)
		case k == 1:
			return fmt.Sprintf("v%d", rng.IntN(5))
		case k == 2:
			return []any{value(depth + 1), value(depth + 1)}
		default:
			return object(depth)
		}
	}
	// again is v sent again: each secret kept or replaced, each plain
	// scalar kept or changed, the shape the same.
	var again func(v any) any
	again = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			m := map[string]any{}
			for k, kid := range x {
				if isSecretKey[k] && rng.IntN(2) == 0 {
					m[k] = newSecret()
					continue
				}
				m[k] = again(kid)
			}
			return m
		case []any:
			out := make([]any, len(x))
			for i := range x {
				out[i] = again(x[i])
			}
			return out
		case int:
			if rng.IntN(8) == 0 {
				return x + 1
			}
		}
		return v
	}
	sameSecrets, changedSecrets := 0, 0
	for i := range 400 {
		secrets = secrets[:0]
		before := object(0)
		after := any(object(0))
		if i%2 == 0 {
			after = again(before)
		}
		old, _ := json.Marshal(before)
		new, _ := json.Marshal(after)
		r := approval.CompareRevisions(revision(t, 1, string(old), false), arriving(t, 2, string(new), false), callsSecrets...)
		kept, _ := json.Marshal(r)
		for _, s := range secrets {
			// A secret is never shown, nor any part of it.
			for j := 0; j+4 <= len(s); j++ {
				if strings.Contains(string(kept), s[j:j+4]) {
					t.Fatalf("case %d: the reask keeps %q of secret %q:\n%s\nold %s\nnew %s", i, s[j:j+4], s, kept, old, new)
				}
			}
		}
		po, _ := approval.Project(old)
		pn, _ := approval.Project(new)
		if po.Truncated || pn.Truncated || r.More > 0 {
			continue // a secret may stand in the members left out
		}
		at := map[string]approval.ArgumentChange{}
		for _, c := range r.Arguments {
			at[c.Path] = c
		}
		was, is := secretLeaves("", before), secretLeaves("", after)
		for path, v := range is {
			w, ok := was[path]
			if !ok {
				continue
			}
			c, found := at[path]
			switch {
			case w == v && found:
				t.Errorf("case %d: secret at %s did not change, reported %+v\nold %s\nnew %s", i, path, c, old, new)
			case w == v:
				sameSecrets++
			case !found || c.Kind != approval.ChangeChanged || !c.Hidden:
				t.Errorf("case %d: secret at %s changed, reported %+v (found %v)\nold %s\nnew %s", i, path, c, found, old, new)
			default:
				changedSecrets++
			}
		}
	}
	// The cases exercise both: secrets that stay and secrets that change.
	t.Logf("%d changed secrets reported, %d unchanged", changedSecrets, sameSecrets)
	if sameSecrets < 50 || changedSecrets < 50 {
		t.Errorf("%d changed secrets reported, %d unchanged: too few cases", changedSecrets, sameSecrets)
	}
}

// secretLeaves are the values under keys naming a secret in v, by the
// path a reask names them with, as JSON text.
func secretLeaves(path string, v any) map[string]string {
	out := map[string]string{}
	switch x := v.(type) {
	case map[string]any:
		for k, kid := range x {
			p := testPathKey(path, k)
			if approval.SensitiveKey(k) {
				b, _ := json.Marshal(kid)
				out[p] = string(b)
				continue
			}
			for kp, kv := range secretLeaves(p, kid) {
				out[kp] = kv
			}
		}
	case []any:
		for i, kid := range x {
			for kp, kv := range secretLeaves(fmt.Sprintf("%s[%d]", path, i), kid) {
				out[kp] = kv
			}
		}
	}
	return out
}

// testPathKey extends path by an object key, as a reask's paths do: .key,
// or ["key"] for a key that is not a plain name.
func testPathKey(path, key string) string {
	plain := key != ""
	for i, c := range key {
		if !(c == '_' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || i > 0 && (c == '-' || '0' <= c && c <= '9')) {
			plain = false
		}
	}
	switch {
	case plain && path == "":
		return key
	case plain:
		return path + "." + key
	}
	q, _ := json.Marshal(key)
	return path + "[" + string(q) + "]"
}
