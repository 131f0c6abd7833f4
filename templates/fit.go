package templates

import (
	"cmp"
	"slices"
	"strings"

	"approvalsbot/internal/utf16text"
)

// Fitting rendered text into a platform's limits. Cuts are visible (a
// marker line says so) and keep the markup whole: a code block left open
// is closed, and a cut never ends inside an escape.

const (
	slackCutMarker = "_[cut to fit Slack; the console shows all]_"
	// minKept is the least of a part worth keeping; a part that would keep
	// less is replaced by a line that says it was left out.
	minKept = 80
)

// cutText is utf16text.Fit: s within max characters, cut visibly.
func cutText(s string, max int, marker string, trim func(string) string) string {
	return utf16text.Fit(s, max, marker, trim)
}

// trimSlack drops a cut entity (&amp; → &am) and a link cut open (<http…).
func trimSlack(s string) string {
	if i := strings.LastIndexByte(s, '&'); i >= 0 && !strings.Contains(s[i:], ";") {
		s = s[:i]
	}
	if i := strings.LastIndexByte(s, '<'); i >= 0 && !strings.Contains(s[i:], ">") {
		s = s[:i]
	}
	return s
}

// TextPart is one part of a chat card as a platform wrote it: its name
// (one of CardParts) and its text.
type TextPart struct {
	Name, Text string
}

// CardParts names the parts of a chat card below its title, in
// docs/cards.md's order.
func CardParts() []string { return slices.Clone(cardParts) }

// cutOrder is which parts give way first when a card is too long: what
// the agent wrote and the bulky details first; the status, effect line and
// flags last (only if they alone are too long). Buttons are not text and
// never give way.
var cutOrder = []string{
	"card.agent", "card.patch", "card.roles", "card.changes", "card.args",
	"card.asked", "card.turn", "card.digest", "card.meta", "card.reask", "card.ladder",
	"card.warning", "card.confirm", "card.restricted", "card.flags", "card.effect",
}

// mustKeep are the parts a card never leaves out (with the status and the
// buttons, which are not among the parts).
var mustKeep = map[string]bool{"card.effect": true, "card.flags": true, "card.warning": true}

// partNames are the words an omission line uses.
var partNames = map[string]string{
	"card.agent": "the agent's text", "card.patch": "the patch", "card.roles": "the argument roles",
	"card.args": "the arguments", "card.changes": "the files", "card.asked": "who asks",
	"card.turn": "the turn", "card.digest": "the digest", "card.meta": "the job",
	"card.reask": "what changed",
}

// FitParts makes parts, joined by sep, fit in max characters, cutting
// parts in cutOrder and each only as much as needed (with marker, and
// trim, which cutText takes); a part that would keep less than minKept
// is replaced by leftOut, its %s the part's words, unless it must be
// kept. The platform passes its markup: the order, the parts always kept
// and the words are the card's, the same on every chat.
func FitParts(parts []TextPart, sep string, max int, marker, leftOut string, trim func(string) string) []TextPart {
	total := -charLen(sep)
	for _, p := range parts {
		if p.Text != "" {
			total += charLen(p.Text) + charLen(sep)
		}
	}
	for _, name := range cutOrder {
		over := total - max
		if over <= 0 {
			break
		}
		for i := range parts {
			if parts[i].Name != name || parts[i].Text == "" {
				continue
			}
			old := charLen(parts[i].Text)
			target := old - over
			var nt string
			switch {
			case target >= minKept:
				nt = cutText(parts[i].Text, target, marker, trim)
			case mustKeep[name]:
				// The effect line and the flags are cut, never left out.
				nt = cutText(parts[i].Text, minKept, marker, trim)
			default:
				nt = strings.ReplaceAll(leftOut, "%s", cmp.Or(partNames[name], "this part"))
			}
			if n := charLen(nt); n < old {
				parts[i].Text = nt
				total += n - old
			}
		}
	}
	return parts
}
