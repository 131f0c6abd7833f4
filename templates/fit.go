package templates

import (
	"cmp"
	"strings"
)

// Fitting rendered text into a platform's limits. Cuts are visible (a
// marker line says so) and keep the markup whole: a code block left open
// is closed, and a cut never ends inside an escape.

const (
	discordCutMarker = "*[cut to fit Discord; the console shows all]*"
	fenceClose       = "\n```"
	// minKept is the least of a part worth keeping; a part that would keep
	// less is replaced by a line that says it was left out.
	minKept = 80
)

// cutText fits s into max characters: as much as fits, preferring a line
// boundary, a closing fence if a code block was left open, and marker on a
// line of its own. trim removes a partial escape at the cut.
func cutText(s string, max int, marker string, trim func(string) string) string {
	if charLen(s) <= max {
		return s
	}
	budget := max - charLen(marker) - 1 - len(fenceClose)
	if budget <= 0 {
		return prefixChars(marker, max)
	}
	kept := prefixChars(s, budget)
	if i := strings.LastIndexByte(kept, '\n'); i > 0 && charLen(kept[:i]) > budget/2 {
		kept = kept[:i]
	}
	kept = trim(strings.TrimRight(kept, " \t"))
	if strings.Count(kept, "```")%2 == 1 {
		kept += fenceClose
	}
	return kept + "\n" + marker
}

// trimDiscord drops a lone escaping backslash at the end, which would
// escape the marker's newline, and a link, a <URL> or a timestamp cut
// open.
func trimDiscord(s string) string {
	n := 0
	for n < len(s) && s[len(s)-1-n] == '\\' {
		n++
	}
	if n%2 == 1 {
		s = s[:len(s)-1]
	}
	// A URL kept in <…> cut before its > would be a bare URL, with a
	// preview, and a timestamp would show as <t:17…: each goes whole.
	for _, open := range []string{"<http", "<t:"} {
		if i := strings.LastIndex(s, open); i >= 0 && (i == 0 || s[i-1] != '\\') && !strings.Contains(s[i:], ">") {
			s = s[:i]
		}
	}
	if i := strings.LastIndex(s, "]("); i >= 0 && !strings.Contains(s[i:], ")") {
		if j := strings.LastIndexByte(s[:i], '['); j >= 0 {
			s = s[:j]
		}
	}
	return s
}

// textPart is one rendered part of a card, named as its template.
type textPart struct {
	name, text string
}

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

// fitParts makes parts, joined by sep, fit in max characters, cutting
// parts in cutOrder and each only as much as needed.
func fitParts(parts []textPart, sep string, max int, marker, leftOut string, trim func(string) string) []textPart {
	total := -charLen(sep)
	for _, p := range parts {
		if p.text != "" {
			total += charLen(p.text) + charLen(sep)
		}
	}
	for _, name := range cutOrder {
		over := total - max
		if over <= 0 {
			break
		}
		for i := range parts {
			if parts[i].name != name || parts[i].text == "" {
				continue
			}
			old := charLen(parts[i].text)
			target := old - over
			var nt string
			switch {
			case target >= minKept:
				nt = cutText(parts[i].text, target, marker, trim)
			case mustKeep[name]:
				// The effect line and the flags are cut, never left out.
				nt = cutText(parts[i].text, minKept, marker, trim)
			default:
				nt = strings.ReplaceAll(leftOut, "%s", cmp.Or(partNames[name], "this part"))
			}
			if n := charLen(nt); n < old {
				parts[i].text = nt
				total += n - old
			}
		}
	}
	return parts
}

func joinParts(parts []textPart, sep string) string {
	var b strings.Builder
	for _, p := range parts {
		if p.text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(sep)
		}
		b.WriteString(p.text)
	}
	return b.String()
}
