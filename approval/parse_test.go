package approval_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"approvalsbot/approval"
	"approvalsbot/internal/fixtures"
	"approvalsbot/internal/strictjson"
)

// --- fixture helpers (shared by every test file of this package) ---

// eventFiles lists the shared example events; a test without them is not
// testing anything, so none is a failure.
func eventFiles(t testing.TB) []string {
	t.Helper()
	files, err := fixtures.EventFiles()
	if err != nil {
		t.Fatalf("list fixture events: %v", err)
	}
	if len(files) == 0 {
		t.Fatal("no fixture events found")
	}
	return files
}

// fixtureBytes reads events/<name> as the backend would send it.
func fixtureBytes(t testing.TB, name string) []byte {
	t.Helper()
	p, err := fixtures.Path("events", name)
	if err != nil {
		t.Fatalf("fixture path %s: %v", name, err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("read fixture %s: %v", name, err)
	}
	return b
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decodeMap decodes a JSON object keeping numbers as written.
func decodeMap(t testing.TB, b []byte) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("decode %.40q: %v", b, err)
	}
	return m
}

// fixtureMap is events/<name> decoded.
func fixtureMap(t testing.TB, name string) map[string]any {
	t.Helper()
	return decodeMap(t, fixtureBytes(t, name))
}

// mutate loads events/<name>, lets f change the decoded event and returns
// it encoded again: bad inputs are derived from real events, never typed in.
func mutate(t testing.TB, name string, f func(m map[string]any)) []byte {
	t.Helper()
	m := fixtureMap(t, name)
	f(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatalf("re-encode %s: %v", name, err)
	}
	return b
}

// at walks a decoded JSON value by object keys (string) and list indexes (int).
func at(t testing.TB, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("at %v: %T is not an object", path, v)
			}
			if v, ok = m[k]; !ok {
				t.Fatalf("at %v: no key %q", path, k)
			}
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				t.Fatalf("at %v: no index %d", path, k)
			}
			v = l[k]
		default:
			t.Fatalf("at: bad path element %T", p)
		}
	}
	return v
}

// obj is at for a value that must be an object, to set or delete its keys.
func obj(t testing.TB, v any, path ...any) map[string]any {
	t.Helper()
	m, ok := at(t, v, path...).(map[string]any)
	if !ok {
		t.Fatalf("at %v: not an object", path)
	}
	return m
}

func str(t testing.TB, v any, path ...any) string {
	t.Helper()
	s, ok := at(t, v, path...).(string)
	if !ok {
		t.Fatalf("at %v: not a string", path)
	}
	return s
}

func num(t testing.TB, v any, path ...any) int {
	t.Helper()
	n, ok := at(t, v, path...).(json.Number)
	if !ok {
		t.Fatalf("at %v: not a number", path)
	}
	i, err := n.Int64()
	if err != nil {
		t.Fatalf("at %v: %v", path, err)
	}
	return int(i)
}

func mustParse(t testing.TB, body []byte) *approval.Event {
	t.Helper()
	ev, err := approval.Parse(body)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return ev
}

// parseFixture parses events/<name>, or a mutation of it when f is set.
func parseFixture(t testing.TB, name string, f func(m map[string]any)) *approval.Event {
	t.Helper()
	if f == nil {
		return mustParse(t, fixtureBytes(t, name))
	}
	return mustParse(t, mutate(t, name, f))
}

func fixtureApproval(t testing.TB, name string) *approval.Approval {
	t.Helper()
	ev := parseFixture(t, name, nil)
	if ev.Approval == nil {
		t.Fatalf("%s carries no approval", name)
	}
	return ev.Approval
}

// prune drops the zero values that omitempty drops, so a decoded fixture
// and a re-encoded parse can be compared field by field.
func prune(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if p := prune(e); !zeroJSON(p) {
				out[k] = p
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = prune(e)
		}
		return out
	}
	return v
}

func zeroJSON(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case string:
		return x == ""
	case json.Number:
		return x == "0"
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

// --- fixtures parse, and keep what they say ---

func TestParseFixtures(t *testing.T) {
	t.Parallel()
	seen := map[approval.EventType]bool{}
	for _, path := range eventFiles(t) {
		body, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		m := decodeMap(t, body)
		seen[approval.EventType(str(t, m, "type"))] = true
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			ev, err := approval.Parse(body)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			wantTime, err := time.Parse(time.RFC3339, str(t, m, "time"))
			if err != nil {
				t.Fatal(err)
			}
			gotEnv := []any{ev.ID, string(ev.Type), ev.Tenant, ev.Time.Equal(wantTime)}
			wantEnv := []any{str(t, m, "id"), str(t, m, "type"), str(t, m, "tenant"), true}
			if diff := cmp.Diff(wantEnv, gotEnv); diff != "" {
				t.Errorf("envelope (-want +got):\n%s", diff)
			}

			// Exactly the data field of the type is set, and it says
			// everything the fixture said: re-encoded, it is the fixture's data.
			var data any
			set := 0
			for _, p := range []struct {
				isSet bool
				v     any
			}{
				{ev.Approval != nil, ev.Approval}, {ev.Resolved != nil, ev.Resolved},
				{ev.RecheckFailed != nil, ev.RecheckFailed}, {ev.Cancelled != nil, ev.Cancelled},
				{ev.Finished != nil, ev.Finished}, {ev.AutoGranted != nil, ev.AutoGranted},
			} {
				if p.isSet {
					set++
				}
			}
			data = ev.Wire()
			if set != 1 {
				t.Fatalf("%d data fields set, want 1", set)
			}
			enc, err := json.Marshal(data)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(prune(at(t, m, "data")), prune(decodeMap(t, enc))); diff != "" {
				t.Errorf("data does not round-trip (-fixture +parsed):\n%s", diff)
			}
		})
	}
	for _, typ := range approval.EventTypes() {
		if !seen[typ] {
			t.Errorf("no fixture event of type %s", typ)
		}
	}
}

