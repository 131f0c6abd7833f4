package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"approvalsbot/ladder"
)

// decoder walks the YAML node tree against the schema. It never stops at a
// problem: it records it with the node's line and the field path, and goes
// on with what it can, so one run reports everything.
//
// A null value (a key with nothing after it, or ~) counts as the key being
// absent, so commenting out everything under a key behaves like removing
// the key.
type decoder struct {
	file     string
	getenv   func(string) (string, bool)
	problems []Problem
	// fromEnv maps each value read from the environment to the ${NAME} it
	// came from, so problems can show the reference instead of the value:
	// a secret variable written into the wrong field must not end up in
	// `bot check` output or logs.
	fromEnv map[string]string
	// secretVars lists, in file order, the variable each secret was read
	// from.
	secretVars []SecretVar
}

// problemf records a problem at node n (nil: no line).
func (d *decoder) problemf(n *yaml.Node, path, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	msg := d.scrub(fmt.Sprintf(format, args...))
	d.problems = append(d.problems, Problem{File: d.file, Line: line, Path: path, Msg: msg})
}

// fixedProblem records a problem whose message is fixed text and the
// file's own ${NAME} references, holding no value. It is not scrubbed:
// scrubbing would only mangle its words where a short secret happens to
// spell one ("short" in "shorter").
func (d *decoder) fixedProblem(n *yaml.Node, path, msg string) {
	d.problems = append(d.problems, Problem{File: d.file, Line: n.Line, Path: path, Msg: msg})
}

// minScrub is the shortest environment value scrubbed from problems;
// shorter ones ("1", "true") would mangle unrelated words and are not
// secrets worth the name.
const minScrub = 4

// scrub replaces values that came from the environment by their ${NAME},
// quoted forms first, longest first so overlapping values stay whole.
func (d *decoder) scrub(msg string) string {
	if len(d.fromEnv) == 0 {
		return msg
	}
	values := make([]string, 0, len(d.fromEnv))
	for v := range d.fromEnv {
		values = append(values, v)
	}
	sort.Slice(values, func(i, j int) bool {
		if len(values[i]) != len(values[j]) {
			return len(values[i]) > len(values[j])
		}
		return values[i] < values[j]
	})
	for _, v := range values {
		ref := "${" + d.fromEnv[v] + "}"
		msg = strings.ReplaceAll(msg, strconv.Quote(v), strconv.Quote(ref))
		msg = strings.ReplaceAll(msg, v, ref)
	}
	return msg
}

// err returns the problems as *Error in line order (the order a person
// fixes them in), or nil.
func (d *decoder) err() error {
	if len(d.problems) == 0 {
		return nil
	}
	ps := slices.Clone(d.problems)
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Line < ps[j].Line })
	return &Error{Problems: ps}
}

// yamlLine finds the line in yaml's own syntax errors ("yaml: line 3: …").
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// document parses data into its one document node (nil for an empty file).
func (d *decoder) document(data []byte) *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		d.syntax(err)
		return nil
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		d.problemf(&extra, "", "a second YAML document (after ---): the file holds one")
	} else if !errors.Is(err, io.EOF) {
		d.syntax(err)
	}
	if len(doc.Content) == 0 {
		return nil
	}
	return doc.Content[0]
}

func (d *decoder) syntax(err error) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	// yaml.v3 reports parser errors (not scanner errors) with a 0-based line,
	// the start of the construct that failed, and omits the line when it
	// is 0: shift those to 1-based so the line points at the construct.
	if isParserProblem(msg) {
		line++
	}
	d.problems = append(d.problems, Problem{File: d.file, Line: line, Msg: "YAML: " + msg})
}

// isParserProblem tells yaml.v3's parser messages (parserc.go) from its
// scanner's.
func isParserProblem(msg string) bool {
	switch msg {
	case "did not find expected ',' or ']'",
		"did not find expected ',' or '}'",
		"did not find expected '-' indicator",
		"did not find expected <document start>",
		"did not find expected key",
		"did not find expected node content",
		"found duplicate %YAML directive",
		"found incompatible YAML document",
		"found undefined tag handle":
		return true
	}
	return false
}

// deref follows aliases (*name) to the node they stand for.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	n = deref(n)
	return n == nil || n.Kind == 0 || n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// kindOf names what a node holds, for "expected X, got Y".
