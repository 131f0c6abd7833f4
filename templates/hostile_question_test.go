package templates_test

// Property tests over generated hostile questions: a question.asked whose
// text, choices, agent and job an attacker shaped (secrets, invisible and
// bidi code points, markup of every surface, many choices), rendered on
// every surface for a shared place and for a content holder, and kept as
// the store keeps it. The markers are hostile_test.go's: S a secret, T
// the question's content.

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"approvalsbot/approval"
	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
)

// hostileAsked is one generated question and what it hides where.
type hostileAsked struct {
	body      []byte
	walled    bool
	firstText string // the last content marker of the question's text
	choices   int
	secrets   map[string]string
}

// markupBits are each surface's markup an agent may write into its text.
var markupBits = []string{"<!channel>", "@everyone", "<@U0KEVIN>", "*bold*", "`code`", "```", "<https://evil.example|click>",
	"[click](https://evil.example)", "<script>alert(1)</script>", "&amp;", "||spoiler||", "> quote", "# Heading", "~strike~"}

func hostileAskedGenerate(t testing.TB, ch hostileChooser) *hostileAsked {
	t.Helper()
	h := &hostile{}
	g := &hostileGen{ch: ch, h: h, richness: ch.intn(3)}
	q := &hostileAsked{}
	g.where = "question text"
	text := g.freeText('T', true)
	for range g.pick(3) {
		text += " " + markupBits[g.pick(len(markupBits))]
	}
	// The last content marker: a card that shows only its headline (the
	// text's first 120 characters) does not show the question.
	if ms := hostileContentRE.FindAllString(text, -1); len(ms) > 0 {
		q.firstText = ms[len(ms)-1]
	}
	choices := []string{}
	seen := map[string]bool{}
	n := []int{0, 1, 2, 5, 6, 9, 25}[g.pick(7)]
	for i := 0; i < n; i++ {
		g.where = fmt.Sprintf("choice %d", i)
		c := strings.TrimSpace(g.words(1+g.pick(2)) + " " + g.marker('T'))
		if g.chance(4) {
			c += " " + markupBits[g.pick(len(markupBits))]
		}
		if g.chance(5) {
			// A secret is never decorated: an invisible code point inside
			// it would make it no secret's shape (hostile_test.go's rule).
			// Its marker beside it keeps the choice apart from another
			// secret's once both are redacted, as the protocol requires.
			c = g.marker('T') + " ghp_" + g.secret("ghp_ token in a choice") + strings.Repeat("c", 30)
		} else {
			c, _ = g.decorate(c)
		}
		if utf8.RuneCountInString(c) > approval.MaxChoiceLen || seen[c] {
			continue
		}
		seen[c] = true
		choices = append(choices, c)
	}
	q.choices = len(choices)
	restricted, private := g.chance(4), g.chance(5)
	q.walled = restricted || private
	agent, _ := g.decorate("refund-bot")
	data := map[string]any{
		"id": "q-hostile", "revision": 1, "tenant": "acme",
		"job":          map[string]any{"id": "j-1", "agent": agent, "private_chat": private},
		"question":     map[string]any{"text": text, "choices": choices, "free_text": len(choices) == 0 || g.chance(2)},
		"content":      map[string]any{"restricted": restricted},
		"requested_at": "2026-11-29T18:00:00Z",
	}
	body, err := json.Marshal(map[string]any{"id": "evt-hq", "type": "question.asked", "time": "2026-11-29T18:00:00Z",
		"tenant": "acme", "data": data})
	if err != nil {
		t.Fatal(err)
	}
	q.body, q.secrets = body, h.secrets
	return q
}

