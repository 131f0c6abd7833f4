package approval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Projection is arguments made safe and small enough to show. The bot
// redacts and cuts again whatever the backend did: a backend that forgot a
// secret must not make the bot show it.
type Projection struct {
	JSON      []byte // valid JSON, redacted and bounded; key order of the input kept
	Redacted  bool   // something was replaced by [redacted], and that [redacted] is in JSON (not cut away)
	Truncated bool   // something was cut (string, collection, depth or total size), with a visible marker
}

// Limits of a projection: docs/design.md#projecting-arguments-for-a-card.
const (
	// ProjectionMaxBytes bounds len(Projection.JSON).
	ProjectionMaxBytes = 4096
	// ProjectionMaxString bounds the bytes kept of one string or key.
	ProjectionMaxString = 256
	// ProjectionMaxMembers bounds the entries of a collection, its marker
	// entry for the members left out included.
	ProjectionMaxMembers = 32
	// ProjectionMaxDepth bounds nesting, the outermost collection level 1;
	// a deeper one becomes deepMarker.
	ProjectionMaxDepth = 6
)

// Visible markers, plain text a reader understands.
const (
	// redactedMarker replaces a secret, or the secret part of a string.
	redactedMarker = "[redacted]"
	// moreKey is the key of a cut object's marker member.
	moreKey = "…"
	// moreMarker, after the count of members left out, ends a collection.
	moreMarker = " more left out]"
	// cutMarker, before the count of bytes left out, ends a cut string.
	cutMarker = "…[cut: "
)

// deepMarker replaces a collection nested past ProjectionMaxDepth.
var deepMarker = "[nested deeper than " + strconv.Itoa(ProjectionMaxDepth) + " levels]"

// Project returns the display projection of the JSON text raw: secrets
// redacted, then strings, collections and depth cut, key order and numbers
// as written. Its error wraps ErrInvalidJSON and quotes at most one
// character of raw. A renderer must still escape strings for its surface.
func Project(raw []byte) (Projection, error) {
	if !json.Valid(raw) {
		return Projection{}, fmt.Errorf("project arguments: %w", syntaxError(raw))
	}
	p := projector{b: raw}
	root, err := p.value(1)
	if err != nil {
		return Projection{}, fmt.Errorf("project arguments: %w: %w", ErrInvalidJSON, err)
	}
	w := writer{buf: make([]byte, 0, min(root.size, ProjectionMaxBytes))}
	if !w.fit(&root, ProjectionMaxBytes) {
		// Unreachable (a scalar is at most a cut string); kept for safety.
		w = writer{cut: true}
		w.more(kindArray, 1)
	}
	return Projection{JSON: w.buf, Redacted: w.red, Truncated: w.cut}, nil
}

// SensitiveKey reports whether an object key, or the NAME of a NAME=value
// in text, names a secret, read through its disguise (foldKey). A part word
// matches anywhere, on purpose even in max_tokens; a whole word only as a
// segment. The rules: docs/design.md#secret-keys.
func SensitiveKey(k string) bool {
	if printableASCII(k) {
		return hasPartWord(k) || hasWholeWord(k)
	}
	// An invisible character may split a word or join one ("x\u200bauth"),
	// so whole words are looked for with it dropped and read as a space; a
	// look-alike of another case splits one ("coo\u212aie"), so also in the
	// key lowered. The key as received counts too: folding never makes a
	// key less secret.
	if hasWholeWord(k) {
		return true
	}
	var buf [128]byte
	for _, spaced := range [2]bool{false, true} {
		f := foldKey(buf[:0], k, spaced)
		if !spaced && hasPartWord(string(f)) {
			return true
		}
		if hasWholeWord(string(f)) || hasWholeWord(string(lowerASCII(f))) {
			return true
		}
	}
	return false
}

func lowerASCII(b []byte) []byte {
	for i, c := range b {
		b[i] = lowerByte(c)
	}
	return b
}

