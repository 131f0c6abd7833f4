// Package clicktest holds what the tests of the chat adapters share about
// clicks: a click.Service a test switches while the adapter built on it
// runs, to make threads fail, stall or hold a click at one point of a
// test and answer as itself at the next.
package clicktest

import (
	"context"
	"sync/atomic"

	"approvalsbot/adapters/click"
	"approvalsbot/threads"
)

// Switch is a click.Service that passes every call to the service it
// was last given (Use). An adapter is built on one service and keeps it;
// a test that wants another for a while builds the adapter on a Switch.
type Switch struct{ cur atomic.Pointer[box] }

type box struct{ click.Service }

var _ click.Service = (*Switch)(nil)

// NewSwitch is a Switch that passes calls to svc.
func NewSwitch(svc click.Service) *Switch {
	s := &Switch{}
	s.Use(svc)
	return s
}

// Use passes the calls from now on to svc.
func (s *Switch) Use(svc click.Service) { s.cur.Store(&box{svc}) }

func (s *Switch) svc() click.Service { return s.cur.Load().Service }

// Decide passes the call on.
func (s *Switch) Decide(ctx context.Context, req threads.DecideRequest) (threads.DecideResult, error) {
	return s.svc().Decide(ctx, req)
}

// Card passes the call on.
func (s *Switch) Card(ctx context.Context, approvalID string, revision int) (threads.Card, error) {
	return s.svc().Card(ctx, approvalID, revision)
}

// ShowArguments passes the call on.
func (s *Switch) ShowArguments(ctx context.Context, req threads.ShowRequest) (threads.ShowResult, error) {
	return s.svc().ShowArguments(ctx, req)
}

// Acknowledge passes the call on.
func (s *Switch) Acknowledge(ctx context.Context, req threads.LadderRequest) (threads.LadderResult, error) {
	return s.svc().Acknowledge(ctx, req)
}

// EscalateNow passes the call on.
func (s *Switch) EscalateNow(ctx context.Context, req threads.LadderRequest) (threads.LadderResult, error) {
	return s.svc().EscalateNow(ctx, req)
}

// Receive passes the call on.
func (s *Switch) Receive() *threads.Receipt { return s.svc().Receive() }
