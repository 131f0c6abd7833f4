package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The schema files, as the OpenAPI document names them.
const (
	eventSchema             = "event.json"
	approvalSchema          = "approval.json"
	eventAnswerSchema       = "event-answer.json"
	errorSchema             = "error.json"
	decisionRequestSchema   = "decision-request.json"
	decisionAnswerSchema    = "decision-answer.json"
	decisionErrorSchema     = "decision-error.json"
	argumentsRequestSchema  = "arguments-request.json"
	argumentsAnswerSchema   = "arguments-answer.json"
	commonSchema            = "common.json"
	questionSchema          = "question.json"
	answerRequestSchema     = "answer-request.json"
	answerAnswerSchema      = "answer-answer.json"
	questionRequestSchema   = "question-request.json"
	questionAnswerSchema    = "question-answer.json"
	fixtureTime             = "2026-11-29T18:00:00Z" // the time the fixtures' events are written at
	exceptionMarkerTemplate = "Beyond this schema (%s):"
)

// compile compiles one schema file of schema/ as any draft 2020-12
// validator reads it: format is an annotation, so every bound the bot
// enforces must be a pattern, length, enumeration or type.
func compile(tb testing.TB, name string) *jsonschema.Schema {
	tb.Helper()
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	abs, err := filepath.Abs(filepath.Join("schema", name))
	if err != nil {
		tb.Fatal(err)
	}
	s, err := c.Compile(abs)
	if err != nil {
		tb.Fatalf("compile %s: %v", name, err)
	}
	return s
}

// validate checks body against s, reading numbers as JSON numbers (no
// float rounding) the way a validator of the raw text does.
func validate(s *jsonschema.Schema, body []byte) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return s.Validate(doc)
}

// decode reads body as generic JSON with numbers kept as written.
func decode(tb testing.TB, body []byte) any {
	tb.Helper()
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		tb.Fatalf("decode: %v", err)
	}
	return v
}

func encode(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatalf("encode: %v", err)
	}
	return b
}

// moveToNow shifts every time of a fixture event (the envelope's time,
// requested_at, deadline) by the one delta that puts fixtureTime at now,
// so the bot's clock bounds hold on any date.
func moveToNow(tb testing.TB, body []byte, now time.Time) []byte {
	tb.Helper()
	base, _ := time.Parse(time.RFC3339, fixtureTime)
	delta := now.Truncate(time.Second).Sub(base)
	v := decode(tb, body)
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				s, ok := c.(string)
				if ok && (k == "time" || k == "requested_at" || k == "deadline") {
					t, err := time.Parse(time.RFC3339Nano, s)
					if err != nil {
						tb.Fatalf("%s: %v", k, err)
					}
					x[k] = t.Add(delta).UTC().Format(time.RFC3339Nano)
					continue
				}
				if k != "arguments" {
					walk(c)
				}
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(v)
	return encode(tb, v)
}

// fixtureEvents reads every example event of testdata/fixtures/events,
// by file name.
func fixtureEvents(tb testing.TB) map[string][]byte {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "testdata", "fixtures", "events", "*.json"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no fixture events: %v", err)
	}
	out := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		out[filepath.Base(p)] = b
	}
	return out
}

// schemaTexts reads every schema file, for what the compiled form does
// not keep in one place (descriptions across files).
func schemaTexts(tb testing.TB) map[string]string {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join("schema", "*.json"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no schema files: %v", err)
	}
	out := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		out[filepath.Base(p)] = string(b)
	}
	return out
}

// firstLine keeps a validator's message to one line for a test failure.
func firstLine(err error) string {
	if err == nil {
		return "<nil>"
	}
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	return s
}
