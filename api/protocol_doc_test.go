package api_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"approvalsbot/approval"
)

// protocolDoc is docs/protocol.md.
func protocolDoc(tb testing.TB) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "protocol.md"))
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// section is the text under the heading line heading, up to the next
// heading of the same level or above.
func section(tb testing.TB, doc, heading string) string {
	tb.Helper()
	level := strings.IndexByte(heading, ' ')
	i := strings.Index(doc, "\n"+heading+"\n")
	if i < 0 {
		tb.Fatalf("docs/protocol.md has no heading %q", heading)
	}
	rest := doc[i+len(heading)+2:]
	next := regexp.MustCompile(`(?m)^#{1,` + strconv.Itoa(level) + `} `).FindStringIndex(rest)
	if next != nil {
		rest = rest[:next[0]]
	}
	return rest
}

// openAPIResponses maps each status of one operation of openapi.yaml to
// its description.
func openAPIResponses(tb testing.TB, path string) map[string]string {
	tb.Helper()
	b, err := os.ReadFile("openapi.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	var doc struct {
		Paths map[string]struct {
			Post struct {
				Responses map[string]struct {
					Description string `yaml:"description"`
				} `yaml:"responses"`
			} `yaml:"post"`
		} `yaml:"paths"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		tb.Fatal(err)
	}
	out := map[string]string{}
	for status, r := range doc.Paths[path].Post.Responses {
		out[status] = r.Description
	}
	if len(out) == 0 {
		tb.Fatalf("openapi.yaml lists no answer of POST %s", path)
	}
	return out
}

var answerCode = regexp.MustCompile("`([1-5][0-9]{2})(?: ([a-z_]+))?")

// TestProtocolDocAnswersInOpenAPI: each answer docs/protocol.md's tables
// list (a status and its error code) is one openapi.yaml lists for that
// operation, naming the code, and the events endpoint's statuses are the
// same set in both.
func TestProtocolDocAnswersInOpenAPI(t *testing.T) {
	t.Parallel()
	doc := protocolDoc(t)
	for _, c := range []struct {
		heading, path string
		exact         bool // the document lists no other status than the table
	}{
		{"## Events in: `POST /v1/events`", "/v1/events", true},
		{"### `POST /v1/approvals/{id}/decision`", "/v1/approvals/{id}/decision", false},
		{"### `POST /v1/approvals/{id}/arguments`", "/v1/approvals/{id}/arguments", false},
		{"#### `POST /v1/questions/{id}/answer`", "/v1/questions/{id}/answer", false},
		{"#### `POST /v1/questions/{id}/question`", "/v1/questions/{id}/question", false},
	} {
		text := section(t, doc, c.heading)
		if c.path == "/v1/events" {
			text = text[:strings.Index(text, "\n### ")]
		}
		responses := openAPIResponses(t, c.path)
		documented := map[string]bool{}
		for _, m := range answerCode.FindAllStringSubmatch(text, -1) {
			status, code := m[1], m[2]
			documented[status] = true
			desc, ok := responses[status]
			switch {
			case !ok:
				t.Errorf("POST %s: docs/protocol.md lists the answer %s %s, openapi.yaml does not", c.path, status, code)
			case code != "" && !strings.Contains(desc, code):
				t.Errorf("POST %s: docs/protocol.md lists %s %s, openapi.yaml's %s does not name %s", c.path, status, code, status, code)
			}
		}
		if len(documented) == 0 {
			t.Errorf("POST %s: no answer found in docs/protocol.md", c.path)
		}
		if c.exact {
			for status := range responses {
				if !documented[status] {
					t.Errorf("POST %s: openapi.yaml lists the answer %s, docs/protocol.md's table does not", c.path, status)
				}
			}
		}
	}
}

// TestProtocolDocEnumerations: the event types and the enumerations
// docs/protocol.md lists are the schema's, and the code's.
func TestProtocolDocEnumerations(t *testing.T) {
	t.Parallel()
	doc := protocolDoc(t)
	enum := func(file, def, prop string) []string {
		s := compile(t, file+def)
		if prop != "" {
			s = s.Properties[prop]
		}
		for s.Enum == nil && s.Ref != nil {
			s = s.Ref
		}
		if s.Enum == nil {
			t.Fatalf("%s%s %s has no enumeration", file, def, prop)
		}
		var out []string
		for _, v := range s.Enum.Values {
			if str, ok := v.(string); ok && str != "" {
				out = append(out, str)
			}
		}
		slices.Sort(out)
		return out
	}
	var types []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_.]+)` \\|").FindAllStringSubmatch(section(t, doc, "### Types"), -1) {
		types = append(types, m[1])
	}
	var code []string
	for _, typ := range approval.EventTypes() {
		code = append(code, string(typ))
	}
	slices.Sort(types)
	slices.Sort(code)
	if got := enum(eventSchema, "", "type"); !slices.Equal(got, types) || !slices.Equal(got, code) {
		t.Errorf("event types: schema %v, docs/protocol.md %v, code %v", got, types, code)
	}

	listed := func(name string) []string {
		m := regexp.MustCompile("(?m)^- " + regexp.QuoteMeta(name) + "[^:]*: (.*(?:\n  .*)*)").FindStringSubmatch(section(t, doc, "### The Approval object"))
		if m == nil {
			t.Fatalf("docs/protocol.md lists no enumeration %s", name)
		}
		text := strings.Join(strings.Fields(m[1]), " ")
		if i := strings.Index(text, ". "); i >= 0 { // the list is the first sentence
			text = text[:i]
		}
		text = regexp.MustCompile(`\([^)]*\)`).ReplaceAllString(text, "")
		var out []string
		for _, w := range strings.Split(strings.TrimSuffix(strings.TrimSpace(strings.Join(strings.Fields(text), " ")), "."), ",") {
			if w = strings.TrimSpace(w); w != "" {
				out = append(out, w)
			}
		}
		slices.Sort(out)
		return out
	}
	for _, c := range []struct {
		doc  string
		file string
		def  string
		prop string
	}{
		{"`role`", commonSchema, "#/$defs/role", ""},
		{"`origin` and `floor`", commonSchema, "#/$defs/origin", ""},
		{"`asked_by.reason`", approvalSchema, "#/$defs/askedBy", "reason"},
	} {
		if got, want := enum(c.file, c.def, c.prop), listed(c.doc); !slices.Equal(got, want) {
			t.Errorf("%s: schema %v, docs/protocol.md %v", c.doc, got, want)
		}
	}
	class := compile(t, commonSchema+"#/$defs/class")
	for _, w := range listed("`class`") {
		w = strings.Trim(strings.TrimPrefix(w, "or "), "`")
		w = strings.ReplaceAll(w, "<name>", "deploy")
		if err := class.Validate(w); err != nil {
			t.Errorf("class %s of docs/protocol.md: the schema refuses it: %v", w, err)
		}
	}
}

