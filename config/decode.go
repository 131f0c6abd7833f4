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

// decoder walks the YAML tree against the schema, recording each problem
// and going on, so one run reports all. A null value counts as the key
// being absent (docs/design.md#reading-the-configuration-file).
type decoder struct {
	file     string
	getenv   func(string) (string, bool)
	problems []Problem
	// fromEnv maps each value read from the environment to its variable,
	// so that problems show ${NAME}, never a secret in the wrong field.
	fromEnv map[string]string
	// secretVars lists, in file order, where each secret was read from.
	secretVars []SecretVar
	// passkeys is where each tenant asking for passkeys wrote its rule.
	passkeys map[string]passkeyPos
	// grantsOn is where each tenant enabling grants said so.
	grantsOn map[string]passkeyPos
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

// fixedProblem records a message that holds no value, unscrubbed: a short
// secret may spell part of a word ("short" in "shorter").
func (d *decoder) fixedProblem(n *yaml.Node, path, msg string) {
	d.problems = append(d.problems, Problem{File: d.file, Line: n.Line, Path: path, Msg: msg})
}

// minScrub is the shortest environment value scrubbed from problems:
// shorter ones ("1", "true") are no secrets and would mangle words.
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

// err returns the problems as *Error in line order, or nil.
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
		d.syntax(err, data)
		return nil
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		d.problemf(&extra, "", "a second YAML document (after ---): the file holds one")
	} else if !errors.Is(err, io.EOF) {
		d.syntax(err, data)
	}
	if len(doc.Content) == 0 {
		return nil
	}
	return doc.Content[0]
}

func (d *decoder) syntax(err error, data []byte) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	// yaml.v3 gives parser errors (not scanner errors) a 0-based line,
	// omitted when 0: make it 1-based.
	if isParserProblem(msg) {
		line++
	}
	if tab := tabIndented(data, line, strings.Contains(msg, "tab")); tab > 0 {
		d.problems = append(d.problems, Problem{File: d.file, Line: tab,
			Msg: "tabs are not allowed for indentation in YAML: indent this line with spaces"})
		return
	}
	d.problems = append(d.problems, Problem{File: d.file, Line: line, Msg: "YAML: " + msg})
}

// tabIndented is the 1-based line, at or just after line (yaml's marks
// may point at the line before), whose indentation holds a tab; with
// anywhere, the file's first such line after those; 0 when none.
func tabIndented(data []byte, line int, anywhere bool) int {
	first := 0
	for i, l := range strings.Split(string(data), "\n") {
		indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		if !strings.Contains(indent, "\t") {
			continue
		}
		n := i + 1
		if n >= line && n <= max(line, 1)+1 {
			return n
		}
		if first == 0 && anywhere {
			first = n
		}
	}
	return first
}

// isParserProblem tells yaml.v3's parser messages from its scanner's.
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

// joinKey extends a field path by a mapping key, quoting one that is not
// plain: tenants.acme.tools["payments.*"].ladder.
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

// mapping decodes a mapping by its known keys, reporting unknown ones. It
// returns the known keys' value nodes, and false when n is no mapping.
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

// pairs walks a mapping's pairs in file order, refusing bad or repeated keys.
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

// list decodes each item of a sequence; ok is false when n is not one.
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

// remember records that v came from the variable name (scrub).
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
// file is copied and printed far more often than an environment is.
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

func refName(s string) (string, bool) {
	m := envRef.FindStringSubmatch(s)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// secretRef checks that a secret's node is one ${NAME} and returns NAME.
// Null, "" and a node that is not text (str reports it) pass, unnamed.
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
// shares with the backend, SHA-256's output size; Slack's signing secret,
// which Slack issues, is exempt: docs/design.md#hmac-keys.
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

// boolean decodes true or false; a ${VAR} is read as YAML would in place.
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

// duration decodes a Go duration (10s, 15m, 1h30m), refusing a negative
// one: before_deadline counts backwards by its name.
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

// targetRule says which kinds of target a field takes.
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
	switch {
	case rule.ok(t):
		return t, true
	case t.IsApprovers():
		// Approvers are people found when a step fires, so only a step's
		// mention, dm, email or push can name them.
		d.problemf(deref(n), path, "approvers is not %s: it is the people a quorum still waits for, named only in a ladder step's mention, dm, email or push", rule.want)
	case t.IsMember():
		// A member's user id names no chat user or address: only a push,
		// which finds the member's address when it goes, takes one.
		d.problemf(deref(n), path, "%s names a member by user id, which only a ladder step's push takes: want %s", t, rule.want)
	default:
		d.problemf(deref(n), path, "%s is not %s", t, rule.want)
	}
	return ladder.Target{}, false
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
