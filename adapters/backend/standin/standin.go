// Package standin is a stand-in job backend for trying the bot on one
// machine (`bot backend`): it answers the bot's calls out as docs/protocol.md
// says the real backend does, checks every signature, prints each
// decision it receives, and answers argument look-ups from a folder of
// argument files, so an integrator or a newcomer can see a card, decide
// it and see the decision arrive without a job platform.
//
// It keeps what it is told in memory: the first decision of an approval
// wins, a later one is answered already_decided, a retry with the same
// Idempotency-Key gets the first answer again. An approval whose
// arguments it knows is checked against the digest a decision carries.
package standin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"approvalsbot/adapters/backend"
	"approvalsbot/approval"
	"approvalsbot/internal/strictjson"
)

// Options configure New.
type Options struct {
	// Secrets verify the bot's calls (backend.calls_secrets). Required.
	Secrets [][]byte
	// Arguments is a folder of argument files (ID.json, ID.rN.json for
	// revision N, each {"arguments": {…}}, and for a changeset
	// "changes": {"files": […], "patch": "…"}, answered with its
	// patch_sha256); "" knows none.
	Arguments string
	// Out gets one line per call; nil discards.
	Out io.Writer
	// Now is the clock for signatures; nil uses time.Now.
	Now func() time.Time
}

// Backend is the stand-in's handler.
type Backend struct {
	verifier  backend.Verifier
	arguments string
	out       io.Writer

	mu        sync.Mutex
	decided   map[string]decided // by approval id
	idempoten map[string][]byte  // answers by approval id and key
}

type decided struct {
	status, actor string
}

// New checks o and builds the backend.
func New(o Options) (*Backend, error) {
	if len(o.Secrets) == 0 {
		return nil, errors.New("standin: at least one calls secret is required")
	}
	if o.Arguments != "" {
		if fi, err := os.Stat(o.Arguments); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("standin: arguments folder %s: not a folder", o.Arguments)
		}
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	return &Backend{verifier: backend.Verifier{Secrets: o.Secrets, Now: o.Now}, arguments: o.Arguments, out: o.Out,
		decided: map[string]decided{}, idempoten: map[string][]byte{}}, nil
}

// maxBody bounds a call's body, as the real backend does.
const maxBody = 1 << 20

// ServeHTTP answers POST /v1/approvals/{id}/decision and /arguments.
func (b *Backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/v1/approvals/")
	id, what, _ := strings.Cut(rest, "/")
	if !ok || id == "" || (what != "decision" && what != "arguments") {
		b.answer(w, http.StatusNotFound, map[string]any{"error": "not_found", "message": "no such endpoint: " + r.URL.Path})
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		b.answer(w, http.StatusMethodNotAllowed, map[string]any{"error": "method_not_allowed", "message": "use POST"})
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		b.answer(w, http.StatusRequestEntityTooLarge, map[string]any{"error": "too_large", "message": "the body is over 1 MiB"})
		return
	}
	if err := b.verifier.Verify(r.Header.Get(backend.SignatureHeader), body); err != nil {
		fmt.Fprintf(b.out, "refused a call to %s: %v\n", r.URL.Path, err)
		b.answer(w, http.StatusUnauthorized, map[string]any{"error": "bad_signature", "message": err.Error()})
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		b.answer(w, http.StatusUnsupportedMediaType, map[string]any{"error": "unsupported_media_type", "message": "send application/json"})
		return
	}
	key := r.Header.Get("Idempotency-Key")
	if key == "" {
		b.answer(w, http.StatusBadRequest, map[string]any{"error": "missing_idempotency_key", "message": "send an Idempotency-Key header"})
		return
	}
	if what == "decision" {
		b.decision(w, id, key, body)
		return
	}
	b.lookup(w, id, body)
}

type decisionBody struct {
	ApprovalID string  `json:"approval_id"`
	Revision   int     `json:"revision"`
	Decision   string  `json:"decision"`
	Actor      string  `json:"actor"`
	Via        via     `json:"via"`
	Comment    string  `json:"comment,omitempty"`
	ArgsSHA256 *string `json:"args_sha256,omitempty"`
}

type via struct {
	Surface string `json:"surface"`
	User    string `json:"user,omitempty"`
}

var digestPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

