package discordtest

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"
)

// gateway is the fake's gateway: sessions that identified, in order.
type gateway struct {
	mu            sync.Mutex
	sessions      []*gwSession
	identifies    []Identify
	maxConcurrent int
}

// Identify is one IDENTIFY a client sent.
type Identify struct {
	Intents discordgo.Intent
	TokenOK bool
}

type gwSession struct {
	conn *websocket.Conn
	wmu  sync.Mutex
	seq  int64
}

func (g *gwSession) send(v any) error {
	g.wmu.Lock()
	defer g.wmu.Unlock()
	_ = g.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return g.conn.WriteJSON(v)
}

// gatewayURL answers GET /gateway and /gateway/bot with the fake's own
// websocket.
func (s *Server) gatewayURL(w http.ResponseWriter, r *http.Request) {
	u := "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/gateway"
	writeJSON(w, http.StatusOK, map[string]any{"url": u, "shards": 1,
		"session_start_limit": map[string]any{"total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1}})
}

// Gateway opcodes: https://discord.com/developers/docs/topics/opcodes-and-status-codes#gateway
const (
	opDispatch     = 0
	opHeartbeat    = 1
	opIdentify     = 2
	opHello        = 10
	opHeartbeatAck = 11
)

// serveGateway speaks enough of the gateway for a session: HELLO,
// IDENTIFY (the token checked: 4004 otherwise), READY, heartbeats, and the
// dispatches the test sends.
func (s *Server) serveGateway(w http.ResponseWriter, r *http.Request) {
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	c, err := up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer c.Close()
	sess := &gwSession{conn: c}
	if sess.send(map[string]any{"op": opHello, "d": map[string]any{"heartbeat_interval": 41250}}) != nil {
		return
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var msg struct {
		Op int             `json:"op"`
		D  json.RawMessage `json:"d"`
	}
	if c.ReadJSON(&msg) != nil {
		return
	}
	var id struct {
		Token   string           `json:"token"`
		Intents discordgo.Intent `json:"intents"`
	}
	if msg.Op != opIdentify || json.Unmarshal(msg.D, &id) != nil {
		closeWith(c, 4003, "Not authenticated.")
		return
	}
	ok := strings.TrimPrefix(id.Token, "Bot ") == s.o.Token
	s.gw.mu.Lock()
	s.gw.identifies = append(s.gw.identifies, Identify{Intents: id.Intents, TokenOK: ok})
	s.gw.mu.Unlock()
	if !ok {
		closeWith(c, 4004, "Authentication failed.")
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	sess.seq = 1
	ready := map[string]any{"v": 9, "user": s.botUser(), "session_id": s.Snowflake(), "guilds": []any{},
		"resume_gateway_url": "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/gateway",
		"application":        map[string]any{"id": s.o.ApplicationID, "flags": 0}}
	if sess.send(map[string]any{"op": opDispatch, "t": "READY", "s": 1, "d": ready}) != nil {
		return
	}
	s.gw.mu.Lock()
	s.gw.sessions = append(s.gw.sessions, sess)
	s.gw.maxConcurrent = max(s.gw.maxConcurrent, len(s.gw.sessions))
	s.gw.mu.Unlock()
	defer func() {
		s.gw.mu.Lock()
		for i, x := range s.gw.sessions {
			if x == sess {
				s.gw.sessions = append(s.gw.sessions[:i], s.gw.sessions[i+1:]...)
				break
			}
		}
		s.gw.mu.Unlock()
	}()
	for {
		if err := c.ReadJSON(&msg); err != nil {
			return
		}
		if msg.Op == opHeartbeat {
			if sess.send(map[string]any{"op": opHeartbeatAck}) != nil {
				return
			}
		}
	}
}

func closeWith(c *websocket.Conn, code int, text string) {
	_ = c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, text), time.Now().Add(time.Second))
	time.Sleep(50 * time.Millisecond) // let the close frame reach the client before the socket goes
}

// dispatch sends an event to the newest session, as Discord sends each
// event to one session of a bot.
func (s *Server) dispatch(event string, body []byte) bool {
	s.gw.mu.Lock()
	if len(s.gw.sessions) == 0 {
		s.gw.mu.Unlock()
		return false
	}
	sess := s.gw.sessions[len(s.gw.sessions)-1]
	sess.seq++
	seq := sess.seq
	s.gw.mu.Unlock()
	return sess.send(map[string]any{"op": opDispatch, "t": event, "s": seq, "d": json.RawMessage(body)}) == nil
}

// GatewaySessions counts the sessions connected now.
func (s *Server) GatewaySessions() int {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	return len(s.gw.sessions)
}

// MaxGatewaySessions is the most sessions ever connected at once.
func (s *Server) MaxGatewaySessions() int {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	return s.gw.maxConcurrent
}

// Identifies lists every IDENTIFY received.
func (s *Server) Identifies() []Identify {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	return append([]Identify(nil), s.gw.identifies...)
}

// DropGateway cuts every gateway connection, as when Discord or the
// network drops them.
func (s *Server) DropGateway() {
	s.gw.mu.Lock()
	sessions := append([]*gwSession(nil), s.gw.sessions...)
	s.gw.mu.Unlock()
	for _, sess := range sessions {
		_ = sess.conn.Close()
	}
}
