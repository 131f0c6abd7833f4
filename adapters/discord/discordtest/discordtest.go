// Package discordtest is a fake Discord for tests: an httptest server that
// speaks the REST endpoints the bot's Discord adapter calls, a gateway
// websocket that identifies a session and dispatches INTERACTION_CREATE,
// and the sender of signed HTTP interactions, so the adapter meets
// Discord's refusals and limits rather than a mock's idea of them.
//
// Point discordgo at it with the adapter's api_url set to URL(): the
// adapter's transport rewrites scheme and host, so requests arrive as
// /api/v9/... with "Authorization: Bot <token>", exactly as discordgo
// builds them (its endpoints are package globals and stay untouched).
//
// What it enforces, as Discord does (and, for bodies, more strictly than
// Discord: schema.go): every body the bot sends has exactly the fields
// Discord's API types document, with no null where a field is to be left
// out; the bot token; the bot's permissions
// in each channel (View Channel, Send Messages, Send Messages in Threads,
// Create Public Threads, Embed Links: embeds are dropped without it);
// message limits (content 2,000, embeds, 5×5 buttons, custom_id 100,
// label 80); one thread per message, whose id is the message's; an
// interaction answered once within 3 s, a modal's limits (labels and text
// displays; action rows in modals are deprecated), follow-ups only
// after the answer and within the token's 15 minutes; an UPDATE_MESSAGE
// answer (type 7) only to an interaction on a message, which it edits,
// and PATCH …/messages/@original editing the interaction's original
// message (for a component, the message the button is on) only while the
// token lives, both within a message's limits; a per-channel pace of
// message creates answered with 429 and retry_after; the application's
// global commands (PUT and GET /applications/{id}/commands). Ids are unique
// snowflakes. Everything received is recorded, every edit of a message
// with the way it came (EditsOf).
//
// It sends no X-RateLimit-* headers, so discordgo's own bucket pacing
// stays idle and a test sees the adapter's pacing alone.
package discordtest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/bwmarrin/discordgo"
	"golang.org/x/time/rate"
)

// Routes, named as the fake's mux patterns (below /api/v9), for Fail and
// RateLimit.
const (
	RouteMe             = "GET /users/@me"
	RouteApplication    = "GET /applications/@me"
	RouteDMCreate       = "POST /users/@me/channels"
	RouteChannel        = "GET /channels/{channel}"
	RouteMessageCreate  = "POST /channels/{channel}/messages"
	RouteMessageEdit    = "PATCH /channels/{channel}/messages/{message}"
	RouteThreadStart    = "POST /channels/{channel}/messages/{message}/threads"
	RouteGuild          = "GET /guilds/{guild}"
	RouteGuildMember    = "GET /guilds/{guild}/members/{user}"
	RouteCallback       = "POST /interactions/{interaction}/{token}/callback"
	RouteFollowup       = "POST /webhooks/{application}/{token}"
	RouteOriginalEdit   = "PATCH /webhooks/{application}/{token}/messages/@original"
	RouteCommandsPut    = "PUT /applications/{application}/commands"
	RouteCommandsGet    = "GET /applications/{application}/commands"
	RouteGateway        = "GET /gateway"
	RouteGatewayBot     = "GET /gateway/bot"
	interactionLifetime = 15 * time.Minute
	answerWithin        = 3 * time.Second
)

// Component types of modals, which discordgo v0.29 does not name.
const (
	componentTextDisplay = 10
	componentLabel       = 18
)

// Discord's JSON error codes the fake answers with:
// https://discord.com/developers/docs/topics/opcodes-and-status-codes#json
const (
	CodeUnknownChannel       = 10003
	CodeUnknownMessage       = 10008
	CodeUnknownUser          = 10013
	CodeUnknownWebhook       = 10015
	CodeUnknownInteraction   = 10062
	CodeAlreadyAcknowledged  = 40060
	CodeMissingAccess        = 50001
	CodeEmptyMessage         = 50006
	CodeCannotDM             = 50007
	CodeMissingPermissions   = 50013
	CodeWrongChannelType     = 50024
	CodeInvalidWebhookToken  = 50027
	CodeInvalidFormBody      = 50035
	CodeInvalidJSON          = 50109
	CodeThreadAlreadyCreated = 160004
)

// Options configure New.
type Options struct {
	// Token is the bot token the fake accepts, without "Bot "; required.
	Token string
	// ApplicationID is the application's id; required.
	ApplicationID string
	// BotID is the bot user's id; empty means ApplicationID.
	BotID string
	// PrivateKey signs HTTP interactions; nil means a generated key.
	PrivateKey ed25519.PrivateKey
	// PerChannelRate and Burst pace message creates per channel: one over
	// the pace is answered 429 with retry_after. Zero means no pace.
	PerChannelRate rate.Limit
	Burst          int
	// Now is the clock of interaction tokens (15 minutes) and of the
	// signature timestamps the fake sends; nil means time.Now.
	Now func() time.Time
}

// Server is a fake Discord. Its methods are safe to call while the bot
// calls it.
type Server struct {
	t    testing.TB
	o    Options
	srv  *httptest.Server
	priv ed25519.PrivateKey
	seq  atomic.Uint64

	mu              sync.Mutex
	guilds          map[string]*guild
	channels        map[string]*channel
	users           map[string]*user
	messages        map[string]*Message
	interactions    map[string]*interaction // by token
	requests        []Request
	followups       []Followup
	edits           []Edit
	modals          map[string]string // the message a modal was opened from, by user and custom_id
	editSeq         int               // orders edits and follow-ups
	limiters        map[string]*rate.Limiter
	rateLimited     int
	injected        []injection
	interactionsURL string
	commands        []json.RawMessage // the application's global commands, as registered
	answered        *sync.Cond

	gw gateway
}

type guild struct {
	id       string
	name     string
	everyone int64 // the bot's permissions through @everyone
	roles    []*discordgo.Role
}

type channel struct {
	id, guildID, parentID, name string
	typ                         discordgo.ChannelType
	deny                        int64  // @everyone overwrite
	recipient                   string // a DM's user
	hidden                      bool
	order                       []string // message ids, oldest first
}

type user struct {
	id        string
	dm        string // the DM channel, once opened
	blocksDMs bool
}