// printableASCII reports whether k has nothing to fold.
func printableASCII(k string) bool {
	for i := 0; i < len(k); i++ {
		if c := k[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// foldKey appends k as SensitiveKey reads it: invisible characters (spaced:
// read as ' ') and combining marks dropped, Unicode spaces, dashes, dots,
// slashes and colons made ASCII, look-alikes and precomposed letters read
// as their Latin letter in its case (case splits camelCase). Linear.
func foldKey(b []byte, k string, spaced bool) []byte {
	for i, r := range k {
		switch {
		case r < utf8.RuneSelf && !Invisible(r):
			b = append(b, byte(r))
			continue
		case Invisible(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r):
			if spaced {
				b = append(b, ' ')
			}
			continue
		case unicode.IsSpace(r) || unicode.Is(unicode.Zs, r):
			b = append(b, ' ')
			continue
		case r == 'ß':
			b = append(b, "ss"...)
			continue
		case r == 'ẞ':
			b = append(b, "SS"...)
			continue
		}
		if c := latinOf(r); c != 0 {
			b = append(b, c)
			continue
		}
		// The canonical decomposition is the base letter and its marks:
		// the base is read as any letter, the marks dropped.
		if d := norm.NFD.PropertiesString(k[i:]).Decomposition(); len(d) > 0 {
			base, _ := utf8.DecodeRune(d)
			if base < utf8.RuneSelf {
				b = append(b, byte(base))
			} else if c := latinOf(base); c != 0 {
				b = append(b, c)
			} else {
				b = utf8.AppendRune(b, base)
			}
			continue
		}
		b = utf8.AppendRune(b, r)
	}
	return b
}

// latinOf returns the ASCII character r is a form or look-alike of, or 0.
func latinOf(r rune) byte {
	switch {
	case r >= 0xff01 && r <= 0xff5e: // full-width ASCII
		return byte(r - 0xfee0)
	case r >= 0x1d400 && r <= 0x1d6a3: // mathematical letters, 52 a style
		if i := (r - 0x1d400) % 52; i < 26 {
			return byte('A' + i)
		} else {
			return byte('a' + i - 26)
		}
	case r >= 0x1d7ce && r <= 0x1d7ff: // mathematical digits, 10 a style
		return byte('0' + (r-0x1d7ce)%10)
	case r >= 0x24b6 && r <= 0x24cf: // circled capitals
		return byte('A' + r - 0x24b6)
	case r >= 0x24d0 && r <= 0x24e9: // circled small letters
		return byte('a' + r - 0x24d0)
	case r >= 0x249c && r <= 0x24b5: // parenthesized small letters
		return byte('a' + r - 0x249c)
	case r >= 0x2010 && r <= 0x2015, r == 0x2212, r == 0xfe58, r == 0xfe63, r == 0x2043:
		return '-'
	case r == 0x00b7, r == 0x2024, r == 0x2027, r == 0x2022, r == 0x2219, r == 0x22c5, r == 0x30fb, r == 0xff65, r == 0x0387, r == 0x16eb, r == 0x2e31:
		return '.' // middle dots, one dot leader, bullets
	case r == 0x2044, r == 0x2215, r == 0x29f8, r == 0x2571:
		return '/' // fraction, division and big solidus, box diagonal
	case r == 0x2236, r == 0xa789, r == 0x02d0, r == 0x0589, r == 0xfe13, r == 0xfe55:
		return ':' // ratio, modifier and Armenian colons
	}
	if c, ok := lookAlikes[r]; ok {
		return c
	}
	// A letter whose case folding reaches ASCII: ſ (s), the Kelvin sign
	// (k), the Ångström sign is not one (Å).
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < utf8.RuneSelf {
			if unicode.IsUpper(r) {
				return byte(unicode.ToUpper(f))
			}
			return byte(unicode.ToLower(f))
		}
	}
	return 0
}

// lookAlikes are Unicode's confusables of the letters secret names are
// made of, and their capitals.
var lookAlikes = map[rune]byte{
	// Cyrillic
	'а': 'a', 'в': 'b', 'е': 'e', 'о': 'o', 'р': 'p', 'с': 'c', 'у': 'y', 'х': 'x',
	'і': 'i', 'ѕ': 's', 'ј': 'j', 'ԁ': 'd', 'һ': 'h', 'ӏ': 'l', 'ԛ': 'q', 'ԝ': 'w',
	'ѵ': 'v', 'к': 'k', 'т': 't', 'н': 'h', 'м': 'm', 'ь': 'b', 'ɡ': 'g', 'ү': 'y',
	'ё': 'e', 'ї': 'i', 'ӓ': 'a', 'ӧ': 'o',
	'А': 'A', 'В': 'B', 'Е': 'E', 'К': 'K', 'М': 'M', 'Н': 'H', 'О': 'O', 'Р': 'P',
	'С': 'C', 'Т': 'T', 'У': 'Y', 'Х': 'X', 'І': 'I', 'Ѕ': 'S', 'Ј': 'J', 'Ԁ': 'D',
	'Һ': 'H', 'Ӏ': 'I', 'Ԛ': 'Q', 'Ԝ': 'W', 'Ѵ': 'V', 'Ү': 'Y',
	// Greek
	'α': 'a', 'β': 'b', 'γ': 'y', 'ε': 'e', 'η': 'n', 'ι': 'i', 'κ': 'k', 'ν': 'v',
	'ο': 'o', 'ρ': 'p', 'σ': 'o', 'τ': 't', 'υ': 'u', 'χ': 'x', 'ϲ': 'c', 'ϳ': 'j',
	'ά': 'a', 'έ': 'e', 'ί': 'i', 'ό': 'o', 'ύ': 'u', 'ή': 'n',
	'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M',
	'Ν': 'N', 'Ο': 'O', 'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X', 'Ϲ': 'C', 'Ζ': 'Z',
	// Armenian
	'օ': 'o', 'ս': 'u', 'հ': 'h', 'ո': 'n', 'ց': 'g', 'զ': 'q',
	// Latin beyond ASCII: dotless i and dotted I, IPA, small capitals,
	// letterlike symbols and Roman numerals.
	'ı': 'i', 'İ': 'I', 'ȷ': 'j', 'ɑ': 'a', 'ɩ': 'i', 'ɪ': 'i', 'ʀ': 'r', 'ʏ': 'y',
	'ɴ': 'n', 'ʜ': 'h', 'ʟ': 'l', 'ʙ': 'b', 'ɢ': 'g', 'ɾ': 'r', 'ʋ': 'u',
	'ᴀ': 'a', 'ᴄ': 'c', 'ᴅ': 'd', 'ᴇ': 'e', 'ᴊ': 'j', 'ᴋ': 'k', 'ᴍ': 'm', 'ᴏ': 'o',
	'ᴘ': 'p', 'ᴛ': 't', 'ᴜ': 'u', 'ᴠ': 'v', 'ᴡ': 'w', 'ᴢ': 'z', 'ꜱ': 's', 'ꜰ': 'f',
	'ℎ': 'h', 'ℯ': 'e', 'ℊ': 'g', 'ℓ': 'l', 'ℴ': 'o', 'ℹ': 'i', 'ℂ': 'C', 'ℍ': 'H',
	'ℕ': 'N', 'ℙ': 'P', 'ℚ': 'Q', 'ℝ': 'R', 'ℤ': 'Z', 'ℬ': 'B', 'ℰ': 'E', 'ℱ': 'F',
	'ℋ': 'H', 'ℐ': 'I', 'ℒ': 'L', 'ℳ': 'M', 'ℛ': 'R', 'ℭ': 'C', 'ℌ': 'H', 'ℑ': 'I',
	'ℨ': 'Z', 'ⅰ': 'i', 'ⅴ': 'v', 'ⅹ': 'x', 'ⅼ': 'l', 'ⅽ': 'c', 'ⅾ': 'd', 'ⅿ': 'm',
	'Ⅰ': 'I', 'Ⅴ': 'V', 'Ⅹ': 'X', 'Ⅼ': 'L', 'Ⅽ': 'C', 'Ⅾ': 'D', 'Ⅿ': 'M',
	// Latin letters with a stroke, bar, hook or middle dot, which have no
	// canonical decomposition, and kra.
	'ø': 'o', 'Ø': 'O', 'đ': 'd', 'Đ': 'D', 'ħ': 'h', 'Ħ': 'H', 'ł': 'l', 'Ł': 'L',
	'ŧ': 't', 'Ŧ': 'T', 'ƀ': 'b', 'Ƀ': 'B', 'ɨ': 'i', 'Ɨ': 'I', 'ƚ': 'l', 'Ƚ': 'L',
	'ȼ': 'c', 'Ȼ': 'C', 'ɇ': 'e', 'Ɇ': 'E', 'ɍ': 'r', 'Ɍ': 'R', 'ƶ': 'z', 'Ƶ': 'Z',
	'ɏ': 'y', 'Ɏ': 'Y', 'ǥ': 'g', 'Ǥ': 'G', 'ɉ': 'j', 'Ɉ': 'J', 'ŀ': 'l', 'Ŀ': 'L',
	'ƈ': 'c', 'ɗ': 'd', 'ƒ': 'f', 'ɠ': 'g', 'ɦ': 'h', 'ƙ': 'k', 'ɱ': 'm', 'ɲ': 'n',
	'ƥ': 'p', 'ʠ': 'q', 'ʂ': 's', 'ƭ': 't', 'ʈ': 't', 'ȥ': 'z', 'ʐ': 'z',
	'ĸ': 'k', 'ɵ': 'o', 'ǝ': 'e', 'ɛ': 'e',
}

// hasPartWord reports whether k holds one of partWords, ignoring case and
// separators, digits and signs read as letters (foldEq).
func hasPartWord(k string) bool {
	var buf [64]byte
	b := buf[:0]
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c == '-' || c == '_' || c == ' ' || c == '.' || c == '/' || c == ':':
			continue
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	for _, w := range partWords {
		if containsFold(b, w) {
			return true
		}
	}
	return false
}

// containsFold is bytes.Contains with foldEq.
func containsFold(b, w []byte) bool {
	for i := 0; i+len(w) <= len(b); i++ {
		j := 0
		for j < len(w) && foldEq(b[i+j], w[j]) {
			j++
		}
		if j == len(w) {
			return true
		}
	}
	return false
}

// foldEq reports whether the key byte c (ASCII letters in lower case) reads
// as the lowercase letter w: it is w, or a digit or sign written for it
// (0 o, 1 i or l, 3 e, 4 a, 5 s, 7 t, @ a, $ s).
func foldEq(c, w byte) bool {
	if c == w {
		return true
	}
	switch c {
	case '0':
		return w == 'o'
	case '1':
		return w == 'i' || w == 'l'
	case '3':
		return w == 'e'
	case '4', '@':
		return w == 'a'
	case '5', '$':
		return w == 's'
	case '7':
		return w == 't'
	}
	return false
}

// isLetterSign reports whether foldEq may read c as a letter.
func isLetterSign(c byte) bool {
	switch c {
	case '0', '1', '3', '4', '5', '7', '@', '$':
		return true
	}
	return false
}

// partWords make a key secret wherever they appear (lowercase, no
// separators).
var partWords = [][]byte{
	[]byte("token"), []byte("password"), []byte("passwd"), []byte("secret"),
	[]byte("authorization"), []byte("credential"), []byte("apikey"), []byte("privatekey"),
	[]byte("passphrase"),
}

// wholeWords make a key secret only as a whole segment: as a part, auth
// would hide author and oauth_scope.
var wholeWords = []string{"auth", "pwd", "cookie"}

// hasWholeWord reports whether a segment of k is one of wholeWords.
func hasWholeWord(k string) bool {
	return wholeWordIn(k, false) || wholeWordIn(k, true)
}

// wholeWordIn looks for a segment of k that isWholeWord, reading k as
// written or (signs) with letter signs as letters, so that they join a
// segment ("au7h"). Segments: docs/design.md#part-words-and-whole-words.
func wholeWordIn(k string, signs bool) bool {
	letter := func(c byte) bool { return isWordByte(c) && !isDigit(c) || signs && isLetterSign(c) }
	start := 0 // the current segment is k[start:i]
	for i := 0; i <= len(k); i++ {
		end, next := -1, i // the segment ends before end; the next starts at next
		switch {
		case i == len(k) || !isWordByte(k[i]) && !(signs && isLetterSign(k[i])):
			end, next = i, i+1
		case i > start:
			c, p := k[i], k[i-1]
			switch {
			case letter(c) == letter(p) && isUpper(c) && isLower(p):
				end = i
			case letter(c) != letter(p):
				end = i
			case isLower(c) && isUpper(p) && i-start >= 3 && isUpper(k[i-2]) && isUpper(k[i-3]) && !pluralAt(k, i):
				end, next = i-1, i-1
			}
		}
		if end < 0 {
			continue
		}
		if signs && !hasLetterSign(k[start:end]) {
			start = next
			continue // read as written already
		}
		if isWholeWord(k[start:end]) {
			return true
		}
		start = next
	}
	return false
}

func hasLetterSign(seg string) bool {
	for i := 0; i < len(seg); i++ {
		if isLetterSign(seg[i]) {
			return true
		}
	}
	return false
}

// pluralAt reports whether k[i] is a plural 's' ending a segment ("PWDs").
func pluralAt(k string, i int) bool {
	return k[i] == 's' && (i+1 == len(k) || !isLower(k[i+1]))
}

// isWholeWord reports whether seg is one of wholeWords or its plural.
func isWholeWord(seg string) bool {
	for _, w := range wholeWords {
		if len(seg) == len(w) || len(seg) == len(w)+1 && foldEq(lowerByte(seg[len(w)]), 's') {
			if hasPrefixFoldEq(seg, w) {
				return true
			}
		}
	}
	return false
}

// hasPrefixFoldEq is hasPrefixFold comparing with foldEq.
func hasPrefixFoldEq(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if !foldEq(lowerByte(s[i]), prefix[i]) {
			return false
		}
	}
	return true
}

func lowerByte(c byte) byte {
	if isUpper(c) {
		return c + 'a' - 'A'
	}
	return c
}

// RedactText replaces each credential in free text by [redacted]. Only a
// credential's shape redacts, never a word alone:
// docs/design.md#secrets-in-free-text.
func RedactText(s string) string {
	r, _ := redactText(s, false)
	return r
}

// redactText does RedactText and reports whether it changed s; a whole
// value starting "Bearer " or "Basic " is redacted after it.
func redactText(s string, value bool) (string, bool) {
	if value {
		if n, _, broke := schemeAt(s, 0); n > 0 && !broke && strings.TrimSpace(s[n:]) != "" {
			if s[n:] == redactedMarker {
				return s, false
			}
			return s[:n] + redactedMarker, true
		}
	}
	t := textRedactor{s: s}
	for i := 0; i < len(s); {
		if c := s[i]; !mayStart[c] || i > 0 && isWordByte(c) && isWordByte(s[i-1]) {
			i++ // no rule starts here, or inside a word
			continue
		}
		i = t.step(i)
	}
	return t.result()
}

// mayStart marks the bytes a rule may start at; skipping the rest keeps
// RedactText cheap on every card's text.
var mayStart = func() (m [256]bool) {
	for _, c := range []byte(":=/-bB") {
		m[c] = true
	}
	for _, shape := range tokenShapes {
		m[shape.prefix[0]] = true
	}
	m['e'] = true // eyJ, a JSON Web Token
	return m
}()

// textRedactor builds the redacted copy of a text in one pass. Each rule
// returns where the scan goes on, past what it redacted, so no rule sees
// inside another's redaction.
type textRedactor struct {
	s    string
	b    []byte // nil until the first change: most strings hold nothing
	last int    // s[last:] is not yet copied to b
	line lineCache
	// Remembered scans: docs/design.md#linear-time-on-hostile-text.
	urlEnd, jwtRun forward
	userInfo       userInfoScan
	jwtOK          bool
	jwtAt, jwtTo   int // the token whose first part ends at jwtAt ends at jwtTo (0: none)
	widest         nameRun
}

// nameRun is the run of name bytes s[from:to] widestName read (to 0: none).
type nameRun struct{ from, to int }

// step applies the rule that may start at s[i].
func (t *textRedactor) step(i int) int {
	s := t.s
	switch c := s[i]; c {
	case ':':
		if strings.HasPrefix(s[i:], "://") {
			return t.urlCredentials(i + len("://"))
		}
		return t.namedValue(i)
	case '=':
		return t.namedValue(i)
	case '/':
		if strings.HasPrefix(s[i:], "//") {
			// A scheme-relative URL ("//user:pw@host"); after "://" the
			// scan never stops here.
			return t.urlCredentials(i + len("//"))
		}
		return t.webhook(i)
	case '-':
		if strings.HasPrefix(s[i:], pemBegin) {
			return t.pemBlock(i)
		}
		return i + 1
	default:
		// A word starts at i: the loop skips the inside of words.
		if c == 'b' || c == 'B' {
			return t.scheme(i)
		}
		return t.knownToken(i)
	}
}

// redact replaces s[from:to] with redactedMarker, unless it is empty or
// already the marker (so that redacting is idempotent). from >= last.
func (t *textRedactor) redact(from, to int) {
	if from >= to || t.s[from:to] == redactedMarker {
		return
	}
	t.b = append(t.b, t.s[t.last:from]...)
	t.b = append(t.b, redactedMarker...)
	t.last = to
}

func (t *textRedactor) result() (string, bool) {
	if t.b == nil {
		return t.s, false
	}
	return string(append(t.b, t.s[t.last:]...)), true
}

// scheme redacts the credential after "Bearer" or "Basic" at i. A word
// that cannot be one is scanned like any other ("basic password: x").
func (t *textRedactor) scheme(i int) int {
	s := t.s
	n, basic, broke := schemeAt(s, i)
	if n == 0 {
		return i + 1
	}
	end := wordEnd(s, n)
	tok := s[n:end]
	switch {
	case tok == redactedMarker:
		return end
	case tok == "" || !isCredentialStart(tok[0]) || tok[len(tok)-1] == ':':
		// Not a credential (RFC 6750's b64token): a flag, a variable,
		// "-----BEGIN", or a header name ("Bearer Authorization: x").
		return n
	case (basic || broke) && !looksLikeBase64(tok):
		return n
	}
	t.redact(n, end)
	return end
}

// looksLikeCredential reports whether a word found after a line break can
// be the credential of the scheme before the break.
func looksLikeCredential(tok string) bool {
	if tok == redactedMarker {
		return true
	}
	return tok != "" && isCredentialStart(tok[0]) && tok[len(tok)-1] != ':' && looksLikeBase64(tok)
}

func isCredentialStart(c byte) bool {
	return isWordByte(c) || c == '.' || c == '_' || c == '~' || c == '+' || c == '/'
}

// schemeAt returns where the credential starts when s[i:] is "bearer" or
// "basic" (any case) and a separator of blanks, a colon and one line break,
// not all absent; 0 if not. broke says a line break was in it.
func schemeAt(s string, i int) (n int, basic, broke bool) {
	var j int
	switch {
	case hasPrefixFold(s[i:], "bearer"):
		j = i + len("bearer")
	case hasPrefixFold(s[i:], "basic"):
		j, basic = i+len("basic"), true
	default:
		return 0, false, false
	}
	k := skipBlanks(s, j)
	if k < len(s) && s[k] == ':' {
		k = skipBlanks(s, k+1)
	}
	if l := lineBreakAt(s, k); l > 0 {
		k, broke = skipBlanks(s, k+l), true
	}
	if k == j {
		return 0, false, false // "bearers", "basically"
	}
	return k, basic, broke
}

// hasPrefixFold is strings.HasPrefix with ASCII case folding; prefix is
// lowercase.
func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if lowerByte(s[i]) != prefix[i] {
			return false
		}
	}
	return true
}

