package approval

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Invisible reports whether r is a character a reader does not see as
// itself, which a card shows as [U+XXXX]: controls, format characters, the
// rest of Default_Ignorable_Code_Point, private use and noncharacters. The
// set in full: docs/design.md#invisible-characters-and-mixed-scripts.
func Invisible(r rune) bool {
	switch {
	case r < 0x20 || r >= 0x7f && r <= 0x9f:
		return true
	case r < 0xad:
		return false
	case r == 0xad, r == 0x34f, r == 0x115f, r == 0x1160, r == 0x17b4, r == 0x17b5,
		r >= 0x180b && r <= 0x180f, r >= 0x200b && r <= 0x200f, r >= 0x202a && r <= 0x202e,
		r >= 0x2060 && r <= 0x206f, r == 0x3164, r >= 0xfe00 && r <= 0xfe0f, r == 0xfeff,
		r == 0xffa0, r >= 0xfff0 && r <= 0xfffb, r >= 0x1d173 && r <= 0x1d17a,
		r >= 0xe0000 && r <= 0xe0fff:
		return true
	case r >= 0xe000 && r <= 0xf8ff, r >= 0xf0000: // private use (planes 15 and 16 are nothing else)
		return true
	case r >= 0xfdd0 && r <= 0xfdef, r&0xfffe == 0xfffe: // noncharacters
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// HiddenOrMixed reports whether an identifier holds an Invisible character,
// and whether it mixes scripts (Common and Inherited aside) beyond what
// UTS #39 allows a highly restrictive identifier. Linear in len(s).
func HiddenOrMixed(s string) (hidden, mixed bool) {
	f := scanIdentifier(s)
	return f.hidden > 0, f.mixed()
}

// identityFinding is what scanIdentifier found in one string.
type identityFinding struct {
	hidden int    // how many invisible characters
	points []rune // the first few distinct ones
	more   bool   // a distinct one past those
	// scripts are the string's scripts in the order they first appear,
	// as indices of scriptNames.
	scripts []uint16
}

// pointsShown is how many distinct invisible characters a warning names.
const pointsShown = 3

// scriptsShown is how many scripts a warning names.
const scriptsShown = 4

func scanIdentifier(s string) identityFinding {
	var f identityFinding
	t := scriptIndex()
	var seen []uint64 // a bit per script index
	last := -1        // the range of t.ranges the last rune fell in
	add := func(sc uint16) {
		if seen == nil {
			seen = make([]uint64, (len(t.names)+63)/64)
		}
		if seen[sc/64]&(1<<(sc%64)) == 0 {
			seen[sc/64] |= 1 << (sc % 64)
			f.scripts = append(f.scripts, sc)
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c < 0x20 || c == 0x7f:
				f.hide(rune(c))
			case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
				add(t.latin)
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if Invisible(r) {
			f.hide(r)
			continue
		}
		if last < 0 || r < t.ranges[last].lo || r > t.ranges[last].hi {
			last = t.find(r)
		}
		if last >= 0 {
			if sc := t.ranges[last].script; sc != t.common && sc != t.inherited {
				add(sc)
			}
		}
	}
	return f
}

func (f *identityFinding) hide(r rune) {
	f.hidden++
	switch {
	case slices.Contains(f.points, r):
	case len(f.points) < pointsShown:
		f.points = append(f.points, r)
	default:
		f.more = true
	}
}

// mixed applies HiddenOrMixed's rule to the scripts found.
func (f *identityFinding) mixed() bool {
	if len(f.scripts) <= 1 {
		return false
	}
	for _, set := range scriptIndex().allowed {
		within := true
		for _, sc := range f.scripts {
			if !slices.Contains(set, sc) {
				within = false
				break
			}
		}
		if within {
			return false
		}
	}
	return true
}

// pointList names the invisible characters found: "U+200B, U+2060".
func (f *identityFinding) pointList() string {
	var b strings.Builder
	for i, r := range f.points {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "U+%04X", r)
	}
	if f.more {
		b.WriteString(" and others")
	}
	return b.String()
}

// scriptList names the scripts: "Latin, Cyrillic".
func scriptList(scripts []uint16) string {
	t := scriptIndex()
	names := make([]string, 0, min(len(scripts), scriptsShown))
	for _, sc := range scripts[:min(len(scripts), scriptsShown)] {
		names = append(names, t.names[sc])
	}
	s := strings.Join(names, ", ")
	if n := len(scripts) - scriptsShown; n > 0 {
		s += fmt.Sprintf(" and %d more", n)
	}
	return s
}

// scriptTable maps a code point to its script (Unicode's Script property,
// from package unicode) by binary search over every script's ranges.
type scriptTable struct {
	ranges                   []scriptRange
	names                    []string
	latin, common, inherited uint16
	// allowed are the mixes of scripts HiddenOrMixed lets pass.
	allowed [][]uint16
}

type scriptRange struct {
	lo, hi rune
	script uint16
}

var scripts struct {
	once  sync.Once
	table *scriptTable
}

// scriptIndex builds the table once, on first use.
func scriptIndex() *scriptTable {
	scripts.once.Do(func() {
		t := &scriptTable{}
		for name := range unicode.Scripts {
			t.names = append(t.names, name)
		}
		sort.Strings(t.names)
		for i, name := range t.names {
			sc := uint16(i)
			tab := unicode.Scripts[name]
			for _, r := range tab.R16 {
				t.addRange(rune(r.Lo), rune(r.Hi), rune(r.Stride), sc)
			}
			for _, r := range tab.R32 {
				t.addRange(rune(r.Lo), rune(r.Hi), rune(r.Stride), sc)
			}
		}
		sort.Slice(t.ranges, func(i, j int) bool { return t.ranges[i].lo < t.ranges[j].lo })
		idx := func(name string) uint16 { return uint16(sort.SearchStrings(t.names, name)) }
		t.latin, t.common, t.inherited = idx("Latin"), idx("Common"), idx("Inherited")
		han := idx("Han")
		t.allowed = [][]uint16{
			{t.latin, han, idx("Hiragana"), idx("Katakana")},
			{t.latin, han, idx("Bopomofo")},
			{t.latin, han, idx("Hangul")},
		}
		scripts.table = t
	})
	return scripts.table
}

func (t *scriptTable) addRange(lo, hi, stride rune, sc uint16) {
	if stride <= 1 {
		t.ranges = append(t.ranges, scriptRange{lo, hi, sc})
		return
	}
	for r := lo; r <= hi; r += stride {
		t.ranges = append(t.ranges, scriptRange{r, r, sc})
	}
}

// find returns the index of the range holding r, or -1 (unassigned).
func (t *scriptTable) find(r rune) int {
	i := sort.Search(len(t.ranges), func(i int) bool { return t.ranges[i].hi >= r })
	if i < len(t.ranges) && t.ranges[i].lo <= r {
		return i
	}
	return -1
}

// identityNameMax bounds the function name and the argument names a
// warning line quotes.
const identityNameMax = 80

// IdentityWarnings are the card's lines about the call's identifiers: the
// function name holding an Invisible character or mixing scripts, and at
// most one line per role argument. They name code points and scripts and
// never quote a value. Linear in the size of the call.
func (a *Approval) IdentityWarnings() []string {
	var lines []string
	f := scanIdentifier(a.Call.Function)
	if hidden, mixed := f.hidden > 0, f.mixed(); hidden || mixed {
		name := visibleName(a.Call.Function)
		if hidden {
			lines = append(lines, fmt.Sprintf("The function name %s holds %s (%s)",
				name, plural(len(f.points), "an invisible character", "invisible characters"), f.pointList()))
		}
		if mixed {
			lines = append(lines, fmt.Sprintf("The function name %s mixes scripts (%s)", name, scriptList(f.scripts)))
		}
	}
	for _, role := range a.Roles {
		if l := roleIdentityLine(role); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// roleIdentityLine is the one line about a role's values ("A value of to
// (recipient) holds an invisible character (U+200B)"), or "". A stored
// restricted revision keeps it in Found.
func roleIdentityLine(role Role) string {
	if role.Found != "" {
		return role.Found // the stored line of values not kept
	}
	var points identityFinding // the invisible characters of every value
	var scriptsSeen []uint16   // the scripts of every value that mixes them
	hiding, mixing := 0, 0     // how many values do
	for _, v := range role.Values {
		f := scanIdentifier(v.Value)
		if f.hidden > 0 {
			hiding++
			for _, r := range f.points {
				points.hide(r)
			}
			points.more = points.more || f.more
		}
		if f.mixed() {
			mixing++
			for _, sc := range f.scripts {
				if !slices.Contains(scriptsSeen, sc) {
					scriptsSeen = append(scriptsSeen, sc)
				}
			}
		}
	}
	if hiding == 0 && mixing == 0 {
		return ""
	}
	of := fmt.Sprintf("of %s (%s)", visibleName(role.Argument), visibleName(string(role.Role)))
	var parts []string
	if hiding > 0 {
		parts = append(parts, fmt.Sprintf("%s %s %s (%s)", valuesOf(hiding, of), plural(hiding, "holds", "hold"),
			plural(len(points.points), "an invisible character", "invisible characters"), points.pointList()))
	}
	if mixing > 0 {
		who := valuesOf(mixing, of)
		if len(parts) > 0 {
			who = strings.ToLower(valuesOf(mixing, ""))
		}
		parts = append(parts, fmt.Sprintf("%s %s scripts (%s)", who, plural(mixing, "mixes", "mix"), scriptList(scriptsSeen)))
	}
	return strings.Join(parts, "; ")
}

// valuesOf is "A value of …" or "3 values of …" (of may be empty).
func valuesOf(n int, of string) string {
	s := "A value"
	if n != 1 {
		s = fmt.Sprintf("%d values", n)
	}
	if of != "" {
		s += " " + of
	}
	return s
}

// visibleName is an identifier as a warning quotes it: every Invisible
// character as [U+XXXX], cut to identityNameMax runes.
func visibleName(s string) string {
	s = RedactText(s) // a name is the agent's to shape: a secret in it stays hidden
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == identityNameMax {
			b.WriteString("…")
			break
		}
		n++
		if Invisible(r) {
			fmt.Fprintf(&b, "[U+%04X]", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
