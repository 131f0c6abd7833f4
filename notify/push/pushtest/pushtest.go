// Package pushtest holds the push services the tests talk to over
// loopback: a fake ntfy server that takes messages published as JSON as
// ntfy does, stricter where strictness finds bugs (no action but view, no
// unknown field), and a webhook receiver that checks the bot's signature
// and refuses a bad one. Each records what it took, and answers as told:
// a 429 with Retry-After, a 5xx, a dropped connection.
package pushtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"sync"
	"testing"
	"time"

	"approvalsbot/adapters/backend"
	"approvalsbot/notify/push"
)

// Answer is how a fake answers one request instead of taking it.
type Answer struct {
	// Status is the HTTP status; 0 with Drop.
	Status int
	// RetryAfter, when set, is the Retry-After header.
	RetryAfter string
	// Drop closes the connection without an answer, as a server that
	// went down does.
	Drop bool
}

// answers is a queue of Answers, taken one per request.
type answers struct {
	mu    sync.Mutex
	queue []Answer
}

func (a *answers) push(as ...Answer) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.queue = append(a.queue, as...)
}

func (a *answers) next() (Answer, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.queue) == 0 {
		return Answer{}, false
	}
	x := a.queue[0]
	a.queue = a.queue[1:]
	return x, true
}

// answer writes x, or drops the connection.
func answer(w http.ResponseWriter, x Answer) {
	if x.Drop {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	}
	if x.RetryAfter != "" {
		w.Header().Set("Retry-After", x.RetryAfter)
	}
	w.WriteHeader(x.Status)
	fmt.Fprintf(w, `{"code":%d0,"http":%d,"error":"as the test asked"}`, x.Status, x.Status)
}

// ntfyTopic is ntfy's topic rule (server/server.go).
var ntfyTopic = regexp.MustCompile(`^[-_A-Za-z0-9]{1,64}$`)

// Notice is one message the fake ntfy server took.
type Notice struct {
	push.NtfyMessage
	// Authorization is the request's header, as sent.
	Authorization string
	// Raw is the body as sent.
	Raw []byte
}

// Ntfy is a fake ntfy server.
type Ntfy struct {
	srv     *httptest.Server
	tokens  map[string]string // topic → the token it takes; none: open
	answers answers

	mu       sync.Mutex
	notices  []Notice
	requests int
	refused  []string
}

// StartNtfy serves a fake ntfy on loopback until the test ends.
// protected maps a topic to the access token it takes.
func StartNtfy(t testing.TB, protected map[string]string) *Ntfy {
	t.Helper()
	return StartNtfyAt(t, "127.0.0.1:0", protected)
}

// StartNtfyAt is StartNtfy listening at addr: a server that comes up
// where one was down.
func StartNtfyAt(t testing.TB, addr string, protected map[string]string) *Ntfy {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen at %s: %v", addr, err)
	}
	n := &Ntfy{tokens: protected}
	n.srv = httptest.NewUnstartedServer(http.HandlerFunc(n.serve))
	n.srv.Listener.Close()
	n.srv.Listener = l
	n.srv.Start()
	t.Cleanup(n.srv.Close)
	return n
}

// DownAddr is a loopback address nothing listens at now, for a server
// that is down (StartNtfyAt brings one up there).
func DownAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// URL is the server's root URL, without a trailing "/".
func (n *Ntfy) URL() string { return n.srv.URL }

// TopicURL is the URL of a topic, as a member's push address names it.
func (n *Ntfy) TopicURL(topic string) string { return n.srv.URL + "/" + topic }

// Answer queues answers for the next requests, one each, before any is
// taken.
func (n *Ntfy) Answer(as ...Answer) { n.answers.push(as...) }

// Notices are the messages taken, in order.
func (n *Ntfy) Notices() []Notice {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]Notice(nil), n.notices...)
}

// Requests counts every request, answered as told or not.
func (n *Ntfy) Requests() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.requests
}

// Refused lists why each message the fake refused was refused: what
// ntfy would refuse, and what the bot must never send.
func (n *Ntfy) Refused() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.refused...)
}

