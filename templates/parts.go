package templates

import (
	"cmp"
	"slices"
)

// cardParts are a chat card's parts below its title, in docs/cards.md's
// order. The quorum line follows the job's line: the first line of the
// card's body, under the status and title on every surface.
var cardParts = []string{
	"card.meta", "card.quorum", "card.effect", "card.flags", "card.asked", "card.warning",
	"card.reask", "card.args", "card.digest", "card.roles", "card.changes", "card.patch",
	"card.agent", "card.turn", "card.ladder", "card.confirm", "card.restricted",
}

// cutOrder is which parts give way first when a card is too long: the
// agent's text and bulky details first, the effect line and flags last.
// The quorum line is in none: like the status, it is never cut (Build
// bounds it).
var cutOrder = []string{
	"card.agent", "card.patch", "card.roles", "card.changes", "card.args",
	"card.asked", "card.turn", "card.digest", "card.meta", "card.reask", "card.ladder",
	"card.warning", "card.confirm", "card.restricted", "card.flags", "card.effect",
}

// mustKeep are the parts never left out (besides the status and buttons);
// the quorum line, in no cutOrder, is not even cut.
var mustKeep = map[string]bool{"card.effect": true, "card.flags": true, "card.warning": true, "card.quorum": true}

// partNames are the words an omission line uses.
var partNames = map[string]string{
	"card.agent": "the agent's text", "card.patch": "the patch", "card.roles": "the argument roles",
	"card.args": "the arguments", "card.changes": "the files", "card.asked": "who asks",
	"card.turn": "the turn", "card.digest": "the digest", "card.meta": "the job",
	"card.reask": "what changed",
}

// minKept is the least of a part worth keeping; less is left out.
const minKept = 80

// CardParts names a chat card's parts below its title, in order.
func CardParts() []string { return slices.Clone(cardParts) }

// CutOrder is the order in which parts give way when a card is too long.
func CutOrder() []string { return slices.Clone(cutOrder) }

// MustKeep reports whether a part is never left out: cut at most, and
// one in no CutOrder (the quorum line) not even cut.
func MustKeep(part string) bool { return mustKeep[part] }

// Part is one part of a chat card as a platform writes it: its name (one
// of CardParts) and its content in the platform's markup.
type Part[T any] struct {
	Name    string
	Content T
}

// Fitter is how a platform measures and cuts the content of a part.
type Fitter[T any] struct {
	// Len is the characters c counts toward the limit, 0 for no content.
	Len func(c T) int
	// Cut keeps c within max characters, cut visibly; never to nothing.
	Cut func(c T, max int) T
	// LeftOut stands in for a part left out; what names it ("the patch").
	LeftOut func(what string) T
}

// FitParts makes parts fit in max characters together, cutting parts in
// CutOrder and each only as much as needed; a part that would keep less
// than minKept is replaced by f.LeftOut, unless it must be kept (then it
// keeps minKept). A part not in CutOrder is never cut.
func FitParts[T any](parts []Part[T], max int, f Fitter[T]) {
	total := 0
	for _, p := range parts {
		total += f.Len(p.Content)
	}
	for _, name := range cutOrder {
		over := total - max
		if over <= 0 {
			return
		}
		for i := range parts {
			if parts[i].Name != name {
				continue
			}
			old := f.Len(parts[i].Content)
			if old == 0 {
				continue
			}
			var c T
			switch target := old - over; {
			case target >= minKept:
				c = f.Cut(parts[i].Content, target)
			case mustKeep[name]:
				c = f.Cut(parts[i].Content, minKept)
			default:
				c = f.LeftOut(cmp.Or(partNames[name], "this part"))
			}
			if n := f.Len(c); n < old {
				parts[i].Content = c
				total += n - old
			}
		}
	}
}
