package approval

import "strings"

// The shapes of secrets RedactText finds besides "Bearer" and "Basic",
// each a textRedactor rule.

// maxNameLen bounds the NAME of a NAME=value, so looking back for it costs
// a bounded time per '=' or ':'.
const maxNameLen = 128

// namedValue redacts the value of a NAME=value or name: value at i whose
// name is secret: docs/design.md#named-values-in-text.
func (t *textRedactor) namedValue(i int) int {
	s := t.s
	colon := s[i] == ':'
	if !colon && (i+1 < len(s) && s[i+1] == '=') {
		return i + 2 // "=="
	}
	n, ok := nameBefore(s, i, colon, nameNarrow)
	if !ok || !SensitiveKey(n.name) {
		// Read the name wider: with bytes beyond ASCII ("p\u0430ssword=…"),
		// then with signs ("api/key=…", "p@ssword=…"); narrow first, so a
		// name right after other text ("see docs/token=…") is still found.
		found, tried := false, -1
		for _, reach := range [2]nameReach{nameWide, nameWidest} {
			var w name
			var wok bool
			if reach == nameWidest {
				w, wok = t.widestName(i, colon)
			} else {
				w, wok = nameBefore(s, i, colon, reach)
			}
			if !wok || ok && w.start == n.start || w.start == tried {
				continue
			}
			tried = w.start
			if SensitiveKey(w.name) {
				n, found = w, true
				break
			}
		}
		if !found {
			return i + 1
		}
	}
	v := i + 1
	if colon && !n.quoted {
		if v >= len(s) || (s[v] != ' ' && s[v] != '\t') {
			return i + 1
		}
	}
	v = skipBlanks(s, v)
	if v >= len(s) || lineBreakAt(s, v) > 0 {
		return i + 1
	}
	spaced := !colon && (n.spaced || v > i+1)
	atStart := (colon || n.spaced) && t.line.atStart(s, n.start)
	if spaced && !atStart && quoteAt(s, v) == 0 {
		return i + 1
	}
	v = afterAuthScheme(s, v)
	if q := quoteAt(s, v); q > 0 {
		from, to, next := quotedValue(s, v, q)
		t.redact(from, to)
		return next
	}
	var end int
	switch {
	case colon && n.quoted && (s[v] == '{' || s[v] == '['):
		end = balancedEnd(s, v)
	case atStart:
		end = trimEnd(s, v, lineEnd(s, v))
	case colon && n.quoted:
		end = scanUntil(s, v, func(c byte) bool { return isSpace(c) || isQuote(c) || c == ',' || c == '}' || c == ']' })
	case colon && isCookieName(n.name):
		end = trimEnd(s, v, scanUntil(s, v, func(c byte) bool { return c == '\n' || c == '\r' || isQuote(c) }))
	case colon:
		if end = wordEnd(s, v); s[end-1] == ':' {
			return v // the next name ("token: password: x"), not a value
		}
	default:
		end = scanUntil(s, v, func(c byte) bool { return isSpace(c) || isQuote(c) || c == '&' || c == '<' || c == '>' || c == '|' })
	}
	if end <= v {
		return i + 1
	}
	t.redact(v, end)
	return end
}

// name is the NAME before a '=' or ':'.
type name struct {
	name   string
	start  int  // index of its first byte, or of its opening quote
	quoted bool // in quotes
	spaced bool // blanks between it and '='
}

// nameReach says which bytes an unquoted name is read with.
type nameReach uint8

const (
	nameNarrow nameReach = iota // ASCII letters, digits, '_', '-' and '.'
	nameWide                    // and any byte beyond ASCII
	nameWidest                  // and '/', ':', '@' and '$'
)

