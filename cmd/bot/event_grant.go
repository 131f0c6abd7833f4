package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"approvalsbot/adapters/backend/standin"
	"approvalsbot/approval"
)

// grantedInstead asks the stand-in backend at backendURL whether a grant
// it keeps covers the request in body; if one does, it returns the
// approval.auto_granted a backend applying the grant sends instead (a use
// taken), else body as it was. Any other event is returned as it was.
func grantedInstead(ctx context.Context, backendURL string, body []byte, now time.Time, stdout io.Writer) ([]byte, error) {
	ev, err := approval.Parse(body)
	if err != nil || ev.Type != approval.EventRequested {
		return body, nil //nolint:nilerr // the bot answers what it makes of the event
	}
	a := ev.Approval
	q, _ := json.Marshal(standin.CoversRequest{ApprovalID: a.ID, Function: a.Call.Function}) // strings: cannot fail
	target := strings.TrimRight(backendURL, "/") + standin.CoversPath
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(q))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 15 * time.Second}).Do(req)
	if err != nil {
		return nil, fmt.Errorf("ask the stand-in backend at %s for a grant (is bot backend running?): %w", target, err)
	}
	defer resp.Body.Close()
	var ans standin.CoversAnswer
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&ans); err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the stand-in backend at %s answered %s: not a stand-in's answer", target, resp.Status)
	}
	if ans.GrantID == "" {
		fmt.Fprintf(stdout, "no grant covers %s: sending the request\n", a.Call.Function)
		return body, nil
	}
	type job struct {
		ID    string `json:"id"`
		Agent string `json:"agent,omitempty"`
	}
	type call struct {
		Function   string `json:"function"`
		ArgsSHA256 string `json:"args_sha256"`
	}
	out, err := json.Marshal(map[string]any{
		"id": ev.ID + "-granted", "type": approval.EventAutoGranted, "time": now.UTC().Format(time.RFC3339Nano), "tenant": ev.Tenant,
		"data": map[string]any{"job": job{ID: a.Job.ID, Agent: a.Job.Agent}, "call": call{Function: a.Call.Function, ArgsSHA256: a.Call.ArgsSHA256},
			"policy_id": "grant", "grant_id": ans.GrantID},
	})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stdout, "grant %s covers %s: sending approval.auto_granted instead of the request\n", ans.GrantID, a.Call.Function)
	return out, nil
}
