package threads_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"approvalsbot/adapters/backend"
	"approvalsbot/adapters/backend/backendtest"
	"approvalsbot/adapters/backend/standin"
	"approvalsbot/approval"
	"approvalsbot/say"
	"approvalsbot/store"
	"approvalsbot/templates"
	"approvalsbot/threads"
	"approvalsbot/threads/threadstest"
)

// grantsConfig is testConfig with grants taken by the backend and enabled
// for acme, destructive calls included (merge.json's is destructive), the
// merge's method left free; extra is more of acme's keys.
func grantsConfig(grants, extra string) string {
	c := strings.Replace(testConfig, `  calls_secrets: ["${BOT_CALLS_SECRET}"]`+"\n",
		`  calls_secrets: ["${BOT_CALLS_SECRET}"]`+"\n  features: [grants]\n", 1)
	return strings.Replace(c, "    forbid_self_approval: true\n", "    forbid_self_approval: true\n"+grants+extra, 1)
}

const grantsOn = "    grants: {enabled: true, destructive: true, max_ttl: 8h, max_uses: 20, free: {acme_github.merge: [pr, method]}}\n"

// newGrantsHarness is a decide harness whose backend takes grants and
// judges their expiry by the harness's clock.
func newGrantsHarness(t *testing.T, configText string) *decideHarness {
	t.Helper()
	return newGrantsHarnessOn(t, configText, nil)
}

// newGrantsHarnessOn is newGrantsHarness on st (nil: SQLite).
func newGrantsHarnessOn(t *testing.T, configText string, st store.Store) *decideHarness {
	t.Helper()
	secret := [][]byte{[]byte(testCallsSecret)}
	var clock func() time.Time
	fake := backendtest.New(t, standin.Options{Secrets: secret, GrantNow: func() time.Time { return clock() }})
	client, err := backend.NewClient(backend.ClientOptions{BaseURL: fake.URL(), Secrets: secret, Features: []string{"grants"},
		MaxElapsed: time.Minute, Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() }})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarnessEnv(t, configText, testEnv, func(o *threads.Options) {
		o.Backend = client.ForThreads()
		o.Mailer = o.Fallback.(*recorder)
		o.Grants = true
		if st != nil {
			o.Store = st
		}
	})
	clock = h.clock.Now
	return &decideHarness{harness: h, fake: fake}
}

func grantAction(id string, rev int) templates.Action {
	return templates.Action{Kind: templates.ActionGrant, ApprovalID: id, Revision: rev}
}

func (h *decideHarness) askGrant(user string) threads.Clicked {
	return h.svc.Click(context.Background(), threads.ClickRequest{Do: threads.ClickAsk, Action: grantAction("a-merge1", 1),
		Person: slackPerson(user)})
}

func (h *decideHarness) grant(user string, ask threads.GrantAsk) threads.Clicked {
	return h.svc.Click(context.Background(), threads.ClickRequest{Do: threads.ClickRecord, Action: grantAction("a-merge1", 1),
		Person: slackPerson(user), Grant: &ask})
}