func kindOf(n *yaml.Node) string {
	n = deref(n)
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return "nothing"
		case "!!bool":
			return "a boolean"
		case "!!int", "!!float":
			return "a number"
		}
		return "a string"
	}
	return "nothing"
}

// joinKey extends a field path by a mapping key. Keys that are not plain
// identifiers (globs, ids with dots) are quoted so the path stays readable:
// tenants.acme.tools["payments.*"].ladder.
func joinKey(path, key string) string {
	if plainKey.MatchString(key) {
		if path == "" {
			return key
		}
		return path + "." + key
	}
	return path + "[" + strconv.Quote(key) + "]"
}

var plainKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func joinIndex(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// field decodes one known key's value; path already names the key.
type field func(key, val *yaml.Node, path string)

// mapping decodes a mapping by its known keys, reporting unknown and
// duplicate keys. A null node is an empty mapping. It returns the value
// nodes of the known keys seen, by key, and false when n is not a mapping
// at all.
func (d *decoder) mapping(n *yaml.Node, path string, fields map[string]field) (map[string]*yaml.Node, bool) {
	seen := map[string]*yaml.Node{}
	if isNull(n) {
		return seen, true
	}
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		d.problemf(n, path, "expected a mapping, got %s", kindOf(n))
		return seen, false
	}
	d.pairs(n, path, func(k, v *yaml.Node, key string) {
		f, ok := fields[key]
		if !ok {
			d.problemf(k, joinKey(path, key), "unknown key%s", suggest(key, fields))
			return
		}
		seen[key] = v
		f(k, v, joinKey(path, key))
	})
	return seen, true
}

// pairs walks a mapping's key/value pairs in file order, rejecting
// non-string and duplicate keys. The caller has checked n is a mapping.
func (d *decoder) pairs(n *yaml.Node, path string, each func(k, v *yaml.Node, key string)) {
	first := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.problemf(k, path, "a key must be a string, got %s", kindOf(k))
			continue
		}
		if k.Tag == "!!merge" {
			d.problemf(k, path, "merge keys (<<) are not supported: write the keys out")
			continue
		}
		if line, dup := first[k.Value]; dup {
			d.problemf(k, joinKey(path, k.Value), "duplicate key (first at line %d)", line)
			continue
		}
		first[k.Value] = k.Line
		each(k, v, k.Value)
	}
}

// suggest offers the closest known key for a typo.
func suggest(key string, fields map[string]field) string {
	best, bestDist := "", 3 // more than two edits away is no longer a typo
	for name := range fields {
		if dist := editDistance(key, name); dist < bestDist || dist == bestDist && name < best {
			best, bestDist = name, dist
		}
	}
	if best == "" {
		return ""
	}
	return " (did you mean " + best + "?)"
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// given reports whether a mapping had the key with a non-null value.
func given(seen map[string]*yaml.Node, key string) bool {
	v, ok := seen[key]
	return ok && !isNull(v)
}

// list decodes a sequence item by item. A null node is an empty list. It
// returns the number of items, and false when n is not a list.
func (d *decoder) list(n *yaml.Node, path string, each func(i int, item *yaml.Node, path string)) (int, bool) {
	if isNull(n) {
		return 0, true
	}
	n = deref(n)
	if n.Kind != yaml.SequenceNode {
		// The hint does not echo the value: it may be a secret.
		hint := ""
		if n.Kind == yaml.ScalarNode {
			hint = " (a list of one is written in brackets: [item])"
		}
		d.problemf(n, path, "expected a list, got %s%s", kindOf(n), hint)
		return 0, false
	}
	for i, item := range n.Content {
		each(i, item, joinIndex(path, i))
	}
	return len(n.Content), true
}

// varName is what ${…} may hold.
var varName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// expand replaces every ${VAR} in a scalar's text from the environment. An
// unset variable is a problem naming it; ok is false after any problem.
func (d *decoder) expand(n *yaml.Node, path, s string) (string, bool) {
	if !strings.Contains(s, "${") {
		return s, true
	}
	var b strings.Builder
	ok := true
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		rest := s[i+2:]
		j := strings.IndexByte(rest, '}')
		if j < 0 {
			d.problemf(n, path, "unterminated ${ (write ${NAME})")
			ok = false
			break
		}
		name := rest[:j]
		switch v, set := d.getenv(name); {
		case !varName.MatchString(name):
			d.problemf(n, path, "${%s} is not a variable name (letters, digits and _)", name)
			ok = false
		case !set:
			d.problemf(n, path, "environment variable %s is not set", name)
			ok = false
		default:
			d.remember(v, name)
			b.WriteString(v)
		}
		s = rest[j+1:]
	}
	return b.String(), ok
}

