// Package slacktest is a fake Slack Web API for tests: an httptest server
// on loopback that speaks the methods the bot calls the way Slack does
// (form bodies with the token in them for chat.* and conversations.*, JSON
// with a Bearer header for views.*, GET for chat.getPermalink), checks the
// token, mints a unique ts per message, enforces Slack's per-channel pace
// of chat.postMessage and the workspace's of chat.update with 429 and
// Retry-After, answers response_url posts
// (an answer to one person, or with replace_original the message the
// response_url belongs to, replaced for everyone, five uses a URL), serves
// a Socket Mode WebSocket, and records everything so tests assert on what
// Slack would have shown.
//
// Point slack-go at it with slack.OptionAPIURL(s.APIURL()). The fake is
// stricter than Slack where strictness finds bugs: a message whose blocks
// break a Block Kit limit is refused with invalid_blocks, and a thread_ts
// that names no message of the channel with thread_not_found.
package slacktest

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"

	"golang.org/x/time/rate"
)

// Block Kit limits the fake enforces
// (https://api.slack.com/reference/block-kit/blocks).
const (
	maxBlocks          = 50
	sectionTextMax     = 3000
	headerTextMax      = 150
	buttonTextMax      = 75
	buttonValueMax     = 2000
	actionIDMax        = 255
	modalTitleMax      = 24
	privateMetadataMax = 3000
	// A static_select's options, their text and value, and its
	// placeholder: https://docs.slack.dev/reference/block-kit/composition-objects/option-object
	optionsMax     = 100
	optionTextMax  = 75
	optionValueMax = 150
	placeholderMax = 150
	// textInputMax bounds a plain_text_input's max_length:
	// https://docs.slack.dev/reference/block-kit/block-elements/plain-text-input-element
	textInputMax = 3000
	// responseURLUses: a response_url takes five posts
	// (https://api.slack.com/interactivity/handling#message_responses).
	responseURLUses = 5
)

// Options configures New.
type Options struct {
	// Token is the bot token every Web API call must carry; required.
	Token string
	// AppToken is the app-level token apps.connections.open takes; empty
	// refuses Socket Mode with invalid_auth.
	AppToken string
	// Scopes are sent in the X-OAuth-Scopes header of every answer, as
	// Slack does for a bot token.
	Scopes []string
	// PostRate and PostBurst pace chat.postMessage per channel as Slack
	// does (about one a second, short bursts allowed): a post beyond them
	// gets 429 with Retry-After. Zero PostRate means no limit.
	PostRate  rate.Limit
	PostBurst int
	// UpdateRate and UpdateBurst pace chat.update across the workspace
	// as Slack does (Tier 3, about 50 a minute): an update beyond them
	// gets 429 with Retry-After. Zero UpdateRate means no limit.
	UpdateRate  rate.Limit
	UpdateBurst int
	// RetryAfter is the Retry-After of a 429, rounded up to whole seconds;
	// zero means one second.
	RetryAfter time.Duration
	// TeamURL is the workspace URL auth.test answers and permalinks start
	// with; default https://acme.slack.test/.
	TeamURL string
}

// Message is one message as Slack received it.
type Message struct {
	// Method is chat.postMessage, chat.update, chat.postEphemeral or
	// response_url.
	Method   string
	Channel  string
	User     string // chat.postEphemeral's user; a response_url's user
	TS       string
	ThreadTS string
	Text     string
	// Blocks as sent; nil for none.
	Blocks json.RawMessage
	// ResponseType, ReplaceOriginal and ResponseURL are set for
	// response_url posts; one with ReplaceOriginal carries the TS of the
	// message it replaced.
	ResponseType    string
	ReplaceOriginal bool
	ResponseURL     string
	// Unfurl is false when the sender switched link unfurling off.
	Unfurl bool
	// Received is when the fake took it, by time.Now: the bubble's clock
	// under testing/synctest (see Transport).
	Received time.Time
}

// View is one views.open call.
type View struct {
	TriggerID       string
	CallbackID      string
	Title           string
	PrivateMetadata string
	// Raw is the view object as sent.
	Raw json.RawMessage
}

// Call is one Web API call and the fake's answer.
type Call struct {
	Method  string
	Channel string
	Status  int    // HTTP status answered
	Error   string // Slack's error code; "" for ok
}

