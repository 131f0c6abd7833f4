package discord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"

	"approvalsbot/say"
	"approvalsbot/threads"
)

// Gateway timings.
const (
	// openTimeout bounds connecting and identifying; discordgo's Open reads
	// HELLO and READY without a deadline of its own.
	openTimeout = 30 * time.Second
	// gatewayRetryMin and gatewayRetryMax bound the wait before connecting
	// again after the connection failed or dropped. The lock is released
	// during the wait, so another replica may take over.
	gatewayRetryMin = time.Second
	gatewayRetryMax = 2 * time.Minute
)

// fatalClose are the gateway close codes no reconnect can fix: the token
// is refused, or the intents, shard or API version are wrong.
// https://discord.com/developers/docs/topics/opcodes-and-status-codes#gateway-gateway-close-event-codes
var fatalClose = map[int]string{
	4004: "authentication failed: check the bot token",
	4010: "invalid shard",
	4011: "sharding required",
	4012: "invalid API version",
	4013: "invalid intents",
	4014: "disallowed intents",
}

// errConnectionLost: the gateway connection dropped after it was up.
var errConnectionLost = errors.New("the gateway connection dropped")

// runGateway holds the gateway connection while holding the lock, until
// ctx ends; when the connection drops it releases the lock, waits and
// starts over, so another replica can take over.
func (a *Adapter) runGateway(ctx context.Context) error {
	wait := gatewayRetryMin
	for {
		lost, release, err := a.acquire(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			a.log.Warn("discord: could not take the gateway lock; trying again", "err", err.Error(), "retry_in", wait.String())
		} else {
			hctx, cancel := context.WithCancel(ctx)
			go func() {
				select {
				case <-lost: // another replica may hold the lock now
					a.log.Warn("discord: the gateway lock was lost; disconnecting")
					cancel()
				case <-hctx.Done():
				}
			}()
			up, err := a.holdGateway(hctx)
			cancel()
			release()
			if ctx.Err() != nil {
				return nil
			}
			if fatal := fatalGateway(err); fatal != "" {
				a.log.Error("discord: the gateway refused the bot", "reason", fatal)
				return fmt.Errorf("discord gateway: %s", fatal)
			}
			if up {
				wait = gatewayRetryMin
			}
			a.log.Warn("discord: gateway connection ended; connecting again", "err", scrub(err).Error(), "retry_in", wait.String())
		}
		if !pause(ctx, wait) {
			return nil
		}
		wait = min(2*wait, gatewayRetryMax)
	}
}

func (a *Adapter) acquire(ctx context.Context) (<-chan struct{}, func(), error) {
	if a.locker == nil {
		return nil, func() {}, nil
	}
	return a.locker.Acquire(ctx)
}

// fatalGateway says why err ends the gateway for good, or "".
func fatalGateway(err error) string {
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		return fatalClose[ce.Code]
	}
	var re *discordgo.RESTError
	if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode == 401 {
		return "Discord refused the bot token (HTTP 401)"
	}
	return ""
}

// holdGateway connects one session, takes its interactions, and returns
// when ctx ends or it drops (up: it connected). It never reconnects
// itself: discordgo's loop has no context and would outlive the lock.
func (a *Adapter) holdGateway(ctx context.Context) (up bool, err error) {
	conns := &connSet{}
	s, err := discordgo.New(a.token)
	if err != nil {
		return false, err
	}
	s.Client = a.client
	s.ShouldRetryOnRateLimit = false
	s.ShouldReconnectOnError = false
	s.StateEnabled = false
	s.Identify.Intents = GatewayIntents
	s.Identify.Compress = false
	d := *websocket.DefaultDialer
	d.HandshakeTimeout = 10 * time.Second
	d.NetDialContext = conns.dial
	s.Dialer = &d

	lost := make(chan struct{}, 1)
	s.AddHandler(func(_ *discordgo.Session, _ *discordgo.Disconnect) {
		select {
		case lost <- struct{}{}:
		default:
		}
	})
	// Interactions are read from the raw event, as over HTTP: discordgo's
	// Interaction cannot decode a modal with a label, and would log that
	// to stdout, so its logging is off.
	s.LogLevel = discordgo.LogError - 1
	s.AddHandler(func(_ *discordgo.Session, e *discordgo.Event) {
		// discordgo calls handlers in goroutines of its own: track them,
		// so Close waits for an answer in flight.
		if e == nil || e.Type != "INTERACTION_CREATE" {
			return
		}
		var in inbound
		if err := json.Unmarshal(e.RawData, &in); err != nil || in.ID == "" || in.Token == "" {
			a.log.Warn("discord: an interaction over the gateway could not be read")
			return
		}
		done, ok := a.work.Enter()
		if !ok {
			return
		}
		defer done()
		defer func() {
			// A panic here would end the process: discordgo recovers none.
			if p := recover(); p != nil {
				a.log.Error("discord: answering an interaction panicked", "panic", fmt.Sprint(p))
			}
		}()
		a.onGatewayInteraction(&in)
	})

	opened := make(chan error, 1)
	go func() { opened <- s.Open() }()
	timer := time.NewTimer(openTimeout)
	defer timer.Stop()
	select {
	case err = <-opened:
	case <-ctx.Done():
		conns.closeAll() // Open reads without a deadline: cutting the socket ends it
		<-opened
		return false, nil
	case <-timer.C:
		conns.closeAll()
		<-opened
		return false, errors.New("the gateway did not answer within 30 s")
	}
	if err != nil {
		return false, err
	}
	a.log.Info("discord: gateway connected; taking interactions")
	select {
	case <-ctx.Done():
		err = nil
	case <-lost:
		err = errConnectionLost
	}
	_ = s.Close()
	return true, err
}

// onGatewayInteraction answers an interaction through the REST callback
// within Discord's 3 s, then starts the work. An interaction that cannot
// be answered is not worked on: Discord shows the person it failed.
func (a *Adapter) onGatewayInteraction(in *inbound) {
	ctx, cancel := context.WithTimeout(context.Background(), answerWithin)
	defer cancel()
	if in.ApplicationID != a.appID {
		a.log.Warn("discord: interaction for another application over the gateway")
		return
	}
	var ans *answer
	var next threads.Work
	if a.work.Closing() {
		ans = ephemeral(say.ShuttingDown.Text()) // refused before anything is recorded
	} else {
		bctx, bcancel := context.WithTimeout(ctx, answerBudget)
		ans, next = a.interaction(bctx, in)
		bcancel()
	}
	if ans == nil {
		a.log.Info("discord: interaction of a type the bot does not take", "type", in.Type)
		return
	}
	url := endpointCallback(in.ID, in.Token)
	if _, err := a.call(ctx, "POST", url, ans, endpointCallback(in.ID, "")); err != nil {
		a.log.Warn("discord: could not answer an interaction", "discord_user", in.user(), "err", scrub(err).Error())
		return
	}
	if !a.work.Start(next) {
		a.log.Warn("discord: work after an answer dropped: shutting down", "discord_user", in.user())
	}
}

// connSet keeps a session's sockets, so a hanging connect can be cut.
type connSet struct {
	mu    sync.Mutex
	conns []net.Conn
}

func (c *connSet) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := (&net.Dialer{Timeout: 10 * time.Second}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.conns = append(c.conns, conn)
	c.mu.Unlock()
	return conn, nil
}

func (c *connSet) closeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, conn := range c.conns {
		_ = conn.Close()
	}
}