// nameBefore finds the name that ends at s[i]: blanks may stand before a
// '=' but not a ':'.
func nameBefore(s string, i int, colon bool, reach nameReach) (name, bool) {
	j := i
	if !colon {
		for j > 0 && (s[j-1] == ' ' || s[j-1] == '\t') {
			j--
		}
	}
	spaced := j < i
	if j > 0 && isQuote(s[j-1]) {
		q := s[j-1]
		closing := j - 1
		esc := closing > 0 && s[closing-1] == '\\'
		if esc {
			closing--
		}
		for k := closing - 1; k >= 0 && closing-k <= maxNameLen; k-- {
			switch c := s[k]; {
			case c == '\n' || c == '\r':
				return name{}, false
			case c == q && (!esc || k > 0 && s[k-1] == '\\'):
				start := k
				if esc {
					start--
				}
				if k+1 == closing {
					return name{}, false
				}
				return name{name: s[k+1 : closing], start: start, quoted: true, spaced: spaced}, true
			}
		}
		return name{}, false
	}
	k := j
	for k > 0 && j-k < maxNameLen && isNameByte(s[k-1], reach) {
		k--
	}
	if k == j || (k > 0 && isNameByte(s[k-1], reach)) {
		return name{}, false
	}
	return name{name: s[k:j], start: k, spaced: spaced}, true
}

// widestName is nameBefore with nameWidest, reading a run of name bytes
// once ("a:a:a:…" has a ':' every other byte).
func (t *textRedactor) widestName(i int, colon bool) (name, bool) {
	s := t.s
	j := i
	if !colon {
		for j > 0 && (s[j-1] == ' ' || s[j-1] == '\t') {
			j--
		}
	}
	if j == 0 || isQuote(s[j-1]) {
		return nameBefore(s, i, colon, nameWidest)
	}
	r := &t.widest
	start := -1
	if r.to > 0 && r.to <= j {
		m := r.to
		for m < j && isNameByte(s[m], nameWidest) {
			m++
		}
		if m == j {
			start = r.from // the run read before goes on up to j
		} else {
			start = j // read back only the bytes past the last one not a name byte
			for start > m && isNameByte(s[start-1], nameWidest) {
				start--
			}
		}
	} else {
		start = j
		for start > 0 && isNameByte(s[start-1], nameWidest) {
			start--
		}
	}
	r.from, r.to = start, j
	if start == j || j-start > maxNameLen {
		return name{}, false
	}
	return name{name: s[start:j], start: start, spaced: j < i}, true
}

// isNameByte reports whether c may be part of a name read with reach:
// wide takes bytes beyond ASCII (look-alikes), widest also / : @ $.
func isNameByte(c byte, reach nameReach) bool {
	switch {
	case isWordByte(c) || c == '_' || c == '-' || c == '.':
		return true
	case c >= 0x80:
		return reach >= nameWide
	}
	return reach == nameWidest && (c == '/' || c == ':' || c == '@' || c == '$')
}

// isCookieName reports a cookie header, whose value holds spaces.
func isCookieName(n string) bool {
	return hasSuffixFold(n, "cookie") || hasSuffixFold(n, "cookies")
}

// authSchemes are the HTTP authentication schemes (IANA's registry, with
// GitHub's "token" and Discord's "Bot") that a credential may follow in a
// named value: the scheme is shown, the credential is redacted.
var authSchemes = []string{"basic", "bearer", "bot", "digest", "dpop", "negotiate", "ntlm", "oauth", "token", "aws4-hmac-sha256"}

// afterAuthScheme returns where the credential starts if s[v:] is an
// authentication scheme and more; otherwise v. Across a line break the word
// must look like a credential, so a next line's name is never taken.
func afterAuthScheme(s string, v int) int {
	w := scanUntil(s, v, func(c byte) bool { return !isWordByte(c) && c != '-' })
	k := skipBlanks(s, w)
	if l := lineBreakAt(s, k); l > 0 {
		k = skipBlanks(s, k+l)
		if k < len(s) && !looksLikeCredential(s[k:wordEnd(s, k)]) {
			return v
		}
	}
	if w == v || k == w || k >= len(s) || lineBreakAt(s, k) > 0 {
		return v
	}
	for _, a := range authSchemes {
		if w-v == len(a) && hasPrefixFold(s[v:], a) {
			return k
		}
	}
	return v
}