// looksLikeBase64 tells a Basic credential ("dXNlcjpwYXNz") from an English
// word ("basic idea"): 4 or more base64 bytes with a digit, a sign, or both
// cases past the first letter.
func looksLikeBase64(tok string) bool {
	tok = strings.TrimRight(tok, `.,;:!?)]}'"`)
	if len(tok) < 4 {
		return false
	}
	var upper, lower, other bool
	for i := 0; i < len(tok); i++ {
		switch c := tok[i]; {
		case 'a' <= c && c <= 'z':
			lower = true
		case 'A' <= c && c <= 'Z':
			upper = upper || i > 0
		case '0' <= c && c <= '9', c == '+', c == '/', c == '=', c == '-', c == '_':
			other = true
		default:
			return false
		}
	}
	return other || (upper && lower)
}

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func isAuthorityEnd(c byte) bool {
	switch c {
	case '/', '?', '#', '\\', '"', '\'', '<', '>', '`':
		return true
	}
	return isSpace(c)
}

// nodeKind says which fields of a node are used.
type nodeKind uint8

const (
	kindLiteral nodeKind = iota // number, true, false, null: text as written
	kindString                  // text is the string to show (redacted, cut)
	kindArray
	kindObject
)

// shown is a string ready to show, with what was done to it.
type shown struct {
	s        string
	red, cut bool // holds a visible [redacted]; was cut or is a marker
}