// webhookOf is the interaction whose webhook the request names (the
// application and the token in its path), answering as Discord does when
// there is none yet (the interaction not answered) or no longer (its
// token lapsed). Call with s.mu held.
func (s *Server) webhookOf(w http.ResponseWriter, r *http.Request) (*interaction, bool) {
	in := s.interactions[r.PathValue("token")]
	switch {
	case in == nil || r.PathValue("application") != s.o.ApplicationID || !in.answered:
		// Before the interaction is answered its webhook does not exist yet.
		writeError(w, http.StatusNotFound, CodeUnknownWebhook, "Unknown Webhook")
		return nil, false
	case s.o.Now().Sub(in.created) > interactionLifetime:
		writeError(w, http.StatusUnauthorized, CodeInvalidWebhookToken, "Invalid Webhook Token")
		return nil, false
	}
	return in, true
}

type interaction struct {
	id, token, user, channel string
	typ                      discordgo.InteractionType
	created                  time.Time
	answered                 bool
	answer                   *Answer
	// message is the message a component interaction is on (for a modal's
	// submission, the one whose button opened the modal); "" for none.
	message string
	// ephemeral is the ephemeral message a component interaction is on
	// (Click.Ephemeral): a private answer, kept apart from every
	// channel's messages, as only its user sees it.
	ephemeral *Message
	// original is the answer's own message, for a CHANNEL_MESSAGE_WITH_SOURCE
	// (or its deferred form) answer: what @original edits then.
	original *Message
}

type injection struct {
	route      string
	n          int
	status     int
	code       int
	retryAfter time.Duration
	global     bool
}

// Request is one REST request as received.
type Request struct {
	Method string
	Path   string // as received: /api/v9/...
	Route  string // the Route* it matched; "" for none
	Auth   string // the Authorization header
	Body   []byte
	Status int // answered
	// At is when it arrived, by the process's clock (a synctest bubble's
	// inside one); RetryAfter is the wait a 429 answer named.
	At         time.Time
	RetryAfter time.Duration
}

// Message is a message as it stands now.
type Message struct {
	ID            string
	ChannelID     string
	Content       string
	Embeds        []*discordgo.MessageEmbed
	EmbedsDropped bool // sent without Embed Links, or with SUPPRESS_EMBEDS: Discord shows none
	Buttons       []Button
	// Menus are its string selects, each alone in its row.
	Menus           []Menu
	Rows            int
	AllowedMentions *discordgo.MessageAllowedMentions
	Flags           discordgo.MessageFlags
	Thread          string // the thread started from it, "" for none
	Edits           int
	CreatedAt       time.Time
}

// Button is one button of a message, row by row.
type Button struct {
	Row      int
	CustomID string
	Label    string
	Style    discordgo.ButtonStyle
}

// Menu is one string select of a message, in its row.
type Menu struct {
	Row         int
	CustomID    string
	Placeholder string
	Options     []Option
}

// Option is one option of a string select.
type Option struct {
	Label, Value string
}

// Text is everything a person reads of m: content, embed titles,
// descriptions, fields and footers.
func (m Message) Text() string {
	var b strings.Builder
	b.WriteString(m.Content)
	for _, e := range m.Embeds {
		b.WriteString("\n" + e.Title + "\n" + e.Description)
		for _, f := range e.Fields {
			b.WriteString("\n" + f.Name + "\n" + f.Value)
		}
		if e.Footer != nil {
			b.WriteString("\n" + e.Footer.Text)
		}
	}
	return b.String()
}

// Followup is one message posted through an interaction's webhook.
type Followup struct {
	Seq             int // order among follow-ups and edits (Edit.Seq)
	InteractionID   string
	Token           string
	User            string
	Content         string
	Embeds          []*discordgo.MessageEmbed
	Components      int
	Flags           discordgo.MessageFlags
	AllowedMentions *discordgo.MessageAllowedMentions
	// EmbedsDropped: sent with SUPPRESS_EMBEDS, Discord shows none of its
	// embeds (Embeds is then empty).
	EmbedsDropped bool
}

// Ephemeral reports whether only the person who clicked sees it.
func (f Followup) Ephemeral() bool { return f.Flags&discordgo.MessageFlagsEphemeral != 0 }

// Text is the follow-up's content and embeds, as read.
func (f Followup) Text() string {
	return Message{Content: f.Content, Embeds: f.Embeds}.Text()
}

// New starts a fake Discord that is closed when the test ends.
func New(t testing.TB, o Options) *Server {
	t.Helper()
	if o.Token == "" || o.ApplicationID == "" {
		t.Fatal("discordtest.New: Token and ApplicationID are required")
	}
	if o.BotID == "" {
		o.BotID = o.ApplicationID
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &Server{t: t, o: o, priv: o.PrivateKey,
		guilds: map[string]*guild{}, channels: map[string]*channel{}, users: map[string]*user{},
		messages: map[string]*Message{}, interactions: map[string]*interaction{}, limiters: map[string]*rate.Limiter{},
		modals: map[string]string{}}
	s.answered = sync.NewCond(&s.mu)
	if s.priv == nil {
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		s.priv = priv
	}
	s.seq.Store(1300000000000000000)
	mux := http.NewServeMux()
	routes := map[string]http.HandlerFunc{
		RouteMe: s.me, RouteApplication: s.application, RouteDMCreate: s.dmCreate, RouteChannel: s.channel,
		RouteMessageCreate: s.messageCreate, RouteMessageEdit: s.messageEdit, RouteThreadStart: s.threadStart,
		RouteGuild: s.guild, RouteGuildMember: s.guildMember, RouteCallback: s.callback, RouteFollowup: s.followup,
		RouteOriginalEdit: s.originalEdit,
		RouteCommandsPut:  s.commandsPut, RouteCommandsGet: s.commandsGet,
		RouteGateway: s.gatewayURL, RouteGatewayBot: s.gatewayURL,
	}
	for route, h := range routes {
		method, path, _ := strings.Cut(route, " ")
		mux.HandleFunc(method+" "+apiPrefix+strings.TrimPrefix(path, "/"), s.recorded(route, h))
	}
	mux.HandleFunc("GET /gateway/", s.serveGateway)
	mux.HandleFunc("/", s.recorded("", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, 0, "404: Not Found")
	}))
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.close)
	return s
}

// routeBodies are the bodies each route takes (schema.go); the callback's
// is checked with the interaction's first answer.
var routeBodies = map[string]*shape{
	RouteMessageCreate: bodyMessageCreate, RouteMessageEdit: bodyMessageEdit, RouteThreadStart: bodyThreadStart,
	RouteDMCreate: bodyDMCreate, RouteFollowup: bodyFollowup, RouteOriginalEdit: bodyOriginalEdit, RouteCommandsPut: bodyCommands,
}

