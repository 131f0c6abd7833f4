package templates_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"approvalsbot/approval"
	"approvalsbot/internal/fixtures"
	"approvalsbot/internal/golden"
	"approvalsbot/internal/utf16text"
	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
)

// TestEmailHTMLIsSelfContained: inline styles only, nothing loaded, one
// narrow-friendly column, no layout tables.
func TestEmailHTMLIsSelfContained(t *testing.T) {
	r := newRenderer(t)
	forbidden := regexp.MustCompile(`(?i)<style|<img|<link|<script|<iframe|<object|<embed|<table|<form|\ssrc=|url\(|@import|<svg|<video|<audio|background=`)
	for _, name := range []string{"merge.json", "protected.json", "mail.json", "big.json", "private.json"} {
		a := templatestest.Approval(t, name)
		for _, state := range templates.PreviewStatesOf(a) {
			h := r.Email(templatestest.Card(t, a, state)).HTML
			if m := forbidden.FindString(h); m != "" {
				t.Errorf("%s/%s: HTML holds %q", name, state, m)
			}
			if !strings.Contains(h, "max-width:640px") || !strings.Contains(h, `name="viewport"`) {
				t.Errorf("%s/%s: no narrow-window layout", name, state)
			}
		}
	}
}

// TestEmailEscapes: a value that closes a cell and opens a script is text.
func TestEmailEscapes(t *testing.T) {
	r := newRenderer(t)
	const evil = `</td><script>alert(1)</script>`
	a := templatestest.Synthetic()
	a.Call.Arguments = []byte(`{"note":"` + strings.ReplaceAll(evil, `"`, `\"`) + `"}`)
	a.AgentSays = evil
	a.Job.Agent = evil
	a.Roles = []approval.Role{{Argument: evil, Role: approval.RoleRecipient, Values: []approval.RoleValue{{Value: evil, Origin: approval.OriginRequest}}}}
	a.ConsoleURL = "javascript:alert(1)"
	e := r.Email(templates.Build(templates.Input{Approval: a}))
	if strings.Contains(e.HTML, "<script") || strings.Contains(e.HTML, "</td>") {
		t.Errorf("HTML runs the value:\n%s", e.HTML)
	}
	if n := strings.Count(e.HTML, "&lt;/td&gt;&lt;script&gt;alert(1)&lt;/script&gt;"); n < 4 {
		t.Errorf("the value shows as text %d times, want in arguments, roles, agent text and title", n)
	}
	if strings.Contains(e.HTML, `href="javascript:`) {
		t.Error("HTML links to javascript:")
	}
	if !strings.Contains(e.Text, evil) {
		t.Error("the text part lacks the value")
	}
}

// TestEmailSameFacts: the text part carries the facts the HTML part does.
func TestEmailSameFacts(t *testing.T) {
	r := newRenderer(t)
	for _, name := range []string{"merge.json", "mail.json", "protected.json", "refund.json"} {
		a := templatestest.Approval(t, name)
		c := templatestest.Card(t, a, "pending")
		e := r.Email(c)
		facts := append(templatestest.Essentials(c), c.AskedBy, c.Turn, c.Ladder, c.Digest, c.Snapshot, c.AgentSays, c.ConfirmLine, c.ConsoleURL)
		if c.Arguments != nil {
			facts = append(facts, strings.Split(c.Arguments.JSON, "\n")...)
		}
		if c.Roles != nil {
			for _, row := range c.Roles.Rows {
				facts = append(facts, row.Value)
			}
		}
		if c.Changes != nil {
			facts = append(facts, c.Changes.ProtectedNote, c.Changes.GovernanceNote, c.Changes.PatchDigest)
			for _, f := range c.Changes.Files {
				facts = append(facts, f.Path)
			}
		}
		for _, f := range facts {
			f = strings.TrimSpace(f)
			if f == "" {
				continue
			}
			if !strings.Contains(e.Text, f) {
				t.Errorf("%s: text part lacks %q", name, f)
			}
			if !strings.Contains(e.HTML, htmlEscape(f)) {
				t.Errorf("%s: HTML part lacks %q", name, f)
			}
		}
	}
}