// node is one value of the projection, redacted and cut, before it is
// fitted to ProjectionMaxBytes.
type node struct {
	kind    nodeKind
	str     shown  // kindLiteral (text only) and kindString
	key     shown  // the key naming this node, when it is a member of an object
	kids    []node // kindArray, kindObject
	omitted int    // members left out after kids
	size    int    // bytes of the node written whole
}

// projector walks JSON text json.Valid accepted and builds nodes in
// document order. Why not json.Decoder: see
// docs/design.md#projecting-arguments-for-a-card.
type projector struct {
	b []byte // valid JSON
	i int    // next byte to read
	// seen is a lower bound on the projection's bytes so far: past
	// ProjectionMaxBytes, members are only counted and skipped.
	seen int
	// stack holds the members of the collections being read, innermost
	// last: one slice for all, not one grown per collection.
	stack []node
}

func (p *projector) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// value reads one value; a collection opened here is at nesting level.
func (p *projector) value(level int) (node, error) {
	p.space()
	switch c := p.b[p.i]; c {
	case '{', '[':
		if level > ProjectionMaxDepth {
			p.skip()
			return p.leaf(kindString, shown{s: deepMarker, cut: true}), nil
		}
		return p.collection(level)
	case '"':
		s, err := p.str()
		if err != nil {
			return node{}, err
		}
		return p.leaf(kindString, shownString(s, true)), nil
	}
	// A number, true, false or null: kept as written.
	start := p.i
	for p.i < len(p.b) && isLiteralByte(p.b[p.i]) {
		p.i++
	}
	if p.i == start {
		// Unreachable for valid JSON; guards against looping forever.
		return node{}, fmt.Errorf("unexpected byte at %d", start)
	}
	text := string(p.b[start:p.i])
	if len(text) > ProjectionMaxString {
		// A number has no cut form; a long one is shown as a cut string.
		return p.leaf(kindString, cutString(text)), nil
	}
	return p.leaf(kindLiteral, shown{s: text}), nil
}