// quoteAt returns the length of the quote that opens at s[v]: 1 for ', "
// or `, 2 for \" (a quote escaped inside a JSON string), 0 if none.
func quoteAt(s string, v int) int {
	switch {
	case isQuote(s[v]):
		return 1
	case s[v] == '\\' && v+1 < len(s) && s[v+1] == '"':
		return 2
	}
	return 0
}

func isQuote(c byte) bool { return c == '"' || c == '\'' || c == '`' }

// quotedValue returns the text inside the quote of length q at v and where
// the scan goes on. An unclosed quote holds the rest of its line; inside
// "…" a backslash escapes the next byte, but not a line break. It reads no
// further than the quote or the line break: see textRedactor.
func quotedValue(s string, v, q int) (from, to, next int) {
	from = v + q
	quote := s[v]
	for j := from; j < len(s); j++ {
		switch c := s[j]; {
		case c == '\n' || c == '\r':
			return from, trimEnd(s, from, j), j
		case q == 2:
			if c == '\\' && j+1 < len(s) && s[j+1] == '"' {
				return from, j, j + 2
			}
		case c == '\\':
			if quote == '"' && j+1 < len(s) && s[j+1] != '\n' && s[j+1] != '\r' {
				j++
			}
		case c == quote:
			return from, j, j + 1
		}
	}
	return from, trimEnd(s, from, len(s)), len(s)
}

// balancedEnd returns the end of the object or array opening at s[v], or
// len(s).
func balancedEnd(s string, v int) int {
	depth, in := 0, false
	for j := v; j < len(s); j++ {
		switch c := s[j]; {
		case in && c == '\\':
			j++
		case c == '"':
			in = !in
		case in:
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			if depth--; depth == 0 {
				return j + 1
			}
		}
	}
	return len(s)
}

// lineCache says whether a position starts its line (after blanks and line
// marks), keeping the line it last read.
type lineCache struct {
	ok         bool
	from, seen int // the line starts at from; s[from:seen] holds no line break
	body       int // first byte of the line that is not a blank or a line mark
}

func (l *lineCache) atStart(s string, p int) bool {
	switch {
	case !l.ok || p < l.from:
		l.set(s, strings.LastIndexByte(s[:p], '\n')+1, p)
	case p > l.seen:
		if k := strings.LastIndexByte(s[l.seen:p], '\n'); k >= 0 {
			l.set(s, l.seen+k+1, p)
		} else {
			l.seen = p
		}
	}
	return l.body >= p
}

func (l *lineCache) set(s string, from, p int) {
	l.ok, l.from, l.seen = true, from, p
	b := from
	for b < len(s) && isLineMark(s[b]) {
		b++
	}
	l.body = b
}

// isLineMark reports whether c may stand before a name at a line's start:
// indentation, a diff's +/-, a list's *, a comment's #, a quote's >.
func isLineMark(c byte) bool {
	switch c {
	case ' ', '\t', '+', '-', '*', '#', '>':
		return true
	}
	return false
}

// urlCredentials redacts the user-info of the URL whose authority starts
// at start: what precedes its last '@', or, with none, a password an
// unencoded '/', '?' or '#' cut short (passwordPast).
func (t *textRedactor) urlCredentials(start int) int {
	s := t.s
	end := scanUntil(s, start, isAuthorityEnd)
	if at := strings.LastIndexByte(s[start:end], '@'); at > 0 {
		t.redact(start, start+at)
		return end
	}
	if at, next := t.passwordPast(start, end); at > 0 {
		t.redact(start, at)
		return next
	}
	return end
}

// passwordPast returns the '@' ending the user-info of an authority cut
// short inside a password ("https://u:pa/ss@host"), and the authority's
// end past it; 0, 0 if none. It needs a ':' that is no port's, so
// "https://host:8080/users/@me" and "https://host/a@b" keep their path.
func (t *textRedactor) passwordPast(start, end int) (at, next int) {
	s := t.s
	if end == len(s) || (s[end] != '/' && s[end] != '?' && s[end] != '#') || start == end || s[start] == '[' {
		return 0, 0
	}
	colon := strings.IndexByte(s[start:end], ':')
	if colon < 0 || allDigits(s[start+colon+1:end]) {
		return 0, 0
	}
	stop := t.urlEnd.next(s, end, isURLEnd)
	if at, h := t.userInfo.next(s, end); at < stop {
		return at, h
	}
	return 0, 0
}

