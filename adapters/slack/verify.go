package slack

import (
	"context"
	"encoding/hex"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	slackgo "github.com/slack-go/slack"

	"approvalsbot/internal/bodybudget"
	"approvalsbot/say"
	"approvalsbot/threads"
)

// verified reads a request's body once, bounded, and before anything is
// parsed checks Slack's signature on those bytes within the 5-minute
// window (slack-go's SecretsVerifier) and that no replica saw it before
// (package replay). On failure it has answered and returns false.
func (a *Adapter) verified(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	secret := a.secret
	if secret == "" {
		a.refuse(w, r, http.StatusUnauthorized, "this bot has no Slack signing secret configured", "no signing secret configured")
		return nil, false
	}
	body, err := bodybudget.Read(w, r, maxRequestBody)
	if err != nil {
		if errors.Is(err, bodybudget.ErrBusy) {
			a.refuse(w, r, http.StatusServiceUnavailable, "too many unsigned requests are being read; retry later", "body budget spent")
			return nil, false
		}
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			a.refuse(w, r, http.StatusRequestEntityTooLarge, "the request body is over 1 MiB", "body over 1 MiB")
			return nil, false
		}
		a.refuse(w, r, http.StatusBadRequest, "the request body could not be read", "body unreadable")
		return nil, false
	}
	sv, err := slackgo.NewSecretsVerifier(r.Header, secret)
	if err != nil {
		reason := "bad signature headers"
		switch {
		case errors.Is(err, slackgo.ErrMissingHeaders):
			reason = "signature headers missing"
		case errors.Is(err, slackgo.ErrExpiredTimestamp):
			reason = "timestamp outside the 5-minute window"
		}
		a.refuse(w, r, http.StatusUnauthorized, "the request is not signed by Slack", reason)
		return nil, false
	}
	if _, err := sv.Write(body); err != nil {
		a.refuse(w, r, http.StatusUnauthorized, "the request is not signed by Slack", "signature unreadable")
		return nil, false
	}
	if err := sv.Ensure(); err != nil {
		a.refuse(w, r, http.StatusUnauthorized, "the request is not signed by Slack", "signature does not match")
		return nil, false
	}
	// The signature's bytes are the key, not its text: Slack's hex is
	// read in either letter case, so an upper-cased copy is the same
	// request. Ensure has read it, so it decodes.
	sig, _ := hex.DecodeString(strings.TrimPrefix(r.Header.Get("X-Slack-Signature"), "v0="))
	// A signed request is a person's (a click, a command): its check
	// takes a connection kept for people (threads.ForPerson).
	rctx, cancel := context.WithTimeout(threads.ForPerson(r.Context()), replayCheckBound)
	first, err := a.replay.First(rctx, sig, time.Now())
	cancel()
	if err != nil {
		a.log.Error("slack: could not check a request for a replay", "path", r.URL.Path, "err", err.Error())
		a.refuse(w, r, http.StatusServiceUnavailable, say.CannotCheck.Text(), "replay check failed")
		return nil, false
	}
	if !first {
		a.refuse(w, r, http.StatusUnauthorized, "the request was sent before", "replayed")
		return nil, false
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/x-www-form-urlencoded" {
		a.refuse(w, r, http.StatusUnsupportedMediaType, "want application/x-www-form-urlencoded", "wrong content type")
		return nil, false
	}
	return body, true
}

// refuse answers a request that is not processed, counts it, and logs
// why at most once a minute per source and reason (never a signature or
// a body).
func (a *Adapter) refuse(w http.ResponseWriter, r *http.Request, status int, text, reason string) {
	a.refusals.Refused(r, status, reason)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, text+"\n")
}