func isLiteralByte(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'E'
}

// str reads a string whose opening quote is at p.i and returns its value.
func (p *projector) str() (string, error) {
	start := p.i
	p.i++
	plain := true // no escape and ASCII: the bytes are the value
	for p.b[p.i] != '"' {
		switch c := p.b[p.i]; {
		case c == '\\':
			plain = false
			p.i += 2
		case c >= utf8.RuneSelf:
			plain = false
			p.i++
		default:
			p.i++
		}
	}
	p.i++
	raw := p.b[start:p.i]
	if plain || (utf8.Valid(raw) && bytes.IndexByte(raw, '\\') < 0) {
		return string(raw[1 : len(raw)-1]), nil
	}
	// Escapes, or invalid UTF-8 (which encoding/json turns into U+FFFD).
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("decode string at byte %d: %w", start, err)
	}
	return s, nil
}

// skip reads past the value at p.i without building it.
func (p *projector) skip() {
	p.space()
	depth := 0
	for {
		switch p.b[p.i] {
		case '"':
			p.i++
			for p.b[p.i] != '"' {
				if p.b[p.i] == '\\' {
					p.i++
				}
				p.i++
			}
			p.i++
		case '{', '[':
			depth++
			p.i++
		case '}', ']':
			depth--
			p.i++
		default:
			p.i++ // a literal's first byte, or (unreachable) anything else
			for p.i < len(p.b) && isLiteralByte(p.b[p.i]) {
				p.i++
			}
		}
		p.space()
		if depth == 0 {
			return
		}
		if p.b[p.i] == ',' || p.b[p.i] == ':' {
			p.i++
		}
	}
}

