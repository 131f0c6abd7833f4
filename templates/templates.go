// Package templates owns what a person reads of an approval: the card
// model, decided once from an approval, its frozen ladder plan and its
// decision (Build); its renderings as email and plain text, from embedded
// templates that New parses once; and the replies the bot posts in a
// card's threads. Each chat adapter lays out the same card itself
// (CardParts, ThreadMessage.Lines). Nothing here does I/O. What a card
// shows: docs/cards.md; why: docs/design.md#one-card-every-surface.
package templates

import (
	"embed"
	"fmt"
	htmltemplate "html/template"
	"io/fs"
	"strings"
	texttemplate "text/template"
	"time"

	"approvalsbot/approval"
)

//go:embed email text
var embedded embed.FS

// Options configures a Renderer.
type Options struct {
	// Templates replaces the embedded template files (the same layout:
	// email/*.tmpl, text/*.tmpl); nil uses the embedded ones.
	Templates fs.FS
}

// Renderer renders cards and thread messages as email and plain text. It is
// immutable after New and safe for concurrent use.
type Renderer struct {
	text      *texttemplate.Template
	emailText *texttemplate.Template
	emailHTML *htmltemplate.Template
}

// The named templates each surface must define; New checks every one, so
// a missing or broken template is an error at start-up, not a blank card.
var (
	textNames      = []string{"card", "thread"}
	emailTextNames = []string{"card.subject", "card.text"}
	emailHTMLNames = []string{"card.html"}
)

// New parses the templates and proves each renders a full and an empty
// card, so rendering itself cannot fail later.
func New(opts Options) (*Renderer, error) {
	fsys := opts.Templates
	if fsys == nil {
		fsys = embedded
	}
	r := &Renderer{}
	var err error
	if r.text, err = parseText(fsys, "text", plainFuncs, textNames); err != nil {
		return nil, err
	}
	if r.emailText, err = parseText(fsys, "email/*.txt.tmpl", plainFuncs, emailTextNames); err != nil {
		return nil, err
	}
	if r.emailHTML, err = parseHTML(fsys, "email/*.html.tmpl", emailHTMLNames); err != nil {
		return nil, err
	}
	if err := r.selfTest(); err != nil {
		return nil, err
	}
	if err := r.selfTestMail(); err != nil {
		return nil, err
	}
	return r, nil
}

// parseText parses the templates of one surface: dir/*.tmpl, or a glob.
func parseText(fsys fs.FS, pattern string, funcs texttemplate.FuncMap, names []string) (*texttemplate.Template, error) {
	if !strings.Contains(pattern, "*") {
		pattern += "/*.tmpl"
	}
	t, err := texttemplate.New("").Option("missingkey=error").Funcs(funcs).ParseFS(fsys, pattern)
	if err != nil {
		return nil, fmt.Errorf("parse templates %s: %w", pattern, err)
	}
	for _, n := range names {
		if t.Lookup(n) == nil {
			return nil, fmt.Errorf("parse templates %s: no template %q", pattern, n)
		}
	}
	return t, nil
}

func parseHTML(fsys fs.FS, pattern string, names []string) (*htmltemplate.Template, error) {
	t, err := htmltemplate.New("").Option("missingkey=error").Funcs(htmlFuncs).ParseFS(fsys, pattern)
	if err != nil {
		return nil, fmt.Errorf("parse templates %s: %w", pattern, err)
	}
	for _, n := range names {
		if t.Lookup(n) == nil {
			return nil, fmt.Errorf("parse templates %s: no template %q", pattern, n)
		}
	}
	return t, nil
}

// selfTest runs every template on an empty and a full card, and every reply.
func (r *Renderer) selfTest() error {
	full := Build(selfTestInput())
	type run struct {
		t     *texttemplate.Template
		names []string
	}
	runs := []run{
		{r.text, []string{"card"}},
		{r.emailText, emailTextNames},
	}
	for _, c := range []*Card{{}, &full} {
		for _, x := range runs {
			for _, n := range x.names {
				if _, err := execText(x.t, n, c); err != nil {
					return fmt.Errorf("render %s: %w", n, err)
				}
			}
		}
		var b strings.Builder
		if err := r.emailHTML.ExecuteTemplate(&b, "card.html", c); err != nil {
			return fmt.Errorf("render email card.html: %w", err)
		}
	}
	for _, m := range selfTestThreads() {
		if _, err := execText(r.text, "thread", textThread(m)); err != nil {
			return fmt.Errorf("render thread %s: %w", m.Kind, err)
		}
	}
	return nil
}

