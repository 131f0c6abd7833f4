package threadstest

import (
	"context"
	"sync"
	"sync/atomic"

	"approvalsbot/say"
	"approvalsbot/threads"
)

// Clicker is what a surface sends its clicks to; *threads.Service
// satisfies it.
type Clicker interface {
	Click(ctx context.Context, req threads.ClickRequest) threads.Clicked
	Card(ctx context.Context, approvalID string, revision int) (threads.Card, error)
	Receive() *threads.Receipt
}

var _ Clicker = (*threads.Service)(nil)

// Switch is a Clicker that passes every call to the one it was last
// given (Use). An adapter is built on one service and keeps it; a test
// that wants another for a while (threads on a store that fails) builds
// the adapter on a Switch.
type Switch struct{ cur atomic.Pointer[box] }

type box struct{ Clicker }

var _ Clicker = (*Switch)(nil)

// NewSwitch is a Switch that passes calls to c.
func NewSwitch(c Clicker) *Switch {
	s := &Switch{}
	s.Use(c)
	return s
}

// Use passes the calls from now on to c.
func (s *Switch) Use(c Clicker) { s.cur.Store(&box{c}) }

func (s *Switch) now() Clicker { return s.cur.Load().Clicker }

// Click passes the call on.
func (s *Switch) Click(ctx context.Context, req threads.ClickRequest) threads.Clicked {
	return s.now().Click(ctx, req)
}

// Card passes the call on.
func (s *Switch) Card(ctx context.Context, approvalID string, revision int) (threads.Card, error) {
	return s.now().Card(ctx, approvalID, revision)
}

// Receive passes the call on.
func (s *Switch) Receive() *threads.Receipt { return s.now().Receive() }

// ClickTurn passes a turn's click on to a Clicker that takes them, and
// answers any other as a button the bot does not know.
func (s *Switch) ClickTurn(ctx context.Context, req threads.TurnClickRequest) threads.Clicked {
	if tc, ok := s.now().(interface {
		ClickTurn(context.Context, threads.TurnClickRequest) threads.Clicked
	}); ok {
		return tc.ClickTurn(ctx, req)
	}
	return threads.Clicked{Reason: say.Reason{Kind: say.TurnUnknown}}
}

// Stall is a Clicker that holds the first click until Release, then
// passes it on: a click received and not yet recorded while the test
// makes something else happen (a deadline's tick).
type Stall struct {
	Clicker
	entered chan struct{}
	release chan struct{}
	in, out sync.Once
}

var _ Clicker = (*Stall)(nil)

// NewStall is a Stall in front of c.
func NewStall(c Clicker) *Stall {
	return &Stall{Clicker: c, entered: make(chan struct{}), release: make(chan struct{})}
}

// Click waits for Release (the first call but a page's view, which
// records nothing), then passes the call on.
func (s *Stall) Click(ctx context.Context, req threads.ClickRequest) threads.Clicked {
	first := false
	if req.Do != threads.ClickView {
		s.in.Do(func() { first = true; close(s.entered) })
	}
	if first {
		<-s.release
	}
	return s.Clicker.Click(ctx, req)
}

// Entered is closed once a click is being held.
func (s *Stall) Entered() <-chan struct{} { return s.entered }

// Release lets the held click go on; later calls do nothing.
func (s *Stall) Release() { s.out.Do(func() { close(s.release) }) }
