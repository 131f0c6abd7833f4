package push

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"approvalsbot/adapters/backend"
	"approvalsbot/tenant"
	"approvalsbot/threads"
)

// serviceWebhook names a webhook in errors.
const serviceWebhook = "webhook"

// WebhookType is the type of every body the bot posts to a webhook.
const WebhookType = "approval.push"

// WebhookBody is what the bot posts to a member's webhook, signed in the
// Approvals-Signature header as the bot signs its calls to the job
// backend (docs/protocol.md, "Signatures"): "t=<unix seconds>,v1=<hex
// HMAC-SHA256(secret, t + "." + body)>", one v1 per secret while they
// rotate. A receiver checks it, refuses a t more than 300 s from its
// clock, and may drop a notice whose id it has had (a repeat after a
// crash carries the same).
type WebhookBody struct {
	Type       string `json:"type"` // WebhookType
	ID         string `json:"id"`
	Tenant     string `json:"tenant"`
	ApprovalID string `json:"approval_id"`
	Revision   int    `json:"revision"`
	// Member is the tenant user the notice is for.
	Member string `json:"member"`
	// Title and Message are the notice as a phone shows it, plain text.
	Title   string `json:"title"`
	Message string `json:"message"`
	// Function is the call's function, cleaned and cut as the title
	// shows it; Destructive says the card says DESTRUCTIVE.
	Function    string `json:"function"`
	Destructive bool   `json:"destructive"`
	// Deadline is when nobody deciding denies the call (RFC 3339, UTC);
	// absent when unknown.
	Deadline string `json:"deadline,omitempty"`
	// URL opens the member's decision page, a GET that decides nothing;
	// absent when they have none (the message says where to decide).
	URL string `json:"url,omitempty"`
}

// WebhookBodyOf is the body of req.
func WebhookBodyOf(req threads.PushRequest) WebhookBody {
	n := req.Notice
	b := WebhookBody{Type: WebhookType, ID: req.Key, Tenant: req.Tenant, ApprovalID: req.ApprovalID, Revision: req.Revision,
		Member: req.Member, Title: n.Title, Message: n.Message(), Function: n.Function, Destructive: n.Destructive, URL: n.Link}
	if !n.Deadline.IsZero() {
		b.Deadline = n.Deadline.UTC().Format(time.RFC3339)
	}
	return b
}

func (s *Sender) webhook(ctx context.Context, addr tenant.PushAddress, req threads.PushRequest) error {
	if len(addr.Secrets) == 0 {
		return threads.Permanent(fmt.Errorf("push to webhook: %s's webhook has no secret to sign with", req.Member))
	}
	body, err := json.Marshal(WebhookBodyOf(req))
	if err != nil {
		return threads.Permanent(fmt.Errorf("push to webhook: encode: %w", err))
	}
	r, err := http.NewRequest(http.MethodPost, addr.URL, bytes.NewReader(body))
	if err != nil {
		return threads.Permanent(fmt.Errorf("push to webhook: %w", withoutURL(err)))
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set(backend.SignatureHeader, backend.SignAll(addr.Secrets, s.now(), body))
	return s.send(ctx, serviceWebhook, r)
}
