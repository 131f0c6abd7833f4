package api_test

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi/datamodel"

	"approvalsbot/adapters/backend"
)

// openAPI loads openapi.yaml with its references to schema/*.json, as a
// tool given the file does.
func openAPI(tb testing.TB) validator.Validator {
	tb.Helper()
	spec, err := os.ReadFile("openapi.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	dir, err := filepath.Abs(".")
	if err != nil {
		tb.Fatal(err)
	}
	cfg := datamodel.NewDocumentConfiguration()
	cfg.AllowFileReferences = true
	cfg.BasePath = dir
	cfg.SpecFilePath = filepath.Join(dir, "openapi.yaml")
	doc, err := libopenapi.NewDocumentWithConfiguration(spec, cfg)
	if err != nil {
		tb.Fatalf("read openapi.yaml: %v", err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		tb.Fatalf("openapi.yaml: %v", errs)
	}
	return v
}

func describe(errs []*errors.ValidationError) string {
	var b strings.Builder
	for _, e := range errs {
		b.WriteString("\n\t" + e.Message + ": " + e.Reason)
		for _, s := range e.SchemaValidationErrors {
			b.WriteString("\n\t\t" + s.FieldPath + ": " + s.Reason)
		}
	}
	return b.String()
}

// TestOpenAPIDocumentValid: openapi.yaml is an OpenAPI 3.1 document a
// standard validator accepts, every reference resolved.
func TestOpenAPIDocumentValid(t *testing.T) {
	t.Parallel()
	v := openAPI(t)
	if ok, errs := v.ValidateDocument(); !ok {
		t.Fatalf("openapi.yaml is not a valid OpenAPI document:%s", describe(errs))
	}
}

// checkExchange validates a request and its answer against the document.
func checkExchange(t *testing.T, v validator.Validator, x exchange) {
	t.Helper()
	if ok, errs := v.ValidateHttpRequestSync(x.req); !ok {
		t.Errorf("%s %s: the request does not match openapi.yaml:%s\n\tbody %.300s", x.req.Method, x.req.URL.Path, describe(errs), x.reqBody)
	}
	if ok, errs := v.ValidateHttpResponse(x.req, x.resp); !ok {
		t.Errorf("%s %s: the answer %d does not match openapi.yaml:%s\n\tbody %.300s", x.req.Method, x.req.URL.Path, x.resp.StatusCode, describe(errs), x.respBody)
	}
}

// validatorLike is the part of the OpenAPI validator the checks use.
type validatorLike interface {
	ValidateHttpRequestSync(*http.Request) (bool, []*errors.ValidationError)
	ValidateHttpResponse(*http.Request, *http.Response) (bool, []*errors.ValidationError)
}

// TestOpenAPIValidatorRefuses: the checks above can fail. A body off the
// schema, a status the document does not list, a missing header, or a
// decision with a field the schema does not name is refused.
func TestOpenAPIValidatorRefuses(t *testing.T) {
	t.Parallel()
	v := openAPI(t)
	bot := newEventsBot(t)
	merge := moveToNow(t, fixtureEvents(t)["merge.json"], time.Now())
	answer := func(status int, body string) *http.Response {
		return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(body))}
	}
	for _, c := range []struct {
		name string
		req  *http.Request
		resp *http.Response
	}{
		{"an event off the schema", bot.eventRequest(t, bytes.Replace(merge, []byte(`"kind":"call"`), []byte(`"kind":"all"`), 1)), nil},
		{"an event without a signature", func() *http.Request {
			r := bot.eventRequest(t, merge)
			r.Header.Del("Approvals-Signature")
			return r
		}(), nil},
		{"an answer of another status", bot.eventRequest(t, merge), answer(http.StatusCreated, `{"status":"accepted"}`)},
		{"an answer off its schema", bot.eventRequest(t, merge), answer(http.StatusAccepted, `{"status":"stored"}`)},
		{"an error without its code", bot.eventRequest(t, merge), answer(http.StatusUnprocessableEntity, `{"message":"no"}`)},
		{"a decision with a field the schema does not name", backendRequest(t, "/v1/approvals/a-1/decision",
			`{"approval_id":"a-1","revision":1,"decision":"deny","actor":"user:kevin","via":{"surface":"slack"},"mood":"sad"}`), nil},
		{"a decision without its key", func() *http.Request {
			r := backendRequest(t, "/v1/approvals/a-1/decision",
				`{"approval_id":"a-1","revision":1,"decision":"deny","actor":"user:kevin","via":{"surface":"slack"}}`)
			r.Header.Del("Idempotency-Key")
			return r
		}(), nil},
	} {
		if c.resp == nil {
			if ok, _ := v.ValidateHttpRequestSync(c.req); ok {
				t.Errorf("%s: the request was found valid", c.name)
			}
			continue
		}
		if ok, _ := v.ValidateHttpResponse(c.req, c.resp); ok {
			t.Errorf("%s: the answer was found valid", c.name)
		}
	}
}

// backendRequest is a signed call of the bot's to a backend at the
// document's default backend_url.
func backendRequest(tb testing.TB, path, body string) *http.Request {
	tb.Helper()
	r, err := http.NewRequest(http.MethodPost, "https://jobs.example"+path, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Idempotency-Key", "k-1")
	r.Header.Set("Approvals-Signature", backend.Sign(callsSecret, time.Now(), []byte(body)))
	return r
}