// apiPrefix is where discordgo sends REST calls: its API version, read
// from the package (never changed).
var apiPrefix = "/api/v" + discordgo.APIVersion + "/"

// URL is the base to give the bot as discord.api_url.
func (s *Server) URL() string { return s.srv.URL + "/" }

// PublicKeyHex is the key to give the bot as discord.public_key.
func (s *Server) PublicKeyHex() string {
	return hex.EncodeToString(s.priv.Public().(ed25519.PublicKey))
}

// Snowflake mints a new unique id.
func (s *Server) Snowflake() string { return strconv.FormatUint(s.seq.Add(1), 10) }

// AddGuild adds a server in which the bot holds perms through @everyone.
func (s *Server) AddGuild(id, name string, perms int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.guilds[id] = &guild{id: id, name: name, everyone: perms,
		roles: []*discordgo.Role{{ID: id, Name: "@everyone", Permissions: perms}}}
}

// AddRole adds a role to a guild; mentionable is "Allow anyone to
// @mention this role".
func (s *Server) AddRole(guildID, roleID, name string, mentionable bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.mustGuild(guildID)
	g.roles = append(g.roles, &discordgo.Role{ID: roleID, Name: name, Mentionable: mentionable})
}

// AddChannel adds a text channel to a guild.
func (s *Server) AddChannel(guildID, id, name string) {
	s.AddChannelOfType(guildID, id, name, discordgo.ChannelTypeGuildText)
}

// AddChannelOfType adds a channel of another type (a forum, a voice
// channel) to a guild.
func (s *Server) AddChannelOfType(guildID, id, name string, typ discordgo.ChannelType) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mustGuild(guildID)
	s.channels[id] = &channel{id: id, guildID: guildID, name: name, typ: typ}
}

// RemoveChannel deletes a channel with its threads and their messages:
// calls on any of them then get 404 Unknown Channel.
func (s *Server) RemoveChannel(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.channels {
		if c.id == id || c.parentID == id {
			for _, m := range c.order {
				delete(s.messages, m)
			}
			delete(s.channels, c.id)
		}
	}
}

// DeleteMessage deletes a message, as a person may: an edit of it then
// gets 404 Unknown Message. A thread started from it stays, as on
// Discord.
func (s *Server) DeleteMessage(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.messages[id]
	if m == nil {
		return
	}
	delete(s.messages, id)
	if c := s.channels[m.ChannelID]; c != nil {
		for i, o := range c.order {
			if o == id {
				c.order = append(c.order[:i:i], c.order[i+1:]...)
				break
			}
		}
	}
}

// Deny removes permissions from the bot in one channel (an @everyone
// overwrite); its threads inherit it.
func (s *Server) Deny(channelID string, perms int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mustChannel(channelID).deny |= perms
}

// Hide takes View Channel away in a channel: every call on it is
// answered 403 Missing Access.
func (s *Server) Hide(channelID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mustChannel(channelID).hidden = true
}

// AddUser makes a user known, so the bot may open a DM with them.
func (s *Server) AddUser(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.users[id] == nil {
		s.users[id] = &user{id: id}
	}
}

// BlockDMs makes a user refuse DMs from the bot (403, code 50007).
func (s *Server) BlockDMs(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u := s.users[id]; u != nil {
		u.blocksDMs = true
	}
}

// DMChannel is the DM channel the bot opened with a user, or "".
func (s *Server) DMChannel(userID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u := s.users[userID]; u != nil {
		return u.dm
	}
	return ""
}

func (s *Server) mustGuild(id string) *guild {
	g := s.guilds[id]
	if g == nil {
		s.t.Fatalf("discordtest: no guild %s", id)
	}
	return g
}

func (s *Server) mustChannel(id string) *channel {
	c := s.channels[id]
	if c == nil {
		s.t.Fatalf("discordtest: no channel %s", id)
	}
	return c
}

// Messages lists the messages of a channel (or thread) as they stand,
// oldest first.
func (s *Server) Messages(channelID string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.channels[channelID]
	if c == nil {
		return nil
	}
	out := make([]Message, 0, len(c.order))
	for _, id := range c.order {
		out = append(out, s.messages[id].copy())
	}
	return out
}

// Message finds a message by id.
func (s *Server) Message(id string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.messages[id]
	if m == nil {
		return Message{}, false
	}
	return m.copy(), true
}

func (m *Message) copy() Message {
	c := *m
	c.Buttons = append([]Button(nil), m.Buttons...)
	c.Embeds = append([]*discordgo.MessageEmbed(nil), m.Embeds...)
	return c
}

// Requests lists every REST request received, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Calls counts the REST requests received on a route.
func (s *Server) Calls(route string) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Route == route {
			n++
		}
	}
	return n
}

// Followups lists the follow-ups of a user's interactions, in order.
func (s *Server) Followups(userID string) []Followup {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Followup
	for _, f := range s.followups {
		if f.User == userID {
			out = append(out, f)
		}
	}
	return out
}

// AllFollowups lists every follow-up, in order.
func (s *Server) AllFollowups() []Followup {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Followup(nil), s.followups...)
}

// RateLimited counts the 429s the per-channel pace gave (not the injected).
func (s *Server) RateLimited() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rateLimited
}

// Fail answers the next n requests on route with status and a JSON
// error of code (0 for none).
func (s *Server) Fail(route string, n, status, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.injected = append(s.injected, injection{route: route, n: n, status: status, code: code})
}

// RateLimit answers the next n requests on route with 429 and
// retry_after; global marks Discord's global limit.
func (s *Server) RateLimit(route string, n int, retryAfter time.Duration, global bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.injected = append(s.injected, injection{route: route, n: n, status: http.StatusTooManyRequests,
		retryAfter: retryAfter, global: global})
}

func (s *Server) close() {
	s.DropGateway()
	s.srv.Close()
}

// recorded wraps a route: it records the request, checks the token on
// everything but the interaction webhooks (which carry their own), and
// gives injected failures first.
func (s *Server) recorded(route string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		at := time.Now()
		body, _ := io.ReadAll(http.MaxBytesReader(w, r.Body, 8<<20))
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		defer func() {
			s.mu.Lock()
			s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Route: route,
				Auth: r.Header.Get("Authorization"), Body: body, Status: rec.status, At: at, RetryAfter: rec.retryAfter})
			s.mu.Unlock()
		}()
		// The interaction's own routes are authorised by its token.
		webhook := route == RouteCallback || route == RouteFollowup || route == RouteOriginalEdit
		if !webhook && r.Header.Get("Authorization") != "Bot "+s.o.Token {
			writeError(rec, http.StatusUnauthorized, 0, "401: Unauthorized")
			return
		}
		if inj, ok := s.takeInjection(route); ok {
			if inj.status == http.StatusTooManyRequests {
				writeRateLimit(rec, inj.retryAfter, inj.global)
				return
			}
			writeError(rec, inj.status, inj.code, http.StatusText(inj.status))
			return
		}
		if shape := routeBodies[route]; shape != nil {
			if problem := checkBody(body, shape); problem != "" {
				writeInvalid(rec, problem)
				return
			}
		}
		h(rec, r)
	}
}