// remember records that v came from the variable name, so problems show
// ${name} instead of v.
func (d *decoder) remember(v, name string) {
	if len(v) < minScrub {
		return
	}
	if d.fromEnv == nil {
		d.fromEnv = map[string]string{}
	}
	d.fromEnv[v] = name
}

// str decodes a scalar as text, with ${VAR} replaced. Numbers are taken as
// written (ids are often digits); booleans are refused, because `true` where
// text is wanted is a mistake. set is false for null or after a problem.
func (d *decoder) str(n *yaml.Node, path string) (s string, set bool) {
	return d.text(n, path, "a string")
}

// text is str with the name of what is wanted, for the type error.
func (d *decoder) text(n *yaml.Node, path, want string) (s string, set bool) {
	if isNull(n) {
		return "", false
	}
	n = deref(n)
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!bool" {
		d.problemf(n, path, "expected %s, got %s", want, kindOf(n))
		return "", false
	}
	return d.expand(n, path, n.Value)
}

// secret decodes a credential, which must be written as one ${NAME}: the
// file is copied, committed and printed far more often than an
// environment is. Its value never appears in a problem, and a literal is
// reported without echoing what was written.
func (d *decoder) secret(n *yaml.Node, path string) (Secret, bool) {
	name, ok := d.secretRef(n, path)
	if !ok {
		return "", false
	}
	s, ok := d.str(n, path)
	if ok && name != "" {
		d.secretVars = append(d.secretVars, SecretVar{Path: path, Var: name})
	}
	return Secret(s), ok
}

// envRef is one ${NAME} and nothing else.
var envRef = regexp.MustCompile(`^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$`)

// refName returns the NAME of s when s is exactly one ${NAME}.
func refName(s string) (string, bool) {
	m := envRef.FindStringSubmatch(s)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// secretRef checks that a secret's node is one ${NAME} and returns NAME.
// Null (the key left empty) and "" hold no secret and pass with no name,
// as does a node that is not text, which str then reports. ok is false
// after a problem.
func (d *decoder) secretRef(n *yaml.Node, path string) (name string, ok bool) {
	m := deref(n)
	if isNull(n) || m.Kind != yaml.ScalarNode || m.ShortTag() == "!!bool" || m.Value == "" {
		return "", true
	}
	if name, ok := refName(m.Value); ok {
		return name, true
	}
	d.fixedProblem(m, path, "is a secret written in the file: write it as one ${NAME}, nothing around it, and set NAME in the bot's environment")
	return "", false
}

// MinHMACKey is the shortest HMAC key the bot accepts for the secrets it
// shares with the backend: a key shorter than the hash's output (SHA-256,
// 32 bytes) is guessed sooner than the hash can be broken. The bot and
// the backend choose these keys, so nothing stops them being long.
//
// Slack's signing secret also keys an HMAC-SHA256, but Slack issues it
// (32 hex digits today) and its operator cannot choose another, so no
// length is required of it: a rule the bot cannot help anyone meet would
// only refuse a secret Slack changed the form of.
const MinHMACKey = 32

// hmacKey reads a secret that keys an HMAC shared with the backend. The
// problem names the variable, never the value or its length.
func (d *decoder) hmacKey(n *yaml.Node, path string) (Secret, bool) {
	s, ok := d.secret(n, path)
	if ok && s != "" && len(s) < MinHMACKey {
		// The node is one ${NAME} (secret checked it).
		d.fixedProblem(deref(n), path, fmt.Sprintf("%s is shorter than %d bytes, the size of an HMAC-SHA256 key: make a new one (openssl rand -hex 32) and give it to both sides",
			deref(n).Value, MinHMACKey))
		return "", false
	}
	return s, ok
}

// boolean decodes true or false. A value from ${VAR} is read as YAML would
// read it written in place.
func (d *decoder) boolean(n *yaml.Node, path string) bool {
	if isNull(n) {
		return false
	}
	n = deref(n)
	if n.Kind != yaml.ScalarNode {
		d.problemf(n, path, "expected true or false, got %s", kindOf(n))
		return false
	}
	v, ok := d.expand(n, path, n.Value)
	if !ok {
		return false
	}
	tag := n.ShortTag()
	if v != n.Value && n.Style&yaml.TaggedStyle == 0 {
		tag = (&yaml.Node{Kind: yaml.ScalarNode, Style: n.Style, Value: v}).ShortTag()
	}
	if tag != "!!bool" {
		d.problemf(n, path, "expected true or false, got %s", kindOf(&yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: v}))
		return false
	}
	b, err := strconv.ParseBool(strings.ToLower(v))
	if err != nil {
		d.problemf(n, path, "expected true or false, got %q", v)
		return false
	}
	return b
}

