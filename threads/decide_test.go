package threads_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"approvalsbot/adapters/backend"
	"approvalsbot/adapters/backend/backendtest"
	"approvalsbot/adapters/backend/standin"
	"approvalsbot/approval"
	"approvalsbot/internal/fixtures"
	"approvalsbot/templates"
	"approvalsbot/threads"
	"approvalsbot/threads/threadstest"
)

// decideHarness wires threads to the fake job backend through the real
// client, so every decision crosses HTTP, signed, with its digest checked.
type decideHarness struct {
	*harness
	fake *backendtest.Fake
}

func newDecideHarness(t *testing.T, maxElapsed time.Duration) *decideHarness {
	t.Helper()
	return newDecideHarnessFrom(t, testConfig, maxElapsed, nil)
}

// newDecideHarnessFrom builds a harness that decides on a configuration
// of the test's own, opt changing the options last.
func newDecideHarnessFrom(t *testing.T, configText string, maxElapsed time.Duration, opt func(*threads.Options)) *decideHarness {
	t.Helper()
	return newDecideHarnessWith(t, configText, maxElapsed, nil, opt)
}

// newDecideHarnessWith is newDecideHarnessFrom with a backend that takes
// these optional features (backend.features).
func newDecideHarnessWith(t *testing.T, configText string, maxElapsed time.Duration, features []string, opt func(*threads.Options)) *decideHarness {
	t.Helper()
	return newDecideHarnessEnv(t, configText, testEnv, maxElapsed, features, opt)
}

// newDecideHarnessEnv is newDecideHarnessWith reading the configuration's
// secrets from env.
func newDecideHarnessEnv(t *testing.T, configText string, env func(string) (string, bool), maxElapsed time.Duration, features []string,
	opt func(*threads.Options)) *decideHarness {
	t.Helper()
	secret := [][]byte{[]byte(testCallsSecret)}
	fake := backendtest.New(t, standin.Options{Secrets: secret})
	client, err := backend.NewClient(backend.ClientOptions{BaseURL: fake.URL(), Secrets: secret, Features: features,
		MaxElapsed: maxElapsed, Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() }})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarnessEnv(t, configText, env, func(o *threads.Options) {
		o.Backend = client.ForThreads()
		o.Mailer = o.Fallback.(*recorder)
		if opt != nil {
			opt(o)
		}
	})
	return &decideHarness{harness: h, fake: fake}
}

// arguments reads a fixture approval's full arguments, the backend's truth.
func arguments(t testing.TB, name string) json.RawMessage {
	t.Helper()
	args, err := fixtures.Arguments(name)
	if err != nil {
		t.Fatal(err)
	}
	return args
}

func slackPerson(user string) threads.Person {
	return threads.Person{Surface: "slack", User: user, Channel: "C0APPROVALS", Reply: "https://hooks.example/" + user}
}

// showArguments presses Show all arguments on a card's first revision,
// as a surface does: what it shows, or its refusal; an error when the
// look-up could not be made.
func showArguments(svc *threads.Service, id, user string) (threads.ShowResult, error) {
	out := svc.Click(context.Background(), threads.ClickRequest{Do: threads.ClickShow,
		Action: templates.Action{Kind: templates.ActionShowArgs, ApprovalID: id, Revision: 1}, Person: slackPerson(user)})
	switch {
	case out.Retry:
		return threads.ShowResult{}, errors.New(out.Reason.String())
	case out.Shown == nil:
		return threads.ShowResult{Refusal: out.Reason}, nil
	}
	return out.Shown.Arguments, nil
}

