package templates_test

import (
	"strings"
	"testing"

	"approvalsbot/internal/utf16text"
	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
)

func TestHugeIsHuge(t *testing.T) {
	a := templatestest.Huge(t, false)
	n := len(a.Call.Arguments) + len(a.AgentSays) + len(a.Changes.Patch)
	for _, r := range a.Roles {
		for _, v := range r.Values {
			n += len(v.Value)
		}
	}
	if n < 900<<10 {
		t.Fatalf("the synthetic approval is only %d bytes", n)
	}
}

// TestLimits: every platform limit holds on every surface, for the
// fixtures and a ~1 MiB approval, in every state, and the status line, the
// effect line, the flags and the buttons are all there (the chats':
// their adapters' TestLimits).
func TestLimits(t *testing.T) {
	r := newRenderer(t)
	for _, tt := range templatestest.LimitCases(t) {
		t.Run(tt.Name, func(t *testing.T) {
			c := tt.Card
			if len(c.Flags) > 3*templates.ListMax || len(c.Reasons) > templates.ListMax+1 {
				t.Errorf("%d flags, %d reasons: lists are not bounded", len(c.Flags), len(c.Reasons))
			}
			e := r.Email(c)
			txt := r.Text(c)
			for surface, s := range map[string]string{"email text": e.Text, "text": txt, "email html": e.HTML} {
				if len(s) > 64<<10 {
					t.Errorf("%s is %d bytes: the card's own bounds failed", surface, len(s))
				}
				for _, want := range templatestest.Essentials(c) {
					if surface == "email html" {
						want = htmlEscape(want)
					}
					if !strings.Contains(s, want) {
						t.Errorf("%s lacks %q", surface, want)
					}
				}
			}
			if strings.ContainsAny(e.Subject, "\r\n") || utf16text.Len(e.Subject) > templates.EmailSubjectMax {
				t.Errorf("subject %q", e.Subject)
			}
		})
	}
}

// TestHugeCutsVisibly: what a surface leaves out, it says it left out
// (the chats': their adapters' TestHugeCutsVisibly).
func TestHugeCutsVisibly(t *testing.T) {
	r := newRenderer(t)
	c := templatestest.Card(t, templatestest.Huge(t, false), "pending")
	for _, want := range []string{"[cut; Show all arguments shows all]", " …[cut]", "[cut; the console shows the whole patch]", "and 290 more: Not traced to the request", "New to this job: arg0 (host), arg1 (host)", "A class above the job's so far: destructive (so far: read)", "and 290 more reasons", "and 290 more"} {
		if !strings.Contains(r.Text(c), want) {
			t.Errorf("text lacks %q", want)
		}
	}
}