// forward remembers a scan for the first byte stop accepts, to answer
// again from any position it crossed.
type forward struct {
	ok       bool
	from, at int // no byte of s[from:at] stops the scan; at is one, or len(s)
}

func (f *forward) next(s string, i int, stop func(byte) bool) int {
	if !f.ok || i < f.from || i > f.at {
		f.ok, f.from, f.at = true, i, scanUntil(s, i, stop)
	}
	return f.at
}

// userInfoScan remembers the search for the first '@' that can end a
// user-info: one followed by a byte and no other '@' before the
// authority's end, a property of the text after it alone.
type userInfoScan struct {
	ok          bool
	from, at, h int // no such '@' in s[from:at]; at is one (its authority ends at h), or len(s)
}

func (u *userInfoScan) next(s string, i int) (at, h int) {
	if u.ok && u.from <= i && i <= u.at {
		return u.at, u.h
	}
	u.ok, u.from, u.at, u.h = true, i, len(s), len(s)
	last := -1 // the last '@' since the authority's start
	for j := i; j <= len(s); j++ {
		switch {
		case j == len(s) || isAuthorityEnd(s[j]):
			if last >= 0 && j > last+1 {
				u.at, u.h = last, j
				return last, j
			}
			last = -1
		case s[j] == '@':
			last = j
		}
	}
	return u.at, u.h
}