type failure struct {
	code       string
	status     int
	retryAfter time.Duration
}

type channel struct {
	id       string
	name     string
	member   bool
	archived bool
	private  bool
	dm       bool
	messages []*Message
}

type responseURL struct {
	channel, user string
	ts            string // the message it belongs to; "" for none (a slash command)
	uses          int
	expired       bool
}

// Server is the fake Slack. Its methods are safe to call while a client
// is calling it.
type Server struct {
	t   testing.TB
	o   Options
	srv *httptest.Server

	mu        sync.Mutex
	seq       int
	channels  map[string]*channel
	users     map[string]bool
	limiters  map[string]*rate.Limiter // chat.postMessage, per channel
	updates   *rate.Limiter            // chat.update, the workspace's
	failures  map[string][]failure
	responses map[string]*responseURL
	messages  []Message
	views     []View
	calls     []Call
	limited   int

	socket socketState
}

// New starts a fake Slack on 127.0.0.1, closed when the test ends.
func New(t testing.TB, o Options) *Server {
	t.Helper()
	if o.Token == "" {
		t.Fatal("slacktest.New: Options.Token is required")
	}
	if o.RetryAfter <= 0 {
		o.RetryAfter = time.Second
	}
	if o.TeamURL == "" {
		o.TeamURL = "https://acme.slack.test/"
	}
	s := &Server{t: t, o: o, channels: map[string]*channel{}, users: map[string]bool{},
		limiters: map[string]*rate.Limiter{}, failures: map[string][]failure{}, responses: map[string]*responseURL{}}
	s.socket.init()
	mux := http.NewServeMux()
	mux.HandleFunc("/socket", s.serveSocket)
	mux.HandleFunc("/response/{id}", s.serveResponseURL)
	mux.HandleFunc("/{method}", s.serveMethod)
	s.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		s.closeSockets()
		s.srv.Close()
	})
	return s
}

// URL is the server's base URL (http://127.0.0.1:port).
func (s *Server) URL() string { return s.srv.URL }

// APIURL is the Web API base for slack.OptionAPIURL and config's
// slack.api_url: URL with the trailing slash slack-go needs.
func (s *Server) APIURL() string { return s.srv.URL + "/" }

// AddChannel makes a channel known; member says whether the bot is in
// it. An id starting with G is private.
func (s *Server) AddChannel(id, name string, member bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.channels[id] = &channel{id: id, name: name, member: member, private: strings.HasPrefix(id, "G")}
}

// RemoveChannel forgets a channel: calls naming it get channel_not_found.
func (s *Server) RemoveChannel(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.channels, id)
}

// DeleteMessage deletes a message, as a person may: chat.update of it
// then gets message_not_found, a reply under it thread_not_found.
func (s *Server) DeleteMessage(channel, ts string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.channels[channel]; c != nil {
		for i, m := range c.messages {
			if m.TS == ts {
				c.messages = append(c.messages[:i:i], c.messages[i+1:]...)
				return
			}
		}
	}
}

// ArchiveChannel archives a known channel: posts then get is_archived.
func (s *Server) ArchiveChannel(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.channels[id]; c != nil {
		c.archived = true
	}
}

// AddUser makes a user known, so conversations.open can open a DM with
// them (its id is "D" + the user id).
func (s *Server) AddUser(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[id] = true
}

// ResponseURL mints a response_url served by the fake, as Slack puts in
// a slash command (or an interaction) for the user in channel, tied to no
// message. Posts to it are recorded as messages with Method response_url;
// it takes five. A replace_original through it is recorded too, but it
// names no message, so none is replaced: ResponseURLFor mints one that
// replaces its message.
func (s *Server) ResponseURL(channel, user string) string { return s.ResponseURLFor(channel, user, "") }

// ResponseURLFor mints the response_url Slack puts in a click on a button
// of the message ts in channel, by user. Like ResponseURL it answers the
// user alone and takes five posts in all; a post with replace_original
// replaces that message, for everyone who sees the channel, as chat.update
// would (Channel shows it replaced), and is recorded with the message's
// ts.
func (s *Server) ResponseURLFor(channel, user, ts string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	id := strconv.Itoa(s.seq)
	s.responses[id] = &responseURL{channel: channel, user: user, ts: ts}
	return s.srv.URL + "/response/" + id
}