func (n *Ntfy) refuse(w http.ResponseWriter, status int, why string) {
	n.mu.Lock()
	n.refused = append(n.refused, why)
	n.mu.Unlock()
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"code":%d01,"http":%d,"error":%q}`, status, status, why)
}

func (n *Ntfy) serve(w http.ResponseWriter, r *http.Request) {
	n.mu.Lock()
	n.requests++
	n.mu.Unlock()
	if x, ok := n.answers.next(); ok {
		answer(w, x)
		return
	}
	// Published as JSON: PUT or POST to the root URL, never the topic's.
	if r.Method != http.MethodPost && r.Method != http.MethodPut {
		n.refuse(w, http.StatusMethodNotAllowed, "method "+r.Method)
		return
	}
	if r.URL.Path != "/" {
		n.refuse(w, http.StatusBadRequest, "JSON published to "+r.URL.Path+", not the root URL")
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if err != nil {
		n.refuse(w, http.StatusBadRequest, "read body: "+err.Error())
		return
	}
	var m push.NtfyMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		n.refuse(w, http.StatusBadRequest, "JSON: "+err.Error())
		return
	}
	switch {
	case !ntfyTopic.MatchString(m.Topic):
		n.refuse(w, http.StatusBadRequest, fmt.Sprintf("topic %q", m.Topic))
		return
	case len(m.Message) > push.NtfyMessageMax:
		n.refuse(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("message of %d bytes", len(m.Message)))
		return
	case m.Priority < 0 || m.Priority > 5:
		n.refuse(w, http.StatusBadRequest, fmt.Sprintf("priority %d", m.Priority))
		return
	case len(m.Actions) > push.NtfyMaxActions:
		n.refuse(w, http.StatusBadRequest, fmt.Sprintf("%d actions", len(m.Actions)))
		return
	}
	for _, a := range m.Actions {
		u, err := url.Parse(a.URL)
		switch {
		case a.Action != push.NtfyActionView:
			// ntfy takes http and broadcast actions too; the bot sends
			// none: a button must never decide.
			n.refuse(w, http.StatusBadRequest, "an action that is not view: "+a.Action)
			return
		case a.Label == "" || err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
			n.refuse(w, http.StatusBadRequest, fmt.Sprintf("a view action without a label or an http(s) URL: %+v", a))
			return
		}
	}
	auth := r.Header.Get("Authorization")
	if want, ok := n.tokens[m.Topic]; ok && auth != "Bearer "+want {
		n.refuse(w, http.StatusForbidden, "topic "+m.Topic+" without its token")
		return
	}
	n.mu.Lock()
	n.notices = append(n.notices, Notice{NtfyMessage: m, Authorization: auth, Raw: raw})
	n.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"m%d","time":%d,"event":"message","topic":%q}`, len(n.Notices()), time.Now().Unix(), m.Topic)
}

// Hook is one body the webhook receiver took.
type Hook struct {
	push.WebhookBody
	// Signature is the Approvals-Signature header, as sent.
	Signature string
	// Raw is the body as sent.
	Raw []byte
}

// Webhook is a webhook receiver that takes only bodies signed with one
// of its secrets, within five minutes of its clock.
type Webhook struct {
	srv      *httptest.Server
	verifier backend.Verifier
	answers  answers

	mu      sync.Mutex
	hooks   []Hook
	refused []string
}

// StartWebhook serves a webhook on loopback until the test ends; now is
// its clock (nil: time.Now).
func StartWebhook(t testing.TB, secrets [][]byte, now func() time.Time) *Webhook {
	t.Helper()
	h := &Webhook{verifier: backend.Verifier{Secrets: secrets, Now: now}}
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.srv.Close)
	return h
}

// URL is where the webhook takes bodies.
func (h *Webhook) URL() string { return h.srv.URL + "/hooks/approvals" }

// Answer queues answers for the next requests.
func (h *Webhook) Answer(as ...Answer) { h.answers.push(as...) }

// Hooks are the bodies taken, in order.
func (h *Webhook) Hooks() []Hook {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Hook(nil), h.hooks...)
}

// Refused lists why each body was refused.
func (h *Webhook) Refused() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.refused...)
}

func (h *Webhook) serve(w http.ResponseWriter, r *http.Request) {
	if x, ok := h.answers.next(); ok {
		answer(w, x)
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, backend.MaxBody))
	refuse := func(status int, why string) {
		h.mu.Lock()
		h.refused = append(h.refused, why)
		h.mu.Unlock()
		http.Error(w, why, status)
	}
	switch {
	case err != nil:
		refuse(http.StatusBadRequest, "read body: "+err.Error())
		return
	case r.Method != http.MethodPost || r.URL.Path != "/hooks/approvals":
		refuse(http.StatusNotFound, r.Method+" "+r.URL.Path)
		return
	}
	sig := r.Header.Get(backend.SignatureHeader)
	if err := h.verifier.Verify(sig, raw); err != nil {
		refuse(http.StatusUnauthorized, err.Error())
		return
	}
	var b push.WebhookBody
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil || b.Type != push.WebhookType {
		refuse(http.StatusBadRequest, fmt.Sprintf("body: %v (type %q)", err, b.Type))
		return
	}
	h.mu.Lock()
	h.hooks = append(h.hooks, Hook{WebhookBody: b, Signature: sig, Raw: raw})
	h.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}