// isURLEnd reports whether c ends a URL in text.
func isURLEnd(c byte) bool {
	switch c {
	case '"', '\'', '<', '>', '`', '\\':
		return true
	}
	return isSpace(c)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// webhookPaths are the webhook URLs whose path is the credential: after
// the host and one of the path prefixes, the rest of the path is redacted
// ("https://hooks.slack.com/services/[redacted]").
var webhookPaths = []struct {
	host     string
	prefixes []string
}{
	{"hooks.slack.com", []string{"services/", "workflows/", "triggers/"}},
	{"discord.com", []string{"api/webhooks/"}},
	{"discordapp.com", []string{"api/webhooks/"}},
}

// webhook redacts a webhook's credential path when the '/' at i follows
// one of webhookPaths' hosts (with or without a scheme).
func (t *textRedactor) webhook(i int) int {
	s := t.s
	from := 0
	for _, w := range webhookPaths {
		h := i - len(w.host)
		if h < 0 || !hasPrefixFold(s[h:i], w.host) || (h > 0 && (isWordByte(s[h-1]) || s[h-1] == '-')) {
			continue
		}
		rest := s[i+1:]
		if w.host != "hooks.slack.com" {
			rest = skipAPIVersion(rest)
		}
		for _, p := range w.prefixes {
			if hasPrefixFold(rest, p) {
				from = len(s) - len(rest) + len(p)
			}
		}
	}
	if from == 0 {
		return i + 1
	}
	end := scanUntil(s, from, func(c byte) bool { return isURLEnd(c) || c == '?' || c == '#' || c == '|' })
	if end == from {
		return i + 1
	}
	t.redact(from, end)
	return end
}

// skipAPIVersion turns Discord's "api/v10/webhooks/…" into
// "api/webhooks/…", so one prefix covers both.
func skipAPIVersion(rest string) string {
	if !hasPrefixFold(rest, "api/v") {
		return rest
	}
	k := len("api/v")
	for k < len(rest) && isDigit(rest[k]) {
		k++
	}
	if k == len("api/v") || k == len(rest) || rest[k] != '/' {
		return rest
	}
	return "api" + rest[k:]
}

// pemBegin starts a PEM block's armor line.
const pemBegin = "-----BEGIN "

// pemBlock redacts the body of a PEM block at i whose label names a
// private key, up to its END line or the end of the text; the armor lines,
// line breaks and a patch's '+' marks around it stay.
func (t *textRedactor) pemBlock(i int) int {
	s := t.s
	j := i + len(pemBegin)
	for j < len(s) && (isUpper(s[j]) || isDigit(s[j]) || s[j] == ' ') {
		j++
	}
	if !strings.HasPrefix(s[j:], "-----") || !strings.Contains(s[i+len(pemBegin):j], "PRIVATE KEY") {
		return i + 1
	}
	body := j + len("-----")
	end := len(s)
	if k := strings.Index(s[body:], "-----END "); k >= 0 {
		end = body + k
	}
	from, to := body, end
	for from < to && isSpace(s[from]) {
		from++
	}
	if from < to && from > body && s[from-1] == '\n' && isDiffMark(s[from]) {
		from++
	}
	for to > from && isSpace(s[to-1]) {
		to--
	}
	if to > from && isDiffMark(s[to-1]) && (to-1 == from || s[to-2] == '\n') {
		to--
		for to > from && isSpace(s[to-1]) {
			to--
		}
	}
	t.redact(from, to)
	return max(end, i+1)
}

func isDiffMark(c byte) bool { return c == '+' || c == '-' || c == '>' }

// tokenShape is a bare token known by its issuer's prefix: the prefix at
// the start of a word, then a body of at least minBody (and, if maxBody is
// set, at most maxBody, with no word byte after it) bytes of the issuer's
// alphabet. The prefix is shown, the body redacted ("ghp_[redacted]").
type tokenShape struct {
	prefix           string // a '?' stands for any lower-case ASCII letter
	minBody, maxBody int
	body             func(byte) bool
}

// tokenShapes: the issuers' documented formats, with minimum lengths below
// the real ones (GitHub's are 36 bytes and more, Slack's dozens) so that a
// shortened token is still caught, and above any ordinary word.
var tokenShapes = []tokenShape{
	// GitHub: personal, OAuth, user-to-server, server-to-server, refresh;
	// fine-grained personal access tokens.
	{prefix: "ghp_", minBody: 20, body: isTokenByte},
	{prefix: "gho_", minBody: 20, body: isTokenByte},
	{prefix: "ghu_", minBody: 20, body: isTokenByte},
	{prefix: "ghs_", minBody: 20, body: isTokenByte},
	{prefix: "ghr_", minBody: 20, body: isTokenByte},
	{prefix: "github_pat_", minBody: 20, body: isTokenByte},
	// Slack: bot, user, app-level, refresh, legacy workspace tokens
	// (xoxb-, xoxp-, xoxa-, xoxr-, xoxs-, …) and app tokens.
	{prefix: "xox?-", minBody: 10, body: isDashedByte},
	{prefix: "xapp-", minBody: 10, body: isDashedByte},
	// Stripe: secret and restricted keys, live and test.
	{prefix: "sk_live_", minBody: 10, body: isWordByte},
	{prefix: "rk_live_", minBody: 10, body: isWordByte},
	{prefix: "sk_test_", minBody: 10, body: isWordByte},
	{prefix: "rk_test_", minBody: 10, body: isWordByte},
	// AWS access key ids: long-term and temporary, exactly 20 bytes.
	{prefix: "AKIA", minBody: 16, maxBody: 16, body: isUpperOrDigit},
	{prefix: "ASIA", minBody: 16, maxBody: 16, body: isUpperOrDigit},
	// Google API keys: 39 bytes.
	{prefix: "AIza", minBody: 30, body: isDashedTokenByte},
}

// knownToken redacts a bare token or JSON Web Token starting at i, a word
// start.
func (t *textRedactor) knownToken(i int) int {
	s := t.s
	if end := t.jwtEnd(i); end > 0 {
		t.redact(i, end)
		return end
	}
	for _, shape := range tokenShapes {
		if shape.prefix[0] != s[i] || !hasPattern(s[i:], shape.prefix) {
			continue
		}
		from := i + len(shape.prefix)
		end := scanUntil(s, from, func(c byte) bool { return !shape.body(c) })
		n := end - from
		if n < shape.minBody || shape.maxBody > 0 && (n > shape.maxBody || end < len(s) && isWordByte(s[end])) {
			continue
		}
		t.redact(from, end)
		return end
	}
	return i + 1
}

// jwtEnd returns the end of a JSON Web Token at i: a header starting
// "eyJ" (`{"`), a payload and a signature that may be empty (alg none), or
// five parts, encrypted; 0 if none. The run's end is remembered.
func (t *textRedactor) jwtEnd(i int) int {
	s := t.s
	if !strings.HasPrefix(s[i:], "eyJ") {
		return 0
	}
	k := t.jwtRun.next(s, i, notBase64URL)
	if k-i < 10 {
		return 0
	}
	if t.jwtOK && t.jwtAt == k {
		return t.jwtTo
	}
	t.jwtOK, t.jwtAt, t.jwtTo = true, k, jwtParts(s, k)
	return t.jwtTo
}

// jwtParts returns the end of the token whose first part ends at k, or 0
// if fewer than three parts follow.
func jwtParts(s string, k int) int {
	parts := 1
	for parts < 5 && k < len(s) && s[k] == '.' {
		e := scanUntil(s, k+1, notBase64URL)
		if e == k+1 && parts != 2 {
			break // only the signature may be empty
		}
		k, parts = e, parts+1
	}
	if parts < 3 {
		return 0
	}
	return k
}

// hasPattern is strings.HasPrefix where a '?' in prefix matches any
// lower-case ASCII letter.
func hasPattern(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if prefix[i] != s[i] && (prefix[i] != '?' || !isLower(s[i])) {
			return false
		}
	}
	return true
}