// ExpireResponseURLs ends every response_url minted so far, as Slack
// does 30 minutes after the interaction that carried it: posts to them
// then get 404 expired_url.
func (s *Server) ExpireResponseURLs() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ru := range s.responses {
		ru.expired = true
	}
}

// Fail makes the next n calls of method answer {"ok":false,"error":code}
// with status 200, as Slack does for channel_not_found, invalid_auth and
// the like.
func (s *Server) Fail(method string, n int, code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.failures[method] = append(s.failures[method], failure{code: code, status: http.StatusOK})
	}
}

// FailStatus makes the next n calls of method answer the HTTP status; a
// 429 carries Retry-After of retryAfter (whole seconds) when it is > 0.
func (s *Server) FailStatus(method string, n, status int, retryAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.failures[method] = append(s.failures[method], failure{status: status, retryAfter: retryAfter,
			code: strings.ToLower(strings.ReplaceAll(http.StatusText(status), " ", "_"))})
	}
}

// Messages lists every message received (posts, ephemerals, updates,
// response_url posts) in order.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.messages...)
}

// MessagesBy lists the messages received through one method.
func (s *Server) MessagesBy(method string) []Message {
	var out []Message
	for _, m := range s.Messages() {
		if m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

// Channel lists a channel's messages as they stand now (edits applied),
// in the order they were posted; thread replies included.
func (s *Server) Channel(id string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.channels[id]
	if c == nil {
		return nil
	}
	out := make([]Message, len(c.messages))
	for i, m := range c.messages {
		out[i] = *m
	}
	return out
}

// Views lists every views.open call.
func (s *Server) Views() []View {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]View(nil), s.views...)
}

// Calls lists every Web API call and its answer.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// RateLimited counts the 429 answers the paces gave, of chat.postMessage
// and chat.update (not the injected ones).
func (s *Server) RateLimited() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.limited
}

// request is one call as read: its parameters, whichever way they came.
type request struct {
	method string
	token  string
	params url.Values
	json   map[string]json.RawMessage
}

func (r *request) get(key string) string {
	if v := r.params.Get(key); v != "" {
		return v
	}
	if raw, ok := r.json[key]; ok {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	return ""
}

func (s *Server) read(r *http.Request) (*request, error) {
	req := &request{method: r.PathValue("method"), params: url.Values{}}
	if auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		req.token = auth
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	if err != nil {
		return nil, err
	}
	req.params = r.URL.Query()
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch {
	case mt == "application/x-www-form-urlencoded":
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, fmt.Errorf("form body: %w", err)
		}
		for k, v := range form {
			req.params[k] = v
		}
	case mt == "application/json" && len(body) > 0:
		if err := json.Unmarshal(body, &req.json); err != nil {
			return nil, fmt.Errorf("json body: %w", err)
		}
	}
	if t := req.params.Get("token"); t != "" && req.token == "" {
		req.token = t
	}
	return req, nil
}

type answer struct {
	status     int
	body       map[string]any
	retryAfter time.Duration
}

func ok(fields map[string]any) answer {
	body := map[string]any{"ok": true}
	for k, v := range fields {
		body[k] = v
	}
	return answer{status: http.StatusOK, body: body}
}

func slackErr(code string) answer {
	return answer{status: http.StatusOK, body: map[string]any{"ok": false, "error": code}}
}