func (s *Server) takeInjection(route string) (injection, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.injected {
		if s.injected[i].route == route && s.injected[i].n > 0 {
			s.injected[i].n--
			return s.injected[i], true
		}
	}
	return injection{}, false
}

type statusRecorder struct {
	http.ResponseWriter
	status     int
	retryAfter time.Duration
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status, code int, message string) {
	writeJSON(w, status, map[string]any{"code": code, "message": message})
}

func writeRateLimit(w http.ResponseWriter, after time.Duration, global bool) {
	if rec, ok := w.(*statusRecorder); ok {
		rec.retryAfter = after
	}
	secs := float64(after.Milliseconds()) / 1000
	w.Header().Set("Retry-After", strconv.Itoa(int((after+time.Second-1)/time.Second)))
	scope := "user"
	if global {
		w.Header().Set("X-RateLimit-Global", "true")
		scope = "global"
	}
	w.Header().Set("X-RateLimit-Scope", scope)
	writeJSON(w, http.StatusTooManyRequests, map[string]any{"message": "You are being rate limited.",
		"retry_after": secs, "global": global})
}

func (s *Server) me(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.botUser())
}

func (s *Server) botUser() map[string]any {
	return map[string]any{"id": s.o.BotID, "username": "approvals", "discriminator": "0", "bot": true}
}

func (s *Server) application(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	endpoint := s.interactionsURL
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"id": s.o.ApplicationID, "name": "approvals",
		"verify_key": s.PublicKeyHex(), "interactions_endpoint_url": endpoint, "bot": s.botUser()})
}

func (s *Server) dmCreate(w http.ResponseWriter, r *http.Request) {
	var body struct {
		RecipientID string `json:"recipient_id"`
	}
	if json.NewDecoder(r.Body).Decode(&body) != nil {
		writeError(w, http.StatusBadRequest, CodeInvalidJSON, "The request body contains invalid JSON.")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.users[body.RecipientID]
	if u == nil {
		writeError(w, http.StatusNotFound, CodeUnknownUser, "Unknown User")
		return
	}
	if u.dm == "" {
		u.dm = s.Snowflake()
		s.channels[u.dm] = &channel{id: u.dm, typ: discordgo.ChannelTypeDM, recipient: u.id}
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": u.dm, "type": discordgo.ChannelTypeDM,
		"recipients": []any{map[string]any{"id": u.id, "username": "user" + u.id}}})
}

// perms is the bot's permissions in c: @everyone's, less the channel's
// overwrite (a thread's parent's); all in a DM.
func (s *Server) perms(c *channel) int64 {
	if c.typ == discordgo.ChannelTypeDM {
		return discordgo.PermissionAll
	}
	if c.parentID != "" {
		if p := s.channels[c.parentID]; p != nil {
			c = p
		}
	}
	g := s.guilds[c.guildID]
	if g == nil {
		return 0
	}
	if c.hidden {
		return g.everyone &^ (c.deny | discordgo.PermissionViewChannel)
	}
	return g.everyone &^ c.deny
}

// access finds a channel the bot can see, or answers why not.
func (s *Server) access(w http.ResponseWriter, id string) (*channel, int64, bool) {
	c := s.channels[id]
	if c == nil {
		writeError(w, http.StatusNotFound, CodeUnknownChannel, "Unknown Channel")
		return nil, 0, false
	}
	p := s.perms(c)
	if p&discordgo.PermissionViewChannel == 0 {
		writeError(w, http.StatusForbidden, CodeMissingAccess, "Missing Access")
		return nil, 0, false
	}
	return c, p, true
}

func (s *Server) channelJSON(c *channel) map[string]any {
	out := map[string]any{"id": c.id, "type": c.typ, "name": c.name}
	if c.guildID != "" {
		out["guild_id"] = c.guildID
	}
	if c.parentID != "" {
		out["parent_id"] = c.parentID
	}
	if c.deny != 0 {
		out["permission_overwrites"] = []any{map[string]any{"id": c.guildID, "type": 0,
			"allow": "0", "deny": strconv.FormatInt(c.deny, 10)}}
	}
	return out
}

func (s *Server) channel(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, _, ok := s.access(w, r.PathValue("channel"))
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, s.channelJSON(c))
}

func (s *Server) guild(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.guilds[r.PathValue("guild")]
	if g == nil {
		writeError(w, http.StatusNotFound, 10004, "Unknown Guild")
		return
	}
	roles := make([]any, 0, len(g.roles))
	for _, ro := range g.roles {
		roles = append(roles, map[string]any{"id": ro.ID, "name": ro.Name, "mentionable": ro.Mentionable,
			"permissions": strconv.FormatInt(ro.Permissions, 10)})
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": g.id, "name": g.name, "owner_id": "1", "roles": roles})
}

func (s *Server) guildMember(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.guilds[r.PathValue("guild")]
	if g == nil || r.PathValue("user") != s.o.BotID {
		writeError(w, http.StatusNotFound, 10007, "Unknown Member")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"user": s.botUser(), "roles": []string{}, "guild_id": g.id})
}

// messageBody is a create or edit body; nil fields were not sent.
type messageBody struct {
	Content         *string                           `json:"content"`
	Embeds          *[]*discordgo.MessageEmbed        `json:"embeds"`
	Components      *[]rawComponent                   `json:"components"`
	AllowedMentions *discordgo.MessageAllowedMentions `json:"allowed_mentions"`
	Flags           discordgo.MessageFlags            `json:"flags"`
}

type rawComponent struct {
	Type        discordgo.ComponentType `json:"type"`
	Components  []rawComponent          `json:"components"`
	Component   *rawComponent           `json:"component"` // a label's
	CustomID    string                  `json:"custom_id"`
	Label       string                  `json:"label"`
	Description string                  `json:"description"`
	Content     string                  `json:"content"` // a text display's
	Style       int                     `json:"style"`
	URL         string                  `json:"url"`
	Placeholder string                  `json:"placeholder"`
	MaxLength   int                     `json:"max_length"`
	Required    *bool                   `json:"required"`
	Value       string                  `json:"value"`
	// Options are a string select's choices; MinValues and MaxValues how
	// many it takes (Discord's default: 1).
	Options []struct {
		Label string `json:"label"`
		Value string `json:"value"`
	} `json:"options"`
	MinValues *int `json:"min_values"`
	MaxValues *int `json:"max_values"`
}