// TestProtocolDocExamples: every JSON example of docs/protocol.md, its
// placeholders (…, a cut digest, // comments) filled in, matches its
// schema; the envelope's example carrying the Approval's is an event the
// bot's parser accepts.
func TestProtocolDocExamples(t *testing.T) {
	t.Parallel()
	doc := protocolDoc(t)
	fill := strings.NewReplacer("{…}", "{}", "…", "x")
	digest := regexp.MustCompile(`sha256:[0-9a-f]*…`)
	comment := regexp.MustCompile(`(?m)\s+// .*$`)
	var envelope, approvalDoc map[string]any
	for _, m := range regexp.MustCompile("(?s)```json\n(.*?)```").FindAllStringSubmatch(doc, -1) {
		text := digest.ReplaceAllString(m[1], "sha256:"+strings.Repeat("ab", 32))
		text = fill.Replace(comment.ReplaceAllString(text, ""))
		v, ok := decode(t, []byte(text)).(map[string]any)
		if !ok {
			t.Errorf("an example is not an object:\n%s", m[1])
			continue
		}
		var schema string
		typ, _ := v["type"].(string)
		switch {
		case strings.HasPrefix(typ, "question."):
			// A question's events are shown whole: the schema and the
			// parser take each as it is.
			body := encode(t, v)
			if err := validate(compile(t, eventSchema), body); err != nil {
				t.Errorf("the %s example does not match the schema: %v", typ, err)
			}
			if _, err := approval.Parse(body); err != nil {
				t.Errorf("the %s example is refused by the parser: %v", typ, err)
			}
			continue
		case v["type"] != nil:
			envelope = v
			continue
		case v["kind"] != nil:
			approvalDoc = v
			continue
		case v["question_id"] != nil && (v["answer"] != nil || v["unanswered"] != nil):
			schema = answerRequestSchema
		case v["question_id"] != nil && v["question"] != nil:
			schema = questionAnswerSchema
		case v["question_id"] != nil:
			schema = questionRequestSchema
		case v["turn_id"] != nil:
			schema = "turn-decision-request.json"
		case v["decision"] != nil:
			schema = decisionRequestSchema
		case v["error"] != nil:
			schema = decisionErrorSchema
		case v["arguments"] != nil:
			schema = argumentsAnswerSchema
		default:
			t.Errorf("an example this test cannot place:\n%s", m[1])
			continue
		}
		if err := validate(compile(t, schema), encode(t, v)); err != nil {
			t.Errorf("an example does not match %s: %v\n%s", schema, err, m[1])
		}
	}
	if envelope == nil || approvalDoc == nil {
		t.Fatal("docs/protocol.md has no event or Approval example")
	}
	envelope["data"] = approvalDoc
	body := encode(t, envelope)
	if err := validate(compile(t, eventSchema), body); err != nil {
		t.Errorf("the event example with the Approval example does not match the schema: %v", err)
	}
	if _, err := approval.Parse(body); err != nil {
		t.Errorf("the event example with the Approval example is refused by the parser: %v", err)
	}
}
