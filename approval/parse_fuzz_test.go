package approval_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"approvalsbot/approval"
)

// maxErrorLen bounds what one refusal says: five problems with their
// paths, never an echo of the body.
const maxErrorLen = 2048

// FuzzParse: Parse never panics; it refuses with exactly one of its two
// error classes; what it accepts satisfies the schema and has one reading
// (no key twice in an object, no key that encoding/json matches to a field
// without being spelt like it); and an accepted event, encoded again,
// parses to the same event. testdata/fuzz/FuzzParse holds fixtures with
// such keys added.
func FuzzParse(f *testing.F) {
	for _, path := range eventFiles(f) {
		b := mustRead(f, path)
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Add([]byte(nil))
	f.Add([]byte("[]"))
	f.Add([]byte(`{"data":{}}`))
	f.Add(mutate(f, "merge.json", func(m map[string]any) { obj(f, m, "data")["revision"] = "1" }))
	f.Add(mutate(f, "refund.json", func(m map[string]any) { obj(f, m, "data")["deadline"] = "0001-01-01T00:00:00Z" }))
	// A question's edges: its limits, a choice on two lines or twice, no
	// choices without words, an answer that is both, a question on an
	// approval.
	f.Add(mutate(f, "question.json", func(m map[string]any) {
		obj(f, m, "data", "question")["choices"] = []any{"a\nb", "a\nb", strings.Repeat("x", approval.MaxChoiceLen+1)}
	}))
	f.Add(mutate(f, "question.json", func(m map[string]any) {
		q := obj(f, m, "data", "question")
		delete(q, "choices")
		q["free_text"] = false
	}))
	f.Add(mutate(f, "question.json", func(m map[string]any) {
		obj(f, m, "data", "question")["text"] = strings.Repeat("\u202e@everyone ", approval.MaxQuestionText/14)
	}))
	f.Add(mutate(f, "question-private.json", func(m map[string]any) { obj(f, m, "data")["question"] = nil }))
	f.Add(mutate(f, "question-answered.json", func(m map[string]any) {
		obj(f, m, "data")["answer"] = map[string]any{"choice": 1, "text": "x"}
	}))
	f.Add(mutate(f, "question-answered.json", func(m map[string]any) {
		obj(f, m, "data")["answer"] = map[string]any{"choice": approval.MaxChoices}
	}))
	f.Add(mutate(f, "question-cancelled.json", func(m map[string]any) { obj(f, m, "data")["approval_id"] = "q-priv1" }))
	f.Add(mutate(f, "merge.json", func(m map[string]any) {
		obj(f, m, "data")["question"] = map[string]any{"text": "Which?", "free_text": true}
	}))

	f.Fuzz(func(t *testing.T, body []byte) {
		ev, err := approval.Parse(body)
		if err != nil {
			checkRefusal(t, ev, err)
			return
		}
		checkAccepted(t, ev)
		checkOneReading(t, body, ev)

		again, err := approval.Parse(encodeEvent(t, ev))
		if err != nil {
			t.Fatalf("an accepted event, encoded again, is refused: %v", err)
		}
		// Data is the body as received; re-encoding changes its bytes.
		if diff := cmp.Diff(ev, again, rawJSONEqual, cmpopts.IgnoreFields(approval.Event{}, "Data")); diff != "" {
			t.Fatalf("an accepted event, encoded again, parses differently (-first +again):\n%s", diff)
		}
	})
}

func checkRefusal(t *testing.T, ev *approval.Event, err error) {
	t.Helper()
	if ev != nil {
		t.Fatalf("an event came back with the error %v", err)
	}
	var ve *approval.ValidationError
	isVE, isBad := errors.As(err, &ve), errors.Is(err, approval.ErrBadJSON)
	if isVE == isBad {
		t.Fatalf("error %q (%T): want exactly one of ErrBadJSON or *ValidationError", err, err)
	}
	if isVE {
		if len(ve.Problems) == 0 {
			t.Fatal("a ValidationError without problems")
		}
		for _, p := range ve.Problems {
			if p == nil || p.Path == "" || p.Msg == "" {
				t.Fatalf("a problem without path or message: %+v", p)
			}
		}
	}
	if n := len(err.Error()); n > maxErrorLen {
		t.Fatalf("error of %d bytes: %.200q…", n, err)
	}
}

func checkAccepted(t *testing.T, ev *approval.Event) {
	t.Helper()
	if !slices.Contains(approval.EventTypes(), ev.Type) {
		t.Fatalf("accepted type %q", ev.Type)
	}
	if !approval.ValidID(ev.Tenant) || ev.ID == "" || len(ev.ID) > 128 {
		t.Fatalf("accepted envelope id %q tenant %q", ev.ID, ev.Tenant)
	}
	set := 0
	for _, isSet := range []bool{ev.Approval != nil, ev.Resolved != nil, ev.RecheckFailed != nil,
		ev.Cancelled != nil, ev.Finished != nil, ev.AutoGranted != nil} {
		if isSet {
			set++
		}
	}
	if set != 1 {
		t.Fatalf("%s with %d data fields set", ev.Type, set)
	}
	if ev.Type != approval.EventAutoGranted && !approval.ValidID(ev.ApprovalID()) {
		t.Fatalf("accepted approval id %q", ev.ApprovalID())
	}
	switch ev.Type {
	case approval.EventQuestionAsked:
		a := ev.Approval
		if a == nil || a.Kind != approval.KindQuestion || a.Question == nil || a.Call.Function != "" || a.QuestionSHA256 != "" {
			t.Fatalf("accepted question %+v", a)
		}
		q := a.Question
		if strings.TrimSpace(q.Text) == "" || utf8.RuneCountInString(q.Text) > approval.MaxQuestionText ||
			len(q.Choices) > approval.MaxChoices || (len(q.Choices) == 0 && !q.FreeText) {
			t.Fatalf("accepted question %+v", q)
		}
		seen := map[string]bool{}
		for _, c := range q.Choices {
			if strings.TrimSpace(c) == "" || utf8.RuneCountInString(c) > approval.MaxChoiceLen || strings.ContainsAny(c, "\r\n") || seen[c] {
				t.Fatalf("accepted choice %q of %q", c, q.Choices)
			}
			seen[c] = true
		}
		if !approval.ValidID(a.ID) || a.Revision < 1 || a.Tenant != ev.Tenant {
			t.Fatalf("accepted id %q revision %d tenant %q (envelope %q)", a.ID, a.Revision, a.Tenant, ev.Tenant)
		}
		if a.Deadline != nil && !a.Deadline.After(a.RequestedAt) {
			t.Fatalf("accepted deadline %v not after requested_at %v", a.Deadline, a.RequestedAt)
		}
	case approval.EventQuestionAnswered:
		r := ev.Resolved
		if r.Revision < 1 || r.Status != approval.StateAnswered || r.Actor == "" || r.Answer == nil {
			t.Fatalf("accepted answered %+v", r)
		}
		if ans := r.Answer; (ans.Choice != nil) == (ans.Text != "") || ans.Choice != nil && (*ans.Choice < 0 || *ans.Choice >= approval.MaxChoices) {
			t.Fatalf("accepted answer %+v", ans)
		}
	case approval.EventRequested, approval.EventReasked:
		a := ev.Approval
		if a.Question != nil || a.QuestionSHA256 != "" {
			t.Fatalf("accepted %s with a question %+v (%q)", ev.Type, a.Question, a.QuestionSHA256)
		}
		if a == nil {
			t.Fatalf("%s without an Approval", ev.Type)
		}
		if !approval.ValidID(a.ID) || a.Revision < 1 || a.Tenant != ev.Tenant {
			t.Fatalf("accepted id %q revision %d tenant %q (envelope %q)", a.ID, a.Revision, a.Tenant, ev.Tenant)
		}
		switch a.Kind {
		case approval.KindCall:
		case approval.KindChanges, approval.KindProtectedPaths:
			if a.Changes == nil || len(a.Changes.Files) == 0 {
				t.Fatalf("accepted kind %s without files", a.Kind)
			}
		default:
			t.Fatalf("accepted kind %q", a.Kind)
		}
		if a.Call.Function == "" || !approval.ValidDigest(a.Call.ArgsSHA256) {
			t.Fatalf("accepted call %q digest %q", a.Call.Function, a.Call.ArgsSHA256)
		}
		if a.Deadline != nil && !a.Deadline.After(a.RequestedAt) {
			t.Fatalf("accepted deadline %v not after requested_at %v", a.Deadline, a.RequestedAt)
		}
		if a.Ladder != "" && !approval.ValidID(a.Ladder) {
			t.Fatalf("accepted ladder %q", a.Ladder)
		}
		if (a.Why != "") != (ev.Type == approval.EventReasked) {
			t.Fatalf("%s with why %q", ev.Type, a.Why)
		}
		if args := bytes.TrimSpace(a.Call.Arguments); len(args) > 0 && args[0] != '{' {
			t.Fatalf("accepted arguments %.40q", args)
		}
	case approval.EventResolved:
		r := ev.Resolved
		if r.Revision < 1 || (r.Status != approval.StateApproved && r.Status != approval.StateDenied) || r.Actor == "" {
			t.Fatalf("accepted resolved %+v", r)
		}
	case approval.EventCallFinished:
		if o := ev.Finished.Outcome; o != approval.OutcomeCompleted && o != approval.OutcomeFailed {
			t.Fatalf("accepted outcome %q", o)
		}
	case approval.EventAutoGranted:
		ag := ev.AutoGranted
		if ag.PolicyID == "" || ag.Job.ID == "" || ag.Call.Function == "" || !approval.ValidDigest(ag.Call.ArgsSHA256) {
			t.Fatalf("accepted auto_granted %+v", ag)
		}
	}
}

// encodeEvent writes an event back in docs/protocol.md's wire form.
func encodeEvent(t *testing.T, ev *approval.Event) []byte {
	t.Helper()
	data := ev.Wire()
	b, err := json.Marshal(map[string]any{
		"id": ev.ID, "type": ev.Type, "time": ev.Time.Format(time.RFC3339Nano), "tenant": ev.Tenant, "data": data,
	})
	if err != nil {
		t.Fatalf("encode accepted event: %v", err)
	}
	return b
}

// rawJSONEqual compares raw JSON (the argument projection) by meaning, as
// encoding may compact it and escape <, > and &.
var rawJSONEqual = cmp.Comparer(func(a, b json.RawMessage) bool {
	if len(bytes.TrimSpace(a)) == 0 || len(bytes.TrimSpace(b)) == 0 {
		return len(bytes.TrimSpace(a)) == len(bytes.TrimSpace(b))
	}
	var x, y any
	dx := json.NewDecoder(bytes.NewReader(a))
	dx.UseNumber()
	dy := json.NewDecoder(bytes.NewReader(b))
	dy.UseNumber()
	if dx.Decode(&x) != nil || dy.Decode(&y) != nil {
		return bytes.Equal(a, b)
	}
	return cmp.Equal(x, y)
})

// envelopeNames are the keys of an event's top level (docs/protocol.md).
var envelopeNames = []string{"id", "type", "time", "tenant", "data"}

// approvalNames are the keys of an Approval's top level, read from its
// json tags here rather than through the parser's own schema.
var approvalNames = func() []string {
	var names []string
	t := reflect.TypeFor[approval.Approval]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		names = append(names, name)
	}
	return names
}()

