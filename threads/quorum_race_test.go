package threads_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"approvalsbot/adapters/backend/backendtest"
	"approvalsbot/adapters/backend/standin"
	"approvalsbot/config"
	"approvalsbot/say"
	"approvalsbot/threads"
	"approvalsbot/threads/threadstest"
)

// TestTwoApprovalsAtOneInstantCountOnceEach: two replicas (two Services,
// each its own worker, on one database) take the two approvals a quorum
// needs at the same instant, many times over. Each approval counts once,
// exactly one of the two sends the decision, and the backend gets one
// decision per call. On SQLite the two share the process's store; on
// PostgreSQL (BOT_TEST_POSTGRES_URL) each transaction holds its own
// connection, as two replicas' do.
func TestTwoApprovalsAtOneInstantCountOnceEach(t *testing.T) {
	for _, pg := range []bool{false, true} {
		t.Run(map[bool]string{false: "sqlite", true: "postgres"}[pg], func(t *testing.T) {
			st := openStormStore(t, pg)
			cfg, err := config.Parse("bot.yaml", []byte(quorumConfig), testEnv)
			if err != nil {
				t.Fatal(err)
			}
			back := backendtest.New(t, standin.Options{Secrets: [][]byte{[]byte(testCallsSecret)}})
			clock := clockwork.NewFakeClockAt(threadstest.FixtureNow)
			replica := func() *threads.Service {
				return threadstest.Service(t, threadstest.ServiceOptions{Store: st, Tenants: cfg, Backend: back,
					CallsSecret: testCallsSecret, Clock: clock})
			}
			a, b := replica(), replica()
			const calls = 20
			for i := range calls {
				id := fmt.Sprintf("a-race%02d", i)
				back.AddApproval(id, 1, arguments(t, "a-merge1.json"), false)
				threadstest.Ingest(t, a, "merge.json", func(ev map[string]any) {
					ev["id"] = "evt-race" + id
					ev["data"].(map[string]any)["id"] = id
				})
			}
			for i := range calls {
				id := fmt.Sprintf("a-race%02d", i)
				var wg sync.WaitGroup
				start := make(chan struct{})
				got := make([]threads.DecideResult, 2)
				for j, p := range []struct {
					svc  *threads.Service
					user string
				}{{a, "U0KEVIN"}, {b, "U0LEE"}} {
					wg.Go(func() {
						<-start
						res, err := p.svc.Decide(context.Background(), threads.DecideRequest{Tenant: "acme", ApprovalID: id,
							Revision: 1, Approve: true, Person: slackPerson(p.user)})
						if err != nil {
							t.Error(err)
						}
						got[j] = res
					})
				}
				close(start)
				wg.Wait()
				kinds := []say.Kind{got[0].Reason.Kind, got[1].Reason.Kind}
				if !got[0].Sent || !got[1].Sent || !(kinds[0] == say.Voted && kinds[1] == say.Sending ||
					kinds[0] == say.Sending && kinds[1] == say.Voted) {
					t.Fatalf("%s: %q and %q; want one counted and one sending the decision",
						id, got[0].Reason.String(), got[1].Reason.String())
				}
			}
			for _, svc := range []*threads.Service{a, b} {
				if _, err := svc.DrainOutbox(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			decisions := back.WaitDecisions(ctx, calls)
			per := map[string]int{}
			for _, d := range decisions {
				per[d.Request.ApprovalID]++
				if d.Request.Decision != "approve" || !strings.HasPrefix(d.Request.Actor, "user:") {
					t.Errorf("%s: %+v", d.Request.ApprovalID, d.Request)
				}
			}
			if len(decisions) != calls || len(per) != calls {
				t.Fatalf("backend got %d decisions for %d calls; want one each", len(decisions), len(per))
			}
		})
	}
}
