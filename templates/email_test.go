package templates

import (
	"regexp"
	"strings"
	"testing"

	"approvalsbot/approval"
)

// TestEmailHTMLIsSelfContained: inline styles only, nothing loaded, one
// narrow-friendly column, no layout tables.
func TestEmailHTMLIsSelfContained(t *testing.T) {
	r := newRenderer(t)
	forbidden := regexp.MustCompile(`(?i)<style|<img|<link|<script|<iframe|<object|<embed|<table|<form|\ssrc=|url\(|@import|<svg|<video|<audio|background=`)
	for _, name := range []string{"merge.json", "protected.json", "mail.json", "big.json", "private.json"} {
		a := loadApproval(t, name)
		for _, state := range PreviewStates() {
			h := r.Email(cardIn(t, a, state)).HTML
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
	a := synthetic()
	a.Call.Arguments = []byte(`{"note":"` + strings.ReplaceAll(evil, `"`, `\"`) + `"}`)
	a.AgentSays = evil
	a.Job.Agent = evil
	a.Roles = []approval.Role{{Argument: evil, Role: approval.RoleRecipient, Values: []approval.RoleValue{{Value: evil, Origin: approval.OriginRequest}}}}
	a.ConsoleURL = "javascript:alert(1)"
	e := r.Email(Build(Input{Approval: a}))
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
		a := loadApproval(t, name)
		c := cardIn(t, a, "pending")
		e := r.Email(c)
		facts := append(essentials(c), c.AskedBy, c.Turn, c.Ladder, c.Digest, c.Snapshot, c.AgentSays, c.ConfirmLine, c.ConsoleURL)
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

// TestEmailSubject names the tenant, the function and the effect, or
// what happened.
func TestEmailSubject(t *testing.T) {
	r := newRenderer(t)
	merge := loadApproval(t, "merge.json")
	prefix := "[" + merge.Tenant + "] " + merge.Call.Function
	first, _, _ := strings.Cut(approval.EffectLine(merge.Call.Annotations), " · ")
	want := map[string]string{
		"pending":    prefix + " waits for a decision (" + first + ")",
		"deciding":   prefix + ": a decision is being sent",
		"approved":   prefix + " was approved",
		"denied":     prefix + " was denied",
		"expired":    prefix + " was denied: nobody answered by the deadline",
		"cancelled":  prefix + " was cancelled",
		"refused":    prefix + " was refused by the platform's re-check",
		"superseded": prefix + " changed: see the new card",
	}
	for _, state := range PreviewStates() {
		if got := r.Email(cardIn(t, merge, state)).Subject; got != want[state] {
			t.Errorf("%s: subject %q, want %q", state, got, want[state])
		}
	}
	// A card built by hand (not by Build) gets the same guard.
	if s := r.Email(Card{Tenant: "t", Headline: "x\r\nBcc: all@example.invalid " + strings.Repeat("a", 1000)}).Subject; strings.ContainsAny(s, "\r\n") || charLen(s) > emailSubjectMax {
		t.Errorf("subject %q", s)
	}
	a := synthetic()
	a.Call.Function = "evil\r\nBcc: all@example.invalid"
	if s := r.Email(Build(Input{Approval: a})).Subject; strings.ContainsAny(s, "\r\n") {
		t.Errorf("subject carries a line break: %q", s)
	}
}