func (p *projector) leaf(k nodeKind, s shown) node {
	n := node{kind: k, str: s}
	if k == kindString {
		n.size = quotedLen(s.s)
	} else {
		n.size = len(s.s)
	}
	p.seen += n.size
	return n
}

// collection reads an array or object whose opening delimiter is at p.i.
func (p *projector) collection(level int) (node, error) {
	n := node{kind: kindArray}
	closing := byte(']')
	if p.b[p.i] == '{' {
		n.kind, closing = kindObject, '}'
	}
	p.i++
	count := 0
	base := len(p.stack)
	for {
		p.space()
		if p.b[p.i] == closing {
			p.i++
			break
		}
		if p.b[p.i] == ',' {
			p.i++
			p.space()
		}
		var key string
		if n.kind == kindObject {
			var err error
			if key, err = p.str(); err != nil {
				return node{}, err
			}
			p.space()
			p.i++ // the colon
		}
		count++
		if count > ProjectionMaxMembers || p.seen > ProjectionMaxBytes {
			p.skip()
			continue
		}
		var kid node
		if n.kind == kindObject && SensitiveKey(key) {
			// The whole value goes, whatever its type: a secret may be an
			// object of parts.
			p.skip()
			kid = p.leaf(kindString, shown{s: redactedMarker, red: true})
		} else {
			var err error
			if kid, err = p.value(level + 1); err != nil {
				return node{}, err
			}
		}
		if n.kind == kindObject {
			kid.key = shownString(key, false)
			p.seen += quotedLen(kid.key.s) + 1
		}
		p.stack = append(p.stack, kid)
	}
	kids := p.stack[base:]
	if count > ProjectionMaxMembers && len(kids) == ProjectionMaxMembers {
		// Keep room for the marker entry within ProjectionMaxMembers, and
		// keep seen a lower bound: the dropped member is not shown.
		last := ProjectionMaxMembers - 1
		p.seen -= kids[last].size
		if n.kind == kindObject {
			p.seen -= quotedLen(kids[last].key.s) + 1
		}
		kids = kids[:last]
	}
	if len(kids) > 0 {
		n.kids = append([]node(nil), kids...)
	}
	p.stack = p.stack[:base]
	n.omitted = count - len(n.kids)
	n.size = n.measure()
	return n, nil
}