func (s *Server) readMessage(w http.ResponseWriter, r *http.Request) (*messageBody, bool) {
	var body messageBody
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, CodeInvalidJSON, "The request body contains invalid JSON.")
		return nil, false
	}
	if problem := checkMessage(&body); problem != "" {
		writeInvalid(w, problem)
		return nil, false
	}
	return &body, true
}

func writeInvalid(w http.ResponseWriter, problem string) {
	writeJSON(w, http.StatusBadRequest, map[string]any{"code": CodeInvalidFormBody, "message": "Invalid Form Body",
		"errors": map[string]any{"_errors": []any{map[string]any{"code": "BASE_TYPE_INVALID", "message": problem}}}})
}

// checkMessage applies Discord's limits on what a message holds:
// https://discord.com/developers/docs/resources/message#create-message
func checkMessage(b *messageBody) string {
	if b.Content != nil && charLen(*b.Content) > 2000 {
		return fmt.Sprintf("content: %d characters, must be 2000 or fewer", charLen(*b.Content))
	}
	if b.Embeds != nil {
		if p := checkEmbeds(*b.Embeds); p != "" {
			return p
		}
	}
	if b.Components != nil {
		if p := checkRows(*b.Components); p != "" {
			return p
		}
	}
	if am := b.AllowedMentions; am != nil {
		for _, p := range am.Parse {
			switch p {
			case discordgo.AllowedMentionTypeUsers:
				if len(am.Users) > 0 {
					return "allowed_mentions: parse users and a users list are mutually exclusive"
				}
			case discordgo.AllowedMentionTypeRoles:
				if len(am.Roles) > 0 {
					return "allowed_mentions: parse roles and a roles list are mutually exclusive"
				}
			case discordgo.AllowedMentionTypeEveryone:
			default:
				return fmt.Sprintf("allowed_mentions.parse: %q is not users, roles or everyone", p)
			}
		}
		if len(am.Users) > 100 || len(am.Roles) > 100 {
			return "allowed_mentions: at most 100 users and 100 roles"
		}
	}
	return ""
}

func checkEmbeds(embeds []*discordgo.MessageEmbed) string {
	if len(embeds) > 10 {
		return "embeds: at most 10"
	}
	type limit struct {
		what   string
		n, max int
	}
	total := 0
	for i, e := range embeds {
		if e == nil {
			return fmt.Sprintf("embeds[%d]: null", i)
		}
		limits := []limit{{"title", charLen(e.Title), 256}, {"description", charLen(e.Description), 4096}, {"fields", len(e.Fields), 25}}
		if e.Footer != nil {
			limits = append(limits, limit{"footer.text", charLen(e.Footer.Text), 2048})
			total += charLen(e.Footer.Text)
		}
		for _, l := range limits {
			if l.n > l.max {
				return fmt.Sprintf("embeds[%d].%s: %d, must be %d or fewer", i, l.what, l.n, l.max)
			}
		}
		total += charLen(e.Title) + charLen(e.Description)
		for j, f := range e.Fields {
			if charLen(f.Name) > 256 || charLen(f.Value) > 1024 {
				return fmt.Sprintf("embeds[%d].fields[%d]: name over 256 or value over 1024", i, j)
			}
			total += charLen(f.Name) + charLen(f.Value)
		}
		if e.Author != nil {
			total += charLen(e.Author.Name)
		}
	}
	if total > 6000 {
		return fmt.Sprintf("embeds: %d characters in all, must be 6000 or fewer", total)
	}
	return ""
}

func checkRows(rows []rawComponent) string {
	if len(rows) > 5 {
		return "components: at most 5 rows"
	}
	seen := map[string]bool{}
	for i, row := range rows {
		if row.Type != discordgo.ActionsRowComponent {
			return fmt.Sprintf("components[%d]: a top-level component must be an action row", i)
		}
		if len(row.Components) == 0 || len(row.Components) > 5 {
			return fmt.Sprintf("components[%d]: 1 to 5 buttons a row", i)
		}
		for j, c := range row.Components {
			if c.Type == discordgo.SelectMenuComponent {
				if len(row.Components) != 1 {
					return fmt.Sprintf("components[%d][%d]: a string select is alone in its row", i, j)
				}
				if p := checkMenu(c); p != "" {
					return fmt.Sprintf("components[%d][%d]%s", i, j, p)
				}
			} else if c.Type != discordgo.ButtonComponent {
				return fmt.Sprintf("components[%d][%d]: only buttons and string selects are expected on a card", i, j)
			}
			if charLen(c.Label) > 80 {
				return fmt.Sprintf("components[%d][%d].label: over 80", i, j)
			}
			if c.Style == int(discordgo.LinkButton) && c.Type == discordgo.ButtonComponent {
				continue
			}
			if c.CustomID == "" || len(c.CustomID) > 100 {
				return fmt.Sprintf("components[%d][%d].custom_id: 1 to 100 characters", i, j)
			}
			if seen[c.CustomID] {
				return fmt.Sprintf("components[%d][%d].custom_id: COMPONENT_CUSTOM_ID_DUPLICATED", i, j)
			}
			seen[c.CustomID] = true
		}
	}
	return ""
}

// checkMenu applies a message's string select's limits:
// https://discord.com/developers/docs/components/reference#string-select
func checkMenu(c rawComponent) string {
	if len(c.Options) < 1 || len(c.Options) > 25 {
		return ".options: 1 to 25"
	}
	if charLen(c.Placeholder) > 150 {
		return ".placeholder: over 150"
	}
	lo, hi := 1, 1
	if c.MinValues != nil {
		lo = *c.MinValues
	}
	if c.MaxValues != nil {
		hi = *c.MaxValues
	}
	if lo < 0 || hi < 1 || lo > hi || hi > len(c.Options) {
		return ".min_values, .max_values: 0 ≤ min ≤ max ≤ the options, max ≥ 1"
	}
	values := map[string]bool{}
	for k, o := range c.Options {
		if charLen(o.Label) < 1 || charLen(o.Label) > 100 || o.Value == "" || charLen(o.Value) > 100 {
			return fmt.Sprintf(".options[%d]: a label and a value of 1 to 100 characters", k)
		}
		if values[o.Value] {
			return fmt.Sprintf(".options[%d].value: a value twice", k)
		}
		values[o.Value] = true
	}
	return ""
}

