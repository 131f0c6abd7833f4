package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"approvalsbot/adapters/backend"
)

// TestEventsEndpointMatchesOpenAPI drives the bot's real events endpoint
// through every answer of the table and checks each request a backend
// sends as it should, and every answer, against openapi.yaml: the status
// is one the document lists for POST /v1/events and the body is that
// answer's schema.
func TestEventsEndpointMatchesOpenAPI(t *testing.T) {
	t.Parallel()
	v := openAPI(t)
	bot := newEventsBot(t)
	now := time.Now()
	events := fixtureEvents(t)
	gen := generatedEvents(t, now)
	merge := moveToNow(t, events["merge.json"], now)

	type step struct {
		name string
		req  func(t *testing.T) *http.Request
		// requestValid: the request is one the document describes (a
		// refusal's request is broken on purpose).
		requestValid bool
		status       int
		code         string
	}
	signed := func(body []byte) func(t *testing.T) *http.Request {
		return func(t *testing.T) *http.Request { return bot.eventRequest(t, body) }
	}
	edited := func(body []byte, edit func(map[string]any)) []byte {
		doc := decode(t, body).(map[string]any)
		edit(doc)
		return encode(t, doc)
	}
	steps := []step{}
	// Every fixture and every generated event: accepted.
	for _, name := range slices.Sorted(maps.Keys(events)) {
		if name == "merge.json" {
			continue
		}
		steps = append(steps, step{name: "fixture " + name, req: signed(moveToNow(t, events[name], now)), requestValid: true, status: http.StatusAccepted})
	}
	for _, name := range slices.Sorted(maps.Keys(gen)) {
		body := edited(gen[name], func(d map[string]any) {
			d["id"] = "evt-openapi-" + fmt.Sprint(len(steps))
			if data := d["data"].(map[string]any); data["id"] != nil {
				data["id"] = "a-openapi-" + fmt.Sprint(len(steps))
			} else if data["approval_id"] != nil {
				data["approval_id"] = "a-openapi-" + fmt.Sprint(len(steps))
			}
		})
		steps = append(steps, step{name: "generated " + name, req: signed(body), requestValid: true, status: http.StatusAccepted})
	}
	steps = append(steps,
		step{name: "accepted", req: signed(merge), requestValid: true, status: http.StatusAccepted},
		step{name: "duplicate", req: signed(merge), requestValid: true, status: http.StatusOK},
		step{name: "bad_json", req: signed([]byte(`{"id":`)), status: http.StatusBadRequest, code: "bad_json"},
		step{name: "bad_signature", req: func(t *testing.T) *http.Request {
			r := bot.eventRequest(t, merge)
			r.Header.Set(backend.SignatureHeader, backend.Sign([]byte("another-secret-0123456789abcdef0123"), time.Now(), merge))
			return r
		}, requestValid: true, status: http.StatusUnauthorized, code: "bad_signature"},
		step{name: "no signature", req: func(t *testing.T) *http.Request {
			r := bot.eventRequest(t, merge)
			r.Header.Del(backend.SignatureHeader)
			return r
		}, status: http.StatusUnauthorized, code: "bad_signature"},
		step{name: "method_not_allowed", req: func(t *testing.T) *http.Request {
			r := bot.eventRequest(t, merge)
			r.Method = http.MethodPut
			return r
		}, status: http.StatusMethodNotAllowed, code: "method_not_allowed"},
		step{name: "too_large", req: func(t *testing.T) *http.Request {
			big := bytes.Repeat([]byte(" "), backend.MaxBody+1)
			return bot.eventRequest(t, big)
		}, status: http.StatusRequestEntityTooLarge, code: "too_large"},
		step{name: "unsupported_media_type", req: func(t *testing.T) *http.Request {
			r := bot.eventRequest(t, merge)
			r.Header.Set("Content-Type", "text/plain")
			return r
		}, status: http.StatusUnsupportedMediaType, code: "unsupported_media_type"},
		step{name: "invalid", req: signed(edited(merge, func(d map[string]any) {
			d["id"] = "evt-openapi-invalid"
			d["data"].(map[string]any)["kind"] = "everything"
		})), status: http.StatusUnprocessableEntity, code: "invalid"},
		step{name: "invalid: an id reused with another body", req: signed(edited(merge, func(d map[string]any) {
			d["data"].(map[string]any)["agent_says"] = "something else"
		})), requestValid: true, status: http.StatusUnprocessableEntity, code: "invalid"},
		step{name: "unknown_tenant", req: signed(edited(merge, func(d map[string]any) {
			d["id"] = "evt-openapi-globex"
			d["tenant"] = "globex"
			d["data"].(map[string]any)["tenant"] = "globex"
		})), requestValid: true, status: http.StatusUnprocessableEntity, code: "unknown_tenant"},
	)
	for _, s := range steps {
		x := do(t, s.req(t))
		checkEventExchange(t, v, s.name, x, s.requestValid, s.status, s.code)
	}
	// The store gone: 503 unavailable.
	if err := bot.store.Close(); err != nil {
		t.Fatal(err)
	}
	x := bot.post(t, edited(merge, func(d map[string]any) { d["id"] = "evt-openapi-unavailable" }))
	checkEventExchange(t, v, "unavailable", x, true, http.StatusServiceUnavailable, "unavailable")
}

