package api_test

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"approvalsbot/adapters/backend"
	"approvalsbot/adapters/backend/standin"
	"approvalsbot/approval"
)

// goFields lists the JSON field paths encoding/json fills in a value of
// t ("call.annotations.readOnlyHint", "roles[].values[].value"), stopping
// at data of free shape (json.RawMessage, any) and at times.
func goFields(t reflect.Type) []string {
	var out []string
	var walk func(t reflect.Type, prefix string, seen map[reflect.Type]bool)
	walk = func(t reflect.Type, prefix string, seen map[reflect.Type]bool) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch {
		case t == reflect.TypeFor[json.RawMessage](), t == reflect.TypeFor[time.Time]():
			return
		case t.Kind() == reflect.Slice:
			walk(t.Elem(), prefix+"[]", seen)
			return
		case t.Kind() != reflect.Struct || seen[t]:
			return
		}
		seen[t] = true
		defer delete(seen, t)
		for f := range t.Fields() {
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			p := name
			if prefix != "" {
				p = prefix + "." + name
			}
			out = append(out, p)
			walk(f.Type, p, seen)
		}
	}
	walk(t, "", map[reflect.Type]bool{})
	return out
}

// schemaFields lists the property paths a compiled schema names, through
// references, allOf and the branches of if/then/else, in the same form
// as goFields. Arrays' items are "[]"; an object open to any key (no
// properties named) ends a path.
func schemaFields(s *jsonschema.Schema) []string {
	set := map[string]bool{}
	var walk func(nodes []*jsonschema.Schema, prefix string, depth int)
	walk = func(nodes []*jsonschema.Schema, prefix string, depth int) {
		if depth > 20 {
			return
		}
		props := map[string][]*jsonschema.Schema{}
		var items []*jsonschema.Schema
		var visit func(n *jsonschema.Schema)
		visit = func(n *jsonschema.Schema) {
			if n == nil {
				return
			}
			for k, c := range n.Properties {
				props[k] = append(props[k], c)
			}
			if n.Items2020 != nil {
				items = append(items, n.Items2020)
			}
			visit(n.Ref)
			for _, c := range n.AllOf {
				visit(c)
			}
			for _, c := range n.AnyOf {
				visit(c)
			}
			visit(n.Then)
			visit(n.Else)
		}
		for _, n := range nodes {
			visit(n)
		}
		for k, cs := range props {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			set[p] = true
			walk(cs, p, depth+1)
		}
		if len(items) > 0 {
			walk(items, prefix+"[]", depth+1)
		}
	}
	walk([]*jsonschema.Schema{s}, "", 0)
	return slices.Sorted(maps.Keys(set))
}

// TestSchemaNamesTheCodesFields: each schema names exactly the fields the
// Go type the bot reads (or writes) it with has, at every depth. A field
// added to the parser's types without the schema, or to the schema
// without the code, fails here by its path.
func TestSchemaNamesTheCodesFields(t *testing.T) {
	t.Parallel()
	envelope := []string{"id", "type", "time", "tenant", "data"}
	prefixed := func(prefix string, fields []string) []string {
		out := slices.Clone(envelope)
		for _, f := range fields {
			out = append(out, prefix+f)
		}
		return out
	}
	approvalFields := goFields(reflect.TypeFor[approval.Approval]())
	// The bot's own fields of a stored revision, which the parser refuses
	// from a backend (TestStoredOnlyFieldsRefused).
	approvalFields = slices.DeleteFunc(approvalFields, func(f string) bool {
		for s := range storedOnly {
			if f == s || strings.HasPrefix(f, s+".") || strings.HasPrefix(f, s+"[]") {
				return true
			}
		}
		return false
	})
	// A question is question.asked's alone: the parser refuses it on an
	// approval (TestQuestionRefusedOnApprovals).
	approvalFields = slices.DeleteFunc(approvalFields, func(f string) bool {
		return f == questionOnly || strings.HasPrefix(f, questionOnly+".")
	})
	cases := []struct {
		name   string
		schema string
		def    string // a $defs entry of the file, or "" for the file
		want   []string
	}{
		{"approval", approvalSchema, "", approvalFields},
		{"approval.requested", eventSchema, "#/$defs/requested", approvalFields},
		{"approval.reasked", eventSchema, "#/$defs/reasked", approvalFields},
		{"approval.resolved", eventSchema, "#/$defs/resolved", goFields(reflect.TypeFor[approval.Resolved]())},
		{"approval.recheck_failed", eventSchema, "#/$defs/recheckFailed", goFields(reflect.TypeFor[approval.RecheckFailed]())},
		{"approval.cancelled", eventSchema, "#/$defs/cancelled", goFields(reflect.TypeFor[approval.Cancelled]())},
		{"call.finished", eventSchema, "#/$defs/finished", goFields(reflect.TypeFor[approval.Finished]())},
		{"approval.auto_granted", eventSchema, "#/$defs/autoGranted", goFields(reflect.TypeFor[approval.AutoGranted]())},
		{"decision", decisionRequestSchema, "", goFields(reflect.TypeFor[backend.Decision]())},
		{"arguments look-up", argumentsRequestSchema, "", goFields(reflect.TypeFor[backend.ArgumentsRequest]())},
		{"arguments answer's changes", argumentsAnswerSchema, "#/properties/changes", goFields(reflect.TypeFor[backend.ChangesAnswer]())},
		{"question.asked", eventSchema, "#/$defs/questionAsked", goFields(reflect.TypeFor[approval.QuestionAskedData]())},
		{"question.answered", eventSchema, "#/$defs/questionAnswered", goFields(reflect.TypeFor[approval.QuestionAnsweredData]())},
		{"question.cancelled", eventSchema, "#/$defs/questionCancelled", goFields(reflect.TypeFor[approval.QuestionCancelledData]())},
		{"answer", answerRequestSchema, "", goFields(reflect.TypeFor[backend.AnswerRequest]())},
		{"answer as the stand-in reads it", answerRequestSchema, "", goFields(reflect.TypeFor[standin.AnswerRequest]())},
		{"question look-up", questionRequestSchema, "", goFields(reflect.TypeFor[backend.QuestionRequest]())},
		{"question look-up as the stand-in reads it", questionRequestSchema, "", goFields(reflect.TypeFor[standin.QuestionLookupRequest]())},
		{"question look-up's answer", questionAnswerSchema, "", goFields(reflect.TypeFor[standin.QuestionAnswer]())},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := schemaFields(compileAt(t, c.schema, c.def))
			want := slices.Sorted(slices.Values(c.want))
			for _, f := range want {
				if !slices.Contains(got, f) {
					t.Errorf("%s: the code reads %s, the schema %s does not name it", c.name, f, c.schema+c.def)
				}
			}
			for _, f := range got {
				if !slices.Contains(want, f) {
					t.Errorf("%s: the schema %s names %s, the code has no such field", c.name, c.schema+c.def, f)
				}
			}
		})
	}
	// The envelope: the event schema names its fields and, under data,
	// what one type's if/then adds.
	got := schemaFields(compile(t, eventSchema))
	for _, f := range prefixed("data.", goFields(reflect.TypeFor[approval.Resolved]())) {
		if !slices.Contains(got, f) {
			t.Errorf("event: the schema does not name %s", f)
		}
	}
}

