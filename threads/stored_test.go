package threads_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jonboulle/clockwork"

	"approvalsbot/adapters/discord"
	slackad "approvalsbot/adapters/slack"
	"approvalsbot/approval"
	"approvalsbot/config"
	"approvalsbot/internal/fixtures"
	"approvalsbot/store/sqlite"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// filesHold reports which of texts occur in any file under dir, as written
// or JSON-escaped.
func filesHold(t *testing.T, dir string, texts []string) []string {
	t.Helper()
	var files [][]byte
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		files = append(files, b)
		return err
	})
	if err != nil || len(files) == 0 {
		t.Fatalf("read the database files: %v (%d files)", err, len(files))
	}
	var found []string
	for _, s := range texts {
		escaped, _ := json.Marshal(s)
		for _, b := range files {
			if bytes.Contains(b, []byte(s)) || bytes.Contains(b, escaped[1:len(escaped)-1]) {
				found = append(found, s)
				break
			}
		}
	}
	return found
}

// renderAll is a card on every surface.
func renderAll(t *testing.T, r *templates.Renderer, in templates.Input) map[string]string {
	t.Helper()
	c := templates.Build(in)
	sj, err := templates.MarshalPreview(slackad.CardMessage(c))
	if err != nil {
		t.Fatal(err)
	}
	dj, err := templates.MarshalPreview(discord.RenderCard(c))
	if err != nil {
		t.Fatal(err)
	}
	e := r.Email(c)
	return map[string]string{"slack": string(sj), "discord": string(dj), "email": e.Subject + "\n" + e.Text + "\n" + e.HTML, "text": r.Text(c)}
}

// TestRevisionsKeepNoRawContent ingests an approval whose arguments carry
// secrets the backend failed to redact and a content-restricted one into
// SQLite on disk, posts their cards, and then reads the database's files:
// none of the secrets and none of the restricted content is in them, a
// redelivery is still told apart by the raw body's digest, and each card
// renders from the stored revision exactly as from the request received.
func TestRevisionsKeepNoRawContent(t *testing.T) {
	cfg, err := config.Parse("bot.yaml", []byte(testConfig), testEnv)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(dir, "bot.db")})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			st.Close()
		}
	})
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	surf := &recorder{}
	svc, err := threads.New(threads.Options{Store: st, Tenants: cfg, Fallback: surf,
		Clock: clockwork.NewFakeClockAt(time.Date(2026, 11, 29, 18, 0, 1, 0, time.UTC))})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{svc: svc, store: st, surf: surf}

	secretsBody, secretsEv := readEvent(t, "secrets.json")
	_, privateEv := readEvent(t, "private.json")
	secrets, err := fixtures.SecretsIn(secretsBody)
	if err != nil || len(secrets) < 5 {
		t.Fatalf("secrets of the fixture: %q, %v", secrets, err)
	}
	// The content of the restricted call: its arguments' values, the
	// agent's text.
	restricted := []string{"bea.private@example.com", "customers", "Deleting my old customer record"}

	h.ingest(t, "secrets.json")
	h.ingest(t, "private.json")
	if res := h.ingest(t, "secrets.json"); !res.Duplicate {
		t.Fatalf("redelivery of secrets.json: %+v, want a duplicate", res)
	}
	h.drain(t)

	raw := map[string]*approval.Approval{"a-sec1": secretsEv.Approval, "a-priv1": privateEv.Approval}
	r, err := templates.New(templates.Options{})
	if err != nil {
		t.Fatal(err)
	}
	posted := map[string]int{}
	for _, p := range surf.posts {
		id := p.Card.Approval.ID
		posted[id]++
		in := p.Card.Input()
		got := renderAll(t, r, in)
		in.Approval = raw[id]
		want := renderAll(t, r, in)
		for surface := range want {
			if diff := cmp.Diff(want[surface], got[surface]); diff != "" {
				t.Errorf("%s on %s: the card from the stored revision differs (-received +stored):\n%s", id, surface, diff)
			}
		}
		card := templates.Build(p.Card.Input())
		holder := p.Card.Input()
		holder.ContentHolder = true
		switch id {
		case "a-sec1":
			// The digest shows only to a reader known to hold the content
			// permission, never on the card a shared place gets.
			if card.Arguments == nil || card.Arguments.Marks != "redacted" || card.Digest != "" ||
				templates.Build(holder).Digest != secretsEv.Approval.Call.ArgsSHA256 {
				t.Errorf("a-sec1's card shows %+v, digest %q: want its redacted arguments, and the digest only for a content holder", card.Arguments, card.Digest)
			}
		case "a-priv1":
			if !card.Restricted || card.RestrictedNote == "" || card.Effect != "DESTRUCTIVE" || len(card.Buttons) == 0 || !card.Buttons[0].Default {
				t.Errorf("a-priv1's card %+v: want a restricted card, Deny first", card)
			}
		}
	}
	if posted["a-sec1"] == 0 || posted["a-priv1"] == 0 {
		t.Fatalf("posted %v: want both cards", posted)
	}

	check := func(when string) {
		t.Helper()
		if found := filesHold(t, dir, append(append([]string(nil), secrets...), restricted...)); len(found) > 0 {
			t.Errorf("%s, the database files hold %q", when, found)
		}
		// The files are read for real: what the cards show is in them.
		if found := filesHold(t, dir, []string{"a-sec1", "ci.acme.example", "db.delete_rows", "[redacted]"}); len(found) != 4 {
			t.Errorf("%s, the database files hold only %q of the approvals' ids, host, function and marks", when, found)
		}
	}
	check("open")
	closed = true
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	check("closed")
}