// The fields the rest of the bot keys on, checked one by one against the
// fixture's own values.
func TestParseFixtureKeyFields(t *testing.T) {
	t.Parallel()
	for _, path := range eventFiles(t) {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := fixtureMap(t, name)
			d := at(t, m, "data")
			ev := parseFixture(t, name, nil)
			switch ev.Type {
			case approval.EventRequested, approval.EventReasked:
				a := ev.Approval
				if a == nil {
					t.Fatal("no Approval")
				}
				got := map[string]any{
					"id": a.ID, "approval id": ev.ApprovalID(), "revision": a.Revision, "tenant": a.Tenant,
					"kind": string(a.Kind), "function": a.Call.Function, "digest": a.Call.ArgsSHA256,
					"restricted": a.Content.Restricted,
				}
				want := map[string]any{
					"id": str(t, d, "id"), "approval id": str(t, d, "id"), "revision": num(t, d, "revision"),
					"tenant": str(t, d, "tenant"), "kind": str(t, d, "kind"),
					"function": str(t, d, "call", "function"), "digest": str(t, d, "call", "args_sha256"),
					"restricted": at(t, d, "content", "restricted").(bool),
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("approval (-want +got):\n%s", diff)
				}
				if dm := d.(map[string]any); dm["deadline"] != nil {
					wantDL, err := time.Parse(time.RFC3339, str(t, d, "deadline"))
					if err != nil {
						t.Fatal(err)
					}
					if a.Deadline == nil || !a.Deadline.Equal(wantDL) {
						t.Errorf("deadline = %v, want %v", a.Deadline, wantDL)
					}
				} else if a.Deadline != nil {
					t.Errorf("deadline = %v, want none", a.Deadline)
				}
				if dm := d.(map[string]any); dm["ladder"] != nil && a.Ladder != str(t, d, "ladder") {
					t.Errorf("ladder = %q, want %q", a.Ladder, str(t, d, "ladder"))
				}
				if ev.Type == approval.EventReasked {
					if string(a.Why) != str(t, d, "why") || a.Why == "" {
						t.Errorf("why = %q, want %q", a.Why, str(t, d, "why"))
					}
				} else if a.Why != "" {
					t.Errorf("why = %q on a request", a.Why)
				}
			case approval.EventResolved:
				r := ev.Resolved
				got := []any{ev.ApprovalID(), r.Revision, string(r.Status), r.Actor, r.Via, r.Message}
				want := []any{str(t, d, "approval_id"), num(t, d, "revision"), str(t, d, "status"),
					str(t, d, "actor"), str(t, d, "via"), str(t, d, "message")}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("resolved (-want +got):\n%s", diff)
				}
			case approval.EventRecheckFailed:
				if ev.ApprovalID() != str(t, d, "approval_id") || ev.RecheckFailed.Message != str(t, d, "message") {
					t.Errorf("recheck_failed = %+v", ev.RecheckFailed)
				}
			case approval.EventCancelled:
				if ev.ApprovalID() != str(t, d, "approval_id") || ev.Cancelled.Reason != str(t, d, "reason") {
					t.Errorf("cancelled = %+v", ev.Cancelled)
				}
			case approval.EventCallFinished:
				if ev.ApprovalID() != str(t, d, "approval_id") || string(ev.Finished.Outcome) != str(t, d, "outcome") ||
					ev.Finished.Summary != str(t, d, "summary") {
					t.Errorf("call.finished = %+v", ev.Finished)
				}
			case approval.EventAutoGranted:
				ag := ev.AutoGranted
				got := []string{ev.ApprovalID(), ag.Job.ID, ag.Job.Agent, ag.Call.Function, ag.Call.ArgsSHA256, ag.PolicyID}
				want := []string{"", str(t, d, "job", "id"), str(t, d, "job", "agent"), str(t, d, "call", "function"),
					str(t, d, "call", "args_sha256"), str(t, d, "policy_id")}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("auto_granted (-want +got):\n%s", diff)
				}
			case approval.EventQuestionAsked:
				a := ev.Approval
				if a == nil || a.Question == nil {
					t.Fatalf("Approval %+v without its question", a)
				}
				var choices []string
				if cs, ok := at(t, d, "question").(map[string]any)["choices"].([]any); ok {
					for i := range cs {
						choices = append(choices, str(t, d, "question", "choices", i))
					}
				}
				freeText, _ := at(t, d, "question").(map[string]any)["free_text"].(bool)
				got := map[string]any{
					"id": a.ID, "approval id": ev.ApprovalID(), "revision": a.Revision, "tenant": a.Tenant,
					"kind": string(a.Kind), "function": a.Call.Function, "text": a.Question.Text, "choices": a.Question.Choices,
					"free text": a.Question.FreeText, "restricted": a.Content.Restricted, "job": a.Job.ID,
				}
				want := map[string]any{
					"id": str(t, d, "id"), "approval id": str(t, d, "id"), "revision": num(t, d, "revision"),
					"tenant": str(t, d, "tenant"), "kind": string(approval.KindQuestion), "function": "",
					"text": str(t, d, "question", "text"), "choices": choices, "free text": freeText,
					"restricted": at(t, d, "content", "restricted").(bool), "job": str(t, d, "job", "id"),
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("question (-want +got):\n%s", diff)
				}
				if !a.IsQuestion() {
					t.Error("IsQuestion false for a question")
				}
			case approval.EventQuestionAnswered:
				r := ev.Resolved
				if r == nil || r.Answer == nil {
					t.Fatalf("Resolved %+v without its answer", r)
				}
				got := []any{ev.ApprovalID(), r.Revision, string(r.Status), r.Actor, r.Via, r.Message}
				want := []any{str(t, d, "question_id"), num(t, d, "revision"), string(approval.StateAnswered),
					str(t, d, "actor"), str(t, d, "via"), str(t, d, "message")}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("answered (-want +got):\n%s", diff)
				}
				if ans := at(t, d, "answer").(map[string]any); ans["text"] != nil {
					if r.Answer.Choice != nil || r.Answer.Text != str(t, d, "answer", "text") {
						t.Errorf("answer = %+v, want the words %q", r.Answer, str(t, d, "answer", "text"))
					}
				} else if r.Answer.Choice == nil || *r.Answer.Choice != num(t, d, "answer", "choice") || r.Answer.Text != "" {
					t.Errorf("answer = %+v, want choice %d", r.Answer, num(t, d, "answer", "choice"))
				}
			case approval.EventQuestionCancelled:
				if ev.ApprovalID() != str(t, d, "question_id") || ev.Cancelled.Reason != str(t, d, "reason") {
					t.Errorf("question.cancelled = %+v", ev.Cancelled)
				}
			default:
				t.Fatalf("unexpected type %q", ev.Type)
			}
		})
	}
}

// The fixtures that carry what a card depends on most must really carry
// it, or the tests above prove nothing about those fields.
func TestParseFixtureSpecifics(t *testing.T) {
	t.Parallel()
	refund := fixtureApproval(t, "refund.json")
	if refund.Deadline == nil || !refund.Deadline.After(refund.RequestedAt) {
		t.Errorf("refund.json: deadline %v, want one after requested_at %v", refund.Deadline, refund.RequestedAt)
	}
	if refund.Ladder == "" || refund.Confirm == nil || refund.Confirm.Argument == "" {
		t.Errorf("refund.json: ladder %q confirm %+v, want both set", refund.Ladder, refund.Confirm)
	}
	if !fixtureApproval(t, "private.json").Content.Restricted {
		t.Error("private.json: content.restricted lost")
	}
	re := parseFixture(t, "merge-reasked.json", nil)
	orig := parseFixture(t, "merge.json", nil)
	if re.Type != approval.EventReasked || re.Approval.Why == "" || re.Approval.Revision <= orig.Approval.Revision ||
		re.Approval.ID != orig.Approval.ID {
		t.Errorf("merge-reasked.json: type %s why %q revision %d (request %d)", re.Type, re.Approval.Why,
			re.Approval.Revision, orig.Approval.Revision)
	}
	if ag := parseFixture(t, "auto.json", nil).AutoGranted; ag == nil || ag.PolicyID == "" || !approval.ValidDigest(ag.Call.ArgsSHA256) {
		t.Errorf("auto.json: %+v", ag)
	}
}

