package backend

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"mime"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"approvalsbot/approval"
	"approvalsbot/internal/bodybudget"
	"approvalsbot/internal/refusal"
	"approvalsbot/store"
	"approvalsbot/threads"
)

// Ingester takes a verified, parsed event and returns once it is committed.
type Ingester interface {
	Ingest(ctx context.Context, req threads.IngestRequest) (threads.IngestResult, error)
}

// HandlerOptions configure the events endpoint.
type HandlerOptions struct {
	Verifier Verifier // events secrets
	Ingester Ingester
	Logger   *slog.Logger
	Registry prometheus.Registerer // nil: no metrics registered
	// IPv6Prefix names a refusal's source (0: connlimit.DefaultIPv6Prefix).
	IPv6Prefix int
}

// Handler serves POST /v1/events with every answer of docs/protocol.md's table.
type Handler struct {
	verifier Verifier
	ingester Ingester
	log      *slog.Logger
	refusals *refusal.Log // bad signatures: one line per source and reason a minute
	events   *prometheus.CounterVec
}

// NewHandler builds the events endpoint.
func NewHandler(o HandlerOptions) *Handler {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	h := &Handler{verifier: o.Verifier, ingester: o.Ingester, log: o.Logger,
		refusals: refusal.New(refusal.Options{Logger: o.Logger, Message: "events refused: bad signature",
			IPv6Prefix: o.IPv6Prefix}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bot_events_total",
			Help: "Events received on POST /v1/events, by type (unparsed before parsing) and answer.",
		}, []string{"type", "answer"})}
	if o.Registry != nil {
		o.Registry.MustRegister(h.events)
	}
	// Series an alert watches start at 0, so the first bad signature or
	// store outage after a start is a rise.
	h.events.WithLabelValues(typeUnparsed, codeBadSig)
	for _, typ := range approval.EventTypes() {
		h.events.WithLabelValues(string(typ), codeUnavailable)
	}
	return h
}

// Answers of the events endpoint (docs/protocol.md).
const (
	codeBadJSON     = "bad_json"
	codeBadSig      = "bad_signature"
	codeTooLarge    = "too_large"
	codeMediaType   = "unsupported_media_type"
	codeInvalid     = "invalid"
	codeUnknown     = "unknown_tenant"
	codeUnavailable = "unavailable"
	typeUnparsed    = "unparsed"
)

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		h.fail(w, typeUnparsed, http.StatusMethodNotAllowed, "method_not_allowed", "use POST")
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		h.fail(w, typeUnparsed, http.StatusUnsupportedMediaType, codeMediaType, "send the event as Content-Type: application/json")
		return
	}
	if r.ContentLength > MaxBody {
		h.fail(w, typeUnparsed, http.StatusRequestEntityTooLarge, codeTooLarge, "the body is over 1 MiB; an event is at most 1 MiB")
		return
	}
	// Read once, within the unsigned-bytes budget; verified before parsing.
	body, err := bodybudget.Read(w, r, MaxBody)
	var tooBig *http.MaxBytesError
	switch {
	case errors.Is(err, bodybudget.ErrBusy):
		h.fail(w, typeUnparsed, http.StatusServiceUnavailable, codeUnavailable, "the bot is reading too many unsigned bodies; retry later")
		return
	case errors.As(err, &tooBig):
		h.fail(w, typeUnparsed, http.StatusRequestEntityTooLarge, codeTooLarge, "the body is over 1 MiB; an event is at most 1 MiB")
		return
	case err != nil:
		h.fail(w, typeUnparsed, http.StatusBadRequest, codeBadJSON, "the body could not be read")
		return
	}
	if err := h.verifier.Verify(r.Header.Get(SignatureHeader), body); err != nil {
		h.refusals.Refused(r.RemoteAddr, err.Error()) // a reason of a fixed set, never what was sent
		h.fail(w, typeUnparsed, http.StatusUnauthorized, codeBadSig,
			"the Approvals-Signature header is missing, malformed, too old or made with another secret")
		return
	}
	ev, err := approval.Parse(body)
	if err != nil {
		var ve *approval.ValidationError
		if errors.As(err, &ve) {
			h.fail(w, typeUnparsed, http.StatusUnprocessableEntity, codeInvalid, ve.Error())
			return
		}
		h.fail(w, typeUnparsed, http.StatusBadRequest, codeBadJSON, parseMessage(err))
		return
	}
	sum := sha256.Sum256(body)
	res, err := h.ingester.Ingest(r.Context(), threads.IngestRequest{Event: ev, BodySHA256: hex.EncodeToString(sum[:])})
	typ := string(ev.Type)
	log := h.log.With("event_id", ev.ID, "type", typ, "tenant", ev.Tenant, "approval_id", ev.ApprovalID())
	var ve *approval.ValidationError
	switch {
	case errors.Is(err, threads.ErrUnknownTenant):
		h.fail(w, typ, http.StatusUnprocessableEntity, codeUnknown, "tenant: no tenant "+quote(ev.Tenant)+" is configured in this bot")
	case errors.Is(err, threads.ErrIDReused):
		h.fail(w, typ, http.StatusUnprocessableEntity, codeInvalid,
			"id: "+ev.ID+" was accepted before with a different body; an event id names one event")
	case errors.Is(err, threads.ErrForeignApproval):
		h.fail(w, typ, http.StatusUnprocessableEntity, codeInvalid, "data: approval "+ev.ApprovalID()+" belongs to another tenant")
	case errors.As(err, &ve): // a request's times out of bounds
		h.fail(w, typ, http.StatusUnprocessableEntity, codeInvalid, ve.Error())
	case err != nil:
		if !errors.Is(err, store.ErrUnavailable) && !errors.Is(err, context.Canceled) {
			log.Error("event not committed", "err", err)
		} else {
			log.Warn("event not committed: store unavailable", "err", err)
		}
		h.fail(w, typ, http.StatusServiceUnavailable, codeUnavailable, "the bot cannot store events right now; retry later")
	case res.Duplicate:
		h.events.WithLabelValues(typ, "duplicate").Inc()
		writeJSON(w, http.StatusOK, map[string]string{"status": "duplicate"})
	default:
		if res.Ignored != "" {
			log.Info("event accepted; changed nothing", "why", res.Ignored)
		} else {
			log.Info("event accepted")
		}
		h.events.WithLabelValues(typ, "accepted").Inc()
		writeJSON(w, http.StatusAccepted, map[string]string{"status": "accepted"})
	}
}

// parseMessage words a bad-JSON error for the sender without echoing input.
func parseMessage(err error) string {
	msg := err.Error()
	const prefix = "bad json: "
	if len(msg) > len(prefix) && msg[:len(prefix)] == prefix {
		msg = msg[len(prefix):]
	}
	if len(msg) > 200 {
		msg = msg[:200]
	}
	return "the body is not a JSON event object: " + msg
}

func quote(s string) string {
	b, _ := json.Marshal(s) // a string always encodes
	return string(b)
}

func (h *Handler) fail(w http.ResponseWriter, typ string, status int, code, message string) {
	h.events.WithLabelValues(typ, code).Inc()
	writeJSON(w, status, map[string]string{"error": code, "message": message})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client may be gone; nothing to do
}