func (s *Server) serveMethod(w http.ResponseWriter, r *http.Request) {
	req, err := s.read(r)
	if err != nil {
		s.write(w, "", "", slackErr("invalid_form_data"))
		return
	}
	want := s.o.Token
	if req.method == "apps.connections.open" {
		want = s.o.AppToken
	}
	if want == "" || req.token != want {
		s.write(w, req.method, req.get("channel"), slackErr("invalid_auth"))
		return
	}
	if f, ok := s.nextFailure(req.method); ok {
		a := answer{status: f.status, body: map[string]any{"ok": false, "error": f.code}, retryAfter: f.retryAfter}
		s.write(w, req.method, req.get("channel"), a)
		return
	}
	var a answer
	switch req.method {
	case "auth.test":
		a = ok(map[string]any{"url": s.o.TeamURL, "team": "Acme", "user": "approvals", "team_id": "T0ACME",
			"user_id": "U0BOT", "bot_id": "B0BOT"})
	case "chat.postMessage":
		a = s.postMessage(req)
	case "chat.update":
		a = s.update(req)
	case "chat.postEphemeral":
		a = s.postEphemeral(req)
	case "chat.getPermalink":
		a = s.permalink(req)
	case "conversations.open":
		a = s.openDM(req)
	case "conversations.info":
		a = s.info(req)
	case "views.open":
		a = s.openView(req)
	case "apps.connections.open":
		a = ok(map[string]any{"url": "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/socket"})
	default:
		a = slackErr("unknown_method")
	}
	s.write(w, req.method, req.get("channel"), a)
}

func (s *Server) nextFailure(method string) (failure, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.failures[method]
	if len(q) == 0 {
		return failure{}, false
	}
	s.failures[method] = q[1:]
	return q[0], true
}

func (s *Server) write(w http.ResponseWriter, method, channel string, a answer) {
	code, _ := a.body["error"].(string)
	s.mu.Lock()
	s.calls = append(s.calls, Call{Method: method, Channel: channel, Status: a.status, Error: code})
	s.mu.Unlock()
	if len(s.o.Scopes) > 0 {
		w.Header().Set("X-OAuth-Scopes", strings.Join(s.o.Scopes, ","))
	}
	if a.status == http.StatusTooManyRequests {
		secs := int((a.retryAfter + time.Second - 1) / time.Second)
		if a.retryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
		}
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(a.status)
	_ = json.NewEncoder(w).Encode(a.body)
}

// channelFor finds a channel the bot may write to, or the error Slack gives.
func (s *Server) channelFor(id string) (*channel, string) {
	c := s.channels[id]
	switch {
	case id == "":
		return nil, "channel_not_found"
	case c == nil:
		return nil, "channel_not_found"
	case c.archived:
		return nil, "is_archived"
	case !c.member:
		return nil, "not_in_channel"
	}
	return c, ""
}

func (s *Server) postMessage(req *request) answer {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := req.get("channel")
	c, code := s.channelFor(id)
	if code != "" {
		return slackErr(code)
	}
	if s.o.PostRate > 0 {
		lim := s.limiters[id]
		if lim == nil {
			lim = rate.NewLimiter(s.o.PostRate, max(s.o.PostBurst, 1))
			s.limiters[id] = lim
		}
		if !lim.Allow() {
			return s.rateLimited()
		}
	}
	m, code := message(req)
	if code != "" {
		return slackErr(code)
	}
	if m.ThreadTS != "" && find(c, m.ThreadTS) == nil {
		return slackErr("thread_not_found")
	}
	m.Method, m.Channel, m.TS = req.method, id, s.mintTS()
	c.messages = append(c.messages, &m)
	s.messages = append(s.messages, m)
	return ok(map[string]any{"channel": id, "ts": m.TS, "message": map[string]any{"text": m.Text, "ts": m.TS}})
}

// rateLimited is a pace's 429; s.mu must be held.
func (s *Server) rateLimited() answer {
	s.limited++
	return answer{status: http.StatusTooManyRequests, body: map[string]any{"ok": false, "error": "ratelimited"},
		retryAfter: s.o.RetryAfter}
}

func (s *Server) update(req *request) answer {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := req.get("channel")
	c := s.channels[id]
	if c == nil {
		return slackErr("channel_not_found")
	}
	if s.o.UpdateRate > 0 {
		if s.updates == nil {
			s.updates = rate.NewLimiter(s.o.UpdateRate, max(s.o.UpdateBurst, 1))
		}
		if !s.updates.Allow() {
			return s.rateLimited()
		}
	}
	old := find(c, req.get("ts"))
	if old == nil {
		return slackErr("message_not_found")
	}
	m, code := message(req)
	if code != "" {
		return slackErr(code)
	}
	old.Text, old.Blocks = m.Text, m.Blocks
	m.Method, m.Channel, m.TS, m.ThreadTS = req.method, id, old.TS, old.ThreadTS
	s.messages = append(s.messages, m)
	return ok(map[string]any{"channel": id, "ts": old.TS, "text": m.Text})
}