func hostileAskedCheck(t testing.TB, r *templates.Renderer, q *hostileAsked) []hostileViolation {
	t.Helper()
	ev, err := approval.Parse(q.body)
	if err != nil {
		t.Fatalf("the generator made an invalid question: %v\n%s", err, q.body)
	}
	var out []hostileViolation
	add := func(prop, where, format string, args ...any) {
		out = append(out, hostileViolation{prop, where, fmt.Sprintf(format, args...)})
	}
	st, err := approval.StoredForm(ev.Approval)
	if err != nil {
		t.Fatal(err)
	}
	row, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range hostileMarkerRE.FindAllString(string(row), -1) {
		switch {
		case m[1] == 'S':
			add(propSecret, "stored row", "keeps the secret %s (%s)", m, q.secrets[m])
		case q.walled:
			add(propWalled, "stored row", "a restricted question keeps its content %s", m)
		}
	}
	var kept approval.Approval
	if err := json.Unmarshal(row, &kept); err != nil {
		t.Fatal(err)
	}
	for _, view := range []struct {
		name   string
		a      *approval.Approval
		holder bool
	}{{"shared", ev.Approval, false}, {"holder", ev.Approval, true}, {"stored", &kept, false}} {
		at, plan := templatestest.Pinned(view.a)
		in, err := templates.PreviewInput(view.a, string(approval.StatePending), at, plan)
		if err != nil {
			t.Fatal(err)
		}
		if view.holder {
			asContentHolder(&in)
		}
		c := templates.Build(in)
		if c.Question == nil {
			add("question-card", view.name, "no question on the card")
			continue
		}
		shownWalled := q.walled && !view.holder
		for _, s := range hostileRender(t, r, c) {
			for _, m := range hostileMarkerRE.FindAllString(s.text, -1) {
				switch {
				case m[1] == 'S':
					add(propSecret, view.name+" "+s.name, "shows the secret %s (%s)", m, q.secrets[m])
				case shownWalled:
					add(propWalled, view.name+" "+s.name, "a restricted question's card shows %s", m)
				}
			}
			text := s.text
			if s.name == "discord" {
				// Discord's renderer breaks a run of backticks with U+200B
				// on purpose (a fence the agent's text cannot close);
				// hostileRender undoes single ones, the markup here writes runs.
				// It breaks @everyone and @here alike, so they ping nobody.
				text = strings.ReplaceAll(strings.ReplaceAll(text, "`\u200b", "`"), "@\u200b", "@")
			}
			for _, r := range text {
				if hostileSuspect(r) {
					i := strings.IndexRune(text, r)
					add(propInvisible, view.name+" "+s.name, "shows U+%04X as is, not as [U+%04X]: %q", r, r, text[max(0, i-40):min(len(text), i+40)])
					break
				}
			}
			if !shownWalled && q.firstText != "" && s.name != "email subject" && !strings.Contains(s.text, q.firstText) {
				add("question-shown", view.name+" "+s.name, "leaves out the question's %s", q.firstText)
			}
		}
		if shownWalled {
			if len(c.Question.Choices) != 0 || c.Question.Text != "" {
				add(propWalled, view.name, "a restricted question's card carries its text or choices")
			}
			continue
		}
		if len(c.Question.Choices) != q.choices {
			add("choices", view.name, "%d choice buttons for %d choices", len(c.Question.Choices), q.choices)
		}
		for i, b := range c.Question.Choices {
			act, err := templates.ParseAction(b.Payload)
			if err != nil || act.Kind != templates.ActionAnswer || act.Choice != i || act.Revision != 1 || act.ApprovalID != "q-hostile" {
				add("choice-payload", view.name, "choice %d's payload %q reads %+v, %v", i, b.Payload, act, err)
			}
			if utf8.RuneCountInString(b.Label) > approval.MaxChoiceLen || strings.ContainsAny(b.Label, "\r\n") {
				add("choice-label", view.name, "choice %d's label %q is not one line within %d", i, b.Label, approval.MaxChoiceLen)
			}
		}
	}
	return out
}

// TestHostileQuestions: over generated hostile questions, no secret is
// stored or shown, a restricted question's content reaches no shared
// card and is not stored, an invisible code point is never shown as is,
// an unrestricted question's text is on every surface, and each choice's
// button answers exactly that choice.
func TestHostileQuestions(t *testing.T) {
	r := newRenderer(t)
	n := 200
	if testing.Short() {
		n = 40
	}
	failed := map[string]int{}
	for i := range n {
		q := hostileAskedGenerate(t, &hostileRand{r: rand.New(rand.NewPCG(*hostileSeed, uint64(i)))})
		seen := map[string]bool{}
		for _, v := range hostileAskedCheck(t, r, q) {
			if seen[v.prop] {
				continue
			}
			seen[v.prop] = true
			if failed[v.prop]++; failed[v.prop] <= 3 {
				t.Errorf("question %d: %s", i, v)
			}
		}
	}
	for p, k := range failed {
		t.Errorf("property %s broken by %d of %d questions", p, k, n)
	}
}