// duration decodes a Go duration (10s, 15m, 1h30m). Negative durations are
// refused: nothing in the file counts backwards except before_deadline,
// which is positive by its name.
func (d *decoder) duration(n *yaml.Node, path string) (time.Duration, bool) {
	s, ok := d.text(n, path, "a duration")
	if !ok {
		return 0, false
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		d.problemf(n, path, "%q is not a duration (write it like 10s, 15m or 1h30m)", s)
		return 0, false
	}
	if v < 0 {
		d.problemf(n, path, "%s is negative", ladder.FormatDuration(v))
		return 0, false
	}
	return v, true
}

// oneOf decodes a string that must be one of the choices.
func (d *decoder) oneOf(n *yaml.Node, path string, choices ...string) (string, bool) {
	s, ok := d.str(n, path)
	if !ok {
		return "", false
	}
	if !slices.Contains(choices, s) {
		d.problemf(n, path, "%q is not one of %s", s, strings.Join(choices, ", "))
		return "", false
	}
	return s, true
}

// targetRule says which kinds of target a field takes: want is the
// phrase for the error, ok the test.
type targetRule struct {
	want string
	ok   func(ladder.Target) bool
}

var (
	channels = targetRule{
		want: "a channel (slack:C…, slack:G… or discord:channel:ID)",
		ok:   ladder.Target.IsChannel,
	}
	mentionable = targetRule{
		want: "a user or group (slack:U…, slack:W…, slack:S…, discord:user:ID or discord:role:ID)",
		ok:   func(t ladder.Target) bool { return t.IsUser() || t.IsGroup() },
	}
	people = targetRule{
		want: "a user (slack:U…, slack:W… or discord:user:ID); groups and channels cannot be sent a DM",
		ok:   ladder.Target.IsUser,
	}
	addresses = targetRule{
		want: "an email address",
		ok:   func(t ladder.Target) bool { return t.Kind == ladder.KindEmail },
	}
)

// target decodes one target and checks its kind against the field's rule.
func (d *decoder) target(n *yaml.Node, path string, rule targetRule) (ladder.Target, bool) {
	s, ok := d.text(n, path, "a target")
	if !ok {
		if isNull(n) {
			d.problemf(deref(n), path, "empty target: want %s", rule.want)
		}
		return ladder.Target{}, false
	}
	t, err := ladder.ParseTarget(s)
	if err != nil {
		d.problemf(deref(n), path, "%v", err)
		return ladder.Target{}, false
	}
	if !rule.ok(t) {
		d.problemf(deref(n), path, "%s is not %s", t, rule.want)
		return ladder.Target{}, false
	}
	return t, true
}

// targets decodes a list of targets. given counts the items written, good
// or bad, so a step whose only target is malformed is not also reported as
// having none; it is -1 when n is not a list (already reported).
func (d *decoder) targets(n *yaml.Node, path string, rule targetRule) (ts []ladder.Target, given int) {
	given, ok := d.list(n, path, func(_ int, item *yaml.Node, path string) {
		if t, ok := d.target(item, path, rule); ok {
			ts = append(ts, t)
		}
	})
	if !ok {
		return nil, -1
	}
	return ts, given
}