// apply sets what body carries on m.
func apply(m *Message, b *messageBody, perms int64) {
	if b.Content != nil {
		m.Content = *b.Content
	}
	if b.Embeds != nil {
		m.Embeds, m.EmbedsDropped = *b.Embeds, false
		if perms&discordgo.PermissionEmbedLinks == 0 && len(m.Embeds) > 0 {
			m.Embeds, m.EmbedsDropped = nil, true
		}
	}
	if b.Components != nil {
		m.Buttons, m.Menus, m.Rows = nil, nil, len(*b.Components)
		for i, row := range *b.Components {
			for _, c := range row.Components {
				if c.Type == discordgo.SelectMenuComponent {
					m.Menus = append(m.Menus, menuOf(i, c))
					continue
				}
				m.Buttons = append(m.Buttons, Button{Row: i, CustomID: c.CustomID, Label: c.Label, Style: discordgo.ButtonStyle(c.Style)})
			}
		}
	}
	if b.AllowedMentions != nil {
		m.AllowedMentions = b.AllowedMentions
	}
}

// menuOf is the string select c of row i.
func menuOf(i int, c rawComponent) Menu {
	menu := Menu{Row: i, CustomID: c.CustomID, Placeholder: c.Placeholder}
	for _, o := range c.Options {
		menu.Options = append(menu.Options, Option{Label: o.Label, Value: o.Value})
	}
	return menu
}

func (s *Server) messageJSON(m *Message) map[string]any {
	embeds := m.Embeds
	if embeds == nil {
		embeds = []*discordgo.MessageEmbed{}
	}
	return map[string]any{"id": m.ID, "channel_id": m.ChannelID, "content": m.Content, "type": 0,
		"author": s.botUser(), "embeds": embeds, "components": componentsJSON(m), "flags": m.Flags,
		"timestamp": m.CreatedAt.Format(time.RFC3339)}
}

func parseJSON(raw []byte, v any) bool { return json.Unmarshal(raw, v) == nil }