// Accepted edges: what the schema allows must not be refused.
func TestParseAccepts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		file  string
		f     func(t testing.TB, m map[string]any)
		check func(t testing.TB, ev *approval.Event)
	}{
		{"class host.<name>", "mail.json", func(t testing.TB, m map[string]any) {
			obj(t, m, "data", "flags", "class_above")["class"] = "host.api.example"
		}, func(t testing.TB, ev *approval.Event) {
			if got := ev.Approval.Flags.ClassAbove.Class; got != "host.api.example" {
				t.Errorf("class = %q", got)
			}
		}},
		{"event id of 128", "merge.json", func(t testing.TB, m map[string]any) {
			m["id"] = strings.Repeat("e", 128)
		}, nil},
		{"approval id of 64 with every allowed sign", "merge.json", func(t testing.TB, m map[string]any) {
			obj(t, m, "data")["id"] = "A-z_0.9:" + strings.Repeat("x", 56)
		}, nil},
		{"no deadline, ladder or console_url", "refund.json", func(t testing.TB, m map[string]any) {
			d := obj(t, m, "data")
			delete(d, "deadline")
			delete(d, "ladder")
			delete(d, "console_url")
		}, func(t testing.TB, ev *approval.Event) {
			if a := ev.Approval; a.Deadline != nil || a.Ladder != "" || a.ConsoleURL != "" {
				t.Errorf("deadline %v ladder %q console_url %q, want none", a.Deadline, a.Ladder, a.ConsoleURL)
			}
		}},
		{"confirm null", "refund.json", func(t testing.TB, m map[string]any) {
			obj(t, m, "data")["confirm"] = nil
		}, func(t testing.TB, ev *approval.Event) {
			if ev.Approval.Confirm != nil {
				t.Errorf("confirm = %+v, want nil", ev.Approval.Confirm)
			}
		}},
		{"content restricted true", "merge.json", func(t testing.TB, m map[string]any) {
			obj(t, m, "data", "content")["restricted"] = true
		}, func(t testing.TB, ev *approval.Event) {
			if !ev.Approval.Content.Restricted {
				t.Error("restricted lost")
			}
		}},
		{"annotations absent", "merge.json", func(t testing.TB, m map[string]any) {
			delete(obj(t, m, "data", "call"), "annotations")
		}, func(t testing.TB, ev *approval.Event) {
			if diff := cmp.Diff(approval.Annotations{}, ev.Approval.Call.Annotations); diff != "" {
				t.Error(diff)
			}
		}},
		{"deadline with an offset", "refund.json", func(t testing.TB, m map[string]any) {
			dl, err := time.Parse(time.RFC3339, str(t, m, "data", "deadline"))
			if err != nil {
				t.Fatal(err)
			}
			obj(t, m, "data")["deadline"] = dl.In(time.FixedZone("", 2*3600)).Format(time.RFC3339)
		}, func(t testing.TB, ev *approval.Event) {
			if ev.Approval.Deadline.Location() != time.UTC {
				t.Errorf("deadline %v not in UTC", ev.Approval.Deadline)
			}
		}},
		{"resolved approved", "merge-resolved.json", func(t testing.TB, m map[string]any) {
			obj(t, m, "data")["status"] = "approved"
		}, func(t testing.TB, ev *approval.Event) {
			if ev.Resolved.Status != approval.StateApproved {
				t.Errorf("status = %q", ev.Resolved.Status)
			}
		}},
		{"call.finished failed", "search-finished.json", func(t testing.TB, m map[string]any) {
			obj(t, m, "data")["outcome"] = "failed"
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ev, err := approval.Parse(mutate(t, tt.file, func(m map[string]any) { tt.f(t, m) }))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if tt.check != nil {
				tt.check(t, ev)
			}
		})
	}
}

// --- refused input: the exact class (400 vs 422) and message ---

// The messages the schema answers with, as docs/protocol.md's clients read them.
const (
	msgEventID = "want 1–128 of [A-Za-z0-9._:-]"
	msgID      = "want 1–64 of [A-Za-z0-9._:-]"
	msgDigest  = "want sha256:<64 hex>"
	msgRole    = "want recipient, amount, host, path, payee or repository"
	msgOrigin  = "want request, identity, tenant_record, job_read or nowhere"
	msgClass   = "want read, write, egress, destructive or host.<name>"
	msgReason  = "want requires_approval, policy, hook, taint, origin, sequence or loop"
	msgWhy     = "want arguments_changed, snapshot_changed, policy_changed or hook_changed"
	msgTime    = "want an RFC 3339 time such as 2026-11-29T18:00:00Z"
	msgURL     = "want an absolute http(s) URL"
	msgEarly   = "want a time in the year 2000 or later"
)

func fe(path, msg string) *approval.FieldError { return &approval.FieldError{Path: path, Msg: msg} }

