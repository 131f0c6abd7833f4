package templates_test

import (
	"strings"
	"testing"

	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
)

// TestDigestOnlyForAContentHolder: the digest lets a guess at a redacted
// or small value be checked, so no surface shows it unless the card's
// reader is known to hold the content permission.
func TestDigestOnlyForAContentHolder(t *testing.T) {
	r, err := templates.New(templates.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"merge.json", "secrets.json", "changes.json"} {
		a := templatestest.Approval(t, name)
		digest := a.Call.ArgsSHA256
		at, plan := templatestest.Pinned(a)
		in, err := templates.PreviewInput(a, "pending", at, plan)
		if err != nil {
			t.Fatal(err)
		}
		// Any part of it would do for a guess: its first 12 hex digits
		// are looked for, on every surface and the page.
		part := digest[len("sha256:") : len("sha256:")+12]
		shared := templates.Build(in)
		renderAll(t, r, shared).each(func(surface, text string) {
			if strings.Contains(text, part) {
				t.Errorf("%s on %s shows the digest to a reader not known to hold the content permission", name, surface)
			}
		})
		in.ContentHolder = true
		c := templates.Build(in)
		if c.Digest != digest {
			t.Errorf("%s for a content holder: digest %q, want %q", name, c.Digest, digest)
		}
		if page := string(r.CardHTML(shared)); strings.Contains(page, part) {
			t.Errorf("%s on the page shows the digest to a reader not known to hold the content permission", name)
		}
		x := renderAll(t, r, c)
		for surface, text := range map[string]string{"slack": x.slack, "discord": x.discord, "email text": x.emailText,
			"email html": x.emailHTML, "text": x.text, "page": string(r.CardHTML(c))} {
			if !strings.Contains(text, digest) {
				t.Errorf("%s on %s hides the digest from a content holder", name, surface)
			}
		}
	}
}

// TestPrivateChatRestrictedWhateverTheFlag: a private chat's call whose
// content.restricted is false renders as restricted on every surface:
// no arguments, role values, agent text or digest, even for a content
// holder's copy of a shared card.
func TestPrivateChatRestrictedWhateverTheFlag(t *testing.T) {
	r, err := templates.New(templates.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := templatestest.Approval(t, "private.json")
	a.Content.Restricted = false
	at, plan := templatestest.Pinned(a)
	in, err := templates.PreviewInput(a, "pending", at, plan)
	if err != nil {
		t.Fatal(err)
	}
	in.ContentHolder = true
	c := templates.Build(in)
	if !c.Restricted || c.Arguments != nil || c.Digest != "" || c.AgentSays != "" || c.RestrictedNote == "" {
		t.Fatalf("card %+v: want it restricted", c)
	}
	renderAll(t, r, c).each(func(surface, text string) {
		for _, hidden := range []string{"bea.private@example.com", "customers", "Deleting my old", a.Call.ArgsSHA256} {
			if strings.Contains(text, hidden) {
				t.Errorf("%s shows %q of a private chat's call", surface, hidden)
			}
		}
	})
}
