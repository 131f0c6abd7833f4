// Package clicktest holds what the tests of the chat adapters share about
// clicks: a click.Service a test switches while the adapter built on it
// runs, to make threads fail, stall or hold a click at one point of a
// test and answer as itself at the next.
package clicktest

import (
	"context"
	"sync"
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

// Stall is a click.Service that holds the first Decide until Release,
// then passes it on: a click received and not yet recorded while the
// test makes something else happen (a deadline's tick).
type Stall struct {
	click.Service
	entered chan struct{}
	release chan struct{}
	in, out sync.Once
}

var _ click.Service = (*Stall)(nil)

// NewStall is a Stall in front of svc.
func NewStall(svc click.Service) *Stall {
	return &Stall{Service: svc, entered: make(chan struct{}), release: make(chan struct{})}
}

// Decide waits for Release (the first call only), then passes the call on.
func (s *Stall) Decide(ctx context.Context, req threads.DecideRequest) (threads.DecideResult, error) {
	first := false
	s.in.Do(func() { first = true; close(s.entered) })
	if first {
		<-s.release
	}
	return s.Service.Decide(ctx, req)
}

// Entered is closed once a Decide is being held.
func (s *Stall) Entered() <-chan struct{} { return s.entered }

// Release lets the held Decide go on; later calls do nothing.
func (s *Stall) Release() { s.out.Do(func() { close(s.release) }) }
