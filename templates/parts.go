package templates

import (
	"cmp"
	"slices"
)

// A chat surface lays a card out as parts below its title, named as
// cardParts names them, and fits them into its platform's limits the way
// fitParts does. These give an adapter that builds its payload in Go the
// same parts, order and rules, so every surface gives way alike.

// CardParts are the parts of a card below its title, in docs/cards.md's
// order.
func CardParts() []string { return slices.Clone(cardParts) }

// CutOrder is the order in which parts give way when a card is too long.
func CutOrder() []string { return slices.Clone(cutOrder) }

// MustKeep reports whether a part is cut, never left out.
func MustKeep(part string) bool { return mustKeep[part] }

// PartName is how a line saying a part was left out names it.
func PartName(part string) string { return cmp.Or(partNames[part], "this part") }

// MinKept is the least of a part worth keeping, in characters; a part
// that would keep less is left out, saying so, unless MustKeep.
const MinKept = minKept