// checkOneReading fails when an accepted body has an object with a key
// twice anywhere (the call's arguments included), or a key at the top
// level or an approval's data level that equals a field's name only
// under strings.EqualFold. It reads the body its own way: a recursive
// walk with one map per object.
func checkOneReading(t *testing.T, body []byte, ev *approval.Event) {
	t.Helper()
	data := []string(nil)
	if ev.Approval != nil {
		data = approvalNames
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // a number past float64 is accepted by Parse in the arguments
	if problem, err := oneReading(dec, "", envelopeNames, data); err != nil {
		t.Fatalf("an accepted body could not be read again: %v", err)
	} else if problem != "" {
		t.Fatalf("accepted a body with two readings: %s", problem)
	}
}

// oneReading reads one value from dec and returns what makes it ambiguous
// ("" when nothing does). names are the fields of this object, inner those
// of its "data" object.
func oneReading(dec *json.Decoder, path string, names, inner []string) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return "", nil
	}
	problem := ""
	note := func(p string) {
		if problem == "" {
			problem = p
		}
	}
	seen := map[string]bool{}
	for i := 0; dec.More(); i++ {
		child, childNames := fmt.Sprintf("%s[%d]", path, i), []string(nil)
		if d == '{' {
			kt, err := dec.Token()
			if err != nil {
				return "", err
			}
			k := kt.(string)
			child = path + "." + k
			if seen[k] {
				note(child + " twice")
			}
			seen[k] = true
			for _, n := range names {
				if k != n && strings.EqualFold(k, n) {
					note(child + " in place of " + n)
				}
			}
			if k == "data" && names != nil {
				childNames = inner
			}
		}
		p, err := oneReading(dec, child, childNames, nil)
		if err != nil {
			return "", err
		}
		note(p)
	}
	if _, err := dec.Token(); err != nil {
		return "", err
	}
	return problem, nil
}
