package api_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"approvalsbot/adapters/backend"
)

// exception is a rule of the bot that JSON Schema cannot say, or says
// differently. Each is named in a schema's description as "Beyond this
// schema (name):", and shown here on an example: the schema and the bot
// answer it differently, in the direction given.
type exception struct {
	name string
	// event builds the example from a valid approval.requested (generic
	// JSON) and returns its bytes; nil for an exception shown otherwise.
	event func(tb testing.TB, doc map[string]any, now time.Time) []byte
	// schemaAccepts is the schema's verdict; the bot's is the opposite.
	schemaAccepts bool
}

var exceptions = []exception{
	{name: "duplicate_keys", schemaAccepts: true, event: func(tb testing.TB, doc map[string]any, _ time.Time) []byte {
		b := encode(tb, doc)
		return bytes.Replace(b, []byte(`"kind":"call"`), []byte(`"kind":"call","kind":"call"`), 1)
	}},
	{name: "nesting_depth", schemaAccepts: true, event: func(tb testing.TB, doc map[string]any, _ time.Time) []byte {
		call := doc["data"].(map[string]any)["call"].(map[string]any)
		call["arguments"] = map[string]any{"deep": "@DEEP@"}
		b := encode(tb, doc)
		deep := strings.Repeat("[", 300) + strings.Repeat("]", 300)
		return bytes.Replace(b, []byte(`"@DEEP@"`), []byte(deep), 1)
	}},
	{name: "null_is_absent", schemaAccepts: false, event: func(tb testing.TB, doc map[string]any, _ time.Time) []byte {
		doc["data"].(map[string]any)["agent_says"] = nil
		return encode(tb, doc)
	}},
	{name: "integer_form", schemaAccepts: true, event: func(tb testing.TB, doc map[string]any, _ time.Time) []byte {
		b := encode(tb, doc)
		return bytes.Replace(b, []byte(`"revision":2`), []byte(`"revision":2.0`), 1)
	}},
	{name: "text_bytes", schemaAccepts: true, event: func(tb testing.TB, doc map[string]any, _ time.Time) []byte {
		doc["data"].(map[string]any)["agent_says"] = strings.Repeat("é", 40000) // 80000 bytes
		return encode(tb, doc)
	}},
	{name: "time_calendar", schemaAccepts: true, event: func(tb testing.TB, doc map[string]any, _ time.Time) []byte {
		doc["data"].(map[string]any)["requested_at"] = "2000-02-30T00:00:00Z"
		return encode(tb, doc)
	}},
	{name: "url_syntax", schemaAccepts: true, event: func(tb testing.TB, doc map[string]any, _ time.Time) []byte {
		doc["data"].(map[string]any)["console_url"] = "https://console.example/%zz"
		return encode(tb, doc)
	}},
	{name: "tenant_matches_envelope", schemaAccepts: true, event: func(tb testing.TB, doc map[string]any, _ time.Time) []byte {
		doc["data"].(map[string]any)["tenant"] = "globex"
		return encode(tb, doc)
	}},
	{name: "turn_members_include_self", schemaAccepts: true, event: func(tb testing.TB, doc map[string]any, _ time.Time) []byte {
		doc["data"].(map[string]any)["turn"] = map[string]any{"id": "turn-1", "members": []any{"a-other1", "a-other2"}}
		return encode(tb, doc)
	}},
	{name: "deadline_after_requested_at", schemaAccepts: true, event: func(tb testing.TB, doc map[string]any, now time.Time) []byte {
		doc["data"].(map[string]any)["deadline"] = now.Add(-time.Hour).UTC().Format(time.RFC3339)
		return encode(tb, doc)
	}},
	{name: "time_bounds", schemaAccepts: true, event: func(tb testing.TB, doc map[string]any, now time.Time) []byte {
		doc["data"].(map[string]any)["deadline"] = now.Add(60 * 24 * time.Hour).UTC().Format(time.RFC3339)
		return encode(tb, doc)
	}},
	// Shown on a backend's answer below: an event's objects are closed, so
	// the schema refuses a case variant of a field's name there as an
	// unknown field, as the bot does.
	{name: "case_variant_keys", schemaAccepts: true},
}

// TestSchemaExceptions: every rule the schema cannot say is listed by name
// in a schema's description and here, and the bot does answer its example
// differently from the schema, through the real events endpoint.
func TestSchemaExceptions(t *testing.T) {
	t.Parallel()
	marker := regexp.MustCompile(`Beyond this schema \(([a-z_]+)\):`)
	described := map[string]bool{}
	for _, text := range schemaTexts(t) {
		for _, m := range marker.FindAllStringSubmatch(text, -1) {
			described[m[1]] = true
		}
	}
	listed := map[string]bool{}
	for _, e := range exceptions {
		listed[e.name] = true
		if !described[e.name] {
			t.Errorf("exception %s: no schema description says %q", e.name, fmt.Sprintf(exceptionMarkerTemplate, e.name))
		}
	}
	for name := range described {
		if !listed[name] {
			t.Errorf("a schema describes exception %s, which this test does not list", name)
		}
	}

	ev := compile(t, eventSchema)
	bot := newEventsBot(t)
	now := time.Now()
	base := generatedEvents(t, now)["requested/origin"]
	for _, e := range exceptions {
		if e.event == nil {
			continue
		}
		t.Run(e.name, func(t *testing.T) {
			doc := decode(t, base).(map[string]any)
			id := strings.ReplaceAll(e.name, "_", "-")
			doc["id"] = "evt-exception-" + id
			doc["data"].(map[string]any)["id"] = "a-exception-" + id
			body := e.event(t, doc, now)
			schemaErr := validate(ev, body)
			if (schemaErr == nil) != e.schemaAccepts {
				t.Errorf("schema accepts = %t, want %t: %v", schemaErr == nil, e.schemaAccepts, firstLine(schemaErr))
			}
			x := bot.post(t, body)
			botAccepts := x.resp.StatusCode/100 == 2
			if botAccepts == e.schemaAccepts {
				t.Errorf("the bot answered %d %s: want it to %s what the schema %s",
					x.resp.StatusCode, x.respBody, map[bool]string{true: "refuse", false: "accept"}[e.schemaAccepts],
					map[bool]string{true: "accepts", false: "refuses"}[e.schemaAccepts])
			}
		})
	}
}

// TestCaseVariantKeyInAnswer: a backend's answer may carry fields the bot
// does not read (its schemas are open), but not a field's name in
// another letter case, which a JSON decoder would read in its place: the
// schema accepts such an answer, the bot's client refuses it.
func TestCaseVariantKeyInAnswer(t *testing.T) {
	t.Parallel()
	answer := []byte(`{"status":"approved","Status":"denied","message":"ok"}`)
	if err := validate(compile(t, decisionAnswerSchema), answer); err != nil {
		t.Fatalf("the schema refuses the answer: %v", err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(answer)
	}))
	defer srv.Close()
	c, err := backend.NewClient(backend.ClientOptions{BaseURL: srv.URL, Secrets: [][]byte{callsSecret}})
	if err != nil {
		t.Fatal(err)
	}
	d := backend.Decision{ApprovalID: "a-1", Revision: 1, Decision: backend.Approve, Actor: "user:kevin",
		Via: backend.Via{Surface: "slack", User: "U0KEVIN"}}
	if res, err := c.Decide(context.Background(), d, "key-1"); err == nil {
		t.Fatalf("the client read the answer as %+v; want it refused", res)
	}
}