func checkEventExchange(t *testing.T, v validatorLike, name string, x exchange, requestValid bool, status int, code string) {
	t.Helper()
	if x.resp.StatusCode != status {
		t.Errorf("%s: answer %d %s, want %d %s", name, x.resp.StatusCode, x.respBody, status, code)
		return
	}
	if code != "" {
		if got := decode(t, x.respBody).(map[string]any)["error"]; got != code {
			t.Errorf("%s: error %v, want %s", name, got, code)
		}
	}
	if requestValid {
		if ok, errs := v.ValidateHttpRequestSync(x.req); !ok {
			t.Errorf("%s: the request does not match openapi.yaml:%s", name, describe(errs))
		}
	}
	// A refusal of a method the document does not list is validated as the
	// POST's answer of that status.
	req := x.req.Clone(x.req.Context())
	req.Method = http.MethodPost
	if ok, errs := v.ValidateHttpResponse(req, x.resp); !ok {
		t.Errorf("%s: the answer %d does not match openapi.yaml:%s\n\tbody %.300s", name, x.resp.StatusCode, describe(errs), x.respBody)
	}
}

// TestQuestionsOffRefused: a bot whose backend does not list questions
// refuses every question event with 422 invalid, as docs/protocol.md
// says, and takes an approval as before.
func TestQuestionsOffRefused(t *testing.T) {
	t.Parallel()
	off := strings.Replace(botConfig, "  features: [questions]\n", "", 1)
	if off == botConfig {
		t.Fatal("the test configuration lists no questions feature to leave out")
	}
	bot := newEventsBotWith(t, off)
	doc := protocolDoc(t)
	gen := generatedEvents(t, time.Now())
	for _, name := range []string{"question/asked", "question/answered choice", "question/cancelled"} {
		x := bot.post(t, gen[name])
		var e struct{ Error, Message string }
		if err := json.Unmarshal(x.respBody, &e); err != nil || x.resp.StatusCode != http.StatusUnprocessableEntity || e.Error != "invalid" {
			t.Errorf("%s: answered %d %s, want 422 invalid", name, x.resp.StatusCode, x.respBody)
			continue
		}
		if !strings.Contains(doc, "`"+e.Message+"`") {
			t.Errorf("%s: the bot says %q, which docs/protocol.md does not quote", name, e.Message)
		}
	}
	if x := bot.post(t, gen["requested/origin"]); x.resp.StatusCode != http.StatusAccepted {
		t.Errorf("an approval without questions: %d %s", x.resp.StatusCode, x.respBody)
	}
}