// TestEmailSubject: one subject for an approval's whole life, whatever
// its state, so each recipient's mails read as one conversation; a
// follow-up answers it.
func TestEmailSubject(t *testing.T) {
	r := newRenderer(t)
	merge := templatestest.Approval(t, "merge.json")
	want := "Approval needed: " + merge.Call.Function + " · " + merge.ID
	for _, state := range templates.PreviewStatesOf(merge) {
		c := templatestest.Card(t, merge, state)
		if got := r.Email(c).Subject; got != want {
			t.Errorf("%s: subject %q, want %q", state, got, want)
		}
		for _, kind := range []string{templates.MailReask, templates.MailOutcome, templates.MailNote} {
			if got := r.Mail(templates.Mail{Card: c, Kind: kind, Reply: true}).Subject; got != "Re: "+want {
				t.Errorf("%s %s: subject %q, want %q", state, kind, got, "Re: "+want)
			}
		}
	}
	// A card built by hand (not by Build) gets the same guard.
	if s := r.Email(templates.Card{Tenant: "t", Function: "x\r\nBcc: all@example.invalid " + strings.Repeat("a", 1000)}).Subject; strings.ContainsAny(s, "\r\n") || utf16text.Len(s) > templates.EmailSubjectMax {
		t.Errorf("subject %q", s)
	}
	a := templatestest.Synthetic()
	a.Call.Function = "evil\r\nBcc: all@example.invalid"
	if s := r.Email(templates.Build(templates.Input{Approval: a})).Subject; strings.ContainsAny(s, "\r\n") {
		t.Errorf("subject carries a line break: %q", s)
	}
}

// TestMailGolden compares each kind of mail of a recipient's
// conversation with the files under testdata/mail (go test ./templates
// -update rewrites them): a step's mail to a member with links, the
// same to a list address, a reask, the outcomes, and a note; and an
// outcome and a note of a call that needs two approvals. The cards
// here are built from the fixtures alone, so their ladder lines name
// every target and they carry no reask list; the mail the bot sends
// (its plan counting recipients, the reask's changes) is pinned over
// SMTP by threads' golden files (threads/testdata/mail).
func TestMailGolden(t *testing.T) {
	r := newRenderer(t)
	merge := templatestest.Approval(t, "merge.json")
	reasked := templatestest.Approval(t, "merge-reasked.json")
	deadline := time.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC)
	link := &templates.MailLink{Approve: true, URL: "https://approvals.example/decide/1kevin"}
	denyOnly := &templates.MailLink{URL: "https://approvals.example/decide/1kevin2"}
	why := templates.MailWhy(15*time.Minute, 1, "default")
	mails := map[string]templates.Mail{
		"step-member": {Card: templatestest.Card(t, merge, "pending"), Why: why, Link: link, ActAs: "user:kevin", Expires: deadline},
		"step-list":   {Card: templatestest.Card(t, merge, "pending"), Why: why},
		"reask": {Card: templatestest.Card(t, reasked, "pending"), Kind: templates.MailReask, Reply: true, Changed: reasked.Why, Link: denyOnly, ActAs: "user:kevin",
			Expires: deadline},
		"approved": {Card: templatestest.Card(t, merge, "approved"), Kind: templates.MailOutcome, Reply: true},
		"expired":  {Card: templatestest.Card(t, merge, "expired"), Kind: templates.MailOutcome, Reply: true},
		"note": {Card: templatestest.Card(t, merge, "pending"), Kind: templates.MailNote, Reply: true,
			Note: "Your denial was not recorded: the job backend did not answer. Try again in a moment."},
	}
	// A call that needs two approvals: the deadline's outcome after one,
	// and the note to the first approver, each with the quorum line.
	for _, q := range templatestest.QuorumCases(t) {
		switch q.Name {
		case "merge/quorum-expired":
			mails["expired-quorum"] = templates.Mail{Card: templates.Build(q.In), Kind: templates.MailOutcome, Reply: true}
		case "merge/quorum-pending":
			mails["note-quorum"] = templates.Mail{Card: templates.Build(q.In), Kind: templates.MailNote, Reply: true,
				Note: "Your approval was recorded."}
		}
	}
	for name, m := range mails {
		e := r.Mail(m)
		for ext, got := range map[string]string{"txt": "Subject: " + e.Subject + "\n\n" + e.Text, "html": e.HTML} {
			golden.Check(t, filepath.Join("testdata", "mail", name+"."+ext), got, *update)
		}
	}
}

