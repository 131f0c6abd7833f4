package api_test

import (
	"strings"
	"testing"
	"time"
)

// generatedEvents are valid events of every type that between them fill
// every field the protocol names, each asked_by reason and each kind, so
// that breaking any one field is tried on a body where it is present. The
// times are the moment given.
func generatedEvents(tb testing.TB, now time.Time) map[string][]byte {
	tb.Helper()
	at := now.UTC().Truncate(time.Second)
	r := strings.NewReplacer(
		"@NOW@", at.Format(time.RFC3339),
		"@DEADLINE@", at.Add(2*time.Hour).Format(time.RFC3339Nano),
		"@DIGEST@", "sha256:22000fa35fce701034aa16fa399915912c97492968192b1eb78e782b157baa2d",
	)
	approvalBody := func(kind, extra string) string {
		return `{"id":"a-gen.1:x","revision":2,"tenant":"acme","kind":"` + kind + `",
 "console_url":"https://console.example/approvals/a-gen.1",
 "job":{"id":"j-1","url":"http://console.example/jobs/j-1?x=1#y","started_by":"user:ada","agent":"release-bot","private_chat":false},
 "call":{"function":"acme.send","snapshot":"@DIGEST@",
   "annotations":{"readOnlyHint":false,"destructiveHint":true,"openWorldHint":true},
   "arguments":{"to":"x@evil.example","nested":{"list":[1,"two",null,{"k":true}]}},
   "arguments_cut":true,"redaction":{"redacted":true,"truncated":false},
   "args_sha256":"@DIGEST@","call_index":14},
 "roles":[{"argument":"to","role":"recipient","values":[{"value":"x@evil.example","origin":"job_read","out_of_scope":true}],"left_out":1,"not_compared":true}],
 "flags":{"not_traced":[{"argument":"to","role":"recipient","origin":"job_read","floor":"tenant_record"}],
   "new_to_job":[{"argument":"to","role":"payee"}],
   "class_above":{"class":"host.mail-1","previous":"read"}},
 "agent_says":"Sending the summary.","level":"L2","confirm":{"argument":"to"},"effects_mismatch":true,
 "turn":{"waiting":["acme.comment"]},"content":{"restricted":true},
 "requested_at":"@NOW@","deadline":"@DEADLINE@","ladder":"payments"` + extra + `}`
	}
	changes := `,"changes":{"files":[{"path":"rules/policy.yaml","protected":true},{"path":"README.md"}],"patch":"--- a\n+++ b\n","patch_cut":true,"patch_sha256":"@DIGEST@"}`
	askedBy := map[string]string{
		"requires_approval": `{"reason":"requires_approval"}`,
		"policy":            `{"reason":"policy","rule":"egress-needs-yes"}`,
		"hook":              `{"reason":"hook","hook":"pre-send"}`,
		"taint":             `{"reason":"taint","taint":[{"source":"open_world","function":"web.fetch","call":12}]}`,
		"origin":            `{"reason":"origin","argument":"to","role":"recipient","floor":"tenant_record","origin":"job_read"}`,
		"sequence":          `{"reason":"sequence","rule":"read-then-send","previous_call":"db.read"}`,
		"loop":              `{"reason":"loop","rule":"not read for loop"}`,
	}
	envelope := func(id, typ, data string) string {
		return `{"id":"` + id + `","type":"` + typ + `","time":"@NOW@","tenant":"acme","data":` + data + `}`
	}
	out := map[string]string{}
	for reason, ab := range askedBy {
		out["requested/"+reason] = envelope("evt-gen-"+reason, "approval.requested",
			approvalBody("call", `,"asked_by":`+ab))
	}
	out["requested/changes"] = envelope("evt-gen-changes", "approval.requested",
		approvalBody("changes", `,"asked_by":{"reason":"policy","rule":"r"}`+changes))
	out["requested/protected_paths"] = envelope("evt-gen-protected", "approval.requested",
		approvalBody("protected_paths", `,"asked_by":{"reason":"requires_approval"}`+changes))
	out["reasked"] = envelope("evt-gen-reasked", "approval.reasked",
		approvalBody("call", `,"asked_by":{"reason":"requires_approval"},"why":"snapshot_changed"`))
	out["resolved"] = envelope("evt-gen-resolved", "approval.resolved",
		`{"approval_id":"a-gen.1:x","revision":2,"status":"denied","actor":"user:lee","comment":"no","via":"console","message":"Denied in the console."}`)
	out["recheck_failed"] = envelope("evt-gen-recheck", "approval.recheck_failed",
		`{"approval_id":"a-gen.1:x","message":"The call was not made: the platform refused it."}`)
	out["cancelled"] = envelope("evt-gen-cancelled", "approval.cancelled",
		`{"approval_id":"a-gen.1:x","reason":"the job ended"}`)
	out["finished"] = envelope("evt-gen-finished", "call.finished",
		`{"approval_id":"a-gen.1:x","outcome":"failed","summary":"exit 1"}`)
	out["auto_granted"] = envelope("evt-gen-auto", "approval.auto_granted",
		`{"job":{"id":"j-1","agent":"release-bot"},"call":{"function":"run_command","args_sha256":"@DIGEST@"},"policy_id":"sandbox.workspace.v1"}`)
	// Feature questions.
	question := `{"id":"q-gen.1:x","revision":2,"tenant":"acme","console_url":"https://console.example/questions/q-gen.1",
 "job":{"id":"j-1","url":"http://console.example/jobs/j-1?x=1#y","started_by":"user:ada","agent":"refund-bot","private_chat":false},
 "question":{"text":"Which account should I refund?","choices":["acct-1 (personal)","acct-2 (company)"],"free_text":true},
 "content":{"restricted":true},"requested_at":"@NOW@","deadline":"@DEADLINE@","ladder":"payments"}`
	out["question/asked"] = envelope("evt-gen-q-asked", "question.asked", question)
	out["question/answered choice"] = envelope("evt-gen-q-choice", "question.answered",
		`{"question_id":"q-gen.1:x","revision":2,"answer":{"choice":1},"actor":"user:lee","via":"console","message":"The job has the answer."}`)
	out["question/answered text"] = envelope("evt-gen-q-text", "question.answered",
		`{"question_id":"q-gen.1:x","revision":2,"answer":{"text":"acct-2, with a note"},"actor":"user:lee","via":"console","message":"The job has the answer."}`)
	out["question/cancelled"] = envelope("evt-gen-q-cancelled", "question.cancelled",
		`{"question_id":"q-gen.1:x","reason":"the job ended"}`)
	bodies := map[string][]byte{}
	for name, s := range out {
		bodies[name] = encode(tb, decode(tb, []byte(r.Replace(s))))
	}
	return bodies
}
