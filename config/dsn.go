package config

import (
	"net/url"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// dsn reads store.dsn, whose passwords the file may hold only as one
// ${NAME} each. A password's variable holds it unescaped, and the bot
// escapes it for where it is written, or "@x/" in it would change the
// host: docs/design.md#a-password-inside-a-dsn.
func (d *decoder) dsn(n *yaml.Node, path string) (Secret, bool) {
	m := deref(n)
	if isNull(n) || m.Kind != yaml.ScalarNode || m.ShortTag() == "!!bool" {
		s, ok := d.str(n, path) // reports what is not text
		return Secret(s), ok
	}
	raw := m.Value
	if name, whole := refName(raw); whole {
		s, ok := d.str(n, path)
		if ok {
			d.secretVars = append(d.secretVars, SecretVar{Path: path, Var: name})
		}
		return Secret(s), ok
	}
	fields := dsnPasswords(raw)
	for _, f := range fields {
		if v := raw[f.start:f.end]; v != "" {
			if _, ok := refName(v); !ok {
				d.fixedProblem(m, path, "holds a password written in the file: write it as one ${NAME} (postgres://bot:${PGPASSWORD}@db/bot or password=${PGPASSWORD}) and set NAME in the bot's environment")
				return "", false
			}
		}
	}
	var b strings.Builder
	ok := true
	expand := func(s string) string {
		v, good := d.expand(m, path, s)
		ok = ok && good
		return v
	}
	at := 0
	for _, f := range fields {
		if f.start == f.end {
			continue // an empty password holds no secret
		}
		b.WriteString(expand(raw[at:f.start]))
		at = f.end
		pw, good := d.expand(m, path, raw[f.start:f.end])
		if !good {
			ok = false
			continue
		}
		name, _ := refName(raw[f.start:f.end])
		written := f.escape(pw)
		d.remember(written, name)
		b.WriteString(written)
		d.secretVars = append(d.secretVars, SecretVar{Path: path, Var: name})
	}
	b.WriteString(expand(raw[at:]))
	if !ok {
		return "", false
	}
	return Secret(b.String()), true
}

// dsnField is where a password's value is written in a DSN, quotes
// excluded, and how a value is escaped there.
type dsnField struct {
	start, end int
	quoted     bool
	escape     func(string) string
}

// dsnSecretKeys are the DSN settings that hold a password.
var dsnSecretKeys = []string{"password", "sslpassword"}

func isDSNSecretKey(k string) bool {
	for _, s := range dsnSecretKeys {
		if strings.EqualFold(k, s) {
			return true
		}
	}
	return false
}

// urlScheme is how a URL DSN starts. pgx reads postgres:// and
// postgresql:// as URLs; any other scheme is read as one here too, so a
// password in it is caught before the driver check refuses the scheme.
var urlScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)

// dsnPasswords finds the passwords of a DSN as pgx would read them, so
// that what is checked and hidden is what the driver takes.
func dsnPasswords(raw string) []dsnField {
	if loc := urlScheme.FindStringIndex(raw); loc != nil {
		return urlPasswords(raw, loc[1])
	}
	return pairPasswords(raw)
}

// urlPasswords finds the password in a URL's user info and any in its
// query, split as libpq splits them.
func urlPasswords(raw string, rest int) []dsnField {
	var out []dsnField
	if i := strings.IndexAny(raw[rest:], "@/"); i >= 0 && raw[rest+i] == '@' {
		if colon := strings.IndexByte(raw[rest:rest+i], ':'); colon >= 0 {
			out = append(out, dsnField{start: rest + colon + 1, end: rest + i, escape: percentEncode})
		}
		rest += i + 1
	}
	q := strings.IndexByte(raw[rest:], '?')
	if q < 0 {
		return out
	}
	for i := rest + q + 1; i < len(raw); {
		j := strings.IndexByte(raw[i:], '&')
		if j < 0 {
			j = len(raw) - i
		}
		if k, _, found := strings.Cut(raw[i:i+j], "="); found {
			if key, err := url.PathUnescape(k); err == nil && isDSNSecretKey(strings.TrimSpace(key)) {
				out = append(out, dsnField{start: i + len(k) + 1, end: i + j, escape: percentEncode})
			}
		}
		i += j + 1
	}
	return out
}

// percentEncode writes every byte of v but the unreserved ones as %XX,
// which pgx decodes back in user info and query alike (+ included).
func percentEncode(v string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// dsnSpace is what separates key=value pairs, as libpq and pgx read them.
const dsnSpace = " \t\n\r\v\f"

// pairPasswords reads key=value pairs the way pgx does, and a DSN that
// does not parse as far as it does: an unterminated quote runs to the end.
func pairPasswords(raw string) []dsnField {
	var out []dsnField
	i := 0
	for {
		for i < len(raw) && strings.IndexByte(dsnSpace, raw[i]) >= 0 {
			i++
		}
		eq := strings.IndexByte(raw[i:], '=')
		if eq < 0 {
			return out
		}
		key := strings.Trim(raw[i:i+eq], dsnSpace)
		i += eq + 1
		for i < len(raw) && strings.IndexByte(dsnSpace, raw[i]) >= 0 {
			i++
		}
		quoted := i < len(raw) && raw[i] == '\''
		if quoted {
			i++
		}
		start := i
		for i < len(raw) {
			c := raw[i]
			if quoted && c == '\'' || !quoted && strings.IndexByte(dsnSpace, c) >= 0 {
				break
			}
			if c == '\\' {
				i++
			}
			i++
		}
		i = min(i, len(raw))
		if isDSNSecretKey(key) {
			esc := quotePairValue
			if quoted {
				esc = escapePairValue
			}
			out = append(out, dsnField{start: start, end: i, quoted: quoted, escape: esc})
		}
		if quoted && i < len(raw) {
			i++ // the closing quote
		}
	}
}

// escapePairValue escapes a value for inside single quotes.
func escapePairValue(v string) string {
	return strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v)
}

// quotePairValue quotes a value where an unquoted one was written.
func quotePairValue(v string) string { return "'" + escapePairValue(v) + "'" }

// redactDSN replaces each password in a DSN by xxxxx. A URL net/url
// cannot read is hidden whole: its writer's password may not be where
// the driver looks (postgres://bot:pa/ss@db has none for pgx).
func redactDSN(dsn string) string {
	if urlScheme.MatchString(dsn) {
		if _, err := url.Parse(dsn); err != nil {
			return "(dsn hidden: not a readable URL)"
		}
	}
	var b strings.Builder
	at := 0
	for _, f := range dsnPasswords(dsn) {
		if f.start == f.end && !f.quoted {
			continue // no password
		}
		start, end := f.start, f.end
		if f.quoted {
			start--
			if end < len(dsn) {
				end++
			}
		}
		b.WriteString(dsn[at:start])
		b.WriteString("xxxxx")
		at = end
	}
	b.WriteString(dsn[at:])
	return b.String()
}
