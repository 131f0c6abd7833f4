package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	slackgo "github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"approvalsbot/threads"
)

// runSocket takes interactions and commands over Socket Mode until ctx
// ends, acking each within Slack's 3 s as the HTTP endpoint would;
// slack-go reconnects itself, and it returns when the app token is refused.
func (a *Adapter) runSocket(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sm := socketmode.New(a.socketAPI, socketmode.OptionLog(a.libLog))
	done := make(chan error, 1)
	go func() { done <- sm.RunContext(ctx) }()
	for {
		select {
		case err := <-done:
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("slack socket mode: %w", scrub(err))
		case evt := <-sm.Events:
			a.socketEvent(ctx, sm, evt)
		case <-ctx.Done():
			<-done // RunContext returns once ctx ends
			return nil
		}
	}
}

func (a *Adapter) socketEvent(ctx context.Context, sm *socketmode.Client, evt socketmode.Event) {
	switch evt.Type {
	case socketmode.EventTypeInteractive:
		cb, ok := evt.Data.(slackgo.InteractionCallback)
		if !ok || evt.Request == nil {
			return
		}
		if reason, ok := oneReading(evt.Request.Payload); !ok {
			// Acked, so Slack does not send it again, and dropped: a
			// person's click never holds a key twice.
			a.ack(ctx, sm, evt.Request, nil)
			a.log.Warn("slack: interaction dropped: its payload holds a key twice", "reason", reason)
			return
		}
		// Each interaction is recorded and acked on its own, so one
		// click's record does not hold up the clicks behind it.
		rc, req := a.service.Receive(), evt.Request
		started := a.work.Start(threads.Work{Timeout: ackWithin, Run: func(wctx context.Context) {
			defer rc.Done()
			reply, next := a.interaction(wctx, &cb, rc)
			a.ack(ctx, sm, req, reply)
			if !a.work.Start(next) {
				a.log.Warn("slack: the answer to an interaction dropped: shutting down", "slack_user", cb.User.ID)
			}
		}})
		if !started {
			rc.Done()
			a.log.Warn("slack: interaction dropped: shutting down", "slack_user", cb.User.ID)
		}
	case socketmode.EventTypeSlashCommand:
		cmd, ok := evt.Data.(slackgo.SlashCommand)
		if !ok || evt.Request == nil {
			return
		}
		a.ack(ctx, sm, evt.Request, nil)
		if !a.work.Start(a.command(cmd)) {
			a.log.Warn("slack: command dropped: shutting down", "slack_user", cmd.UserID)
		}
	case socketmode.EventTypeEventsAPI:
		// The app subscribes to no events; ack what comes so Slack does
		// not retry it.
		if evt.Request != nil {
			a.ack(ctx, sm, evt.Request, nil)
		}
	case socketmode.EventTypeConnected:
		a.log.Info("slack: socket mode connected")
	case socketmode.EventTypeConnectionError, socketmode.EventTypeIncomingError, socketmode.EventTypeErrorWriteFailed,
		socketmode.EventTypeErrorBadMessage:
		a.log.Warn("slack: socket mode trouble; slack-go reconnects", "event", string(evt.Type))
	case socketmode.EventTypeInvalidAuth:
		a.log.Error("slack: socket mode: the app token was refused")
	}
}

// ack acknowledges an envelope within Slack's 3 s.
func (a *Adapter) ack(ctx context.Context, sm *socketmode.Client, req *socketmode.Request, reply ackBody) {
	actx, cancel := context.WithTimeout(ctx, ackWithin)
	defer cancel()
	var payload any
	if reply != nil {
		if b, err := json.Marshal(reply); err == nil && len(b) < socketAckMax {
			payload = reply
		}
	}
	if err := sm.AckCtx(actx, req.EnvelopeID, payload); err != nil && !errors.Is(err, context.Canceled) {
		a.log.Warn("slack: socket mode ack failed", "err", err.Error())
	}
}
