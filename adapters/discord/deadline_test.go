package discord_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"approvalsbot/adapters/discord/discordtest"
	"approvalsbot/threads"
)

// stalledDecide holds a click's record until released: a click that
// arrived before the deadline and is still being recorded as it passes.
type stalledDecide struct {
	*threads.Service
	entered, release chan struct{}
}

func (s stalledDecide) Decide(ctx context.Context, req threads.DecideRequest) (threads.DecideResult, error) {
	close(s.entered)
	<-s.release
	return s.Service.Decide(ctx, req)
}

// On the store as the bot serves it (the process's alone), the deadline's
// deny goes at its tick unless a click that arrived before the deadline is
// still being recorded: the adapter holds the click's receipt while it
// records it, over HTTP and over the gateway. Here the destructive call's
// confirmation is submitted 5 ms before the deadline and recorded after
// the deadline's tick: the person's approval is the one decision.
func TestAClickArrivedBeforeTheDeadlineIsNotBeatenByIt(t *testing.T) {
	for _, tt := range []struct {
		name string
		ho   harnessOptions
	}{
		{"http", harnessOptions{alone: true}},
		{"gateway", harnessOptions{alone: true, gateway: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarnessWith(t, tt.ho)
			h.ingest(t, "merge.json")
			h.drain(t)
			deadline := time.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC) // the request's, 24 h after it
			h.clock.Advance(deadline.Add(-5 * time.Millisecond).Sub(h.clock.Now()))
			// Approve on a destructive call opens its confirmation first.
			res := h.click(t, kevin, chApproval, "ab1|approve|a-merge1|1")
			if res.Response.Title != confirmTitle {
				t.Fatalf("Approve answered %+v, want the confirmation", res.Response)
			}

			stall := stalledDecide{Service: h.svc, entered: make(chan struct{}), release: make(chan struct{})}
			h.clicks.Use(stall)
			var released sync.Once
			release := func() { released.Do(func() { close(stall.release) }) }
			defer release() // a failure below must not leave the click held
			submitted := make(chan discordtest.Result, 1)
			go func() {
				submitted <- h.discord.SubmitModal(discordtest.Submit{User: kevin, Channel: chApproval,
					CustomID: res.Response.CustomID, Values: map[string]string{"comment": ""}})
			}()
			<-stall.entered // received, not yet recorded

			h.clock.Advance(6 * time.Millisecond) // the deadline has passed
			if r, err := h.svc.Tick(context.Background()); err != nil || r.Deadlines != 1 {
				t.Fatalf("the deadline's tick: %+v %v", r, err)
			}
			h.drain(t)
			if got := h.backend.Decisions(); len(got) != 0 {
				t.Fatalf("the backend got %d decisions while a click that arrived before the deadline was being recorded", len(got))
			}
			release()
			if sub := <-submitted; !sub.Answered() {
				t.Fatalf("the confirmation was not answered: %+v", sub)
			}
			h.drain(t)
			h.clock.Advance(2 * threads.RecordBound)
			if _, err := h.svc.Tick(context.Background()); err != nil {
				t.Fatal(err)
			}
			h.drain(t)
			got := h.backend.Decisions()
			if len(got) != 1 || got[0].Request.Actor != "user:kevin" || got[0].Request.Decision != "approve" {
				t.Fatalf("the backend got %+v, want kevin's approval alone", got)
			}
		})
	}
}