func (s *Server) postEphemeral(req *request) answer {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := req.get("channel")
	if _, code := s.channelFor(id); code != "" {
		return slackErr(code)
	}
	user := req.get("user")
	if user == "" {
		return slackErr("user_not_found")
	}
	m, code := message(req)
	if code != "" {
		return slackErr(code)
	}
	m.Method, m.Channel, m.User, m.TS = req.method, id, user, s.mintTS()
	s.messages = append(s.messages, m)
	return ok(map[string]any{"message_ts": m.TS})
}

func (s *Server) permalink(req *request) answer {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ts := req.get("channel"), req.get("message_ts")
	c := s.channels[id]
	if c == nil {
		return slackErr("channel_not_found")
	}
	if find(c, ts) == nil {
		return slackErr("message_not_found")
	}
	return ok(map[string]any{"channel": id, "permalink": s.o.TeamURL + "archives/" + id + "/p" + strings.ReplaceAll(ts, ".", "")})
}

func (s *Server) openDM(req *request) answer {
	s.mu.Lock()
	defer s.mu.Unlock()
	users := req.get("users")
	if users == "" || strings.Contains(users, ",") {
		return slackErr("invalid_arguments")
	}
	if !s.users[users] {
		return slackErr("user_not_found")
	}
	id := "D" + users
	if s.channels[id] == nil {
		s.channels[id] = &channel{id: id, name: users, member: true, dm: true}
	}
	return ok(map[string]any{"channel": map[string]any{"id": id, "is_im": true, "user": users}})
}

func (s *Server) info(req *request) answer {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.channels[req.get("channel")]
	if c == nil {
		return slackErr("channel_not_found")
	}
	return ok(map[string]any{"channel": map[string]any{"id": c.id, "name": c.name, "is_channel": !c.dm && !c.private,
		"is_group": c.private, "is_im": c.dm, "is_private": c.private, "is_member": c.member, "is_archived": c.archived}})
}