// measure returns the bytes of a collection written whole.
func (n *node) measure() int {
	size := 2
	for i := range n.kids {
		if i > 0 {
			size++
		}
		if n.kind == kindObject {
			size += quotedLen(n.kids[i].key.s) + 1
		}
		size += n.kids[i].size
	}
	if n.omitted > 0 {
		if len(n.kids) > 0 {
			size++
		}
		size += moreSize(n.kind, n.omitted)
	}
	return size
}

// shownString redacts s (as a whole value, or as text for a key) and then
// cuts it, so a cut never keeps part of a secret.
func shownString(s string, value bool) shown {
	r, changed := redactText(s, value)
	if len(r) <= ProjectionMaxString {
		return shown{s: r, red: changed}
	}
	c := cutString(r)
	c.red = changed && strings.Contains(c.s, redactedMarker)
	return c
}

// cutString keeps at most ProjectionMaxString bytes of s, ending on a
// UTF-8 boundary and never inside a [redacted], and appends cutMarker with
// the number of bytes left out.
func cutString(s string) shown {
	k := ProjectionMaxString
	for k > 0 && !utf8.RuneStart(s[k]) {
		k--
	}
	if i := strings.LastIndexByte(s[:k], '['); i >= 0 && k-i < len(redactedMarker) && strings.HasPrefix(s[i:], redactedMarker) {
		k = i
	}
	return shown{s: s[:k] + cutMarker + strconv.Itoa(len(s)-k) + " bytes]", cut: true}
}

// moreText is the marker string for count members left out.
func moreText(count int) string {
	return "[" + strconv.Itoa(count) + moreMarker
}

