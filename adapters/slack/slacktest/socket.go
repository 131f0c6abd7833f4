package slacktest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Ack is one Socket Mode acknowledgement the client sent.
type Ack struct {
	EnvelopeID string
	// Payload is the ack's payload (a view_submission's response_action,
	// a slash command's message); nil for a bare ack.
	Payload json.RawMessage
	// After is how long after the envelope was sent the ack arrived.
	After time.Duration
}

// socketState is the fake's Socket Mode side: at most one connection
// matters at a time (the latest), as in a test.
type socketState struct {
	mu        sync.Mutex
	conn      *websocket.Conn
	writeMu   sync.Mutex
	connected chan struct{}
	sent      map[string]time.Time
	acks      []Ack
	ackAdded  chan struct{}
	conns     []*websocket.Conn
	seq       int
	done      chan struct{}
}

func (ss *socketState) init() {
	ss.connected = make(chan struct{})
	ss.sent = map[string]time.Time{}
	ss.ackAdded = make(chan struct{}, 1)
	ss.done = make(chan struct{})
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

func (s *Server) serveSocket(w http.ResponseWriter, r *http.Request) {
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	ss := &s.socket
	ss.mu.Lock()
	first := ss.conn == nil
	ss.conn = conn
	ss.conns = append(ss.conns, conn)
	ss.mu.Unlock()
	ss.writeMu.Lock()
	err = conn.WriteJSON(map[string]any{"type": "hello", "num_connections": 1,
		"connection_info": map[string]any{"app_id": "A0APP"}})
	ss.writeMu.Unlock()
	if err != nil {
		return
	}
	if first {
		close(ss.connected)
	}
	// Slack pings; the client reconnects when no ping comes for 30 s.
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ss.done:
				return
			case <-t.C:
				if conn.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(time.Second)) != nil {
					return
				}
			}
		}
	}()
	for {
		var ack struct {
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if err := conn.ReadJSON(&ack); err != nil {
			return
		}
		ss.mu.Lock()
		after := time.Since(ss.sent[ack.EnvelopeID])
		ss.acks = append(ss.acks, Ack{EnvelopeID: ack.EnvelopeID, Payload: ack.Payload, After: after})
		ss.mu.Unlock()
		select {
		case ss.ackAdded <- struct{}{}:
		default:
		}
	}
}

func (s *Server) closeSockets() {
	ss := &s.socket
	ss.mu.Lock()
	defer ss.mu.Unlock()
	select {
	case <-ss.done:
	default:
		close(ss.done)
	}
	for _, c := range ss.conns {
		_ = c.Close()
	}
}

// WaitSocket waits until a Socket Mode client has connected.
func (s *Server) WaitSocket(ctx context.Context) error {
	select {
	case <-s.socket.connected:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("no Socket Mode client connected: %w", ctx.Err())
	}
}

// send delivers one envelope to the connected client.
func (s *Server) send(typ string, payload any) (string, error) {
	ss := &s.socket
	ss.mu.Lock()
	conn := ss.conn
	ss.seq++
	id := fmt.Sprintf("env-%d", ss.seq)
	ss.sent[id] = time.Now()
	ss.mu.Unlock()
	if conn == nil {
		return "", errors.New("no Socket Mode client connected")
	}
	ss.writeMu.Lock()
	defer ss.writeMu.Unlock()
	return id, conn.WriteJSON(map[string]any{"envelope_id": id, "type": typ, "payload": payload,
		"accepts_response_payload": true})
}

// SendInteractive delivers an interaction payload (block_actions,
// view_submission, …) as Slack does over Socket Mode, and returns its
// envelope id.
func (s *Server) SendInteractive(payload any) (string, error) { return s.send("interactive", payload) }

// SendSlashCommand delivers a slash command, its fields as Slack posts
// them over HTTP, and returns its envelope id.
func (s *Server) SendSlashCommand(fields url.Values) (string, error) {
	m := map[string]string{}
	for k := range fields {
		m[k] = fields.Get(k)
	}
	return s.send("slash_commands", m)
}

// WaitAck waits for the client's ack of an envelope.
func (s *Server) WaitAck(ctx context.Context, envelopeID string) (Ack, error) {
	ss := &s.socket
	for {
		ss.mu.Lock()
		for _, a := range ss.acks {
			if a.EnvelopeID == envelopeID {
				ss.mu.Unlock()
				return a, nil
			}
		}
		ss.mu.Unlock()
		select {
		case <-ss.ackAdded:
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			return Ack{}, fmt.Errorf("no ack of %s: %w", envelopeID, ctx.Err())
		}
	}
}