func (b *Backend) decision(w http.ResponseWriter, id, key string, body []byte) {
	var d decisionBody
	if err := decode(body, &d, decisionSchema); err != nil {
		b.answer(w, http.StatusUnprocessableEntity, map[string]any{"error": "invalid", "message": err.Error()})
		return
	}
	switch {
	case d.ApprovalID != id || d.Revision < 1 || d.Actor == "" || d.Via.Surface == "" ||
		(d.Decision != backend.Approve && d.Decision != backend.Deny) ||
		(d.ArgsSHA256 != nil && !digestPattern.MatchString(*d.ArgsSHA256)):
		b.answer(w, http.StatusUnprocessableEntity, map[string]any{"error": "invalid",
			"message": "want approval_id (the path's), revision ≥ 1, decision approve|deny, actor, via.surface, args_sha256 sha256:<hex>"})
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	replay := id + "\x00" + key
	if prev, ok := b.idempoten[replay]; ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(prev)
		return
	}
	if prev, ok := b.decided[id]; ok {
		fmt.Fprintf(b.out, "%s %s revision %d by %s: refused, already %s by %s\n", d.Decision, id, d.Revision, d.Actor, prev.status, prev.actor)
		b.answer(w, http.StatusConflict, map[string]any{"error": "already_decided", "status": prev.status, "actor": prev.actor,
			"message": "already " + prev.status + " by " + prev.actor})
		return
	}
	if d.ArgsSHA256 != nil {
		if _, digest, _, ok := b.argumentsOf(id, d.Revision); ok && digest != *d.ArgsSHA256 {
			fmt.Fprintf(b.out, "%s %s revision %d by %s: refused, digest %s is not the arguments' %s\n",
				d.Decision, id, d.Revision, d.Actor, *d.ArgsSHA256, digest)
			b.answer(w, http.StatusUnprocessableEntity, map[string]any{"error": "digest_mismatch",
				"message": fmt.Sprintf("approval %s is not for the arguments %s you decided on: look at the call again", id, *d.ArgsSHA256)})
			return
		}
	}
	status := map[string]string{backend.Approve: "approved", backend.Deny: "denied"}[d.Decision]
	b.decided[id] = decided{status: status, actor: d.Actor}
	line := fmt.Sprintf("%s %s revision %d by %s via %s", status, id, d.Revision, d.Actor, d.Via.Surface)
	if d.Via.User != "" {
		line += " (" + d.Via.User + ")"
	}
	if d.Comment != "" {
		line += fmt.Sprintf(": %q", d.Comment)
	}
	if d.ArgsSHA256 != nil {
		line += " · bound to " + *d.ArgsSHA256
	}
	fmt.Fprintln(b.out, line)
	ans, _ := json.Marshal(map[string]string{"status": status, "message": status + " by " + d.Actor + " (recorded by the stand-in backend)"})
	b.idempoten[replay] = ans
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(ans)
}

type lookupBody struct {
	ApprovalID string `json:"approval_id"`
	Revision   int    `json:"revision"`
	Actor      string `json:"actor"`
}

func (b *Backend) lookup(w http.ResponseWriter, id string, body []byte) {
	var l lookupBody
	if err := decode(body, &l, lookupSchema); err != nil || l.ApprovalID != id || l.Revision < 1 || l.Actor == "" {
		b.answer(w, http.StatusUnprocessableEntity, map[string]any{"error": "invalid", "message": "want approval_id (the path's), revision ≥ 1, actor"})
		return
	}
	args, digest, changes, ok := b.argumentsOf(id, l.Revision)
	if !ok {
		fmt.Fprintf(b.out, "arguments of %s revision %d for %s: none in the arguments folder\n", id, l.Revision, l.Actor)
		b.answer(w, http.StatusNotFound, map[string]any{"error": "not_found", "message": "the stand-in backend has no arguments for " + id})
		return
	}
	fmt.Fprintf(b.out, "arguments of %s revision %d shown to %s\n", id, l.Revision, l.Actor)
	ans := map[string]any{"arguments": args, "args_sha256": digest}
	if changes != nil {
		ans["changes"] = changes
	}
	b.answer(w, http.StatusOK, ans)
}

// argumentsOf reads an approval's arguments from the folder: ID.rN.json
// for revision N > 1, else ID.json; and its changeset, when the file has
// one, with patch_sha256 the SHA-256 of the patch's bytes.
func (b *Backend) argumentsOf(id string, revision int) (json.RawMessage, string, *backend.ChangesAnswer, bool) {
	if b.arguments == "" || strings.ContainsAny(id, `/\`) || strings.HasPrefix(id, ".") {
		return nil, "", nil, false
	}
	names := []string{id + ".json"}
	if revision > 1 {
		names = []string{fmt.Sprintf("%s.r%d.json", id, revision)}
	}
	for _, n := range names {
		raw, err := os.ReadFile(filepath.Join(b.arguments, n))
		if err != nil {
			continue
		}
		var fx struct {
			Arguments json.RawMessage        `json:"arguments"`
			Changes   *backend.ChangesAnswer `json:"changes"`
		}
		if json.Unmarshal(raw, &fx) != nil || len(fx.Arguments) == 0 {
			continue
		}
		digest, err := approval.Digest(fx.Arguments)
		if err != nil {
			continue
		}
		if fx.Changes != nil {
			sum := sha256.Sum256([]byte(fx.Changes.Patch))
			fx.Changes.PatchSHA256 = "sha256:" + hex.EncodeToString(sum[:])
		}
		return fx.Arguments, digest, fx.Changes, true
	}
	return nil, "", nil, false
}

var (
	decisionSchema = strictjson.For[decisionBody]()
	lookupSchema   = strictjson.For[lookupBody]()
)

// decode reads body as the real backend does: one JSON object, no key
// twice or in another case, no field the protocol does not name.
func decode(body []byte, v any, schema *strictjson.Schema) error {
	if err := strictjson.Check(body, schema); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("body: %w", err)
	}
	if dec.More() {
		return errors.New("body: more than one JSON value")
	}
	return nil
}

func (b *Backend) answer(w http.ResponseWriter, status int, v map[string]any) {
	body, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