// withPlaceholder encodes a mutated fixture whose string field holds a
// marker, then swaps the marker's quoted form for raw bytes: how a test
// gets bytes into a body that json.Marshal would never write.
func withPlaceholder(t testing.TB, file string, set func(m map[string]any, marker string), raw string) []byte {
	t.Helper()
	const marker = "\u2603PLACEHOLDER\u2603"
	b := mutate(t, file, func(m map[string]any) { set(m, marker) })
	q, _ := json.Marshal(marker)
	if !bytes.Contains(b, q) {
		t.Fatal("placeholder not found")
	}
	return bytes.Replace(b, q, []byte(raw), 1)
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	type mut = func(t testing.TB, m map[string]any)
	data := func(t testing.TB, m map[string]any) map[string]any { return obj(t, m, "data") }
	setData := func(path []any, key string, v any) mut {
		return func(t testing.TB, m map[string]any) { obj(t, at(t, m, "data"), path...)[key] = v }
	}
	delData := func(path []any, key string) mut {
		return func(t testing.TB, m map[string]any) { delete(obj(t, at(t, m, "data"), path...), key) }
	}
	digestOf := func(t testing.TB, m map[string]any) string { return str(t, m, "data", "call", "args_sha256") }

	tests := []struct {
		name string
		file string // mutated by f; ignored when body is set
		f    mut
		body func(t testing.TB) []byte
		// Exactly one of these: the whole 400 message, or the 422 problems.
		badJSON  string
		problems []*approval.FieldError
	}{
		// 400 bad_json
		{name: "not UTF-8", body: func(t testing.TB) []byte {
			return withPlaceholder(t, "merge.json", func(m map[string]any, mk string) { data(t, m)["agent_says"] = mk }, "\"ok \xff\xfe\"")
		}, badJSON: "bad json: the body is not valid UTF-8"},
		{name: "empty", body: func(testing.TB) []byte { return nil }, badJSON: "bad json: the body is not a JSON object"},
		{name: "blank", body: func(testing.TB) []byte { return []byte(" \r\n\t") }, badJSON: "bad json: the body is not a JSON object"},
		{name: "list", body: func(testing.TB) []byte { return []byte("[]") }, badJSON: "bad json: the body is not a JSON object"},
		{name: "string", body: func(testing.TB) []byte { return []byte(`"x"`) }, badJSON: "bad json: the body is not a JSON object"},
		{name: "null", body: func(testing.TB) []byte { return []byte("null") }, badJSON: "bad json: the body is not a JSON object"},
		{name: "truncated", body: func(t testing.TB) []byte {
			b := fixtureBytes(t, "merge.json")
			return b[:len(b)/2]
		}, badJSON: "bad json: unexpected end of JSON input"},
		{name: "trailing garbage", body: func(t testing.TB) []byte {
			return append(fixtureBytes(t, "merge.json"), " x"...)
		}, badJSON: "bad json: invalid character 'x' after top-level value"},
		{name: "nested 10000 deep", body: func(t testing.TB) []byte {
			return withPlaceholder(t, "merge.json", func(m map[string]any, mk string) { m["data"] = mk },
				strings.Repeat("[", 10000)+strings.Repeat("]", 10000))
		}, badJSON: "bad json: the body nests deeper than 256 levels"},

		// 422 invalid: the envelope
		{name: "unknown type", file: "merge.json", f: func(t testing.TB, m map[string]any) { m["type"] = "approval.exploded" },
			problems: []*approval.FieldError{fe("type", `unknown event type "approval.exploded"`)}},
		{name: "missing event id", file: "merge.json", f: func(t testing.TB, m map[string]any) { delete(m, "id") },
			problems: []*approval.FieldError{fe("id", msgEventID)}},
		{name: "bad event id chars", file: "merge.json", f: func(t testing.TB, m map[string]any) { m["id"] = "evt 1/2" },
			problems: []*approval.FieldError{fe("id", msgEventID)}},
		{name: "event id of 129", file: "merge.json", f: func(t testing.TB, m map[string]any) { m["id"] = strings.Repeat("e", 129) },
			problems: []*approval.FieldError{fe("id", msgEventID)}},
		{name: "missing time", file: "merge-resolved.json", f: func(t testing.TB, m map[string]any) { delete(m, "time") },
			problems: []*approval.FieldError{fe("time", "required (RFC 3339 time)")}},
		{name: "missing tenant", file: "merge-resolved.json", f: func(t testing.TB, m map[string]any) { delete(m, "tenant") },
			problems: []*approval.FieldError{fe("tenant", msgID)}},
		{name: "missing tenant in envelope and data", file: "merge.json", f: func(t testing.TB, m map[string]any) {
			delete(m, "tenant")
			delete(data(t, m), "tenant")
		}, problems: []*approval.FieldError{fe("tenant", msgID), fe("data.tenant", "required")}},
		{name: "data.tenant is not the envelope's", file: "merge.json", f: func(t testing.TB, m map[string]any) {
			m["tenant"] = "gamma"
			data(t, m)["tenant"] = "beta"
		}, problems: []*approval.FieldError{fe("data.tenant", `"beta" is not the envelope's tenant "gamma"`)}},
		{name: "data a list", file: "merge.json", f: func(t testing.TB, m map[string]any) { m["data"] = []any{} },
			problems: []*approval.FieldError{fe("data", "want an object")}},
		{name: "data a string", file: "merge-resolved.json", f: func(t testing.TB, m map[string]any) { m["data"] = "x" },
			problems: []*approval.FieldError{fe("data", "want an object")}},
		{name: "data null", file: "merge.json", f: func(t testing.TB, m map[string]any) { m["data"] = nil },
			problems: []*approval.FieldError{fe("data", "want an object")}},
		{name: "data missing", file: "merge.json", f: func(t testing.TB, m map[string]any) { delete(m, "data") },
			problems: []*approval.FieldError{fe("data", "want an object")}},

		// 422 invalid: the Approval
		{name: "missing approval id", file: "merge.json", f: delData(nil, "id"),
			problems: []*approval.FieldError{fe("data.id", msgID)}},
		// The bot's own record of a stored revision, never the backend's.
		{name: "call.fingerprints", file: "merge.json", f: func(t testing.TB, m map[string]any) {
			obj(t, m, "data", "call")["fingerprints"] = map[string]any{"key_id": "AAAA",
				"values": []any{map[string]any{"path": "repo", "mac": "AAAA"}}}
		}, problems: []*approval.FieldError{fe("data.call.fingerprints", "unknown field")}},
		{name: "call.fingerprints null", file: "merge.json", f: func(t testing.TB, m map[string]any) {
			obj(t, m, "data", "call")["fingerprints"] = nil
		}, problems: []*approval.FieldError{fe("data.call.fingerprints", "unknown field")}},
		{name: "revision 0", file: "merge.json", f: setData(nil, "revision", 0),
			problems: []*approval.FieldError{fe("data.revision", "want an integer ≥ 1")}},
		{name: "revision -1", file: "merge.json", f: setData(nil, "revision", -1),
			problems: []*approval.FieldError{fe("data.revision", "want an integer ≥ 1")}},
		// A type error names the field as the event spells it (data.revision),
		// not as encoding/json names a field of the embedded Approval
		// (data.Approval.revision).
		{name: "revision a string", file: "merge.json", f: setData(nil, "revision", "1"),
			problems: []*approval.FieldError{fe("data.revision", "want an integer")}},
		{name: "revision 1.5", file: "merge.json", f: setData(nil, "revision", json.Number("1.5")),
			problems: []*approval.FieldError{fe("data.revision", "want an integer")}},
		{name: "revision of 400 digits", file: "merge.json", f: setData(nil, "revision", json.Number(strings.Repeat("9", 400))),
			problems: []*approval.FieldError{fe("data.revision", "want an integer")}},
		// A type error inside a list keeps the element's index in its path.
		{name: "roles[0].role a number", file: "merge.json", f: func(t testing.TB, m map[string]any) {
			obj(t, m, "data", "roles", 0)["role"] = 5
		}, problems: []*approval.FieldError{fe("data.roles[0].role", "want a string")}},
		{name: "content.restricted a string", file: "merge.json", f: setData([]any{"content"}, "restricted", "no"),
			problems: []*approval.FieldError{fe("data.content.restricted", "want true or false")}},
		{name: "unknown kind", file: "merge.json", f: setData(nil, "kind", "job"),
			problems: []*approval.FieldError{fe("data.kind", "want call, changes or protected_paths")}},
		{name: "call.function missing", file: "merge.json", f: delData([]any{"call"}, "function"),
			problems: []*approval.FieldError{fe("data.call.function", "required")}},
		{name: "args_sha256 missing", file: "merge.json", f: delData([]any{"call"}, "args_sha256"),
			problems: []*approval.FieldError{fe("data.call.args_sha256", msgDigest)}},
		{name: "args_sha256 sha256:XYZ", file: "merge.json", f: setData([]any{"call"}, "args_sha256", "sha256:XYZ"),
			problems: []*approval.FieldError{fe("data.call.args_sha256", msgDigest)}},
		{name: "args_sha256 uppercase hex", file: "merge.json", f: func(t testing.TB, m map[string]any) {
			d := digestOf(t, m)
			up := "sha256:" + strings.ToUpper(strings.TrimPrefix(d, "sha256:"))
			if up == d {
				t.Fatal("fixture digest has no letters to upper-case")
			}
			obj(t, m, "data", "call")["args_sha256"] = up
		}, problems: []*approval.FieldError{fe("data.call.args_sha256", msgDigest)}},
		{name: "args_sha256 of 63 hex", file: "merge.json", f: func(t testing.TB, m map[string]any) {
			d := digestOf(t, m)
			obj(t, m, "data", "call")["args_sha256"] = d[:len(d)-1]
		}, problems: []*approval.FieldError{fe("data.call.args_sha256", msgDigest)}},
		{name: "args_sha256 without prefix", file: "merge.json", f: func(t testing.TB, m map[string]any) {
			obj(t, m, "data", "call")["args_sha256"] = strings.TrimPrefix(digestOf(t, m), "sha256:")
		}, problems: []*approval.FieldError{fe("data.call.args_sha256", msgDigest)}},
		{name: "arguments not an object", file: "merge.json", f: setData([]any{"call"}, "arguments", []any{}),
			problems: []*approval.FieldError{fe("data.call.arguments", "want an object")}},
		{name: "roles[0].role unknown", file: "merge.json", f: func(t testing.TB, m map[string]any) {
			obj(t, m, "data", "roles", 0)["role"] = "sender"
		}, problems: []*approval.FieldError{fe("data.roles[0].role", msgRole)}},
		{name: "roles[0].values[0].origin unknown", file: "merge.json", f: func(t testing.TB, m map[string]any) {
			obj(t, m, "data", "roles", 0, "values", 0)["origin"] = "web"
		}, problems: []*approval.FieldError{fe("data.roles[0].values[0].origin", msgOrigin)}},
		{name: "flags.not_traced[0].floor unknown", file: "mail.json", f: func(t testing.TB, m map[string]any) {
			obj(t, m, "data", "flags", "not_traced", 0)["floor"] = "somewhere"
		}, problems: []*approval.FieldError{fe("data.flags.not_traced[0].floor", msgOrigin)}},
		{name: "class_above.class admin", file: "mail.json", f: setData([]any{"flags", "class_above"}, "class", "admin"),
			problems: []*approval.FieldError{fe("data.flags.class_above.class", msgClass)}},
		{name: "class_above.class host. alone", file: "mail.json", f: setData([]any{"flags", "class_above"}, "class", "host."),
			problems: []*approval.FieldError{fe("data.flags.class_above.class", msgClass)}},
		{name: "asked_by.reason unknown", file: "merge.json", f: setData([]any{"asked_by"}, "reason", "because"),
			problems: []*approval.FieldError{fe("data.asked_by.reason", msgReason)}},
		{name: "taint without list", file: "refund.json", f: delData([]any{"asked_by"}, "taint"),
			problems: []*approval.FieldError{fe("data.asked_by.taint", "required for reason taint")}},
		{name: "policy without rule", file: "search.json", f: delData([]any{"asked_by"}, "rule"),
			problems: []*approval.FieldError{fe("data.asked_by.rule", "required")}},
		{name: "hook without hook", file: "unknown.json", f: delData([]any{"asked_by"}, "hook"),
			problems: []*approval.FieldError{fe("data.asked_by.hook", "required")}},
		{name: "content missing", file: "merge.json", f: delData(nil, "content"),
			problems: []*approval.FieldError{fe("data.content.restricted", "required (true or false)")}},
		{name: "content.restricted missing", file: "merge.json", f: delData([]any{"content"}, "restricted"),
			problems: []*approval.FieldError{fe("data.content.restricted", "required (true or false)")}},
		{name: "content.restricted null", file: "merge.json", f: setData([]any{"content"}, "restricted", nil),
			problems: []*approval.FieldError{fe("data.content.restricted", "required (true or false)")}},
		{name: "console_url javascript:", file: "merge.json", f: setData(nil, "console_url", "javascript:alert(1)"),
			problems: []*approval.FieldError{fe("data.console_url", msgURL)}},
		{name: "console_url with user-info", file: "merge.json", f: setData(nil, "console_url", "https://a:b@console.example/x"),
			problems: []*approval.FieldError{fe("data.console_url", msgURL)}},
		{name: "job.url relative", file: "merge.json", f: setData([]any{"job"}, "url", "//console.example/jobs/x"),
			problems: []*approval.FieldError{fe("data.job.url", msgURL)}},
		{name: "requested_at not RFC 3339", file: "merge.json", f: setData(nil, "requested_at", "29/11/2026 18:00"),
			problems: []*approval.FieldError{fe("data.requested_at", msgTime)}},
		{name: "requested_at missing", file: "merge.json", f: delData(nil, "requested_at"),
			problems: []*approval.FieldError{fe("data.requested_at", "required (RFC 3339 time)")}},
		{name: "deadline before requested_at", file: "refund.json", f: func(t testing.TB, m map[string]any) {
			req, err := time.Parse(time.RFC3339, str(t, m, "data", "requested_at"))
			if err != nil {
				t.Fatal(err)
			}
			obj(t, m, "data")["deadline"] = req.Add(-time.Hour).Format(time.RFC3339)
		}, problems: []*approval.FieldError{fe("data.deadline", "want a time after requested_at")}},
		{name: "deadline equal to requested_at", file: "refund.json", f: func(t testing.TB, m map[string]any) {
			obj(t, m, "data")["deadline"] = str(t, m, "data", "requested_at")
		}, problems: []*approval.FieldError{fe("data.deadline", "want a time after requested_at")}},
		// A deadline at the zero time is refused, not taken for "no
		// deadline" and dropped.
		{name: "deadline at year 1", file: "refund.json", f: setData(nil, "deadline", "0001-01-01T00:00:00Z"),
			problems: []*approval.FieldError{fe("data.deadline", msgEarly)}},
		// Valid RFC 3339, refused by the year's bound: the answer names
		// the bound, not the format.
		{name: "requested_at at the epoch", file: "merge.json", f: setData(nil, "requested_at", "1970-01-01T00:00:00Z"),
			problems: []*approval.FieldError{fe("data.requested_at", msgEarly)}},
		{name: "deadline not RFC 3339", file: "refund.json", f: setData(nil, "deadline", "tomorrow"),
			problems: []*approval.FieldError{fe("data.deadline", msgTime)}},
		{name: "ladder with a space", file: "refund.json", f: setData(nil, "ladder", "pay ments"),
			problems: []*approval.FieldError{fe("data.ladder", msgID)}},
		{name: "reasked without why", file: "merge-reasked.json", f: delData(nil, "why"),
			problems: []*approval.FieldError{fe("data.why", msgWhy)}},
		{name: "reasked with an unknown why", file: "merge-reasked.json", f: setData(nil, "why", "because"),
			problems: []*approval.FieldError{fe("data.why", msgWhy)}},
		{name: "requested with why", file: "merge.json", f: setData(nil, "why", "arguments_changed"),
			problems: []*approval.FieldError{fe("data.why", "only an approval.reasked event says why")}},
		{name: "changes kind without changes", file: "changes.json", f: delData(nil, "changes"),
			problems: []*approval.FieldError{fe("data.changes.files", "required for kind changes")}},
		{name: "changes kind with no files", file: "changes.json", f: setData([]any{"changes"}, "files", []any{}),
			problems: []*approval.FieldError{fe("data.changes.files", "required for kind changes")}},
		{name: "protected_paths without changes", file: "protected.json", f: delData(nil, "changes"),
			problems: []*approval.FieldError{fe("data.changes.files", "required for kind protected_paths")}},

		// 422 invalid: the other event types
		{name: "resolved expired", file: "merge-resolved.json", f: setData(nil, "status", "expired"),
			problems: []*approval.FieldError{fe("data.status", "want approved or denied")}},
		{name: "resolved pending", file: "merge-resolved.json", f: setData(nil, "status", "pending"),
			problems: []*approval.FieldError{fe("data.status", "want approved or denied")}},
		{name: "resolved revision 0", file: "merge-resolved.json", f: setData(nil, "revision", 0),
			problems: []*approval.FieldError{fe("data.revision", "want an integer ≥ 1")}},
		{name: "resolved revision a string", file: "merge-resolved.json", f: setData(nil, "revision", "2"),
			problems: []*approval.FieldError{fe("data.revision", "want an integer")}},
		{name: "resolved without actor", file: "merge-resolved.json", f: delData(nil, "actor"),
			problems: []*approval.FieldError{fe("data.actor", "required")}},
		{name: "recheck_failed without message", file: "refund-recheck.json", f: delData(nil, "message"),
			problems: []*approval.FieldError{fe("data.message", "required")}},
		{name: "cancelled with a bad approval_id", file: "mail-cancelled.json", f: setData(nil, "approval_id", "a b"),
			problems: []*approval.FieldError{fe("data.approval_id", msgID)}},
		{name: "call.finished outcome unknown", file: "search-finished.json", f: setData(nil, "outcome", "exploded"),
			problems: []*approval.FieldError{fe("data.outcome", "want completed or failed")}},
		{name: "auto_granted missing policy_id", file: "auto.json", f: delData(nil, "policy_id"),
			problems: []*approval.FieldError{fe("data.policy_id", "required")}},
		{name: "auto_granted bad digest", file: "auto.json", f: setData([]any{"call"}, "args_sha256", "sha256:XYZ"),
			problems: []*approval.FieldError{fe("data.call.args_sha256", msgDigest)}},
		{name: "auto_granted function a number", file: "auto.json", f: setData([]any{"call"}, "function", 5),
			problems: []*approval.FieldError{fe("data.call.function", "want a string")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var body []byte
			if tt.body != nil {
				body = tt.body(t)
			} else {
				body = mutate(t, tt.file, func(m map[string]any) { tt.f(t, m) })
			}
			ev, err := approval.Parse(body)
			if err == nil {
				t.Fatalf("Parse accepted it: %+v", ev)
			}
			if ev != nil {
				t.Errorf("Parse returned an event with its error")
			}
			var ve *approval.ValidationError
			isVE := errors.As(err, &ve)
			isBad := errors.Is(err, approval.ErrBadJSON)
			if tt.badJSON != "" {
				if !isBad || isVE {
					t.Fatalf("error %q (%T): want ErrBadJSON (400), not a ValidationError", err, err)
				}
				if err.Error() != tt.badJSON {
					t.Errorf("message = %q, want %q", err, tt.badJSON)
				}
				return
			}
			if !isVE || isBad {
				t.Fatalf("error %q (%T): want a *ValidationError (422)", err, err)
			}
			if diff := cmp.Diff(tt.problems, ve.Problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// One answer names every problem of an event, but a garbage event still
// gets one readable sentence.
func TestParseListsSeveralProblems(t *testing.T) {
	t.Parallel()
	body := mutate(t, "merge.json", func(m map[string]any) {
		d := obj(t, m, "data")
		d["kind"] = "job"
		d["console_url"] = "javascript:alert(1)"
		d["requested_at"] = "yesterday"
		d["why"] = "arguments_changed"
		d["ladder"] = "no spaces"
		c := obj(t, d, "call")
		delete(c, "function")
		c["args_sha256"] = "sha256:XYZ"
	})
	_, err := approval.Parse(body)
	var ve *approval.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %v (%T), want *ValidationError", err, err)
	}
	want := []*approval.FieldError{
		fe("data.kind", "want call, changes or protected_paths"),
		fe("data.console_url", msgURL),
		fe("data.call.function", "required"),
		fe("data.call.args_sha256", msgDigest),
		fe("data.requested_at", msgTime),
		fe("data.ladder", msgID),
		fe("data.why", "only an approval.reasked event says why"),
	}
	byPath := cmpopts.SortSlices(func(a, b *approval.FieldError) bool { return a.Path < b.Path })
	if diff := cmp.Diff(want, ve.Problems, byPath); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if len(ve.Problems) == len(want) {
		var first []string
		for _, p := range ve.Problems[:5] {
			first = append(first, p.Error())
		}
		if wantMsg := strings.Join(first, "; ") + "; and 2 more"; err.Error() != wantMsg {
			t.Errorf("message = %q, want %q", err, wantMsg)
		}
	}
}

func TestValidationErrorMessage(t *testing.T) {
	t.Parallel()
	problems := func(n int) []*approval.FieldError {
		var ps []*approval.FieldError
		for i := range n {
			ps = append(ps, fe(fmt.Sprintf("f%d", i), "bad"))
		}
		return ps
	}
	tests := []struct {
		n    int
		want string
	}{
		{1, "f0: bad"},
		{2, "f0: bad; f1: bad"},
		{5, "f0: bad; f1: bad; f2: bad; f3: bad; f4: bad"},
		{6, "f0: bad; f1: bad; f2: bad; f3: bad; f4: bad; and 1 more"},
		{40, "f0: bad; f1: bad; f2: bad; f3: bad; f4: bad; and 35 more"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.n), func(t *testing.T) {
			t.Parallel()
			err := &approval.ValidationError{Problems: problems(tt.n)}
			if got := err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
	if got := fe("data.call.args_sha256", msgDigest).Error(); got != "data.call.args_sha256: want sha256:<64 hex>" {
		t.Errorf("FieldError = %q", got)
	}
}

func TestValidID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want bool
	}{
		{"a-7Q2K9", true},
		{"A.z_0:9-", true},
		{strings.Repeat("x", 64), true},
		{strings.Repeat("x", 65), false},
		{"", false},
		{"a b", false},
		{"a/b", false},
		{"ä", false},
		{"a\n", false},
	}
	for _, tt := range tests {
		if got := approval.ValidID(tt.in); got != tt.want {
			t.Errorf("ValidID(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// --- keys with two readings: duplicates and case variants ---

// withMember is a fixture mutated by f with member, raw JSON text such as
// `"Content":{"restricted":false}`, added to the object at path (nil: the
// top level): how a test gets a key into a body that json.Marshal would
// write once and in one case only.
func withMember(t testing.TB, file string, f func(m map[string]any), path []any, member string) []byte {
	t.Helper()
	const marker = "\u2603MEMBER\u2603"
	b := mutate(t, file, func(m map[string]any) {
		if f != nil {
			f(m)
		}
		obj(t, m, path...)[marker] = 0
	})
	q := []byte(`"` + marker + `":0`)
	if bytes.Count(b, q) != 1 {
		t.Fatal("member placeholder not found")
	}
	return bytes.Replace(b, q, []byte(member), 1)
}

const (
	msgDuplicate = "duplicate key: an object may hold a key once"
	msgDupInside = "an object in it holds a key twice"
)

func msgCase(field string) string {
	return fmt.Sprintf("want %q: keys must match the field's letter case exactly", field)
}

// TestParseRefusesKeysWithTwoReadings: encoding/json keeps the last of
// two equal keys and matches a key to a field whatever its case; an event
// that relies on either is refused with the key's path (422).
func TestParseRefusesKeysWithTwoReadings(t *testing.T) {
	t.Parallel()
	restrict := func(m map[string]any) { obj(t, m, "data", "content")["restricted"] = true }
	data := []any{"data"}
	tests := []struct {
		name   string
		file   string
		f      func(m map[string]any)
		path   []any
		member string
		want   *approval.FieldError
	}{
		{"the field in another case, after it", "merge.json", restrict, data, `"Content":{"Restricted":false}`,
			fe("data.Content", msgCase("content"))},
		{"the field twice", "merge.json", restrict, data, `"content":{"restricted":false}`,
			fe("data.content", msgDuplicate)},
		{"the field twice, once spelt with an escape", "merge.json", restrict, data, `"con\u0074ent":{"restricted":false}`,
			fe("data.content", msgDuplicate)},
		{"restricted twice", "merge.json", restrict, []any{"data", "content"}, `"restricted":false`,
			fe("data.content.restricted", msgDuplicate)},
		{"restricted in another case", "merge.json", restrict, []any{"data", "content"}, `"RESTRICTED":false`,
			fe("data.content.RESTRICTED", msgCase("restricted"))},
		{"a Kelvin sign for the k of kind", "merge.json", nil, data, `"\u212aind":"changes"`,
			fe(`data["\u212aind"]`, msgCase("kind"))},
		{"an envelope key in another case", "merge.json", nil, nil, `"Tenant":"globex"`,
			fe("Tenant", msgCase("tenant"))},
		{"the type twice", "merge.json", nil, nil, `"type":"approval.cancelled"`,
			fe("type", msgDuplicate)},
		{"the type in another case", "merge-resolved.json", nil, nil, `"TYPE":"approval.requested"`,
			fe("TYPE", msgCase("type"))},
		{"deep in a list", "merge.json", nil, []any{"data", "roles", 0, "values", 0}, `"Origin":"nowhere"`,
			fe("data.roles[0].values[0].Origin", msgCase("origin"))},
		{"an argument twice", "merge.json", nil, []any{"data", "call", "arguments"}, `"repo":"evil/api"`,
			fe("data.call.arguments", msgDupInside)},
		{"an argument twice, nested", "merge.json", func(m map[string]any) {
			obj(t, m, "data", "call", "arguments")["opts"] = map[string]any{"force": false}
		}, []any{"data", "call", "arguments", "opts"}, `"force":true`, fe("data.call.arguments", msgDupInside)},
		{"resolved: status in another case", "merge-resolved.json", nil, data, `"Status":"approved"`,
			fe("data.Status", msgCase("status"))},
		{"call.finished: outcome twice", "search-finished.json", nil, data, `"outcome":"failed"`,
			fe("data.outcome", msgDuplicate)},
		{"cancelled: approval_id in another case", "mail-cancelled.json", nil, data, `"Approval_ID":"a-other"`,
			fe("data.Approval_ID", msgCase("approval_id"))},
		{"recheck_failed: message twice", "refund-recheck.json", nil, data, `"message":"fine"`,
			fe("data.message", msgDuplicate)},
		{"auto_granted: the digest in another case", "auto.json", nil, []any{"data", "call"},
			`"Args_SHA256":"sha256:0000000000000000000000000000000000000000000000000000000000000000"`,
			fe("data.call.Args_SHA256", msgCase("args_sha256"))},
		{"an unknown type: its data's keys checked for duplicates", "merge.json",
			func(m map[string]any) { m["type"] = "approval.exploded" }, data, `"id":"a-other"`,
			fe("data", msgDupInside)},
		{"an unknown key twice", "merge.json", nil, data, `"zz_future":1,"zz_future":2`,
			fe("data.zz_future", msgDuplicate)},
		{"an unknown key before a key twice", "merge.json", func(m map[string]any) {
			obj(t, m, "data", "job")["aaa_unknown"] = 1
		}, []any{"data", "turn"}, `"waiting":[]`, fe("data.turn.waiting", msgDuplicate)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			body := withMember(t, tt.file, tt.f, tt.path, tt.member)
			ev, err := approval.Parse(body)
			if err == nil {
				t.Fatalf("Parse accepted it: %+v", ev)
			}
			var ve *approval.ValidationError
			if !errors.As(err, &ve) || errors.Is(err, approval.ErrBadJSON) {
				t.Fatalf("error %q (%T): want a *ValidationError (422)", err, err)
			}
			if diff := cmp.Diff([]*approval.FieldError{tt.want}, ve.Problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// The refused attack is real: encoding/json alone reads the restricted
// event as unrestricted, which would post a full card in shared channels.
func TestParseCaseAttackFoolsEncodingJSON(t *testing.T) {
	t.Parallel()
	body := withMember(t, "private.json", nil, []any{"data"}, `"Content":{"Restricted":false}`)
	var plain struct {
		Data approval.Approval `json:"data"`
	}
	if err := json.Unmarshal(body, &plain); err != nil {
		t.Fatal(err)
	}
	if plain.Data.Content.Restricted {
		t.Fatal("encoding/json read the fixture as restricted; the attack needs a fixture whose content is restricted")
	}
	if !fixtureApproval(t, "private.json").Content.Restricted {
		t.Fatal("private.json is not restricted")
	}
	if _, err := approval.Parse(body); err == nil {
		t.Fatal("Parse accepted an event that encoding/json reads as unrestricted")
	}
}

func TestParseKeepsDistinctKeys(t *testing.T) {
	t.Parallel()
	body := withMember(t, "merge.json", func(m map[string]any) {
		args := obj(t, m, "data", "call", "arguments")
		args["Repo"] = "other/api" // beside "repo": another key of the tool's
		args["REPO"] = "third/api"
	}, []any{"data", "call", "arguments"}, `"rEPO":"fourth/api"`)
	ev, err := approval.Parse(body)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	var args map[string]any
	if err := json.Unmarshal(ev.Approval.Call.Arguments, &args); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"repo": "acme/api", "Repo": "other/api", "REPO": "third/api", "rEPO": "fourth/api", "pr": 1234.0, "method": "squash"}
	if diff := cmp.Diff(want, args); diff != "" {
		t.Errorf("arguments (-want +got):\n%s", diff)
	}
}

// benchEvent is an event body decoded into the domain's types in one call:
// what json.Unmarshal alone costs, for the key check to be measured by.
type benchEvent struct {
	ID     string            `json:"id"`
	Type   string            `json:"type"`
	Time   string            `json:"time"`
	Tenant string            `json:"tenant"`
	Data   approval.Approval `json:"data"`
}

// BenchmarkKeyCheck sets what strictjson.Check costs on a real event
// beside json.Unmarshal of the same bytes into the same types. "ratio"
// times both in one loop, so they share the machine's state, and reports
// check/unmarshal; "parse" is the whole of Parse, the check included.
func BenchmarkKeyCheck(b *testing.B) {
	body := fixtureBytes(b, "merge.json")
	keys := strictjson.For[benchEvent]()
	if err := strictjson.Check(body, keys); err != nil {
		b.Fatal(err)
	}
	b.Run("unmarshal", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			var ev benchEvent
			if err := json.Unmarshal(body, &ev); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("check", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if err := strictjson.Check(body, keys); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parse", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, err := approval.Parse(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ratio", func(b *testing.B) {
		var check, unmarshal time.Duration
		for b.Loop() {
			start := time.Now()
			if err := strictjson.Check(body, keys); err != nil {
				b.Fatal(err)
			}
			mid := time.Now()
			var ev benchEvent
			if err := json.Unmarshal(body, &ev); err != nil {
				b.Fatal(err)
			}
			check += mid.Sub(start)
			unmarshal += time.Since(mid)
		}
		b.ReportMetric(float64(check)/float64(unmarshal), "check/unmarshal")
	})
}

// Every object of the schema refuses a key it does not define, naming its
// path (422 invalid): a value the bot would drop unread, such as a
// "value" beside a flag's argument and role, must not pass for read. Each
// object of every fixture is given one key too many in turn; only the
// arguments, which are the tool's own, take any key.
func TestParseRefusesUnknownFields(t *testing.T) {
	t.Parallel()
	type object struct {
		keys []any
		path string
	}
	var walk func(v any, keys []any, path string, out *[]object)
	walk = func(v any, keys []any, path string, out *[]object) {
		switch x := v.(type) {
		case map[string]any:
			if path == "data.call.arguments" {
				return
			}
			*out = append(*out, object{slices.Clone(keys), path})
			for k, c := range x {
				p := k
				if path != "" {
					p = path + "." + k
				}
				walk(c, append(keys, k), p, out)
			}
		case []any:
			for i, c := range x {
				walk(c, append(keys, i), fmt.Sprintf("%s[%d]", path, i), out)
			}
		}
	}
	seen := map[string]bool{}
	for _, path := range eventFiles(t) {
		file := filepath.Base(path)
		if _, err := approval.Parse(fixtureBytes(t, file)); err != nil {
			continue // an event refused as it is (an unknown type)
		}
		var objects []object
		walk(fixtureMap(t, file), nil, "", &objects)
		for _, o := range objects {
			key := "value" // a role's value has one: give it another
			if _, has := obj(t, fixtureMap(t, file), o.keys...)[key]; has {
				key = "value_too"
			}
			want := key
			if o.path != "" {
				want = o.path + "." + key
			}
			seen[want] = true
			body := mutate(t, file, func(m map[string]any) { obj(t, m, o.keys...)[key] = "x@evil.example" })
			_, err := approval.Parse(body)
			var ve *approval.ValidationError
			if !errors.As(err, &ve) {
				t.Errorf("%s with %s: Parse error %v; want 422 naming it", file, want, err)
				continue
			}
			if diff := cmp.Diff([]*approval.FieldError{fe(want, "unknown field")}, ve.Problems); diff != "" {
				t.Errorf("%s with %s: problems (-want +got):\n%s", file, want, diff)
			}
		}
	}
	for _, p := range []string{"value", "data.value", "data.job.value", "data.call.value", "data.call.annotations.value",
		"data.call.redaction.value", "data.roles[0].value", "data.roles[0].values[0].value_too", "data.flags.value",
		"data.flags.not_traced[0].value", "data.flags.new_to_job[0].value", "data.flags.class_above.value",
		"data.asked_by.value", "data.asked_by.taint[0].value", "data.confirm.value", "data.turn.value",
		"data.content.value", "data.changes.value", "data.changes.files[0].value",
		"data.question.value", "data.answer.value"} {
		if !seen[p] {
			t.Errorf("no fixture has the object of %s", p)
		}
	}
	// Inside the arguments any key is the tool's.
	if _, err := approval.Parse(mutate(t, "merge.json", func(m map[string]any) {
		obj(t, m, "data", "call", "arguments")["value"] = map[string]any{"value": 1}
	})); err != nil {
		t.Errorf("an argument named value: %v", err)
	}
}

// A role's found is the bot's own (the warning line a stored restricted
// revision keeps): the protocol gives the backend no such field, so one it
// sends, in any letter case and even empty, is refused at its path as
// every unknown field is, never read and never silently dropped.
func TestParseRefusesARolesFound(t *testing.T) {
	for _, key := range []string{`"found": "All clear: approve"`, `"found": ""`, `"found": null`, `"Found": "All clear"`} {
		body := []byte(strings.Replace(string(fixtureBytes(t, "mail.json")), `"role": "recipient",`, `"role": "recipient", `+key+`,`, 1))
		if !strings.Contains(string(body), key) {
			t.Fatal("the fixture has no recipient role to edit")
		}
		name, _, _ := strings.Cut(strings.Trim(key, `"`), `"`)
		ev, err := approval.Parse(body)
		var ve *approval.ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("a role with %s: Parse = %+v, %v; want 422 naming it", key, ev, err)
			continue
		}
		if diff := cmp.Diff([]*approval.FieldError{fe("data.roles[0]."+name, "unknown field")}, ve.Problems); diff != "" {
			t.Errorf("a role with %s: problems (-want +got):\n%s", key, diff)
		}
	}
}