func (s *Server) openView(req *request) answer {
	trigger := req.get("trigger_id")
	if trigger == "" {
		return slackErr("invalid_trigger_id")
	}
	raw := req.json["view"]
	var v struct {
		Type            string `json:"type"`
		CallbackID      string `json:"callback_id"`
		PrivateMetadata string `json:"private_metadata"`
		Title           struct {
			Text string `json:"text"`
		} `json:"title"`
		Submit, Close struct {
			Text string `json:"text"`
		}
		Blocks json.RawMessage `json:"blocks"`
	}
	if err := json.Unmarshal(raw, &v); err != nil || v.Type != "modal" {
		return slackErr("invalid_arguments")
	}
	// The title, submit and close texts: 24 characters each
	// (https://docs.slack.dev/reference/views/modal-views).
	if charLen(v.Title.Text) > modalTitleMax || charLen(v.Submit.Text) > modalTitleMax || charLen(v.Close.Text) > modalTitleMax ||
		charLen(v.PrivateMetadata) > privateMetadataMax {
		return slackErr("invalid_arguments")
	}
	if code := checkBlocks(v.Blocks); code != "" {
		return slackErr(code)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.views = append(s.views, View{TriggerID: trigger, CallbackID: v.CallbackID, Title: v.Title.Text,
		PrivateMetadata: v.PrivateMetadata, Raw: append(json.RawMessage(nil), raw...)})
	s.seq++
	return ok(map[string]any{"view": map[string]any{"id": fmt.Sprintf("V%06d", s.seq)}})
}

func (s *Server) serveResponseURL(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var body struct {
		Text            string          `json:"text"`
		Blocks          json.RawMessage `json:"blocks"`
		ResponseType    string          `json:"response_type"`
		ReplaceOriginal bool            `json:"replace_original"`
		ThreadTS        string          `json:"thread_ts"`
	}
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	s.mu.Lock()
	ru := s.responses[id]
	var uses int
	var expired bool
	var channel, user, ts string
	if ru != nil {
		// Every post spends a use, taken or not, as Slack counts them.
		ru.uses++
		uses, expired, channel, user, ts = ru.uses, ru.expired, ru.channel, ru.user, ru.ts
	}
	s.mu.Unlock()
	switch {
	case r.Method != http.MethodPost:
		http.Error(w, "method_not_allowed", http.StatusMethodNotAllowed)
		return
	case ru == nil || expired:
		http.Error(w, "expired_url", http.StatusNotFound)
		return
	case uses > responseURLUses:
		http.Error(w, "used_url", http.StatusNotFound)
		return
	case json.Unmarshal(raw, &body) != nil:
		http.Error(w, "invalid_payload", http.StatusBadRequest)
		return
	}
	if body.Text == "" && len(body.Blocks) == 0 {
		http.Error(w, "no_text", http.StatusBadRequest)
		return
	}
	if code := checkBlocks(body.Blocks); code != "" {
		http.Error(w, code, http.StatusBadRequest)
		return
	}
	m := Message{Method: "response_url", Channel: channel, User: user, Text: body.Text, ThreadTS: body.ThreadTS,
		ResponseType: body.ResponseType, ReplaceOriginal: body.ReplaceOriginal, ResponseURL: s.srv.URL + r.URL.Path,
		Received: time.Now()}
	if len(body.Blocks) > 0 && string(body.Blocks) != "null" {
		m.Blocks = body.Blocks
	}
	s.mu.Lock()
	if m.ReplaceOriginal && ts != "" {
		// The message the URL belongs to is replaced in place: same ts,
		// same thread, new text and blocks.
		var old *Message
		if c := s.channels[channel]; c != nil {
			old = find(c, ts)
		}
		if old == nil {
			s.mu.Unlock()
			http.Error(w, "message_not_found", http.StatusNotFound)
			return
		}
		old.Text, old.Blocks = m.Text, m.Blocks
		m.TS, m.ThreadTS = old.TS, old.ThreadTS
	} else {
		m.TS = s.mintTS()
	}
	s.messages = append(s.messages, m)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"ok":true}`)
}

// mintTS makes a ts unique across the fake, like "1700000000.000001";
// s.mu must be held.
func (s *Server) mintTS() string {
	s.seq++
	return fmt.Sprintf("1700000000.%06d", s.seq)
}

func find(c *channel, ts string) *Message {
	for _, m := range c.messages {
		if m.TS == ts {
			return m
		}
	}
	return nil
}

// message reads the text and blocks of a chat.* call.
func message(req *request) (Message, string) {
	m := Message{Text: req.get("text"), ThreadTS: req.get("thread_ts"), Unfurl: req.get("unfurl_links") != "false",
		Received: time.Now()}
	if b := req.get("blocks"); b != "" {
		m.Blocks = json.RawMessage(b)
	}
	if code := checkBlocks(m.Blocks); code != "" {
		return m, code
	}
	if m.Text == "" && len(m.Blocks) == 0 {
		return m, "no_text"
	}
	return m, ""
}

// checkBlocks applies the Block Kit limits a test could break.
func checkBlocks(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var blocks []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return "invalid_blocks_format"
	}
	if len(blocks) > maxBlocks {
		return "invalid_blocks"
	}
	for _, b := range blocks {
		var typ string
		_ = json.Unmarshal(b["type"], &typ)
		switch typ {
		case "section":
			if textOf(b["text"]) > sectionTextMax {
				return "invalid_blocks"
			}
		case "header":
			if textOf(b["text"]) > headerTextMax {
				return "invalid_blocks"
			}
		case "context":
			var els []map[string]json.RawMessage
			_ = json.Unmarshal(b["elements"], &els)
			for _, e := range els {
				var t string
				_ = json.Unmarshal(e["text"], &t)
				if charLen(t) > sectionTextMax {
					return "invalid_blocks"
				}
			}
		case "actions":
			var els []struct {
				Type     string `json:"type"`
				ActionID string `json:"action_id"`
				Value    string `json:"value"`
				Text     struct {
					Text string `json:"text"`
				} `json:"text"`
				Placeholder struct {
					Text string `json:"text"`
				} `json:"placeholder"`
				Options []struct {
					Value string `json:"value"`
					Text  struct {
						Text string `json:"text"`
					} `json:"text"`
				} `json:"options"`
			}
			_ = json.Unmarshal(b["elements"], &els)
			ids := map[string]bool{}
			for _, e := range els {
				if charLen(e.ActionID) > actionIDMax || charLen(e.Value) > buttonValueMax || charLen(e.Text.Text) > buttonTextMax {
					return "invalid_blocks"
				}
				if e.ActionID != "" && ids[e.ActionID] {
					return "invalid_blocks" // action_ids are unique within a block
				}
				ids[e.ActionID] = true
				if e.Type != "static_select" {
					continue
				}
				if len(e.Options) == 0 || len(e.Options) > optionsMax || charLen(e.Placeholder.Text) > placeholderMax {
					return "invalid_blocks"
				}
				for _, o := range e.Options {
					if o.Value == "" || charLen(o.Value) > optionValueMax || charLen(o.Text.Text) > optionTextMax {
						return "invalid_blocks"
					}
				}
			}
		case "input":
			var el struct {
				Type      string `json:"type"`
				MaxLength int    `json:"max_length"`
			}
			_ = json.Unmarshal(b["element"], &el)
			if el.Type == "plain_text_input" && el.MaxLength > textInputMax {
				return "invalid_blocks"
			}
		}
	}
	return ""
}

func textOf(raw json.RawMessage) int {
	var t struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &t)
	return charLen(t.Text)
}

// charLen counts as Slack counts: UTF-16 code units.
func charLen(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// Button is one button of a message, as a test reads it.
type Button struct {
	ActionID string
	Value    string
	Text     string
	Style    string
	Confirm  bool // the button asks Slack's confirm dialog first
}

// Buttons lists the buttons of the message's actions blocks.
func (m Message) Buttons() []Button {
	var blocks []struct {
		Type     string `json:"type"`
		Elements []struct {
			Type     string          `json:"type"`
			ActionID string          `json:"action_id"`
			Value    string          `json:"value"`
			Style    string          `json:"style"`
			Confirm  json.RawMessage `json:"confirm"`
			Text     struct {
				Text string `json:"text"`
			} `json:"text"`
		} `json:"elements"`
	}
	_ = json.Unmarshal(m.Blocks, &blocks)
	var out []Button
	for _, b := range blocks {
		if b.Type != "actions" {
			continue
		}
		for _, e := range b.Elements {
			if e.Type == "button" {
				out = append(out, Button{ActionID: e.ActionID, Value: e.Value, Text: e.Text.Text, Style: e.Style,
					Confirm: len(e.Confirm) > 0 && string(e.Confirm) != "null"})
			}
		}
	}
	return out
}

// Option is one option of a static_select menu, as a test reads it.
type Option struct {
	ActionID string // the menu's
	Value    string
	Text     string
}

// Options lists the options of the message's static_select menus.
func (m Message) Options() []Option {
	var blocks []struct {
		Type     string `json:"type"`
		Elements []struct {
			Type     string `json:"type"`
			ActionID string `json:"action_id"`
			Options  []struct {
				Value string `json:"value"`
				Text  struct {
					Text string `json:"text"`
				} `json:"text"`
			} `json:"options"`
		} `json:"elements"`
	}
	_ = json.Unmarshal(m.Blocks, &blocks)
	var out []Option
	for _, b := range blocks {
		if b.Type != "actions" {
			continue
		}
		for _, e := range b.Elements {
			if e.Type != "static_select" {
				continue
			}
			for _, o := range e.Options {
				out = append(out, Option{ActionID: e.ActionID, Value: o.Value, Text: o.Text.Text})
			}
		}
	}
	return out
}

// AllText is the message's text and every text inside its blocks, one
// per line, for assertions on what a person reads.
func (m Message) AllText() string {
	parts := []string{m.Text}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if t, ok := x["text"].(string); ok {
				parts = append(parts, t)
			}
			for k, y := range x {
				if k != "text" || !isString(y) {
					walk(y)
				}
			}
		case []any:
			for _, y := range x {
				walk(y)
			}
		}
	}
	var blocks any
	if json.Unmarshal(m.Blocks, &blocks) == nil {
		walk(blocks)
	}
	return strings.Join(parts, "\n")
}

func isString(v any) bool {
	_, ok := v.(string)
	return ok
}