// TestMailOffersNoDecisionWhereNoneIsAsked: an outcome, a note and a
// superseded card carry no links and no invitation to decide, and no
// mail holds a form; a step's mail sent while a decision is on its way
// keeps its links (a mail cannot be edited, and that decision may not
// land).
func TestMailOffersNoDecisionWhereNoneIsAsked(t *testing.T) {
	r := newRenderer(t)
	merge := templatestest.Approval(t, "merge.json")
	link := &templates.MailLink{URL: "https://approvals.example/decide/1deny"}
	for name, m := range map[string]templates.Mail{
		"outcome":    {Card: templatestest.Card(t, merge, "denied"), Kind: templates.MailOutcome, Link: link},
		"note":       {Card: templatestest.Card(t, merge, "pending"), Kind: templates.MailNote, Note: "n", Link: link},
		"superseded": {Card: templatestest.Card(t, merge, "superseded"), Kind: templates.MailReask, Link: link},
	} {
		e := r.Mail(m)
		for part, s := range map[string]string{"text": e.Text, "html": e.HTML} {
			if strings.Contains(s, "/decide/") || strings.Contains(s, "Decide") || strings.Contains(s, "<form") {
				t.Errorf("%s %s part invites a decision:\n%s", name, part, s)
			}
		}
	}
	e := r.Mail(templates.Mail{Card: templatestest.Card(t, merge, "deciding"), Link: link, ActAs: "user:kevin"})
	if !strings.Contains(e.Text, "Open the decision page (Deny): https://approvals.example/decide/1deny") ||
		!strings.Contains(e.HTML, `href="https://approvals.example/decide/1deny"`) {
		t.Errorf("a step's mail while a decision is on its way lost its link:\n%s", e.Text)
	}
}

func TestMailWhy(t *testing.T) {
	for _, c := range []struct {
		waited time.Duration
		step   int
		ladder string
		want   string
	}{
		{15 * time.Minute, 1, "default", "Nobody has decided for 15 minutes; you are on step 1 of the default ladder."},
		{90 * time.Minute, 2, "payments", "Nobody has decided for 1 hour 30 minutes; you are on step 2 of the payments ladder."},
		{26 * time.Hour, 3, "", "Nobody has decided for 1 day 2 hours; you are on step 3 of the default ladder."},
		{time.Minute, 1, "x", "Nobody has decided for 1 minute; you are on step 1 of the x ladder."},
		{10 * time.Second, 1, "x", "Nobody has decided yet; you are on step 1 of the x ladder."},
	} {
		if got := templates.MailWhy(c.waited, c.step, c.ladder); got != c.want {
			t.Errorf("MailWhy(%v, %d, %q) = %q, want %q", c.waited, c.step, c.ladder, got, c.want)
		}
	}
}

// TestMailHasNoChatWords: a mail names no chat button and no chat thread
// it does not link to.
func TestMailHasNoChatWords(t *testing.T) {
	r := newRenderer(t)
	files, err := fixtures.EventFiles()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		ev := templatestest.Event(t, filepath.Base(f))
		if ev.Approval == nil {
			continue
		}
		for _, state := range templates.PreviewStatesOf(ev.Approval) {
			e := r.Email(templatestest.Card(t, ev.Approval, state))
			for part, s := range map[string]string{"text": e.Text, "html": e.HTML} {
				for _, chat := range []string{"Show all", "Show details", "chat thread", "in the thread"} {
					if strings.Contains(s, chat) {
						t.Errorf("%s %s: the %s part says %q, which a mail has not", filepath.Base(f), state, part, chat)
					}
				}
			}
		}
	}
}
