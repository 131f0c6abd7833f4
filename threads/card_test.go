package threads_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/approval"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// TestReaskSaysWhatChanged: a reask keeps with the approval why it came
// and what changed on the display projections, so the new card says it
// and the old card's superseded line says why, on every copy.
func TestReaskSaysWhatChanged(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	h.ingest(t, "merge-reasked.json")
	h.drain(t)
	var newCard, oldCard *threads.Card
	for i := range h.surf.posts {
		if p := h.surf.posts[i]; p.Card.Approval.Revision == 2 {
			newCard = &h.surf.posts[i].Card
		}
	}
	for i := range h.surf.edits {
		oldCard = &h.surf.edits[i].Card
	}
	if newCard == nil || oldCard == nil {
		t.Fatalf("posts %d, edits %d: want the new card posted and the old edited", len(h.surf.posts), len(h.surf.edits))
	}
	in := newCard.Input()
	want := &approval.Reask{From: 1, Revision: 2, Why: approval.WhyArgumentsChanged,
		Arguments: []approval.ArgumentChange{{Path: "method", Kind: approval.ChangeChanged, Old: `"squash"`, New: `"rebase"`}}}
	if diff := cmp.Diff(want, in.Reask); diff != "" {
		t.Errorf("the new card's reask (-want +got):\n%s", diff)
	}
	c := templates.Build(in)
	if c.Reask == nil || c.Reask.Line != "Asked again: the arguments changed since revision 1" ||
		len(c.Reask.Changes) != 1 || c.Reask.Changes[0] != `method: "squash" → "rebase"` {
		t.Errorf("the new card says %+v", c.Reask)
	}
	old := templates.Build(oldCard.Input())
	if old.Status != "Superseded: the arguments changed; see the new card" || old.Reask != nil {
		t.Errorf("the old card says %q, %+v", old.Status, old.Reask)
	}
}

// TestReaskOfARestrictedCall: what a restricted call's reask keeps says
// only that it changed; no path or value of it is kept with the approval.
func TestReaskOfARestrictedCall(t *testing.T) {
	h := newHarness(t)
	body, ev := readEvent(t, "private.json")
	if _, err := h.ingestBody(body, ev); err != nil {
		t.Fatal(err)
	}
	h.drain(t)
	next := *ev.Approval
	next.Revision, next.Why = 2, approval.WhyArgumentsChanged
	next.Call.Arguments = json.RawMessage(`{"table":"ledger_secret_payroll"}`)
	next.Call.ArgsSHA256 = "sha256:" + strings.Repeat("cd", 32)
	re := &approval.Event{ID: "evt-private-2", Type: approval.EventReasked, Time: ev.Time, Tenant: ev.Tenant, Approval: &next}
	raw, _ := json.Marshal(map[string]any{"id": re.ID, "type": re.Type, "time": re.Time, "tenant": re.Tenant, "data": next})
	if _, err := h.ingestBody(raw, re); err != nil {
		t.Fatal(err)
	}
	h.drain(t)
	row := h.state(t, next.ID)
	if bytes.Contains(row.Plan, []byte("ledger_secret_payroll")) || bytes.Contains(row.Plan, []byte("table")) {
		t.Errorf("the approval keeps a restricted path or value: %s", row.Plan)
	}
	var fz threads.Frozen
	if err := json.Unmarshal(row.Plan, &fz); err != nil || len(fz.Reasks) != 1 || !fz.Reasks[0].Withheld || len(fz.Reasks[0].Arguments) != 0 {
		t.Fatalf("kept reasks %+v (%v)", fz.Reasks, err)
	}
	for _, p := range h.surf.posts {
		if p.Card.Approval.Revision != 2 {
			continue
		}
		c := templates.Build(p.Card.Input())
		if c.Reask == nil || c.Reask.Line != "Asked again: the arguments changed since revision 1" || len(c.Reask.Changes) != 0 {
			t.Errorf("the restricted new card says %+v", c.Reask)
		}
	}
}

// TestUnknownLadderIsSaid: a request naming a ladder its tenant lacks
// runs the one it would get naming none, and the log and its card say so.
func TestUnknownLadderIsSaid(t *testing.T) {
	var logs bytes.Buffer
	h := newHarnessWith(t, func(o *threads.Options) {
		o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	body, ev := readEvent(t, "merge.json")
	ev.Approval.Ladder = "payments2"
	if _, err := h.ingestBody(body, ev); err != nil {
		t.Fatal(err)
	}
	h.drain(t)
	if len(h.surf.posts) == 0 {
		t.Fatal("no card posted")
	}
	in := h.surf.posts[0].Card.Input()
	if in.Ladder.Name != "default" || in.Ladder.Unknown != "payments2" {
		t.Errorf("the card's ladder %q (unknown %q), want default for payments2", in.Ladder.Name, in.Ladder.Unknown)
	}
	if c := templates.Build(in); !strings.Contains(c.LadderNote, `"payments2"`) || !strings.Contains(c.LadderNote, "default ladder") {
		t.Errorf("the card's note %q", c.LadderNote)
	}
	if out := logs.String(); !strings.Contains(out, "ladder=payments2") || !strings.Contains(out, "instead=default") ||
		!strings.Contains(out, "approval_id=a-merge1") {
		t.Errorf("the log does not say so:\n%s", out)
	}

	// A ladder the tenant has is no news.
	logs.Reset()
	h2 := newHarnessWith(t, func(o *threads.Options) { o.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
	body, ev = readEvent(t, "merge.json")
	ev.Approval.Ladder = "default"
	if _, err := h2.ingestBody(body, ev); err != nil {
		t.Fatal(err)
	}
	h2.drain(t)
	if in := h2.surf.posts[0].Card.Input(); in.Ladder.Unknown != "" || strings.Contains(logs.String(), "does not have") {
		t.Errorf("a known ladder is reported unknown: %q\n%s", in.Ladder.Unknown, logs.String())
	}
}

// TestCardTimesAreInTheTenantsZone: a tenant's zone, frozen with the
// approval at request, is the zone its cards print times in.
func TestCardTimesAreInTheTenantsZone(t *testing.T) {
	cfg := strings.Replace(testConfig, "  acme:\n", "  acme:\n    zone: Europe/Berlin\n", 1)
	h := newHarnessFrom(t, cfg, nil)
	h.ingest(t, "merge.json")
	h.drain(t)
	if len(h.surf.posts) == 0 {
		t.Fatal("no card posted")
	}
	in := h.surf.posts[0].Card.Input()
	if in.Zone == nil || in.Zone.String() != "Europe/Berlin" {
		t.Fatalf("zone %v, want Europe/Berlin", in.Zone)
	}
	// 18:15 UTC is 19:15 in Berlin in November.
	if c := templates.Build(in); !strings.Contains(c.Ladder, "19:15 CET mention user:kevin") ||
		!strings.Contains(c.Ladder, "deadline 2026-11-30 19:00 CET") {
		t.Fatalf("plan line %q", c.Ladder)
	}
	h2 := newHarness(t)
	h2.ingest(t, "merge.json")
	h2.drain(t)
	if in := h2.surf.posts[0].Card.Input(); in.Zone != nil {
		t.Fatalf("a tenant without a zone prints in %v, want UTC", in.Zone)
	}
}