// moreSize is the bytes of the marker entry for count members left out of
// a collection of kind k (without the comma before it).
func moreSize(k nodeKind, count int) int {
	size := len(moreText(count)) + 2
	if k == kindObject {
		size += len(moreKey) + 3 // quotes and colon
	}
	return size
}

// quotedLen is the length of s written by appendQuoted.
func quotedLen(s string) int {
	n := len(s) + 2
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
			n++
		case c < 0x20:
			n += 5
		}
	}
	return n
}

// appendQuoted writes s as a JSON string with only the escapes JSON
// requires. s is valid UTF-8: the decoder replaced invalid bytes and cuts
// end on rune boundaries.
func appendQuoted(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	last := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[last:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		last = i + 1
	}
	b = append(b, s[last:]...)
	return append(b, '"')
}

// writer writes nodes and records what the written JSON shows.
type writer struct {
	buf      []byte
	red, cut bool
}

func (w *writer) str(s shown) {
	w.buf = appendQuoted(w.buf, s.s)
	w.red = w.red || s.red
	w.cut = w.cut || s.cut
}

// more writes the marker entry for count members left out.
func (w *writer) more(k nodeKind, count int) {
	if k == kindObject {
		w.buf = appendQuoted(w.buf, moreKey)
		w.buf = append(w.buf, ':')
	}
	w.buf = appendQuoted(w.buf, moreText(count))
	w.cut = true
}

func delims(k nodeKind) (byte, byte) {
	if k == kindObject {
		return '{', '}'
	}
	return '[', ']'
}

// whole writes n entirely.
func (w *writer) whole(n *node) {
	switch n.kind {
	case kindLiteral:
		w.buf = append(w.buf, n.str.s...)
		return
	case kindString:
		w.str(n.str)
		return
	}
	open, closing := delims(n.kind)
	w.buf = append(w.buf, open)
	for i := range n.kids {
		w.lead(n, i)
		w.whole(&n.kids[i])
	}
	if n.omitted > 0 {
		if len(n.kids) > 0 {
			w.buf = append(w.buf, ',')
		}
		w.more(n.kind, n.omitted)
	}
	w.buf = append(w.buf, closing)
}

// lead writes what precedes member i: a comma, and the key in an object.
func (w *writer) lead(n *node, i int) {
	if i > 0 {
		w.buf = append(w.buf, ',')
	}
	if n.kind == kindObject {
		w.str(n.kids[i].key)
		w.buf = append(w.buf, ':')
	}
}

func leadSize(n *node, i int) int {
	size := 0
	if i > 0 {
		size++
	}
	if n.kind == kindObject {
		size += quotedLen(n.kids[i].key.s) + 1
	}
	return size
}

// fit writes n in at most avail bytes and reports whether it could, always
// a prefix of the input in document order
// (docs/design.md#projecting-arguments-for-a-card).
func (w *writer) fit(n *node, avail int) bool {
	if n.size <= avail {
		w.whole(n)
		return true
	}
	if n.kind == kindLiteral || n.kind == kindString {
		return false
	}
	total := len(n.kids) + n.omitted
	if avail < 2+moreSize(n.kind, total) {
		return false
	}
	open, closing := delims(n.kind)
	w.buf = append(w.buf, open)
	used := 1
	for i := range n.kids {
		kid := &n.kids[i]
		rest := len(n.kids) - i - 1 + n.omitted
		lead := leadSize(n, i)
		// What closing takes if the members after this one are left out.
		end := 1
		if rest > 0 {
			end += 1 + moreSize(n.kind, rest)
		}
		if used+lead+kid.size+end <= avail {
			w.lead(n, i)
			w.whole(kid)
			used += lead + kid.size
			continue
		}
		if kid.kind == kindArray || kid.kind == kindObject {
			mark, red, cut := len(w.buf), w.red, w.cut
			w.lead(n, i)
			if w.fit(kid, avail-used-lead-end) {
				if rest > 0 {
					w.buf = append(w.buf, ',')
					w.more(n.kind, rest)
				}
				w.buf = append(w.buf, closing)
				return true
			}
			w.buf, w.red, w.cut = w.buf[:mark], red, cut
		}
		// Leave out this member and all after it. The previous step kept
		// room for exactly this marker.
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		w.more(n.kind, rest+1)
		w.buf = append(w.buf, closing)
		return true
	}
	// Every member fitted, so only the marker of members left out remains
	// (this is reached only if n.size overstated; kept for safety).
	if n.omitted > 0 {
		if len(n.kids) > 0 {
			w.buf = append(w.buf, ',')
		}
		w.more(n.kind, n.omitted)
	}
	w.buf = append(w.buf, closing)
	return true
}