// execText runs one named template into a string.
func execText(t *texttemplate.Template, name string, data any) (string, error) {
	var b strings.Builder
	err := t.ExecuteTemplate(&b, name, data)
	return b.String(), err
}

// brokenPart stands in for a part whose template failed (unreachable
// after New's self-test), so a card still goes out rather than nothing.
const brokenPart = "[this part of the card could not be shown]"

// part runs a named template and trims the blank lines around it.
func part(t *texttemplate.Template, name string, data any) string {
	s, err := execText(t, name, data)
	if err != nil {
		return brokenPart
	}
	return strings.Trim(s, "\n")
}

// selfTestInput is an approval with every part a card can show.
func selfTestInput() Input {
	yes, no := true, false
	at := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	dl := at.Add(time.Hour)
	digest := "sha256:" + strings.Repeat("0", 64)
	return Input{
		Approval: &approval.Approval{
			ID: "a-1", Revision: 1, Tenant: "t", Kind: approval.KindProtectedPaths, ConsoleURL: "https://console.invalid/a-1",
			Job: approval.Job{ID: "j", URL: "https://console.invalid/j", StartedBy: "user:a", Agent: "b"},
			Call: approval.Call{Function: "f", Snapshot: digest, ArgsSHA256: digest, Arguments: []byte(`{"a":1}`), ArgumentsCut: true,
				Annotations: approval.Annotations{ReadOnlyHint: &no, DestructiveHint: &yes, OpenWorldHint: &yes}},
			Roles:     []approval.Role{{Argument: "a", Role: approval.RoleRecipient, LeftOut: 1, NotCompared: true, Values: []approval.RoleValue{{Value: "v", Origin: approval.OriginJobRead, OutOfScope: true}}}},
			Flags:     approval.Flags{NewToJob: []approval.NewToJob{{Argument: "a", Role: approval.RoleRecipient}}},
			AskedBy:   approval.AskedBy{Reason: approval.ReasonTaint, Taint: []approval.Taint{{Source: "s", Function: "f", Call: 1}}},
			AgentSays: "x", Level: "L2", EffectsMismatch: true, Turn: approval.Turn{Waiting: []string{"g"}},
			Changes:     &approval.Changes{Files: []approval.ChangedFile{{Path: "p", Protected: true}}, Patch: "x", PatchCut: true, PatchSHA256: digest},
			RequestedAt: at, Deadline: &dl,
		},
		Ladder: LadderPlan{Steps: []PlanStep{{At: at.Add(time.Minute), Who: "n"}, {At: dl, Who: "m", Skipped: true}},
			Name: "default", Unknown: "u"},
		Reask: &approval.Reask{From: 1, Revision: 2, Why: approval.WhyArgumentsChanged, More: 1, SnapshotFrom: digest, SnapshotTo: digest,
			Arguments: []approval.ArgumentChange{{Path: "a", Kind: approval.ChangeChanged, Old: "1", New: "2"}}},
		Looking: &Looking{Actor: "user:a", Since: at, Until: dl, From: "user:b"},
		Escalations: []EscalatedStep{{Actor: "user:a", At: at, Who: "n", Planned: at.Add(time.Minute)},
			{Actor: "user:a", At: at}, {Actor: "user:a", At: at}, {Actor: "user:a", At: at}},
		Quorum: &Quorum{Need: 2, From: "r", Approvals: []QuorumApproval{{Actor: "user:a", At: at}}, Voided: 1},
	}
}

func selfTestThreads() []ThreadMessage {
	return []ThreadMessage{
		{Kind: ThreadBackendMessage, Text: "x"},
		{Kind: ThreadRecheckRefused, Text: "x"},
		{Kind: ThreadOutcome, Text: "x"},
		{Kind: ThreadCancelled, Text: "x"},
		{Kind: ThreadAutoGranted, Text: "x"},
		{Kind: ThreadEscalation, Mentions: []Mention{{Target: "slack:U1", Name: "a"}, {Target: "discord:role:1", Name: "b"}}, Waited: time.Minute},
		{Kind: ThreadEscalation, Mentions: []Mention{{Target: "slack:U1", Name: "a"}}, Waited: time.Minute, By: "user:a"},
	}
}
