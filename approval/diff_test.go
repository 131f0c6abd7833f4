package approval_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/approval"
)

// revision is an approval of one revision with these arguments, stored as
// ingest stores it.
func revision(t testing.TB, rev int, args string, restricted bool) *approval.Approval {
	t.Helper()
	a := &approval.Approval{ID: "a-1", Revision: rev, Tenant: "acme", Kind: approval.KindCall,
		Call: approval.Call{Function: "f.x", Arguments: json.RawMessage(args),
			ArgsSHA256: fmt.Sprintf("sha256:%064x", len(args)*7+rev)},
		Content: approval.Content{Restricted: restricted}}
	s, err := approval.StoredForm(a)
	if err != nil {
		t.Fatal(err)
	}
	// As read back from the store.
	body, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back approval.Approval
	if err := json.Unmarshal(body, &back); err != nil {
		t.Fatal(err)
	}
	return &back
}

func TestCompareRevisions(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 300)
	tests := []struct {
		name       string
		old, new   string
		restricted bool
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
		{name: "a redacted key's change shows no value", old: `{"api_key":"sk-old-0123456789","n":1}`, new: `{"api_key":"sk-new-0123456789","n":1}`,
			unshown: true},
		{name: "a redacted key added shows as redacted", old: `{"n":1}`, new: `{"n":1,"password":"hunter2-hunter2"}`,
			want: []approval.ArgumentChange{{Path: "password", Kind: approval.ChangeAdded, New: `"[redacted]"`}}},
		{name: "a bearer token in text is redacted", old: `{"h":"Bearer abcdefghijklmnop1234"}`, new: `{"h":"see Bearer zyxwvutsrqponmlk9876 now"}`,
			want: []approval.ArgumentChange{{Path: "h", Kind: approval.ChangeChanged, Old: `"Bearer [redacted]"`, New: `"see Bearer [redacted] now"`}}},
		{name: "a cut value shows cut", old: `{"body":"a` + long + `"}`, new: `{"body":"b` + long + `"}`,
			want: []approval.ArgumentChange{{Path: "body", Kind: approval.ChangeChanged,
				Old: `"a` + strings.Repeat("x", 57) + "…", New: `"b` + strings.Repeat("x", 57) + "…"}}},
		{name: "a change past a cut shows as unshown", old: `{"body":"` + long + `a"}`, new: `{"body":"` + long + `b"}`, unshown: true},
		{name: "restricted: nothing is compared", old: `{"to":"x@a.example"}`, new: `{"to":"y@a.example"}`, restricted: true, withheld: true},
		{name: "no change", old: `{"a":1}`, new: `{"a":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			prev, next := revision(t, 1, tt.old, tt.restricted), revision(t, 2, tt.new, tt.restricted)
			if tt.old == tt.new {
				next.Call.ArgsSHA256 = prev.Call.ArgsSHA256
			}
			next.Why = approval.WhyArgumentsChanged
			r := approval.CompareRevisions(prev, next)
			if diff := cmp.Diff(tt.want, r.Arguments); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
			if r.Unshown != tt.unshown || r.Withheld != tt.withheld || r.From != 1 || r.Revision != 2 || r.Why != approval.WhyArgumentsChanged {
				t.Errorf("reask %+v: want unshown %v, withheld %v, from 1 to 2, why arguments_changed", r, tt.unshown, tt.withheld)
			}
			if got, want := r.ArgumentsChanged(), tt.old != tt.new; got != want {
				t.Errorf("ArgumentsChanged = %v, want %v", got, want)
			}
		})
	}
}

func TestCompareRevisionsSnapshotAndBounds(t *testing.T) {
	t.Parallel()
	prev, next := revision(t, 1, `{}`, false), revision(t, 3, `{}`, false)
	prev.Call.Snapshot = "sha256:" + strings.Repeat("1", 64)
	next.Call.Snapshot = "sha256:" + strings.Repeat("2", 64)
	next.Call.ArgsSHA256 = prev.Call.ArgsSHA256
	next.Why = approval.WhySnapshotChanged
	r := approval.CompareRevisions(prev, next)
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
	r = approval.CompareRevisions(revision(t, 1, a.String(), false), revision(t, 2, b.String(), false))
	if len(r.Arguments) != approval.ReaskChangesMax || r.More != 60-approval.ReaskChangesMax {
		t.Errorf("%d changes kept and %d more, want %d and %d", len(r.Arguments), r.More, approval.ReaskChangesMax, 60-approval.ReaskChangesMax)
	}
}

// TestCompareRevisionsNeverShowsASecret is a property test: whatever the
// arguments of two revisions, nested however deep, a value under a key
// that names a secret never appears in what the reask keeps, neither
// before nor after the change, whether the secret changed, moved, came or
// went.
func TestCompareRevisionsNeverShowsASecret(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(15, 2026))
	secretKeys := []string{"api_key", "password", "Authorization", "client_secret", "X-Api-Key", "private_key",
		"refreshToken", "db passwd", "session_cookie", "auth", "credentials"}
	plainKeys := []string{"repo", "to", "body", "labels", "opts", "n", "a b", "x.y", "list"}
	secret := func() string {
		const alpha = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"
		b := make([]byte, 16+rng.IntN(40))
		for i := range b {
			b[i] = alpha[rng.IntN(len(alpha))]
		}
		return "Zq" + string(b)
	}
	var secrets []string
	var value func(depth int) any
	object := func(depth int) map[string]any {
		m := map[string]any{}
		for range 1 + rng.IntN(4) {
			if rng.IntN(3) == 0 {
				s := secret()
				secrets = append(secrets, s)
				if rng.IntN(4) == 0 {
					m[secretKeys[rng.IntN(len(secretKeys))]] = map[string]any{"v": s, "w": []any{s}}
				} else {
					m[secretKeys[rng.IntN(len(secretKeys))]] = s
				}
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
	for i := range 400 {
		secrets = secrets[:0]
		old, _ := json.Marshal(object(0))
		new, _ := json.Marshal(object(0))
		r := approval.CompareRevisions(revision(t, 1, string(old), false), revision(t, 2, string(new), false))
		kept, _ := json.Marshal(r)
		for _, s := range secrets {
			// A secret is never shown, nor any long part of it.
			if strings.Contains(string(kept), s[:12]) {
				t.Fatalf("case %d: the reask keeps secret %q:\n%s\nold %s\nnew %s", i, s, kept, old, new)
			}
		}
	}
}
