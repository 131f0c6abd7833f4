package backend_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// freshEvent is the fixture name as a new event of a new approval.
func freshEvent(tb testing.TB, name string) []byte {
	tb.Helper()
	n := lastID.Add(1)
	return editEvent(tb, name, map[string]any{"id": fmt.Sprintf("evt-keys-%d", n), "data.id": fmt.Sprintf("a-keys-%d", n)})
}

// withMember adds member, raw JSON text such as `"Content":{}`, to the
// object at the dotted path of body ("" is the top level): json.Marshal
// writes every key once and in one case, so the member goes in as text.
func withMember(tb testing.TB, body []byte, path, member string) []byte {
	tb.Helper()
	const marker = "\u2603MEMBER\u2603"
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var ev map[string]any
	if err := dec.Decode(&ev); err != nil {
		tb.Fatal(err)
	}
	m := ev
	if path != "" {
		for _, k := range strings.Split(path, ".") {
			next, ok := m[k].(map[string]any)
			if !ok {
				tb.Fatalf("%s is not an object", k)
			}
			m = next
		}
	}
	m[marker] = 0
	out, err := json.Marshal(ev)
	if err != nil {
		tb.Fatal(err)
	}
	q := []byte(`"` + marker + `":0`)
	if bytes.Count(out, q) != 1 {
		tb.Fatal("member placeholder not found")
	}
	return bytes.Replace(out, q, []byte(member), 1)
}

// TestEventsKeysWithTwoReadings sends, through the events endpoint, events
// that encoding/json alone would read one way and a reader that honours
// the first key (or the schema's case) another: the restricted event that
// `"Content":{"Restricted":false}` would turn into a full card among them.
// Each is refused 422 with the key's path and stores nothing: the same
// event without the member is then accepted under its id.
func TestEventsKeysWithTwoReadings(t *testing.T) {
	t.Parallel()
	b := newEventsBot(t)
	tests := []struct {
		name    string
		fixture string
		path    string
		member  string
		want    want
	}{
		{"a restricted event unrestricted by a case variant", "private.json", "data", `"Content":{"Restricted":false}`,
			invalid(`data.Content: want "content": `)},
		{"a restricted event unrestricted by a duplicate", "private.json", "data", `"content":{"restricted":false}`,
			invalid("data.content: duplicate key")},
		{"restricted twice", "private.json", "data.content", `"restricted":false`,
			invalid("data.content.restricted: duplicate key")},
		{"restricted in capitals", "private.json", "data.content", `"RESTRICTED":false`,
			invalid(`data.content.RESTRICTED: want "restricted": `)},
		{"a Kelvin sign for the k of kind", "merge.json", "data", `"\u212aind":"changes"`,
			invalid(`data["\u212aind"]: want "kind": `)},
		{"an argument twice", "merge.json", "data.call.arguments", `"repo":"evil/api"`,
			invalid("data.call.arguments: an object in it holds a key twice")},
		{"the tenant in another case", "merge.json", "", `"Tenant":"globex"`,
			invalid(`Tenant: want "tenant": `)},
		{"the type twice", "merge.json", "", `"type":"approval.cancelled"`,
			invalid("type: duplicate key")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clean := freshEvent(t, tt.fixture)
			tt.want.check(t, b.post(t, withMember(t, clean, tt.path, tt.member), nil))
			accepted.check(t, b.post(t, clean, nil))
		})
	}
	t.Run("a key problem in a body that is not JSON is bad_json", func(t *testing.T) {
		body := withMember(t, freshEvent(t, "merge.json"), "data", `"kind":"call"`)
		refused(http.StatusBadRequest, "bad_json").check(t, b.post(t, body[:len(body)-1], nil))
	})
	t.Run("keys differing in case inside arguments are distinct", func(t *testing.T) {
		accepted.check(t, b.post(t, withMember(t, freshEvent(t, "merge.json"), "data.call.arguments", `"Repo":"other/api"`), nil))
	})
	t.Run("unknown keys are refused, naming the first", func(t *testing.T) {
		invalid("data.zz_future: unknown field").check(t, b.post(t, withMember(t, freshEvent(t, "merge.json"), "data", `"zz_future":1,"ZZ_FUTURE":{"a":1,"A":2}`), nil))
	})
	t.Run("a value beside a flag's argument and role is refused", func(t *testing.T) {
		invalid("data.flags.new_to_job[0].value: unknown field").check(t, b.post(t,
			withMember(t, freshEvent(t, "merge.json"), "data", `"flags":{"new_to_job":[{"argument":"repo","role":"repository","value":"evil/api"}]}`), nil))
	})
}