func (s *Server) messageCreate(w http.ResponseWriter, r *http.Request) {
	b, ok := s.readMessage(w, r)
	if !ok {
		return
	}
	if p := checkSendFlags(b.Flags, false); p != "" {
		writeInvalid(w, p)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, perms, ok := s.access(w, r.PathValue("channel"))
	if !ok {
		return
	}
	need := int64(discordgo.PermissionSendMessages)
	if c.parentID != "" {
		need = discordgo.PermissionSendMessagesInThreads
	}
	switch {
	case c.typ != discordgo.ChannelTypeGuildText && c.typ != discordgo.ChannelTypeGuildNews &&
		c.typ != discordgo.ChannelTypeDM && c.parentID == "":
		writeError(w, http.StatusBadRequest, CodeWrongChannelType, "Cannot execute action on this channel type")
		return
	case perms&need == 0:
		writeError(w, http.StatusForbidden, CodeMissingPermissions, "Missing Permissions")
		return
	case c.recipient != "" && s.users[c.recipient] != nil && s.users[c.recipient].blocksDMs:
		writeError(w, http.StatusForbidden, CodeCannotDM, "Cannot send messages to this user")
		return
	}
	empty := (b.Content == nil || *b.Content == "") && (b.Embeds == nil || len(*b.Embeds) == 0) &&
		(b.Components == nil || len(*b.Components) == 0)
	if empty {
		writeError(w, http.StatusBadRequest, CodeEmptyMessage, "Cannot send an empty message")
		return
	}
	if s.o.PerChannelRate > 0 {
		lim := s.limiters[c.id]
		if lim == nil {
			lim = rate.NewLimiter(s.o.PerChannelRate, max(s.o.Burst, 1))
			s.limiters[c.id] = lim
		}
		if res := lim.Reserve(); res.Delay() > 0 {
			after := res.Delay()
			res.Cancel()
			s.rateLimited++
			writeRateLimit(w, max(after, time.Millisecond), false)
			return
		}
	}
	m := &Message{ID: s.Snowflake(), ChannelID: c.id, Flags: b.Flags, CreatedAt: time.Now()}
	apply(m, b, perms)
	if suppressed(m.Flags) && len(m.Embeds) > 0 {
		m.Embeds, m.EmbedsDropped = nil, true
	}
	s.messages[m.ID] = m
	c.order = append(c.order, m.ID)
	writeJSON(w, http.StatusOK, s.messageJSON(m))
}

func (s *Server) messageEdit(w http.ResponseWriter, r *http.Request) {
	b, ok := s.readMessage(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, perms, ok := s.access(w, r.PathValue("channel"))
	if !ok {
		return
	}
	m := s.messages[r.PathValue("message")]
	if m == nil || m.ChannelID != c.id {
		writeError(w, http.StatusNotFound, CodeUnknownMessage, "Unknown Message")
		return
	}
	apply(m, b, perms)
	m.Edits++
	s.recordEdit(m, EditREST, "")
	writeJSON(w, http.StatusOK, s.messageJSON(m))
}

func (s *Server) threadStart(w http.ResponseWriter, r *http.Request) {
	var body discordgo.ThreadStart
	if json.NewDecoder(r.Body).Decode(&body) != nil {
		writeError(w, http.StatusBadRequest, CodeInvalidJSON, "The request body contains invalid JSON.")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, perms, ok := s.access(w, r.PathValue("channel"))
	if !ok {
		return
	}
	m := s.messages[r.PathValue("message")]
	switch {
	case c.typ != discordgo.ChannelTypeGuildText && c.typ != discordgo.ChannelTypeGuildNews:
		writeError(w, http.StatusBadRequest, CodeWrongChannelType, "Cannot execute action on this channel type")
		return
	case m == nil || m.ChannelID != c.id:
		writeError(w, http.StatusNotFound, CodeUnknownMessage, "Unknown Message")
		return
	case perms&discordgo.PermissionCreatePublicThreads == 0:
		writeError(w, http.StatusForbidden, CodeMissingPermissions, "Missing Permissions")
		return
	case m.Thread != "":
		writeError(w, http.StatusBadRequest, CodeThreadAlreadyCreated, "A thread has already been created for this message")
		return
	case charLen(body.Name) < 1 || charLen(body.Name) > 100:
		writeInvalid(w, "name: 1 to 100 characters")
		return
	}
	switch body.AutoArchiveDuration {
	case 0, 60, 1440, 4320, 10080:
	default:
		writeInvalid(w, "auto_archive_duration: 60, 1440, 4320 or 10080")
		return
	}
	// The thread takes the id of the message it starts from.
	t := &channel{id: m.ID, guildID: c.guildID, parentID: c.id, name: body.Name, typ: discordgo.ChannelTypeGuildPublicThread}
	s.channels[t.id] = t
	m.Thread = t.id
	writeJSON(w, http.StatusCreated, s.channelJSON(t))
}

// SetInteractionsURL configures the application's Interactions Endpoint
// URL: interactions are then POSTed there, signed, and the gateway
// delivers none. "" switches back to the gateway.
func (s *Server) SetInteractionsURL(url string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.interactionsURL = url
}

func (s *Server) callback(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	answer, err := parseAnswer(raw)
	if err != nil {
		writeError(w, http.StatusBadRequest, CodeInvalidJSON, "The request body contains invalid JSON.")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.interactions[r.PathValue("token")]
	switch {
	case in == nil || in.id != r.PathValue("interaction") || s.o.Now().Sub(in.created) > answerWithin:
		writeError(w, http.StatusNotFound, CodeUnknownInteraction, "Unknown interaction")
		return
	case in.answered:
		writeError(w, http.StatusBadRequest, CodeAlreadyAcknowledged, "Interaction has already been acknowledged.")
		return
	}
	if problem := s.checkAnswerLocked(in, raw); problem != "" {
		writeInvalid(w, problem)
		return
	}
	s.acceptLocked(in, answer, raw)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) followup(w http.ResponseWriter, r *http.Request) {
	b, ok := s.readMessage(w, r)
	if !ok {
		return
	}
	if p := checkSendFlags(b.Flags, true); p != "" {
		writeInvalid(w, p)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.webhookOf(w, r)
	if !ok {
		return
	}
	f := Followup{InteractionID: in.id, Token: in.token, User: in.user, Flags: b.Flags, AllowedMentions: b.AllowedMentions}
	s.editSeq++
	f.Seq = s.editSeq
	if b.Content != nil {
		f.Content = *b.Content
	}
	if b.Embeds != nil {
		f.Embeds = *b.Embeds
	}
	if b.Components != nil {
		f.Components = len(*b.Components)
	}
	if f.Content == "" && len(f.Embeds) == 0 {
		writeError(w, http.StatusBadRequest, CodeEmptyMessage, "Cannot send an empty message")
		return
	}
	if suppressed(f.Flags) && len(f.Embeds) > 0 {
		f.Embeds, f.EmbedsDropped = nil, true
	}
	s.followups = append(s.followups, f)
	msg := &Message{ID: s.Snowflake(), ChannelID: in.channel, Content: f.Content, Embeds: f.Embeds, Flags: f.Flags}
	if r.URL.Query().Get("wait") == "true" {
		writeJSON(w, http.StatusOK, s.messageJSON(msg))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// Answer is the first answer to an interaction, as Discord read it.
type Answer struct {
	Type     discordgo.InteractionResponseType
	Content  string
	Flags    discordgo.MessageFlags
	Embeds   []*discordgo.MessageEmbed
	CustomID string      // a modal's
	Title    string      // a modal's
	Inputs   []TextInput // a modal's text inputs, label by label
	Texts    []string    // a modal's text displays
	// Selects are a modal's string selects, label by label: each custom_id
	// with its options' values.
	Selects map[string][]string
	// Components says the answer set the message's components (an empty
	// list removes them all); Buttons are the buttons it set, row by row.
	Components bool
	Buttons    []Button
	Raw        json.RawMessage
}

// Ephemeral reports whether only the person who clicked sees the answer.
func (a Answer) Ephemeral() bool { return a.Flags&discordgo.MessageFlagsEphemeral != 0 }

// TextInput is one text input of a modal, with the label and the
// description of the label component that holds it.
type TextInput struct {
	CustomID    string
	Label       string
	Description string
	Style       discordgo.TextInputStyle
	MaxLength   int
	Required    bool
}

func parseAnswer(raw []byte) (*Answer, error) {
	var resp struct {
		Type discordgo.InteractionResponseType `json:"type"`
		Data *struct {
			Content    string                    `json:"content"`
			Flags      discordgo.MessageFlags    `json:"flags"`
			Embeds     []*discordgo.MessageEmbed `json:"embeds"`
			CustomID   string                    `json:"custom_id"`
			Title      string                    `json:"title"`
			Components *[]rawComponent           `json:"components"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		return nil, err
	}
	a := &Answer{Type: resp.Type, Raw: append(json.RawMessage(nil), raw...)}
	if d := resp.Data; d != nil {
		a.Content, a.Flags, a.Embeds, a.CustomID, a.Title = d.Content, d.Flags, d.Embeds, d.CustomID, d.Title
		var rows []rawComponent
		if d.Components != nil {
			a.Components, rows = true, *d.Components
		}
		for i, row := range rows {
			switch row.Type {
			case componentLabel:
				if c := row.Component; c != nil && c.Type == discordgo.SelectMenuComponent {
					if a.Selects == nil {
						a.Selects = map[string][]string{}
					}
					for _, o := range c.Options {
						a.Selects[c.CustomID] = append(a.Selects[c.CustomID], o.Value)
					}
				}
				if c := row.Component; c != nil && c.Type == discordgo.TextInputComponent {
					// Discord's default for required is true.
					a.Inputs = append(a.Inputs, TextInput{CustomID: c.CustomID, Label: row.Label, Description: row.Description,
						Style: discordgo.TextInputStyle(c.Style), MaxLength: c.MaxLength, Required: c.Required == nil || *c.Required})
				}
			case componentTextDisplay:
				a.Texts = append(a.Texts, row.Content)
			}
			for _, c := range row.Components {
				if c.Type == discordgo.ButtonComponent {
					a.Buttons = append(a.Buttons, Button{Row: i, CustomID: c.CustomID, Label: c.Label, Style: discordgo.ButtonStyle(c.Style)})
				}
			}
		}
	}
	return a, nil
}

// checkResponse applies Discord's rules for the first answer to an
// interaction: which types fit which interaction, a message's limits on
// what a message answer or an update carries, and a modal's limits.
// onMessage says the interaction is on a message (a component's, or a
// modal opened from one), which an UPDATE_MESSAGE edits.
// https://discord.com/developers/docs/interactions/receiving-and-responding#interaction-response-object
func checkResponse(typ discordgo.InteractionType, onMessage bool, raw []byte) string {
	var resp struct {
		Type discordgo.InteractionResponseType `json:"type"`
		Data *struct {
			Content    string                 `json:"content"`
			Flags      discordgo.MessageFlags `json:"flags"`
			CustomID   string                 `json:"custom_id"`
			Title      string                 `json:"title"`
			Components []rawComponent         `json:"components"`
			Embeds     []*discordgo.MessageEmbed
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		return "the answer is not JSON"
	}
	var msg struct {
		Data *messageBody `json:"data"`
	}
	if err := json.Unmarshal(raw, &msg); err != nil {
		return "the answer's data is not a message"
	}
	switch resp.Type {
	case discordgo.InteractionResponsePong:
		if typ != discordgo.InteractionPing {
			return "PONG answers only a PING"
		}
	case discordgo.InteractionResponseChannelMessageWithSource, discordgo.InteractionResponseDeferredChannelMessageWithSource:
		if typ == discordgo.InteractionPing {
			return "a PING wants a PONG"
		}
		if resp.Data != nil && charLen(resp.Data.Content) > 2000 {
			return "data.content: over 2000"
		}
		if resp.Data != nil {
			if p := checkSendFlags(resp.Data.Flags, true); p != "" {
				return "data." + p
			}
		}
		if msg.Data != nil {
			if p := checkMessage(msg.Data); p != "" {
				return "data." + p
			}
		}
	case discordgo.InteractionResponseDeferredMessageUpdate, discordgo.InteractionResponseUpdateMessage:
		if typ != discordgo.InteractionMessageComponent && typ != discordgo.InteractionModalSubmit {
			return "DEFERRED_UPDATE_MESSAGE and UPDATE_MESSAGE answer only components and modal submits"
		}
		if resp.Type == discordgo.InteractionResponseUpdateMessage {
			if !onMessage {
				return "UPDATE_MESSAGE: the interaction is on no message to update"
			}
			if msg.Data != nil {
				if p := checkMessage(msg.Data); p != "" {
					return "data." + p
				}
				if p := checkEditFlags(msg.Data.Flags); p != "" {
					return "data." + p
				}
			}
		}
	case discordgo.InteractionResponseModal:
		if typ != discordgo.InteractionMessageComponent && typ != discordgo.InteractionApplicationCommand {
			return "a MODAL answers only components and commands"
		}
		d := resp.Data
		if d == nil || d.CustomID == "" || len(d.CustomID) > 100 {
			return "modal: custom_id of 1 to 100 characters"
		}
		if charLen(d.Title) < 1 || charLen(d.Title) > 45 {
			return "modal: title of 1 to 45 characters"
		}
		if len(d.Components) < 1 || len(d.Components) > 5 {
			return "modal: 1 to 5 components"
		}
		inputs := 0
		for _, c := range d.Components {
			switch c.Type {
			case componentTextDisplay:
				if charLen(c.Content) < 1 || charLen(c.Content) > 4000 {
					return "modal: a text display of 1 to 4000 characters"
				}
			case componentLabel:
				in := c.Component
				if charLen(c.Label) < 1 || charLen(c.Label) > 45 || charLen(c.Description) > 100 {
					return "modal: a label of 1 to 45 characters, a description of at most 100"
				}
				if in != nil && in.Type == discordgo.SelectMenuComponent {
					// https://discord.com/developers/docs/components/reference#string-select
					if in.CustomID == "" || len(in.CustomID) > 100 || len(in.Options) < 1 || len(in.Options) > 25 {
						return "modal: a string select needs a custom_id of 1 to 100 and 1 to 25 options"
					}
					for _, o := range in.Options {
						if charLen(o.Label) < 1 || charLen(o.Label) > 100 || o.Value == "" || charLen(o.Value) > 100 {
							return "modal: a select option needs a label and a value of 1 to 100 characters"
						}
					}
					inputs++
					continue
				}
				if in == nil || in.CustomID == "" || len(in.CustomID) > 100 || (in.Style != 1 && in.Style != 2) ||
					in.MaxLength > 4000 || charLen(in.Placeholder) > 100 {
					return "modal: a text input needs a custom_id of 1 to 100, style 1 or 2, max_length ≤ 4000, a placeholder of at most 100"
				}
				inputs++
			default:
				// Action rows in modals are deprecated for labels.
				return "modal: a component of type " + strconv.Itoa(int(c.Type)) + ": only labels and text displays"
			}
		}
		if inputs == 0 {
			return "modal: no input to submit"
		}
	case discordgo.InteractionApplicationCommandAutocompleteResult:
		if typ != discordgo.InteractionApplicationCommandAutocomplete {
			return "autocomplete results answer only autocomplete"
		}
	default:
		return fmt.Sprintf("unknown response type %d", resp.Type)
	}
	return ""
}

// charLen counts as Discord counts: UTF-16 code units.
func charLen(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// SetMentionable changes whether a role is "Allow anyone to @mention
// this role".
func (s *Server) SetMentionable(guildID, roleID string, mentionable bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.mustGuild(guildID).roles {
		if r.ID == roleID {
			r.Mentionable = mentionable
		}
	}
}

// commandsPut is PUT /applications/{application}/commands: Bulk
// Overwrite Global Application Commands. The body was checked against
// the API's types (routeBodies); each command gets an id.
func (s *Server) commandsPut(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("application") != s.o.ApplicationID {
		writeError(w, http.StatusForbidden, CodeMissingAccess, "Missing Access")
		return
	}
	var cmds []map[string]any
	if json.NewDecoder(r.Body).Decode(&cmds) != nil {
		writeError(w, http.StatusBadRequest, CodeInvalidJSON, "The request body contains invalid JSON.")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commands = s.commands[:0]
	for _, c := range cmds {
		c["id"], c["application_id"], c["version"] = s.Snowflake(), s.o.ApplicationID, s.Snowflake()
		b, _ := json.Marshal(c) // decoded JSON: cannot fail
		s.commands = append(s.commands, b)
	}
	writeJSON(w, http.StatusOK, s.commands)
}

// commandsGet is GET /applications/{application}/commands.
func (s *Server) commandsGet(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("application") != s.o.ApplicationID {
		writeError(w, http.StatusForbidden, CodeMissingAccess, "Missing Access")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append([]json.RawMessage{}, s.commands...)
	writeJSON(w, http.StatusOK, out)
}

// Commands lists the application's global commands as registered.
func (s *Server) Commands() []json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]json.RawMessage(nil), s.commands...)
}