// compileAt compiles one schema, or a location inside it.
func compileAt(tb testing.TB, name, fragment string) *jsonschema.Schema {
	tb.Helper()
	if fragment == "" {
		return compile(tb, name)
	}
	return compile(tb, name+fragment)
}

// storedOnly are fields of approval.Approval the bot keeps for itself in
// the stored form of a revision and refuses from a backend.
var storedOnly = map[string]bool{
	"roles[].found":     true,
	"call.fingerprints": true,
	"question_sha256":   true,
}

// TestStoredOnlyFieldsRefused: the bot's own fields are refused from a
// backend at their path, and the schema refuses them too.
func TestStoredOnlyFieldsRefused(t *testing.T) {
	t.Parallel()
	ev := compile(t, eventSchema)
	base := generatedEvents(t, time.Now())["requested/origin"]
	for f := range storedOnly {
		doc := decode(t, base).(map[string]any)
		data := doc["data"].(map[string]any)
		var path string
		switch f {
		case "roles[].found":
			data["roles"].([]any)[0].(map[string]any)["found"] = ""
			path = "data.roles[0].found"
		case "call.fingerprints":
			data["call"].(map[string]any)["fingerprints"] = map[string]any{}
			path = "data.call.fingerprints"
		case "question_sha256":
			data["question_sha256"] = "sha256:" + strings.Repeat("ab", 32)
			path = "data.question_sha256"
		default:
			t.Fatalf("no example for %s", f)
		}
		body := encode(t, doc)
		if err := validate(ev, body); err == nil {
			t.Errorf("%s: the schema accepts it", f)
		}
		_, err := approval.Parse(body)
		if err == nil || !strings.Contains(err.Error(), path+":") {
			t.Errorf("%s: parser error %v, want one naming %s", f, err, path)
		}
	}
}

// questionOnly is the field of approval.Approval that only question.asked
// carries: on approval.requested or approval.reasked it is refused.
const questionOnly = "question"

// TestQuestionRefusedOnApprovals: data.question on an approval event is
// refused by the schema and by the parser, naming it.
func TestQuestionRefusedOnApprovals(t *testing.T) {
	t.Parallel()
	ev := compile(t, eventSchema)
	gen := generatedEvents(t, time.Now())
	for _, base := range []string{"requested/origin", "reasked"} {
		doc := decode(t, gen[base]).(map[string]any)
		doc["data"].(map[string]any)["question"] = map[string]any{"text": "Which one?", "free_text": true}
		body := encode(t, doc)
		if err := validate(ev, body); err == nil {
			t.Errorf("%s with a question: the schema accepts it", base)
		}
		if _, err := approval.Parse(body); err == nil || !strings.Contains(err.Error(), "data.question: unknown field") {
			t.Errorf("%s with a question: parser error %v, want one naming data.question", base, err)
		}
	}
}

// TestQuestionDigestRefusedOnQuestions: question_sha256 is the bot's own
// record of a question, never the backend's: on question.asked the
// schema and the parser refuse it.
func TestQuestionDigestRefusedOnQuestions(t *testing.T) {
	t.Parallel()
	doc := decode(t, generatedEvents(t, time.Now())["question/asked"]).(map[string]any)
	doc["data"].(map[string]any)["question_sha256"] = "sha256:" + strings.Repeat("ab", 32)
	body := encode(t, doc)
	if err := validate(compile(t, eventSchema), body); err == nil {
		t.Error("the schema accepts it")
	}
	if _, err := approval.Parse(body); err == nil || !strings.Contains(err.Error(), "data.question_sha256: unknown field") {
		t.Errorf("parser error %v, want one naming data.question_sha256", err)
	}
}