func (h *decideHarness) decide(t *testing.T, id string, rev int, approve bool, user string) threads.DecideResult {
	t.Helper()
	res, err := h.svc.Decide(context.Background(), threads.DecideRequest{Tenant: "acme", ApprovalID: id,
		Revision: rev, Approve: approve, Person: slackPerson(user), Comment: "ok by me"})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func (h *decideHarness) lastTell(t *testing.T) threads.TellRequest {
	t.Helper()
	if len(h.surf.tells) == 0 {
		t.Fatal("nobody was told anything")
	}
	return h.surf.tells[len(h.surf.tells)-1]
}

func TestApproveReachesBackendBoundToTheCard(t *testing.T) {
	h := newDecideHarness(t, time.Minute)
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	h.drain(t)
	res := h.decide(t, "a-merge1", 1, true, "U0KEVIN")
	if !res.Sent {
		t.Fatalf("not sent: %s", res.Reason.String())
	}
	h.drain(t)
	got := h.fake.Decisions()
	if len(got) != 1 {
		t.Fatalf("backend got %d decisions", len(got))
	}
	d := got[0]
	_, ev := readEvent(t, "merge.json")
	if !d.SignatureOK || d.Status != 200 || d.Request.Decision != "approve" || d.Request.Actor != "user:kevin" ||
		d.Request.Revision != 1 || d.Request.ArgsSHA256 != ev.Approval.Call.ArgsSHA256 ||
		d.Request.Via.Surface != "slack" || d.Request.Via.User != "U0KEVIN" || d.IdempotencyKey == "" {
		t.Fatalf("decision %+v", d)
	}
	if a := h.state(t, "a-merge1"); a.State != "approved" || len(a.Deciding) != 0 {
		t.Fatalf("state %s deciding %s", a.State, a.Deciding)
	}
	if len(h.surf.edits) != 2 || h.surf.edits[0].Card.State != approval.StateApproved || h.surf.edits[0].Card.Decision.Actor != "user:kevin" {
		t.Fatalf("edits %+v", h.surf.edits)
	}
	if len(h.surf.replies) != 2 {
		t.Fatalf("the backend's message was not said in both threads: %+v", h.surf.replies)
	}
	if tell := h.lastTell(t); tell.User != "U0KEVIN" || !strings.Contains(tell.Text, "Recorded") || tell.Reply == "" {
		t.Fatalf("tell %+v", tell)
	}
	// A second click on the decided card is refused without a call.
	if res := h.decide(t, "a-merge1", 1, false, "U0LEE"); res.Sent || !strings.Contains(res.Reason.String(), "already approved by user:kevin") {
		t.Fatalf("click on a decided card: %+v", res)
	}
	if len(h.fake.Decisions()) != 1 {
		t.Fatal("a second decision reached the backend")
	}
}

func TestRefusedBeforeAnythingIsSent(t *testing.T) {
	h := newDecideHarness(t, time.Minute)
	for _, id := range []string{"a-merge1", "a-refund1", "a-prot1"} {
		h.fake.AddApproval(id, 1, arguments(t, id+".json"), false)
	}
	h.ingest(t, "merge.json")
	h.ingest(t, "refund.json")
	h.ingest(t, "protected.json")
	h.ingest(t, "merge-reasked.json")
	cases := []struct {
		name    string
		id      string
		rev     int
		approve bool
		user    string
		want    string
	}{
		{"unmapped user", "a-merge1", 2, true, "U0STRANGER", "not a member of tenant acme"},
		{"viewer", "a-merge1", 2, true, "U0VIC", "viewer, which cannot decide"},
		{"the job's starter", "a-merge1", 2, false, "U0ADA", "forbids deciding your own job's calls"},
		{"superseded card", "a-merge1", 1, true, "U0KEVIN", "superseded"},
		{"typed confirmation", "a-refund1", 1, true, "U0KEVIN", "needs a typed confirmation of amount"},
		{"protected paths, without governance", "a-prot1", 1, true, "U0KEVIN", "approved only in the console"},
		{"protected paths, even with governance", "a-prot1", 1, true, "U0LEE", "approved only in the console"},
		{"unknown approval", "a-none", 1, true, "U0KEVIN", "knows no such card"},
	}
	for _, c := range cases {
		res := h.decide(t, c.id, c.rev, c.approve, c.user)
		if res.Sent || !strings.Contains(res.Reason.String(), c.want) {
			t.Errorf("%s: %+v, want refusal containing %q", c.name, res, c.want)
		}
	}
	h.drain(t)
	if n := len(h.fake.Decisions()); n != 0 {
		t.Fatalf("%d decisions reached the backend", n)
	}
	// Deny stays open where approve is refused.
	if res := h.decide(t, "a-refund1", 1, false, "U0KEVIN"); !res.Sent {
		t.Fatalf("deny of a call needing typed confirmation: %+v", res)
	}
}

func TestSimultaneousClicksSendOneDecision(t *testing.T) {
	h := newDecideHarness(t, time.Minute)
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	var wg sync.WaitGroup
	results := make([]threads.DecideResult, 2)
	for i, user := range []string{"U0KEVIN", "U0LEE"} {
		wg.Go(func() { results[i] = h.decide(t, "a-merge1", 1, i == 0, user) })
	}
	wg.Wait()
	sent := 0
	for _, r := range results {
		if r.Sent {
			sent++
		} else if !strings.Contains(r.Reason.String(), "is deciding this call already") {
			t.Errorf("the other click was told %q", r.Reason.String())
		}
	}
	if sent != 1 {
		t.Fatalf("%d clicks sent, want exactly 1: %+v", sent, results)
	}
	h.drain(t)
	if n := len(h.fake.Decisions()); n != 1 {
		t.Fatalf("backend got %d decisions", n)
	}
}

func TestBackendAnswersReachThePerson(t *testing.T) {
	t.Run("already decided elsewhere", func(t *testing.T) {
		h := newDecideHarness(t, time.Minute)
		h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
		h.fake.SetStatus("a-merge1", "denied", "user:ada")
		h.ingest(t, "merge.json")
		h.drain(t)
		h.decide(t, "a-merge1", 1, true, "U0KEVIN")
		h.drain(t)
		if a := h.state(t, "a-merge1"); a.State != "denied" {
			t.Fatalf("state %s, want the backend's denied", a.State)
		}
		if tell := h.lastTell(t); !strings.Contains(tell.Text, "user:ada denied it first") {
			t.Fatalf("told %q", tell.Text)
		}
		last := h.surf.edits[len(h.surf.edits)-1]
		if last.Card.Decision == nil || last.Card.Decision.Actor != "user:ada" {
			t.Fatalf("card shows %+v", last.Card.Decision)
		}
	})
	t.Run("digest mismatch", func(t *testing.T) {
		h := newDecideHarness(t, time.Minute)
		h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.r2.json"), false) // other arguments
		h.ingest(t, "merge.json")
		h.drain(t) // the cards are up
		h.decide(t, "a-merge1", 1, true, "U0KEVIN")
		h.drain(t)
		tell := h.lastTell(t)
		if !strings.Contains(tell.Text, "is not for the arguments") || !strings.Contains(tell.Text, "look at the call again") {
			t.Fatalf("told %q, want the backend's sentence", tell.Text)
		}
		if a := h.state(t, "a-merge1"); a.State != "pending" || len(a.Deciding) != 0 {
			t.Fatalf("after a mismatch: %s, deciding %s", a.State, a.Deciding)
		}
		// Every copy is shown waiting again, with its buttons, whether or
		// not the click's own handle could still reach the clicked one.
		if n := len(h.surf.posts); len(h.surf.edits) < n {
			t.Fatalf("%d copies edited after the refusal, want all %d", len(h.surf.edits), n)
		}
		for _, e := range h.surf.edits[len(h.surf.edits)-len(h.surf.posts):] {
			if e.Card.State != approval.StatePending || e.Card.Deciding != nil {
				t.Errorf("copy %s shows %s, deciding %+v: want it waiting again", e.Post.Target, e.Card.State, e.Card.Deciding)
			}
		}
		if tell := h.lastTell(t); tell.Card == nil || tell.Card.Deciding != nil || tell.Card.State != approval.StatePending {
			t.Errorf("the answer does not show the clicked card waiting again: %+v", tell.Card)
		}
		// The card can be decided again.
		if res := h.decide(t, "a-merge1", 1, false, "U0KEVIN"); !res.Sent {
			t.Fatalf("second try: %+v", res)
		}
	})
	t.Run("backend down", func(t *testing.T) {
		h := newDecideHarness(t, 50*time.Millisecond)
		h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
		h.fake.FailNext(1000, 503)
		h.ingest(t, "merge.json")
		h.decide(t, "a-merge1", 1, true, "U0KEVIN")
		h.drain(t)
		if tell := h.lastTell(t); !strings.Contains(tell.Text, "was not recorded") {
			t.Fatalf("told %q", tell.Text)
		}
		if a := h.state(t, "a-merge1"); a.State != "pending" || len(a.Deciding) != 0 {
			t.Fatalf("after the outage: %s, deciding %s", a.State, a.Deciding)
		}
	})
	// The decision carries the digest exactly when the member holds the
	// content permission, a restricted card's too (it shows none).
	t.Run("restricted card: a content holder's decision carries the digest", func(t *testing.T) {
		h := newDecideHarness(t, time.Minute)
		h.fake.AddApproval("a-priv1", 1, arguments(t, "a-priv1.json"), true)
		h.ingest(t, "private.json")
		h.decide(t, "a-priv1", 1, false, "U0KEVIN")
		h.drain(t)
		d := h.fake.Decisions()
		if len(d) != 1 || d[0].Request.ArgsSHA256 != h.fake.Digest("a-priv1") || d[0].Status != 200 {
			t.Fatalf("decisions %+v", d)
		}
	})
}

func TestShowArgumentsOnlyWithContentAndMatchingDigest(t *testing.T) {
	h := newDecideHarness(t, time.Minute)
	h.fake.AddApproval("a-sec1", 1, arguments(t, "a-sec1.json"), false)
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "secrets.json")
	h.ingest(t, "merge.json")
	show := func(id, user string) threads.ShowResult {
		t.Helper()
		res, err := showArguments(h.svc, id, user)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := show("a-sec1", "U0KEVIN")
	if !res.Refusal.IsZero() || !res.Redacted || !strings.Contains(string(res.Arguments), "token rotation") {
		t.Fatalf("show: %+v", res)
	}
	for _, secret := range []string{"hunter2", "ak_live_51H8", "cs_9f8e", "correct horse"} {
		if strings.Contains(string(res.Arguments), secret) {
			t.Fatalf("%q shown", secret)
		}
	}
	if res := show("a-sec1", "U0NOC"); !strings.Contains(res.Refusal.String(), "content permission") || res.Arguments != nil {
		t.Fatalf("member without content: %+v", res)
	}
	if res := show("a-sec1", "U0STRANGER"); !strings.Contains(res.Refusal.String(), "not a member") {
		t.Fatalf("stranger: %+v", res)
	}
	// The backend returns other arguments under the card's digest: not one byte is shown.
	h.fake.TamperArguments("a-merge1", json.RawMessage(`{"repo":"acme/api","pr":1234,"method":"force-push"}`))
	res = show("a-merge1", "U0KEVIN")
	if res.Arguments != nil || !strings.Contains(res.Refusal.String(), "do not match the digest") || strings.Contains(res.Refusal.String(), "force-push") {
		t.Fatalf("tampered: %+v", res)
	}
}

func TestApproveAfterTheDeadlineIsRefused(t *testing.T) {
	h := newDecideHarness(t, time.Minute)
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	h.at(t, 24*time.Hour+time.Second) // past the deadline, before the tick
	if res := h.decide(t, "a-merge1", 1, true, "U0KEVIN"); res.Sent || !strings.Contains(res.Reason.String(), "deadline has passed") {
		t.Fatalf("approve after the deadline: %+v", res)
	}
	if res := h.decide(t, "a-merge1", 1, false, "U0KEVIN"); !res.Sent {
		t.Fatalf("deny after the deadline: %+v", res)
	}
}

// A click the bot received before the deadline and recorded after it
// (within threads.RecordBound) is judged by when it arrived: the
// deadline does not beat it, and the person's approval reaches the
// backend.
func TestClickReceivedBeforeTheDeadlineBeatsIt(t *testing.T) {
	h := newDecideHarness(t, time.Minute)
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	h.drain(t)
	deadline := requested.Add(24 * time.Hour)
	h.at(t, 24*time.Hour+threads.RecordBound/2) // the tick comes; the click is still being recorded
	if r := h.tick(t); r.Deadlines != 1 {
		t.Fatalf("the deadline's tick: %+v, want its deny recorded, to be sent after the grace", r)
	}
	h.drain(t)
	if n := len(h.fake.Decisions()); n != 0 {
		t.Fatalf("the backend got %d decisions while a click received before the deadline could still be recorded", n)
	}
	res, err := h.svc.Decide(context.Background(), threads.DecideRequest{Tenant: "acme", ApprovalID: "a-merge1",
		Revision: 1, Approve: true, Person: slackPerson("U0KEVIN"), ReceivedAt: deadline.Add(-time.Millisecond)})
	if err != nil || !res.Sent {
		t.Fatalf("a click received before the deadline: %+v %v", res, err)
	}
	h.at(t, 24*time.Hour+threads.RecordBound)
	if r := h.tick(t); r.Deadlines != 0 {
		t.Fatalf("the deadline fired again over a recorded click: %+v", r)
	}
	h.drain(t)
	got := h.fake.Decisions()
	if len(got) != 1 || got[0].Request.Decision != "approve" || got[0].Request.Actor != "user:kevin" {
		t.Fatalf("the backend got %+v, want kevin's approve alone", got)
	}
	// A click received after the deadline is refused, however fast it is
	// recorded.
	h2 := newDecideHarness(t, time.Minute)
	h2.ingest(t, "merge.json")
	h2.at(t, 24*time.Hour+threads.RecordBound/2)
	res, err = h2.svc.Decide(context.Background(), threads.DecideRequest{Tenant: "acme", ApprovalID: "a-merge1",
		Revision: 1, Approve: true, Person: slackPerson("U0KEVIN"), ReceivedAt: deadline})
	if err != nil || res.Sent || !strings.Contains(res.Reason.String(), "deadline has passed") {
		t.Fatalf("a click received at the deadline: %+v %v", res, err)
	}
}

// When the deadline fires, the buttons leave every copy of the card at
// once, before the backend has answered: even with the backend down, the
// copies say the denial is on its way and offer no decision.
func TestDeadlineTakesTheButtonsOffFirst(t *testing.T) {
	h := newDecideHarness(t, time.Nanosecond) // the client gives up at once
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	h.drain(t)
	copies := len(h.surf.posts)
	h.fake.FailNext(50, http.StatusServiceUnavailable)
	h.at(t, 24*time.Hour+threads.RecordBound)
	if r := h.tick(t); r.Deadlines != 1 {
		t.Fatalf("at the deadline: %+v", r)
	}
	edits := len(h.surf.edits)
	h.drain(t)
	shown := h.surf.edits[edits:]
	if len(shown) != copies {
		t.Fatalf("%d copies edited at the deadline, want all %d", len(shown), copies)
	}
	for _, e := range shown {
		if e.Card.State != approval.StatePending || e.Card.Deciding == nil || !e.Card.Deciding.Deadline {
			t.Errorf("copy %s shows %s, deciding %+v: want the deadline's deny on its way", e.Post.Target, e.Card.State, e.Card.Deciding)
		}
		if c := templates.Build(e.Card.Input()); len(c.Buttons) != 0 && c.Buttons[0].Action.Kind != templates.ActionShowArgs {
			t.Errorf("copy %s keeps decision buttons: %+v", e.Post.Target, c.Buttons)
		}
	}
	if n := len(h.fake.Decisions()); n == 0 {
		t.Fatal("the deadline's deny was not tried")
	}
	if a := h.state(t, "a-merge1"); a.State != "pending" || len(a.Deciding) == 0 {
		t.Fatalf("with the backend down the deny stays in flight: %s", a.State)
	}
}

// A reask that lands between the click and the send: the bot refuses the
// decision for the old card itself and tells the person.
func TestReaskBetweenClickAndSendSendsNothing(t *testing.T) {
	h := newDecideHarness(t, time.Minute)
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	if res := h.decide(t, "a-merge1", 1, true, "U0KEVIN"); !res.Sent {
		t.Fatalf("click: %+v", res)
	}
	h.ingest(t, "merge-reasked.json")
	h.drain(t)
	if n := len(h.fake.Decisions()); n != 0 {
		t.Fatalf("%d decisions for a superseded card reached the backend", n)
	}
	if tell := h.lastTell(t); !strings.Contains(tell.Text, "superseded") {
		t.Fatalf("told %q", tell.Text)
	}
	if a := h.state(t, "a-merge1"); len(a.Deciding) != 0 || a.State != "pending" {
		t.Fatalf("after: %s deciding %s", a.State, a.Deciding)
	}
}

// stagedDenyHarness is a-merge1 pending, its card posted, and the
// deadline's deny staged by the first tick past its deadline, a quarter
// of the grace in; it returns the deadline.
func stagedDenyHarness(t *testing.T) (*decideHarness, time.Time) {
	t.Helper()
	h := newDecideHarness(t, time.Minute)
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	h.drain(t)
	h.at(t, 24*time.Hour+threads.RecordBound/4)
	if r := h.tick(t); r.Deadlines != 1 {
		t.Fatalf("the deadline's tick: %+v", r)
	}
	return h, requested.Add(24 * time.Hour)
}

// While the deadline's deny waits out its grace, a person's Deny takes
// its place, with its reason, as it did before the deadline's tick: the
// backend gets the person's deny alone, and the staged one sends nothing.
func TestADenyInTheGraceTakesTheDeadlinesPlace(t *testing.T) {
	h, deadline := stagedDenyHarness(t)
	h.at(t, 24*time.Hour+threads.RecordBound/2)
	res, err := h.svc.Decide(context.Background(), threads.DecideRequest{Tenant: "acme", ApprovalID: "a-merge1",
		Revision: 1, Approve: false, Comment: "not during the freeze", Person: slackPerson("U0KEVIN"),
		ReceivedAt: deadline.Add(threads.RecordBound / 2)})
	if err != nil || !res.Sent {
		t.Fatalf("a Deny in the grace: %+v %v", res, err)
	}
	// An Approve received after the deadline is still refused, the
	// person's deny in flight or not.
	res, err = h.svc.Decide(context.Background(), threads.DecideRequest{Tenant: "acme", ApprovalID: "a-merge1",
		Revision: 1, Approve: true, Person: slackPerson("U0ADA"), ReceivedAt: deadline.Add(threads.RecordBound / 2)})
	if err != nil || res.Sent {
		t.Fatalf("an Approve after the deadline: %+v %v, want it refused", res, err)
	}
	h.drain(t)
	h.at(t, 24*time.Hour+threads.RecordBound)
	h.drain(t)
	got := h.fake.Decisions()
	if len(got) != 1 || got[0].Request.Decision != "deny" || got[0].Request.Actor != "user:kevin" ||
		got[0].Request.Comment != "not during the freeze" {
		t.Fatalf("the backend got %+v, want kevin's deny alone", got)
	}
	if a := h.state(t, "a-merge1"); a.State != "denied" {
		t.Fatalf("state %s, want denied", a.State)
	}
}

// A person's decision that took the deadline's place and then did not
// land (the backend refused it) arms the same deadline again: its deny
// goes at the next tick, and nothing automatic approves.
func TestADecisionThatTookTheDeadlinesPlaceAndFailedRearmsIt(t *testing.T) {
	h, deadline := stagedDenyHarness(t)
	h.fake.SetForbidden("user:kevin")
	res, err := h.svc.Decide(context.Background(), threads.DecideRequest{Tenant: "acme", ApprovalID: "a-merge1",
		Revision: 1, Approve: true, Person: slackPerson("U0KEVIN"), ReceivedAt: deadline.Add(-time.Millisecond)})
	if err != nil || !res.Sent {
		t.Fatalf("a click received before the deadline: %+v %v", res, err)
	}
	h.drain(t) // kevin's approve: refused by the backend
	if a := h.state(t, "a-merge1"); a.State != "pending" || !a.DeadlineAt.Equal(deadline) || len(a.Deciding) != 0 {
		t.Fatalf("after the refused approve: %s, deadline %v, deciding %s; want pending, the deadline %v armed again",
			a.State, a.DeadlineAt, a.Deciding, deadline)
	}
	h.at(t, 24*time.Hour+threads.RecordBound)
	h.drain(t) // the staged deny's row: the decision it was for is gone
	h.tick(t)
	h.drain(t)
	got := h.fake.Decisions()
	if len(got) != 2 || got[1].Request.Decision != "deny" || got[1].Request.Actor != "system:deadline" {
		t.Fatalf("the backend got %+v, want kevin's refused approve, then the deadline's deny", got)
	}
	if a := h.state(t, "a-merge1"); a.State != "expired" {
		t.Fatalf("state %s, want expired", a.State)
	}
}

// The backend lane wakes when the deadline's deny falls due after its
// grace, not at its next poll: with a poll of an hour on the fake clock,
// moving the clock to the grace's end sends the deny.
func TestTheDeadlinesDenyGoesWhenItsGraceEnds(t *testing.T) {
	h, _ := stagedDenyHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = h.svc.RunOutbox(ctx, threads.WorkerOptions{Poll: time.Hour, PacedPoll: time.Hour})
	}()
	defer func() { cancel(); <-done }()
	h.clock.BlockUntilContext(ctx, 3) // the lanes wait on the clock: the poll, or the deny's time
	h.at(t, 24*time.Hour+threads.RecordBound)
	threadstest.Eventually(t, "the deadline's deny at the backend", func() bool { return len(h.fake.Decisions()) == 1 })
}
