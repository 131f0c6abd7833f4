package api_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"approvalsbot/approval"
)

// A mutation breaks a valid event in exactly one place.
type mutation struct {
	path string // where, as the parser names it: data.roles[0].role
	what string // wrong type, too long, bad pattern, unknown field, missing, …
	body []byte
}

// probes replace one value. Between them they are, for every field, a
// value of each other JSON type, an empty and an over-long string (one
// byte over 64 KiB), a string no id, digest, time or enumeration
// matches, and the integers at and below each lower bound.
var probes = []struct {
	what  string
	value any
}{
	{"wrong type: string", " 7"},
	{"bad pattern or enum", "not valid!"},
	{"empty string", ""},
	{"too long", strings.Repeat("a", 64<<10+1)},
	{"wrong type: negative integer", json.Number("-1")},
	{"integer 0", json.Number("0")},
	{"wrong type: fraction", json.Number("1.5")},
	{"wrong type: boolean", true},
	{"wrong type: object", map[string]any{}},
	{"wrong type: array", []any{}},
}

// mutations lists every one-field break of doc at a path that starts with
// focus: each value replaced by each probe, each key removed, and an
// unknown key added to each object.
func mutations(tb testing.TB, doc any, focus string) []mutation {
	tb.Helper()
	var out []mutation
	add := func(path, what string, d any) {
		if !strings.HasPrefix(path, focus) {
			return
		}
		out = append(out, mutation{path: path, what: what, body: encode(tb, d)})
	}
	// at calls f with a fresh copy of doc and a setter for the value at the
	// path given by steps.
	var walk func(v any, path string, steps []any)
	walk = func(v any, path string, steps []any) {
		if len(steps) > 0 && strings.HasPrefix(path, focus) {
			_, isString := v.(string)
			for _, p := range probes {
				if p.what == "too long" && !isString {
					continue // for any other value, the same as the short wrong-type string
				}
				add(path, p.what, replaced(doc, steps, p.value))
			}
		}
		if strings.HasPrefix(path, "data.call.arguments.") {
			return // the tool's own: any value, tried at the top of arguments
		}
		switch x := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				kp := k
				if path != "" {
					kp = path + "." + k
				}
				add(kp, "missing", removed(doc, append(slices.Clone(steps), k)))
				walk(x[k], kp, append(slices.Clone(steps), k))
			}
			add(join(path, "x_unknown"), "unknown field", replaced(doc, append(slices.Clone(steps), "x_unknown"), true))
		case []any:
			for i, c := range x {
				walk(c, fmt.Sprintf("%s[%d]", path, i), append(slices.Clone(steps), i))
			}
		}
	}
	walk(doc, "", nil)
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// deepCopy copies generic JSON.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, c := range x {
			m[k] = deepCopy(c)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, c := range x {
			a[i] = deepCopy(c)
		}
		return a
	}
	return v
}

// replaced is a copy of doc with the value at steps set to value (a key
// added when the last step names none).
func replaced(doc any, steps []any, value any) any {
	root := deepCopy(doc)
	parent := root
	for _, s := range steps[:len(steps)-1] {
		parent = step(parent, s)
	}
	switch last := steps[len(steps)-1].(type) {
	case string:
		parent.(map[string]any)[last] = value
	case int:
		parent.([]any)[last] = value
	}
	return root
}

// removed is a copy of doc without the key at steps.
func removed(doc any, steps []any) any {
	root := deepCopy(doc)
	parent := root
	for _, s := range steps[:len(steps)-1] {
		parent = step(parent, s)
	}
	delete(parent.(map[string]any), steps[len(steps)-1].(string))
	return root
}

func step(v any, s any) any {
	switch k := s.(type) {
	case string:
		return v.(map[string]any)[k]
	case int:
		return v.([]any)[k]
	}
	return nil
}

// mutationFocus keeps the bases that differ from requested/origin only
// in one part to breaking that part: the rest is tried once, on
// requested/origin, which keeps the test fast.
func mutationFocus(base string) string {
	switch {
	case base == "requested/origin":
		return ""
	case base == "requested/changes" || base == "requested/protected_paths":
		return "data.changes"
	case strings.HasPrefix(base, "requested/"):
		return "data.asked_by"
	case base == "reasked":
		return "data.why"
	}
	return ""
}

// TestSchemaAcceptsWhatTheParserAccepts is the differential test: over
// valid events of every type, and each broken in exactly one field in
// every way the probes know, the event schema accepts a body exactly when
// approval.Parse, the bot's strict parser, does. The rules JSON Schema
// cannot say are TestSchemaExceptions', and no probe here touches one.
func TestSchemaAcceptsWhatTheParserAccepts(t *testing.T) {
	t.Parallel()
	ev := compile(t, eventSchema)
	bases := generatedEvents(t, time.Now())
	for name, body := range fixtureEvents(t) {
		bases["fixture/"+name] = body
	}
	type broken struct {
		base string
		mutation
	}
	var all []broken
	for _, name := range slices.Sorted(maps.Keys(bases)) {
		body := bases[name]
		schemaErr := validate(ev, body)
		_, parseErr := approval.Parse(body)
		if schemaErr != nil || parseErr != nil {
			t.Fatalf("%s: the base event is not valid: schema %v; parser %v", name, firstLine(schemaErr), parseErr)
		}
		if strings.HasPrefix(name, "fixture/") {
			continue // the generated events cover every field the fixtures have
		}
		for _, m := range mutations(t, decode(t, body), mutationFocus(name)) {
			all = append(all, broken{base: name, mutation: m})
		}
	}
	t.Logf("%d broken events compared", len(all))
	// Two halves at once, as the machine's two cores allow.
	for half := range 2 {
		t.Run(fmt.Sprintf("half %d", half+1), func(t *testing.T) {
			t.Parallel()
			for i := half; i < len(all); i += 2 {
				m := all[i]
				schemaErr := validate(ev, m.body)
				_, parseErr := approval.Parse(m.body)
				if (schemaErr == nil) != (parseErr == nil) {
					t.Errorf("%s: %s at %s: schema accepts = %t (%s), parser accepts = %t (%v)",
						m.base, m.what, m.path, schemaErr == nil, firstLine(schemaErr), parseErr == nil, parseErr)
				}
			}
		})
	}
}
