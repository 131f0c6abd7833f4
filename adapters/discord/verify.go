package discord

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"time"

	"approvalsbot/internal/bodybudget"
	"approvalsbot/internal/strictjson"
	"approvalsbot/say"
	"approvalsbot/threads"
)

// serveInteraction is POST /discord/interactions: verified, PING answered
// with PONG, a replay refused, the first answer in the response body.
func (a *Adapter) serveInteraction(w http.ResponseWriter, r *http.Request) {
	body, sig, now, ok := a.verified(w, r)
	if !ok {
		return
	}
	// A body with a key twice has two readings; Discord sends none, so it
	// is refused (docs/design.md#json-with-one-reading).
	if err := strictjson.Check(body, nil); err != nil {
		var ke *strictjson.KeyError
		if errors.As(err, &ke) {
			a.refuse(w, r, http.StatusBadRequest, "the body is not one interaction: "+ke.Error(), "duplicate key")
			return
		}
		a.refuse(w, r, http.StatusBadRequest, "the body is not an interaction", "body not an interaction")
		return
	}
	var in inbound
	if err := json.Unmarshal(body, &in); err != nil || in.Type == 0 {
		a.refuse(w, r, http.StatusBadRequest, "the body is not an interaction", "body not an interaction")
		return
	}
	if in.ApplicationID != a.appID {
		a.refuse(w, r, http.StatusBadRequest, "the interaction is for another application", "another application")
		return
	}
	if in.Type == interactionPing {
		// A PING changes nothing: answered without the replay check, so
		// saving the endpoint URL works while the store is slow.
		writeAnswer(w, &answer{Type: answerPong})
		return
	}
	// The replay check spends part of the answer's budget, bounded so a
	// slow store still leaves the record its own.
	ctx, cancel := context.WithTimeout(r.Context(), answerBudget)
	defer cancel()
	// A signed request is a person's: its check takes a connection kept
	// for people (threads.ForPerson).
	rctx, rcancel := context.WithTimeout(threads.ForPerson(ctx), replayCheckBound)
	first, err := a.replay.First(rctx, sig, now)
	rcancel()
	if err != nil {
		// Nothing is done, and the person is told so: the same answer to
		// a replay would tell its sender nothing either.
		a.log.Error("discord: could not check a request for a replay", "discord_user", in.user(), "err", err.Error())
		writeAnswer(w, ephemeral(say.CannotCheck.Text()))
		return
	}
	if !first {
		a.refuse(w, r, http.StatusUnauthorized, "the request was sent before", "replayed")
		return
	}
	if a.work.Closing() {
		writeAnswer(w, ephemeral(say.ShuttingDown.Text()))
		return
	}
	ans, next := a.interaction(ctx, &in)
	cancel()
	if ans == nil {
		a.refuse(w, r, http.StatusBadRequest, "the bot takes no interaction of this type", fmt.Sprintf("interaction type %d", in.Type))
		return
	}
	writeAnswer(w, ans)
	// The work follows up through the interaction's webhook, which
	// Discord opens once it has this answer: send it first.
	_ = http.NewResponseController(w).Flush()
	if !a.work.Start(next) {
		a.log.Warn("discord: work after an answer dropped: shutting down", "discord_user", in.user())
	}
}

func writeAnswer(w http.ResponseWriter, ans *answer) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(ans)
}

// verified reads a request's body once, bounded, and before anything is
// parsed checks Ed25519 over the timestamp and those bytes, and the
// timestamp's age (discordgo does not). It returns the body, the
// signature's bytes (the replay key) and when it checked; on failure it
// has answered (401, which Discord tests for) and returns false.
func (a *Adapter) verified(w http.ResponseWriter, r *http.Request) (body, sig []byte, now time.Time, ok bool) {
	body, err := bodybudget.Read(w, r, maxRequestBody)
	if err != nil {
		if errors.Is(err, bodybudget.ErrBusy) {
			a.refuse(w, r, http.StatusServiceUnavailable, "too many unsigned requests are being read; retry later", "body budget spent")
			return nil, nil, time.Time{}, false
		}
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			a.refuse(w, r, http.StatusRequestEntityTooLarge, "the request body is over 1 MiB", "body over 1 MiB")
			return nil, nil, time.Time{}, false
		}
		a.refuse(w, r, http.StatusBadRequest, "the request body could not be read", "body unreadable")
		return nil, nil, time.Time{}, false
	}
	ts := r.Header.Get("X-Signature-Timestamp")
	sig, err = hex.DecodeString(r.Header.Get("X-Signature-Ed25519"))
	if ts == "" || err != nil || len(sig) != ed25519.SignatureSize {
		a.refuse(w, r, http.StatusUnauthorized, "invalid request signature", "signature headers missing or malformed")
		return nil, nil, time.Time{}, false
	}
	if !ed25519.Verify(a.publicKey, append([]byte(ts), body...), sig) {
		a.refuse(w, r, http.StatusUnauthorized, "invalid request signature", "signature does not match")
		return nil, nil, time.Time{}, false
	}
	secs, err := strconv.ParseInt(ts, 10, 64)
	now = a.now()
	if err != nil {
		a.refuse(w, r, http.StatusUnauthorized, "invalid request signature", "timestamp not a number")
		return nil, nil, time.Time{}, false
	}
	if age := now.Sub(time.Unix(secs, 0)); age > signatureWindow || age < -signatureWindow {
		a.refuse(w, r, http.StatusUnauthorized, "the request is too old", "timestamp outside the 5-minute window")
		return nil, nil, time.Time{}, false
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		a.refuse(w, r, http.StatusUnsupportedMediaType, "want application/json", "wrong content type")
		return nil, nil, time.Time{}, false
	}
	return body, sig, now, true
}

// refuse answers a request that is not processed, counts it, and logs
// why at most once a minute per source and reason (never a signature, a
// token or a body).
func (a *Adapter) refuse(w http.ResponseWriter, r *http.Request, status int, text, reason string) {
	a.refusals.Refused(r, status, reason)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, text+"\n")
}
