package decidepage_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"approvalsbot/adapters/decidepage"
	"approvalsbot/threads"
	"approvalsbot/threads/threadstest"
)

// On the store as the bot serves it (the process's alone), the deadline's
// deny waits only for decisions being recorded: the page holds the POST's
// receipt while it records it, so an approval posted 5 ms before the
// deadline and still being recorded when the deadline's tick comes is the
// one decision.
func TestAPostArrivedBeforeTheDeadlineIsNotBeatenByIt(t *testing.T) {
	var stall *threadstest.Stall
	p := newPageSetUp(t, pageSetup{config: strings.ReplaceAll(pageConfig, "EMAIL_DECISIONS", "approve"),
		publicURL: "https://approvals.example", alone: true,
		service: func(svc *threads.Service) decidepage.Service { stall = threadstest.NewStall(svc); return stall }})
	defer stall.Release() // a failure below must not leave the POST held
	p.ingest("merge.json")
	p.drain()
	link := p.link("acme", "a-merge1", 1, "user:kevin", "approve")
	m := checkField.FindStringSubmatch(p.get(link).body)
	if m == nil {
		t.Fatal("the page has no form")
	}
	form := url.Values{"check": {htmlUnescape(m[1])}, "action": {"approve"}, "again": {"yes"}}.Encode()
	deadline := time.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC) // the request's, 24 h after it
	p.clock.Advance(deadline.Add(-5 * time.Millisecond).Sub(p.clock.Now()))
	answered := make(chan int, 1)
	go func() {
		res, err := noRedirect.Post(link, "application/x-www-form-urlencoded", strings.NewReader(form))
		if err != nil {
			t.Error(err)
			answered <- 0
			return
		}
		res.Body.Close()
		answered <- res.StatusCode
	}()
	<-stall.Entered() // received, not yet recorded
	threadstest.HeldPastTheDeadline(t, p.svc, p.clock, p.fake, stall.Release, func() {
		if status := <-answered; status != http.StatusSeeOther {
			t.Fatalf("the POST answered %d", status)
		}
	}, "user:kevin", "approve")
}