// hasSuffixFold is strings.HasSuffix folding ASCII case; suffix is lowercase.
func hasSuffixFold(s, suffix string) bool {
	return len(s) >= len(suffix) && hasPrefixFold(s[len(s)-len(suffix):], suffix)
}

// scanUntil returns the first index from i whose byte stop accepts, or len(s).
func scanUntil(s string, i int, stop func(byte) bool) int {
	for i < len(s) && !stop(s[i]) {
		i++
	}
	return i
}

// wordEnd returns the end of the word at i: white space, a quote, or a
// quote escaped inside a JSON string ends it.
func wordEnd(s string, i int) int {
	for i < len(s) && !isSpace(s[i]) && quoteAt(s, i) == 0 {
		i++
	}
	return i
}

// lineEnd returns the index of the line break at or after i, or len(s).
func lineEnd(s string, i int) int {
	return scanUntil(s, i, func(c byte) bool { return c == '\n' || c == '\r' })
}

// trimEnd returns end moved back over the blanks that end s[from:end].
func trimEnd(s string, from, end int) int {
	for end > from && (s[end-1] == ' ' || s[end-1] == '\t') {
		end--
	}
	return end
}

// skipBlanks returns the first index from i that is not a space or tab.
func skipBlanks(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// lineBreakAt returns the length of the line break ("\n", "\r\n" or "\r")
// at s[i], or 0.
func lineBreakAt(s string, i int) int {
	switch {
	case i >= len(s):
		return 0
	case s[i] == '\n':
		return 1
	case s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n':
		return 2
	case s[i] == '\r':
		return 1
	}
	return 0
}

func isDigit(c byte) bool           { return '0' <= c && c <= '9' }
func isUpper(c byte) bool           { return 'A' <= c && c <= 'Z' }
func isLower(c byte) bool           { return 'a' <= c && c <= 'z' }
func isUpperOrDigit(c byte) bool    { return isUpper(c) || isDigit(c) }
func isTokenByte(c byte) bool       { return isWordByte(c) || c == '_' }
func isDashedByte(c byte) bool      { return isWordByte(c) || c == '-' }
func isDashedTokenByte(c byte) bool { return isWordByte(c) || c == '-' || c == '_' }
func notBase64URL(c byte) bool      { return !isDashedTokenByte(c) }