func (h *decideHarness) grants(t *testing.T) []*store.Grant {
	t.Helper()
	gs, err := h.store.GrantList(context.Background(), store.GrantListParams{Tenant: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	return gs
}

// usedEvent is auto.json as a use of grant id of acme_github.merge.
func usedEvent(eventID, grantID string) func(ev map[string]any) {
	return func(ev map[string]any) {
		ev["id"] = eventID
		data := ev["data"].(map[string]any)
		data["call"].(map[string]any)["function"] = "acme_github.merge"
		data["policy_id"] = "grant"
		data["grant_id"] = grantID
	}
}

// repliesWith are the thread replies whose text holds s.
func (h *decideHarness) repliesWith(s string) []threads.ReplyRequest {
	h.surf.mu.Lock()
	defer h.surf.mu.Unlock()
	var out []threads.ReplyRequest
	for _, r := range h.surf.replies {
		if strings.Contains(r.Text, s) {
			out = append(out, r)
		}
	}
	return out
}

// A person approves a call and allows the same repository's merges for an
// hour: the card offers it, the dialog words the scope, the decision
// carries exactly the pins shown, the backend applies it, each use is
// posted once in both threads of the card, and a Revoke reaches the
// backend once and is posted there too.
func TestGrantMadeUsedAndRevoked(t *testing.T) {
	h := newGrantsHarness(t, grantsConfig(grantsOn, ""))
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.fake.SetFunction("a-merge1", "acme_github.merge")
	h.ingest(t, "merge.json")
	h.drain(t)
	if len(h.surf.posts) == 0 || !h.surf.posts[0].Card.Grants {
		t.Fatalf("the card does not offer a grant: %+v", h.surf.posts)
	}
	in := h.surf.posts[0].Card.Input()
	if !in.Grants {
		t.Fatal("the card's input does not offer a grant")
	}

	ask := h.askGrant("U0KEVIN")
	if ask.Dialog == nil || ask.Dialog.Grant == nil {
		t.Fatalf("no grant dialog: %+v", ask)
	}
	offer := ask.Dialog.Grant
	if offer.Values != "acme_github.merge to acme/api only, method and pr may differ" {
		t.Errorf("values scope in words: %q", offer.Values)
	}
	if offer.Call != "this exact call of acme_github.merge (the same arguments)" {
		t.Errorf("call scope in words: %q", offer.Call)
	}
	if len(offer.TTLs) != 3 || offer.TTLs[2] != 8*time.Hour {
		t.Errorf("TTLs under max_ttl 8h: %v", offer.TTLs)
	}

	out := h.grant("U0KEVIN", threads.GrantAsk{Scope: approval.GrantScopeValues, TTL: time.Hour, Uses: 5})
	want := "allowing for 1 h: acme_github.merge to acme/api only, method and pr may differ, 5 uses"
	if !out.Sent || !strings.Contains(out.Reason.String(), want) {
		t.Fatalf("grant: %+v %q", out, out.Reason.String())
	}
	gs := h.grants(t)
	if len(gs) != 1 || gs[0].State != store.GrantPending || gs[0].Actor != "user:kevin" {
		t.Fatalf("grants before the answer: %+v", gs)
	}
	h.drain(t)
	ds := h.fake.Decisions()
	if len(ds) != 1 || ds[0].Status != 200 || ds[0].Request.Grant == nil {
		t.Fatalf("decisions %+v", ds)
	}
	sent := ds[0].Request.Grant
	if sent.ID != gs[0].ID || sent.Scope != "values" || sent.Function != "acme_github.merge" || sent.Uses != 5 ||
		len(sent.Pins) != 1 || sent.Pins[0].Argument != "repo" || sent.Pins[0].Role != "repository" || sent.Pins[0].Value != "acme/api" ||
		len(sent.Free) != 2 || sent.Free[0] != "method" || sent.Free[1] != "pr" || sent.ArgsSHA256 != "" ||
		!sent.ExpiresAt.Equal(h.clock.Now().Add(time.Hour).Truncate(time.Second)) {
		t.Fatalf("grant sent %+v", sent)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(ds[0].Body, &raw); err != nil || !strings.Contains(string(raw["grant"]), `"expires_at":"`) {
		t.Fatalf("body %s", ds[0].Body)
	}
	id := sent.ID
	if g, _ := h.store.GrantGet(context.Background(), id); g == nil || g.State != store.GrantLive ||
		g.Words != "for 1 h: acme_github.merge to acme/api only, method and pr may differ, 5 uses" {
		t.Fatalf("grant after the answer: %+v", g)
	}

	// The backend lets the same repository through, and nothing else.
	if got := h.fake.Covers("acme_github.merge", json.RawMessage(`{"repo":"acme/api","pr":99,"method":"rebase"}`)); got != id {
		t.Errorf("the grant does not cover another PR of acme/api: %q", got)
	}
	for _, args := range []string{`{"repo":"acme/web","pr":99,"method":"squash"}`, `{"repo":"acme/api","pr":99,"method":"squash","force":true}`,
		`{"repo":["acme/api","acme/web"],"pr":99,"method":"squash"}`} {
		if got := h.fake.Covers("acme_github.merge", json.RawMessage(args)); got != "" {
			t.Errorf("the grant covers %s", args)
		}
	}

	// Each use is posted once in each thread of the card, on any replica.
	other, err := threads.New(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	threadstest.Ingest(t, h.svc, "auto.json", usedEvent("evt-use-1", id))
	threadstest.Ingest(t, other, "auto.json", usedEvent("evt-use-1", id))
	h.drain(t)
	line := "Allowed by grant " + id + " (user:kevin, 1 h): acme_github.merge · 1 of 5 uses"
	uses := h.repliesWith(line)
	if len(uses) != 2 || uses[0].Root.ApprovalID != "a-merge1" || uses[0].Root.Target == uses[1].Root.Target {
		t.Fatalf("use replies %+v (all: %+v)", uses, h.surf.replies)
	}
	if len(h.surf.notices) != 0 {
		t.Errorf("a grant's use went to the audit channel: %+v", h.surf.notices)
	}
	threadstest.Ingest(t, other, "auto.json", usedEvent("evt-use-2", id))
	h.drain(t)
	if n := len(h.repliesWith("· 2 of 5 uses")); n != 2 {
		t.Errorf("second use posted %d times", n)
	}
	if g, _ := h.store.GrantGet(context.Background(), id); g.UsesSeen != 2 || g.LastUseAt.IsZero() {
		t.Errorf("uses %+v", g)
	}

	listed, err := threads.ListGrants(context.Background(), h.store, "acme", nil, h.clock.Now())
	if err != nil || len(listed) != 1 || listed[0].UsesLeft != 3 || listed[0].Actor != "user:kevin" || listed[0].LastUse == "" {
		t.Fatalf("listed %+v %v", listed, err)
	}

	// Revoke: by a member who may decide, recorded before the answer,
	// sent once.
	if why, err := h.svc.RevokeGrant(context.Background(), id, slackPerson("U0VIC")); err != nil || why.Kind != say.CannotDecide {
		t.Fatalf("a viewer's revoke: %v %v", why, err)
	}
	why, err := h.svc.RevokeGrant(context.Background(), id, slackPerson("U0LEE"))
	if err != nil || why.Kind != say.GrantRevoking {
		t.Fatalf("revoke: %v %v", why.String(), err)
	}
	if why, _ := h.svc.RevokeGrant(context.Background(), id, slackPerson("U0LEE")); why.Kind != say.GrantRevoking {
		t.Fatalf("a second revoke: %v", why.String())
	}
	h.drain(t)
	h.drain(t)
	if rv := h.fake.Revokes(); len(rv) != 1 || rv[0].Status != 200 || !rv[0].SignatureOK || rv[0].Request.Actor != "user:lee" {
		t.Fatalf("revokes %+v", rv)
	}
	if n := len(h.repliesWith("Grant " + id + " (user:kevin, 1 h) was revoked by user:lee")); n != 2 {
		t.Errorf("revocation posted %d times: %+v", n, h.surf.replies)
	}
	if got := h.fake.Covers("acme_github.merge", json.RawMessage(`{"repo":"acme/api","pr":99,"method":"rebase"}`)); got != "" {
		t.Errorf("a revoked grant covers a call")
	}
	if why, _ := h.svc.RevokeGrant(context.Background(), id, slackPerson("U0LEE")); why.Kind != say.GrantEnded {
		t.Errorf("revoke of a revoked grant: %v", why.String())
	}
	if listed, _ := threads.ListGrants(context.Background(), h.store, "acme", nil, h.clock.Now()); len(listed) != 0 {
		t.Errorf("a revoked grant is listed: %+v", listed)
	}
	// A use the backend reports after the revocation is posted, as a warning.
	threadstest.Ingest(t, h.svc, "auto.json", usedEvent("evt-use-late", id))
	h.drain(t)
	if n := len(h.repliesWith("Warning: Allowed by grant " + id)); n != 2 {
		t.Errorf("a use after the revocation posted %d warnings: %+v", n, h.surf.replies)
	}
	// An unknown grant's use is audited as before.
	threadstest.Ingest(t, h.svc, "auto.json", usedEvent("evt-use-3", "g-0000000000000000"))
	h.drain(t)
	if len(h.surf.notices) != 1 {
		t.Errorf("an unknown grant's use: notices %+v", h.surf.notices)
	}
}

// The "this exact call" scope carries the digest only, and a grant whose
// decision the backend refuses never lives; a grant ends when its time
// runs out, posted once where it was made.
func TestGrantCallScopeRefusedAndExpired(t *testing.T) {
	h := newGrantsHarness(t, grantsConfig(grantsOn, ""))
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	h.drain(t)
	out := h.grant("U0KEVIN", threads.GrantAsk{Scope: approval.GrantScopeCall, TTL: 15 * time.Minute, Uses: 1})
	if !out.Sent {
		t.Fatalf("grant: %v", out.Reason.String())
	}
	// Revoked while its approval is on its way: refused, to be retried.
	if gs := h.grants(t); len(gs) != 1 {
		t.Fatalf("grants %+v", gs)
	} else if why, err := h.svc.RevokeGrant(context.Background(), gs[0].ID, slackPerson("U0LEE")); err != nil || why.Kind != say.GrantInFlight {
		t.Fatalf("revoke in flight: %v %v", why.String(), err)
	}
	h.drain(t)
	sent := h.fake.Decisions()[0].Request.Grant
	_, ev := readEvent(t, "merge.json")
	if sent == nil || sent.Scope != "call" || sent.ArgsSHA256 != ev.Approval.Call.ArgsSHA256 || len(sent.Pins) != 0 || sent.Uses != 1 {
		t.Fatalf("grant sent %+v", sent)
	}
	h.clock.Advance(16 * time.Minute)
	if _, err := h.svc.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := h.svc.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.drain(t)
	if n := len(h.repliesWith("Grant " + sent.ID + " (user:kevin, 15 min) has expired")); n != 2 {
		t.Errorf("expiry posted %d times: %+v", n, h.surf.replies)
	}

	// Refused by the backend: the grant is not live.
	h2 := newGrantsHarness(t, grantsConfig(grantsOn, ""))
	h2.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h2.fake.SetStatus("a-merge1", "denied", "user:ada")
	h2.ingest(t, "merge.json")
	h2.drain(t)
	if out := h2.grant("U0KEVIN", threads.GrantAsk{Scope: approval.GrantScopeValues, TTL: time.Hour, Uses: 5}); !out.Sent {
		t.Fatalf("grant: %v", out.Reason.String())
	}
	h2.drain(t)
	if gs := h2.grants(t); len(gs) != 1 || gs[0].State != store.GrantRefused {
		t.Fatalf("grant after a refusal: %+v", gs)
	}
}

// Every exclusion refuses the button (no dialog) and a forged
// submission (nothing recorded, nothing sent).
func TestGrantExclusions(t *testing.T) {
	type tc struct {
		name   string
		config string
		edit   func(data map[string]any)
		user   string
		ask    threads.GrantAsk
		want   string
		grants bool // the backend takes grants (default true)
		// dialog: the dialog still opens (the choice is what is wrong).
		dialog bool
	}
	values := threads.GrantAsk{Scope: approval.GrantScopeValues, TTL: time.Hour, Uses: 5}
	cases := []tc{
		{name: "typed confirmation", edit: func(d map[string]any) { d["confirm"] = map[string]any{"argument": "repo"} },
			want: "needs a typed confirmation"},
		{name: "out of scope", edit: func(d map[string]any) {
			d["roles"].([]any)[0].(map[string]any)["values"].([]any)[0].(map[string]any)["out_of_scope"] = true
		}, want: "out of scope"},
		{name: "new to the job", edit: func(d map[string]any) {
			d["flags"] = map[string]any{"new_to_job": []any{map[string]any{"argument": "repo", "role": "repository"}}}
		}, want: "new to the job"},
		{name: "class above", edit: func(d map[string]any) {
			d["flags"] = map[string]any{"class_above": map[string]any{"class": "egress", "previous": "read"}}
		}, want: "class above"},
		{name: "restricted content", edit: func(d map[string]any) { d["content"] = map[string]any{"restricted": true} },
			want: "content is restricted"},
		{name: "private chat", edit: func(d map[string]any) { d["job"].(map[string]any)["private_chat"] = true },
			want: "private chat"},
		{name: "destructive, not allowed", config: grantsConfig("    grants: {enabled: true}\n", ""), want: "destructive"},
		{name: "quorum", config: grantsConfig(grantsOn, "    quorum: {approvals: 2}\n"), want: "quorum"},
		{name: "grants off for the tenant", config: grantsConfig("", ""), want: "not offered"},
		{name: "backend without grants", grants: false, want: "not offered"},
		{name: "own job", user: "U0ADA", want: "your own job"},
		{name: "viewer", user: "U0VIC", want: "cannot decide"},
		{name: "no such ttl", dialog: true, ask: threads.GrantAsk{Scope: approval.GrantScopeValues, TTL: 2 * time.Hour, Uses: 5}, want: "not one offered"},
		{name: "no such uses", dialog: true, ask: threads.GrantAsk{Scope: approval.GrantScopeCall, TTL: time.Hour, Uses: 7}, want: "not one offered"},
		{name: "no such scope", dialog: true, ask: threads.GrantAsk{Scope: "everything", TTL: time.Hour, Uses: 5}, want: "not one offered"},
		{name: "values, a pin cut", dialog: true, edit: func(d map[string]any) {
			d["roles"].([]any)[0].(map[string]any)["left_out"] = 3
		}, want: "not one offered"},
	}
	for i := range cases {
		if cases[i].ask.Scope == "" {
			cases[i].ask = values
		}
		if cases[i].name != "backend without grants" {
			cases[i].grants = true
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.config
			if cfg == "" {
				cfg = grantsConfig(grantsOn, "")
			}
			var h *decideHarness
			if c.grants {
				h = newGrantsHarness(t, cfg)
			} else {
				h = newDecideHarnessFrom(t, testConfig, time.Minute, nil)
			}
			h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
			threadstest.Ingest(t, h.svc, "merge.json", func(ev map[string]any) {
				if c.edit != nil {
					c.edit(ev["data"].(map[string]any))
				}
			})
			h.drain(t)
			user := c.user
			if user == "" {
				user = "U0KEVIN"
			}
			callBarred := c.user == "" && !c.dialog
			if callBarred && len(h.surf.posts) > 0 && h.surf.posts[0].Card.Grants {
				t.Errorf("the card offers a grant")
			}
			ask := h.askGrant(user)
			switch {
			case c.dialog && (ask.Dialog == nil || ask.Dialog.Grant == nil):
				t.Errorf("no dialog: %q", ask.Reason.String())
			case c.dialog && c.name == "values, a pin cut" && (ask.Dialog.Grant.Values != "" || ask.Dialog.Grant.ValuesWhyNot == ""):
				t.Errorf("the values scope is offered with a pin cut: %+v", ask.Dialog.Grant)
			case !c.dialog && (ask.Dialog != nil || !strings.Contains(ask.Reason.String(), c.want)):
				t.Errorf("ask: dialog %+v, reason %q, want %q", ask.Dialog, ask.Reason.String(), c.want)
			}
			out := h.grant(user, c.ask)
			if out.Sent || !strings.Contains(out.Reason.String(), c.want) {
				t.Errorf("forged grant: sent %v, reason %q, want %q", out.Sent, out.Reason.String(), c.want)
			}
			h.drain(t)
			if n := len(h.fake.Decisions()); n != 0 {
				t.Errorf("%d decisions reached the backend", n)
			}
			if h.opts.Grants {
				if gs := h.grants(t); len(gs) != 0 {
					t.Errorf("grants kept: %+v", gs)
				}
			}
		})
	}
}

// A grant action without its dialog's choice, or a choice on another
// button, is no decision.
func TestGrantActionNeedsItsDialog(t *testing.T) {
	h := newGrantsHarness(t, grantsConfig(grantsOn, ""))
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	h.drain(t)
	bare := h.svc.Click(context.Background(), threads.ClickRequest{Do: threads.ClickRecord, Action: grantAction("a-merge1", 1),
		Person: slackPerson("U0KEVIN")})
	smuggled := h.svc.Click(context.Background(), threads.ClickRequest{Do: threads.ClickRecord,
		Action: templates.Action{Kind: templates.ActionApprove, ApprovalID: "a-merge1", Revision: 1}, Person: slackPerson("U0KEVIN"),
		Grant: &threads.GrantAsk{Scope: approval.GrantScopeCall, TTL: time.Hour, Uses: 5}})
	for _, out := range []threads.Clicked{bare, smuggled} {
		if out.Sent || out.Reason.Kind != say.UnknownButton {
			t.Errorf("%+v", out)
		}
	}
	h.drain(t)
	if n := len(h.fake.Decisions()); n != 0 {
		t.Errorf("%d decisions reached the backend", n)
	}
}

// Two replicas on PostgreSQL take the same use at once: it is counted
// once and posted once in each thread of the card that made the grant.
func TestGrantUseOnceAcrossReplicasOnPostgres(t *testing.T) {
	h := newGrantsHarnessOn(t, grantsConfig(grantsOn, ""), openStormStore(t, true))
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	h.drain(t)
	if out := h.grant("U0KEVIN", threads.GrantAsk{Scope: approval.GrantScopeCall, TTL: time.Hour, Uses: 3}); !out.Sent {
		t.Fatalf("grant: %v", out.Reason.String())
	}
	h.drain(t)
	id := h.fake.Decisions()[0].Request.Grant.ID
	other, err := threads.New(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, svc := range []*threads.Service{h.svc, other, h.svc, other} {
		wg.Go(func() { threadstest.Ingest(t, svc, "auto.json", usedEvent("evt-use-pg", id)) })
	}
	wg.Wait()
	h.drain(t)
	if n := len(h.repliesWith("Allowed by grant " + id)); n != 2 {
		t.Errorf("one use posted %d times in 2 threads: %+v", n, h.surf.replies)
	}
	if g, _ := h.store.GrantGet(context.Background(), id); g == nil || g.UsesSeen != 1 {
		t.Errorf("uses counted: %+v", g)
	}
}
