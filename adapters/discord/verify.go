package discord

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/bwmarrin/discordgo"

	"approvalsbot/adapters/click"
)

// serveInteraction is POST /discord/interactions: it verifies the
// request, answers a PING with PONG, and otherwise answers at once (the
// response body is the interaction's first answer) and starts the work
// after the answer is written.
func (a *Adapter) serveInteraction(w http.ResponseWriter, r *http.Request) {
	body, ok := a.verified(w, r)
	if !ok {
		return
	}
	var in discordgo.Interaction
	if err := json.Unmarshal(body, &in); err != nil {
		a.refuse(w, r, http.StatusBadRequest, "the body is not an interaction", "body not an interaction")
		return
	}
	if in.AppID != a.appID {
		a.refuse(w, r, http.StatusBadRequest, "the interaction is for another application", "another application")
		return
	}
	if in.Type == discordgo.InteractionPing {
		writeAnswer(w, &discordgo.InteractionResponse{Type: discordgo.InteractionResponsePong})
		return
	}
	if a.work.Closing() {
		writeAnswer(w, ephemeral(click.SayShuttingDown))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), answerBudget)
	answer, next := a.interaction(ctx, &in)
	cancel()
	if answer == nil {
		a.refuse(w, r, http.StatusBadRequest, "the bot takes no interaction of this type", "interaction type "+in.Type.String())
		return
	}
	writeAnswer(w, answer)
	// The work follows up through the interaction's webhook, which
	// Discord opens once it has this answer: send it first.
	_ = http.NewResponseController(w).Flush()
	if !a.work.Start(next) {
		a.log.Warn("discord: work after an answer dropped: shutting down", "discord_user", userOf(&in))
	}
}

func writeAnswer(w http.ResponseWriter, answer *discordgo.InteractionResponse) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(answer)
}

// verified reads a request's body once, bounded, and checks Discord's
// signature on exactly those bytes before anything is parsed: Ed25519
// over the timestamp and the body with the application's public key,
// the timestamp within five minutes of now (discordgo.VerifyInteraction
// does not check its age), and that the same signed request was not seen
// before. Discord sends a badly signed request when the endpoint URL is
// saved and wants 401 for it. On failure it has answered (401, 413, 415)
// and returns false.
func (a *Adapter) verified(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			a.refuse(w, r, http.StatusRequestEntityTooLarge, "the request body is over 1 MiB", "body over 1 MiB")
			return nil, false
		}
		a.refuse(w, r, http.StatusBadRequest, "the request body could not be read", "body unreadable")
		return nil, false
	}
	ts := r.Header.Get("X-Signature-Timestamp")
	sig, err := hex.DecodeString(r.Header.Get("X-Signature-Ed25519"))
	if ts == "" || err != nil || len(sig) != ed25519.SignatureSize {
		a.refuse(w, r, http.StatusUnauthorized, "invalid request signature", "signature headers missing or malformed")
		return nil, false
	}
	if !ed25519.Verify(a.publicKey, append([]byte(ts), body...), sig) {
		a.refuse(w, r, http.StatusUnauthorized, "invalid request signature", "signature does not match")
		return nil, false
	}
	secs, err := strconv.ParseInt(ts, 10, 64)
	now := a.now()
	if err != nil {
		a.refuse(w, r, http.StatusUnauthorized, "invalid request signature", "timestamp not a number")
		return nil, false
	}
	if age := now.Sub(time.Unix(secs, 0)); age > signatureWindow || age < -signatureWindow {
		a.refuse(w, r, http.StatusUnauthorized, "the request is too old", "timestamp outside the 5-minute window")
		return nil, false
	}
	if !a.replay.First(hex.EncodeToString(sig), now) {
		a.refuse(w, r, http.StatusUnauthorized, "the request was sent before", "replayed")
		return nil, false
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		a.refuse(w, r, http.StatusUnsupportedMediaType, "want application/json", "wrong content type")
		return nil, false
	}
	return body, true
}

// refuse answers a request that is not processed, and logs why (never a
// signature, a token or a body).
func (a *Adapter) refuse(w http.ResponseWriter, r *http.Request, status int, text, reason string) {
	a.log.Warn("discord: request refused", "path", r.URL.Path, "status", status, "reason", reason)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, text+"\n")
}
