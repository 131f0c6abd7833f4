package templates_test

// Property tests over generated hostile calls: an approval.requested event
// whose arguments, roles, flags, free text, annotations and names an
// attacker shaped, rendered on every surface for a shared place and for a
// reader who holds the content permission, and kept as the store keeps it.
// TestHostileCards draws the calls from math/rand/v2; FuzzHostileCard
// decodes fuzz bytes into the same choices, and its corpus under
// testdata/fuzz/FuzzHostileCard keeps the calls that once broke a
// property, so plain `go test` runs them again.
//
// Every value the generator embeds carries a marker, Q<kind><digits>Z, so
// a property can tell where it went: S a secret (never shown, never
// stored), A an argument's value, T content of free text (agent text,
// patch, file paths, waiting calls), V a role value, R who-asks text (the
// policy rule, taint and hook names, which a restricted card shows).

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"html"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"approvalsbot/approval"
	"approvalsbot/internal/utf16text"
	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
)

// asContentHolder makes in the card of a reader known to hold the content
// permission (Show details, a DM or mail to such a member, their decision
// page): the digest is shown only then, and the content of a restricted
// call is revealed.
func asContentHolder(in *templates.Input) {
	in.RevealContent = true
	in.ContentHolder = true
}

// warningsOf is the card's warning lines.
func warningsOf(c templates.Card) []string { return c.Warnings }

var (
	hostileSeed = flag.Uint64("hostile.seed", 1, "seed of TestHostileCards (0: a new one each run, printed on failure); fixed by default so CI reruns the same calls")
	hostileN    = flag.Int("hostile.n", 0, "calls TestHostileCards generates (0: 300, 60 under -short)")
	hostileKeep = flag.Bool("hostile.keep", false, "write the smallest failing call of each property to testdata/fuzz/FuzzHostileCard")
)

// hostileMaxBody bounds one generated event, so every pass over it stays
// cheap: the properties are about truth, not size.
const hostileMaxBody = 100 << 10

// hostileChooser makes the generator's choices: from math/rand/v2 (recording each
// choice as the bytes hostileBytes reads back) or from fuzz bytes.
type hostileChooser interface {
	// intn returns a choice in [0, n); 0 is always the plainest.
	intn(n int) int
}

// hostileWidth is how many bytes one choice among n takes in a trace.
func hostileWidth(n int) int {
	switch {
	case n <= 1:
		return 0
	case n <= 1<<8:
		return 1
	case n <= 1<<16:
		return 2
	}
	return 4
}

type hostileRand struct {
	r     *rand.Rand
	trace []byte
}

func (c *hostileRand) intn(n int) int {
	if n <= 1 {
		return 0
	}
	v := c.r.IntN(n)
	for i := hostileWidth(n) - 1; i >= 0; i-- {
		c.trace = append(c.trace, byte(v>>(8*i)))
	}
	return v
}

// hostileBytes reads choices from fuzz bytes; past their end every choice
// is 0, the plainest.
type hostileBytes struct{ b []byte }

func (c *hostileBytes) intn(n int) int {
	if n <= 1 {
		return 0
	}
	v := 0
	for range hostileWidth(n) {
		v <<= 8
		if len(c.b) > 0 {
			v |= int(c.b[0])
			c.b = c.b[1:]
		}
	}
	return v % n
}

// hostileRunes are the invisible and bidi code points the generator
// hides in names, values and text; hostileSuspect is every such code point
// a rendering must show as [U+XXXX] instead.
var hostileRunes = []rune{0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x3164, 0x115F, 0xE0041, 0x202E, 0x2066,
	0x200E, 0x200F, 0x061C, 0x1160, 0xFFA0, 0x202A, 0x202D, 0x2067, 0x2069, 0xE0001, 0xE007F, 0x00AD, 0x034F, 0xFE0F, 0x180E}

func hostileSuspect(r rune) bool {
	switch {
	case r >= 0x200B && r <= 0x200F, r == 0x2060, r == 0xFEFF, r == 0x061C,
		r == 0x3164, r == 0x115F, r == 0x1160, r == 0xFFA0,
		r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069,
		r >= 0xE0000 && r <= 0xE007F, r == 0x00AD, r == 0x034F, r == 0xFE0F, r == 0x180E:
		return true
	}
	return false
}

// Words of the generated text: none is a secret's name or a scheme.
var hostileWords = []string{"deploy", "the", "summary", "release", "note", "ticket", "weekly", "customer",
	"archive", "build", "main", "report", "to", "of", "and", "rows", "ops"}

var (
	hostileSecretKeys = []string{"smtp_password", "API-Key", "private key", "apiKey", "client_secret", "Authorization",
		"db_passwd", "GITHUB_TOKEN", "Private-Key", "x-api-key", "credentials", "passphrase", "auth", "PWD", "session_cookie"}
	hostilePlainKeys     = []string{"subject", "body", "note", "labels", "url", "target", "payload", "meta", "title", "branch"}
	hostilePlainRoleArgs = []string{"to", "cc", "host", "payee", "repo", "path", "amount"}
	// hostileSecretRoleArgs are arguments a tool marks as a role whose name says
	// they are secret: their values are redacted like the arguments'.
	hostileSecretRoleArgs = []string{"smtp_password", "API-Key", "private key"}
	hostileRoleKinds      = []approval.RoleKind{approval.RoleRecipient, approval.RoleHost, approval.RolePayee,
		approval.RoleRepository, approval.RolePath, approval.RoleAmount}
	hostileFunctions   = []string{"acme_github.merge", "mail.send", "db.delete_rows", "web.fetch", "payments.refund"}
	hostileValueCounts = []int{1, 2, 3, 5, 25, 60, 100}
)

// hostileValue is one generated role value.
type hostileValue struct {
	marker  string // its QV marker; "" for a secret-named argument's value
	oos     bool   // out of scope: origin below tenant_record, or the backend's flag
	shaped  bool   // carries a secret shape besides its marker
	invisib bool   // holds an invisible or bidi code point
}

// hostileRole is one generated role and what the properties need of it.
type hostileRole struct {
	arg     string
	secret  bool // a secret-named argument
	newJob  bool // flags.new_to_job names it
	leftOut int
	values  []hostileValue
}

// hostile is one generated call and what it hides where.
type hostile struct {
	body        []byte
	restricted  bool // content.restricted
	private     bool // job.private_chat
	digest      string
	fnRunes     []rune // invisible code points in the function's name
	roles       []hostileRole
	mismatch    bool // effects_mismatch
	contradicts bool // readOnlyHint and destructiveHint both true
	owEgress    bool // openWorldHint false, class above egress
	// wantWarnings are the warning lines the call's declarations, flags
	// and reasons call for, each exactly as approval words it.
	wantWarnings []string
	secrets      map[string]string // each secret's marker: its form and place
}

// walled reports whether a shared place must get the call without details.
func (h *hostile) walled() bool { return h.restricted || h.private }

// roleValueInvisible reports whether a role value holds an invisible code point.
func (h *hostile) roleValueInvisible() bool {
	for _, r := range h.roles {
		for _, v := range r.values {
			if v.invisib {
				return true
			}
		}
	}
	return false
}

type hostileGen struct {
	ch       hostileChooser
	n        int
	richness int
	h        *hostile
	where    string // the part of the call being made, for the report
}

func (g *hostileGen) pick(n int) int    { return g.ch.intn(n) }
func (g *hostileGen) chance(k int) bool { return g.pick(k) == 1 }

func (g *hostileGen) marker(kind byte) string {
	g.n++
	return fmt.Sprintf("Q%c%04dZ", kind, g.n)
}

// secret is a new secret marker, its form and place noted for the report.
func (g *hostileGen) secret(form string) string {
	m := g.marker('S')
	if g.h.secrets == nil {
		g.h.secrets = map[string]string{}
	}
	g.h.secrets[m] = form + " in " + g.where
	return m
}

// decorate hides, by chance, one or two invisible code points in s (text
// with no marker or secret in it), and reports whether it did.
func (g *hostileGen) decorate(s string) (string, bool) {
	if !g.chance(3) {
		return s, false
	}
	rs := []rune(s)
	for range 1 + g.pick(2) {
		at := g.pick(len(rs) + 1)
		rs = slices.Insert(rs, at, hostileRunes[g.pick(len(hostileRunes))])
	}
	return string(rs), true
}

func (g *hostileGen) words(n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = hostileWords[g.pick(len(hostileWords))]
	}
	return strings.Join(ws, " ")
}

// secretValue is a secret as a whole argument value, by shape, with its
// marker in the part a redaction must hide.
func (g *hostileGen) secretValue() string {
	switch g.pick(6) {
	case 0:
		return "Bearer " + g.secret("Bearer value") + "x9f"
	case 1:
		return "https://deploy:" + g.secret("URL user-info") + "@git.example.com/r.git"
	case 2:
		return "//deploy:" + g.secret("scheme-relative URL user-info") + "@git.example.com/r.git"
	case 3:
		return "ghp_" + g.secret("ghp_ token") + strings.Repeat("a", 30)
	case 4:
		m := g.secret("JWT")
		return "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOi" + m + "J9." + m + "sig"
	}
	return "-----BEGIN RSA PRIVATE KEY-----\nMIIEow" + g.secret("PEM private key") + "IBAAKCAQEA\n-----END RSA PRIVATE KEY-----"
}

// textSecret is a secret inside free text, by key or by shape; multiLine
// allows a PEM block. Each ends its line, so nothing after it reads as
// its value.
func (g *hostileGen) textSecret(multiLine bool) string {
	n := 8
	if !multiLine {
		n = 7
	}
	switch g.pick(n) {
	case 0:
		return "smtp_password=hunter2" + g.secret("smtp_password=")
	case 1:
		return "API-Key: " + g.secret("API-Key:") + "k"
	case 2:
		return "Bearer " + g.secret("Bearer") + "x9f"
	case 3:
		return "https://deploy:" + g.secret("URL user-info") + "@git.example.com/r.git"
	case 4:
		return "//deploy:" + g.secret("scheme-relative URL user-info") + "@git.example.com/r.git"
	case 5:
		return "ghp_" + g.secret("ghp_ token") + strings.Repeat("b", 30)
	case 6:
		m := g.secret("JWT")
		return "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOi" + m + "J9." + m + "sig"
	}
	return "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk" + g.secret("PEM private key") + "tdjEAAAA\n-----END OPENSSH PRIVATE KEY-----"
}

// freeText is text with markers of kind, secrets and invisible code points.
func (g *hostileGen) freeText(kind byte, multiLine bool) string {
	var parts []string
	for range 1 + g.pick(2+g.richness) {
		w, _ := g.decorate(g.words(1 + g.pick(6)))
		parts = append(parts, w+" "+g.marker(kind))
		if g.chance(3) {
			parts = append(parts, g.textSecret(multiLine))
		}
	}
	sep := " "
	if multiLine {
		sep = "\n"
	}
	return strings.Join(parts, sep) + sep
}

// jsonValue is one argument value.
func (g *hostileGen) jsonValue(depth int) any {
	switch k := g.pick(6); {
	case k == 1:
		return g.secretValue()
	case k == 2 && depth < 3:
		return g.object(depth + 1)
	case k == 3:
		n := 1 + g.pick(1+g.richness*12)
		out := make([]any, n)
		for i := range out {
			s, _ := g.decorate(g.words(1))
			out[i] = g.marker('A') + " " + s
		}
		return out
	case k == 4:
		return g.marker('A') + " " + strings.Repeat("long ", 60+g.pick(40))
	case k == 5:
		return float64(g.pick(10000))
	}
	s, _ := g.decorate(g.words(1 + g.pick(4)))
	return g.marker('A') + " " + s
}

// object is an arguments object: plain keys (some with invisible code
// points), secret keys in many spellings, secret shapes under plain keys.
func (g *hostileGen) object(depth int) map[string]any {
	out := map[string]any{}
	seen := map[string]bool{}
	for i := range 1 + g.pick(2+g.richness*2) {
		var k string
		var v any
		if g.chance(3) {
			k = hostileSecretKeys[g.pick(len(hostileSecretKeys))]
			g.where = "argument " + strconv.Quote(k)
			switch g.pick(3) {
			case 0:
				v = "hunter2" + g.secret("value of a secret key")
			case 1:
				v = map[string]any{"user": "ci", "pass": g.secret("object under a secret key") + "pw"}
			default:
				v = g.secretValue()
			}
		} else {
			k, _ = g.decorate(hostilePlainKeys[g.pick(len(hostilePlainKeys))])
			g.where = "a value of argument " + strconv.Quote(k)
			v = g.jsonValue(depth)
		}
		if seen[strings.ToLower(k)] {
			k += strconv.Itoa(i)
		}
		seen[strings.ToLower(k)] = true
		out[k] = v
	}
	return out
}

// roleValue is a value of a plain role argument: its marker first, so a
// row cut to its width still shows it.
func (g *hostileGen) roleValue(v *hostileValue) string {
	v.marker = g.marker('V')
	rest := "." + g.words(1) + "@evil.example"
	switch g.pick(4) {
	case 1:
		rest, v.invisib = g.decorate(rest)
	case 2:
		v.shaped = true
		return "https://u:" + g.secret("URL user-info") + "@" + v.marker + ".evil.example/"
	case 3:
		v.shaped = true
		return v.marker + " Bearer " + g.secret("Bearer") + "x9f"
	}
	return v.marker + rest
}

var hostileLowOrigins = []approval.Origin{approval.OriginJobRead, approval.OriginNowhere}
var hostileHighOrigins = []approval.Origin{approval.OriginRequest, approval.OriginIdentity, approval.OriginTenantRecord}

// genRoles makes up to four roles of up to 100 values each, with
// out-of-scope values (by origin, by flag, by both) at random places.
func (g *hostileGen) genRoles() ([]any, []any, []any) {
	var roles, newJob, notTraced []any
	args := slices.Clone(hostilePlainRoleArgs)
	if g.chance(2) {
		args = append(args, hostileSecretRoleArgs...)
	}
	for range g.pick(min(2+g.richness, 5)) {
		i := g.pick(len(args))
		r := hostileRole{arg: args[i], secret: slices.Contains(hostileSecretRoleArgs, args[i])}
		args = slices.Delete(args, i, i+1)
		kind := hostileRoleKinds[g.pick(len(hostileRoleKinds))]
		n := hostileValueCounts[g.pick(min(len(hostileValueCounts), 2+2*g.richness))]
		r.values = make([]hostileValue, n)
		oosAt := map[int]int{}
		for range g.pick(4) {
			oosAt[g.pick(n)] = 1 + g.pick(3)
		}
		var vals []any
		lowOrigin := false
		for j := range r.values {
			v := &r.values[j]
			var text string
			g.where = "a role value of " + strconv.Quote(r.arg)
			if r.secret {
				text = "hunter2" + g.secret("value of a secret-named role argument")
			} else {
				text = g.roleValue(v)
			}
			origin := hostileHighOrigins[g.pick(len(hostileHighOrigins))]
			flagged := false
			switch oosAt[j] {
			case 1: // both say so
				origin, flagged = hostileLowOrigins[g.pick(2)], true
			case 2: // the origin says so, the backend's flag does not
				origin = hostileLowOrigins[g.pick(2)]
			case 3: // the backend's flag says so, the origin does not
				flagged = true
			}
			v.oos = oosAt[j] > 0
			lowOrigin = lowOrigin || oosAt[j] == 1 || oosAt[j] == 2
			vals = append(vals, map[string]any{"value": text, "origin": string(origin), "out_of_scope": flagged})
		}
		role := map[string]any{"argument": r.arg, "role": string(kind), "values": vals}
		if g.chance(3) {
			r.leftOut = 1 + g.pick(50)
			role["left_out"] = r.leftOut
		}
		if g.chance(5) {
			role["not_compared"] = true
		}
		roles = append(roles, role)
		if g.chance(2) {
			r.newJob = true
			newJob = append(newJob, map[string]any{"argument": r.arg, "role": string(kind)})
		}
		if lowOrigin && g.chance(2) {
			notTraced = append(notTraced, map[string]any{"argument": r.arg, "role": string(kind),
				"origin": string(approval.OriginJobRead), "floor": string(approval.OriginTenantRecord)})
		}
		g.h.roles = append(g.h.roles, r)
	}
	return roles, newJob, notTraced
}

func (g *hostileGen) hint() any {
	switch g.pick(3) {
	case 1:
		return true
	case 2:
		return false
	}
	return nil
}

func (g *hostileGen) hex64() string {
	var b [32]byte
	for i := range b {
		b[i] = byte(g.pick(256))
	}
	return hex.EncodeToString(b[:])
}

// hostileGenerate makes one hostile approval.requested event from the mail
// fixture, every choice made by ch.
func hostileGenerate(t testing.TB, base []byte, ch hostileChooser) *hostile {
	t.Helper()
	h := &hostile{}
	g := &hostileGen{ch: ch, h: h}
	g.richness = g.pick(4)
	var ev map[string]any
	if err := json.Unmarshal(base, &ev); err != nil {
		t.Fatal(err)
	}
	d := ev["data"].(map[string]any)
	h.restricted, h.private = g.chance(3), g.chance(3)
	d["content"] = map[string]any{"restricted": h.restricted}
	d["job"].(map[string]any)["private_chat"] = h.private

	fn := hostileFunctions[g.pick(len(hostileFunctions))]
	if g.chance(2) {
		rs := []rune(fn)
		for range 1 + g.pick(2) {
			r := hostileRunes[g.pick(len(hostileRunes))]
			rs = slices.Insert(rs, g.pick(len(rs)+1), r)
			h.fnRunes = append(h.fnRunes, r)
		}
		fn = string(rs)
	}
	ro, de, ow := g.hint(), g.hint(), g.hint()
	ann := map[string]any{}
	for k, v := range map[string]any{"readOnlyHint": ro, "destructiveHint": de, "openWorldHint": ow} {
		if v != nil {
			ann[k] = v
		}
	}
	h.contradicts = ro == true && de == true
	h.digest = "sha256:" + g.hex64()
	args := g.object(0)
	// The snapshot is shown on every card: it must never read as the
	// digest, which the digest check looks for.
	snapshot := "sha256:" + g.hex64()
	if strings.Contains(snapshot, h.digest[len("sha256:"):len("sha256:")+12]) {
		flipped := []byte(snapshot[len("sha256:"):])
		for i, c := range flipped {
			n := strings.IndexByte("0123456789abcdef", c)
			flipped[i] = "fedcba9876543210"[n]
		}
		snapshot = "sha256:" + string(flipped)
	}
	call := map[string]any{
		"function": fn, "annotations": ann, "arguments": args,
		"arguments_cut": false, "redaction": map[string]any{"redacted": false, "truncated": false},
		"args_sha256": h.digest, "snapshot": snapshot, "call_index": 3,
	}
	d["call"] = call

	roles, newJob, notTraced := g.genRoles()
	delete(d, "roles")
	if roles != nil {
		d["roles"] = roles
	}
	flags := map[string]any{}
	if newJob != nil {
		flags["new_to_job"] = newJob
	}
	if notTraced != nil {
		flags["not_traced"] = notTraced
	}
	class := ""
	switch g.pick(4) {
	case 1:
		class = "egress"
		flags["class_above"] = map[string]any{"class": class, "previous": "read"}
		h.owEgress = ow == false
	case 2:
		class = "write"
		flags["class_above"] = map[string]any{"class": class}
	case 3:
		class = "destructive"
		flags["class_above"] = map[string]any{"class": class, "previous": "write"}
	}
	d["flags"] = flags
	if g.chance(3) {
		h.mismatch = true
		d["effects_mismatch"] = true
	}
	// The warnings, in approval's order, as the card must word them.
	if h.mismatch {
		h.wantWarnings = append(h.wantWarnings, map[any]string{false: approval.WarningSaidInside, true: approval.WarningSaidOutside,
			nil: approval.WarningSaidSilent}[ow])
	}
	if h.contradicts {
		h.wantWarnings = append(h.wantWarnings, approval.WarningContradicts)
	}
	switch {
	case ro == true && class != "":
		h.wantWarnings = append(h.wantWarnings, fmt.Sprintf(approval.WarningReadsOnlyFmt, class))
	case class == "destructive" && de != true:
		h.wantWarnings = append(h.wantWarnings, fmt.Sprintf(approval.WarningNotDestructiveFmt, class))
	}
	if h.owEgress {
		h.wantWarnings = append(h.wantWarnings, approval.WarningInsideEgress)
	}
	switch g.pick(5) {
	case 0:
		d["asked_by"] = map[string]any{"reason": "requires_approval"}
	case 1:
		g.where = "asked_by.rule"
		d["asked_by"] = map[string]any{"reason": "policy", "rule": g.freeText('R', false)}
	case 2:
		var taint []any
		for range 1 + g.pick(3) {
			f, _ := g.decorate("web.fetch")
			taint = append(taint, map[string]any{"source": "open_world", "function": f + g.marker('R'), "call": g.pick(40)})
		}
		d["asked_by"] = map[string]any{"reason": "taint", "taint": taint}
		if ow == false {
			h.wantWarnings = append(h.wantWarnings, approval.WarningInsideTaint)
		}
	case 3:
		hook, _ := g.decorate("scan-hook")
		d["asked_by"] = map[string]any{"reason": "hook", "hook": hook + g.marker('R')}
	case 4:
		d["asked_by"] = map[string]any{"reason": "origin", "argument": "to", "role": "recipient",
			"floor": "tenant_record", "origin": "job_read"}
	}
	delete(d, "agent_says")
	g.where = "agent_says"
	if g.pick(3) > 0 {
		d["agent_says"] = g.freeText('T', true)
	}
	g.where = "turn.waiting"
	if n := g.pick(4); n > 0 {
		var waiting []any
		for range n {
			w, _ := g.decorate(hostileFunctions[g.pick(len(hostileFunctions))])
			if g.chance(2) {
				w += " " + g.textSecret(false)
			}
			waiting = append(waiting, w+" "+g.marker('T'))
		}
		d["turn"] = map[string]any{"waiting": waiting}
	}
	if g.chance(4) {
		d["kind"] = "changes"
		var files []any
		for range 1 + g.pick(3) {
			files = append(files, map[string]any{"path": "src/" + g.marker('T') + "/main.go", "protected": g.chance(2)})
		}
		g.where = "changes.patch"
		patch := "--- a/main.go\n+++ b/main.go\n@@ -1 +1 @@\n-old " + g.marker('T') + "\n+" + g.freeText('T', true)
		d["changes"] = map[string]any{"files": files, "patch": patch, "patch_sha256": "sha256:" + g.hex64()}
	}
	var err error
	if h.body, err = json.Marshal(ev); err != nil {
		t.Fatal(err)
	}
	if len(h.body) > hostileMaxBody {
		t.Fatalf("generated %d bytes, over %d", len(h.body), hostileMaxBody)
	}
	return h
}

// hostileViolation is one property a rendering or the stored row broke.
type hostileViolation struct {
	prop, where, detail string
}

func (v hostileViolation) String() string { return v.prop + ": " + v.where + ": " + v.detail }

// The properties, by the name a failure reports.
const (
	propSecret     = "no-secret"
	propOutOfScope = "out-of-scope-listed-or-counted"
	propWarning    = "warning-when-effect-says-less"
	propInvisible  = "invisible-shown"
	propInvWarned  = "invisible-warned"
	propFlagValue  = "flag-line-holds-no-value"
	propDigest     = "digest-only-for-content-holder"
	propWalled     = "walled-no-content"
	propStoredSame = "posted-card-says-what-the-request-says"
	propPush       = "push-notice-holds-no-value-and-shows-invisibles"
)

var (
	hostileMarkerRE  = regexp.MustCompile(`Q[SATVR][0-9]{4}Z`)
	hostileValueRE   = regexp.MustCompile(`Q[SATV][0-9]{4}Z`) // a value of the call (who-asks text is not)
	hostileContentRE = regexp.MustCompile(`Q[ATV][0-9]{4}Z`)  // content a walled card withholds
	hostileRoleRE    = regexp.MustCompile(`QV[0-9]{4}Z`)
	hostileCutRE     = regexp.MustCompile(`^([0-9]+) more values? of (.+) left out(.*)$`)
	hostileCutOOSRE  = regexp.MustCompile(`\(([0-9]+) of (?:them|it) (?:is |are )?out of scope\)`)
	hostileBackendRE = regexp.MustCompile(`^([0-9]+) more values? of (.+) left out by the job backend \(not known whether any is out of scope\)$`)
	hostileMoreRE    = regexp.MustCompile(`^and ([0-9]+) more notes?(?: \((?:([0-9]+) values? out of scope among them)?.*\))?$`)
	hostileLockedRE  = regexp.MustCompile(`^(.+) \([a-z_]+\): (?:([0-9]+) values? out of scope)?.*\(values are shown only to operators with the content permission\)$`)
)

// hostileSurface is one rendering as its reader reads it: JSON messages as
// the text of their strings (escapes undone), mrkdwn and HTML unescaped,
// Discord's markdown escapes dropped.
type hostileSurface struct{ name, text string }

func hostileJSONText(t testing.TB, b string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(b), &v); err != nil {
		t.Fatalf("rendering is not JSON: %v", err)
	}
	var out strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			out.WriteString(x)
			out.WriteByte('\n')
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				walk(x[k])
			}
		}
	}
	walk(v)
	return out.String()
}

var hostileSlackUnescape = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">")

// hostileRender renders c on every surface the package offers.
func hostileRender(t testing.TB, r *templates.Renderer, c templates.Card) []hostileSurface {
	t.Helper()
	x := renderAll(t, r, c)
	// A Discord code block's run of backticks is broken with U+200B on
	// purpose (fence); the generator writes no backticks, so none is left.
	discord := strings.ReplaceAll(hostileJSONText(t, x.discord), "`\u200b`", "``")
	return []hostileSurface{
		{"slack", hostileSlackUnescape.Replace(hostileJSONText(t, x.slack))},
		{"discord", strings.ReplaceAll(discord, `\`, "")},
		{"email subject", x.emailSubject},
		{"email text", x.emailText},
		{"email html", html.UnescapeString(x.emailHTML)},
		{"page html", html.UnescapeString(string(r.CardHTML(c)))},
		{"text", x.text},
	}
}

// hostileCheck renders h for a shared place and for a content holder,
// builds its stored row, and returns every property broken.
func hostileCheck(t testing.TB, r *templates.Renderer, h *hostile) []hostileViolation {
	t.Helper()
	ev, err := approval.Parse(h.body)
	if err != nil {
		t.Fatalf("the generator made an invalid event: %v\n%s", err, h.body)
	}
	a := ev.Approval
	var out []hostileViolation
	add := func(prop, where, format string, args ...any) {
		out = append(out, hostileViolation{prop, where, fmt.Sprintf(format, args...)})
	}
	var shared templates.Input // the shared card's input
	for _, holder := range []bool{false, true} {
		at, plan := templatestest.Pinned(a)
		in, err := templates.PreviewInput(a, string(approval.StatePending), at, plan)
		if err != nil {
			t.Fatal(err)
		}
		if holder {
			asContentHolder(&in)
		}
		c := templates.Build(in)
		out = append(out, hostileCheckCard(h, holder, c, hostileRender(t, r, c))...)
		if !holder {
			shared = in
		}
	}

	st, err := approval.StoredForm(a, []byte("hostile test key"))
	if err != nil {
		t.Fatalf("StoredForm: %v", err)
	}
	row, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range hostileMarkerRE.FindAllString(string(row), -1) {
		if m[1] == 'S' {
			add(propSecret, "stored row", "keeps the secret %s (%s)", m, h.secrets[m])
		}
	}
	// Every card the bot posts is built from the stored row, not from the
	// request: it must say what the request's own card says.
	var kept approval.Approval
	if err := json.Unmarshal(row, &kept); err != nil {
		t.Fatalf("the stored row does not read back: %v", err)
	}
	at, plan := templatestest.Pinned(&kept)
	in, err := templates.PreviewInput(&kept, string(approval.StatePending), at, plan)
	if err != nil {
		t.Fatal(err)
	}
	fresh, posted := templates.Build(shared), templates.Build(in)
	if !slices.Equal(warningsOf(fresh), warningsOf(posted)) {
		add(propStoredSame, "stored card", "warns %q, the request's card %q", warningsOf(posted), warningsOf(fresh))
	}
	if len(fresh.Buttons) > 0 && len(posted.Buttons) > 0 && fresh.Buttons[0].Label != posted.Buttons[0].Label {
		add(propStoredSame, "stored card", "puts %s first, the request's card %s", posted.Buttons[0].Label, fresh.Buttons[0].Label)
	}
	out = append(out, hostileCheckCard(h, false, posted, hostileRender(t, r, posted))...)
	if h.walled() {
		if ms := hostileContentRE.FindAllString(string(row), -1); len(ms) > 0 {
			add(propWalled, "stored row", "a %s keeps %s: %s", hostileWalledWhy(h), hostileContentKinds(ms), strings.Join(hostileUniq(ms), " "))
		}
	}
	return out
}

// hostileCheckCard checks one card of h, for a shared place or for a
// content holder, and its renderings.
func hostileCheckCard(h *hostile, holder bool, c templates.Card, surfaces []hostileSurface) []hostileViolation {
	var out []hostileViolation
	add := func(prop, where, format string, args ...any) {
		out = append(out, hostileViolation{prop, where, fmt.Sprintf(format, args...)})
	}
	view := "shared"
	if holder {
		view = "content holder"
	}
	walled := !holder && h.walled()
	digestShown := h.digest[len("sha256:") : len("sha256:")+12]

	for _, s := range surfaces {
		where := view + "/" + s.name
		for _, m := range hostileMarkerRE.FindAllString(s.text, -1) {
			if m[1] == 'S' {
				add(propSecret, where, "shows the secret %s (%s)", m, h.secrets[m])
			}
		}
		if walled {
			if ms := hostileContentRE.FindAllString(s.text, -1); len(ms) > 0 {
				add(propWalled, where, "a %s shows %s: %s", hostileWalledWhy(h), hostileContentKinds(ms), strings.Join(hostileUniq(ms), " "))
			}
		}
		if !holder && strings.Contains(s.text, digestShown) {
			add(propDigest, where, "shows args_sha256 in a shared place (restricted=%v private_chat=%v)", h.restricted, h.private)
		}
		for i, r := range s.text {
			// The templates write their warning sign "⚠️": its selector
			// is the bot's own.
			if hostileSuspect(r) && !(r == 0xFE0F && strings.HasSuffix(s.text[:i], "⚠")) {
				add(propInvisible, where, "passes U+%04X through unshown at byte %d: %q", r, i, hostileAround(s.text, i))
				break
			}
		}
		if s.name != "email subject" {
			for _, r := range h.fnRunes {
				if !strings.Contains(s.text, fmt.Sprintf("[U+%04X]", r)) {
					add(propInvisible, where, "the function's U+%04X is not shown as [U+%04X]", r, r)
				}
			}
			for _, w := range warningsOf(c) {
				if !strings.Contains(s.text, w) {
					add(propWarning, where, "lacks the warning line %q", w)
				}
			}
		}
	}

	for _, f := range c.Flags {
		if ms := hostileValueRE.FindAllString(f, -1); len(ms) > 0 {
			add(propFlagValue, view, "flag line %q holds values %s", f, strings.Join(ms, " "))
		}
	}

	need := len(h.wantWarnings)
	ws := warningsOf(c)
	// Each warning the call calls for, word for word and in order, then
	// only the identity warnings a hidden character or mixed scripts add.
	if len(ws) < need || !slices.Equal(ws[:need], h.wantWarnings) {
		add(propWarning, view, "warns %q (effect line %q), want first %q", ws, c.Effect, h.wantWarnings)
	}
	for _, w := range ws[min(need, len(ws)):] {
		if !strings.Contains(w, "invisible character") && !strings.Contains(w, "mixes scripts") && !strings.Contains(w, "mix scripts") {
			add(propWarning, view, "warns %q, which the call does not call for", w)
		}
	}
	if need > 0 && !hostileDenyFirst(c) {
		add(propWarning, view, "Approve comes before Deny though the card warns %q", h.wantWarnings)
	}
	invisible := len(h.fnRunes) > 0 || (!c.Restricted && h.roleValueInvisible())
	if invisible && len(ws) < need+1 {
		add(propInvWarned, view, "no warning that the function's name or a role value holds an invisible code point (function %q)",
			c.Function)
	}

	// The push notice of the card: never a value of the call, every
	// invisible character shown, small.
	n := templates.Push(c, templates.PushInput{Deadline: time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC),
		Link: "https://approvals.example/decide/x", ActAs: "user:kevin", Thread: true})
	push := n.Title + "\n" + n.Message()
	if ms := hostileValueRE.FindAllString(push, -1); len(ms) > 0 {
		add(propPush, view+"/push", "carries values %s", strings.Join(hostileUniq(ms), " "))
	}
	for i, r := range push {
		if hostileSuspect(r) {
			add(propPush, view+"/push", "passes U+%04X through unshown at byte %d: %q", r, i, hostileAround(push, i))
			break
		}
	}
	for _, r := range h.fnRunes {
		if !strings.Contains(n.Title, fmt.Sprintf("[U+%04X]", r)) {
			add(propPush, view+"/push", "the function's U+%04X is not shown as [U+%04X]", r, r)
		}
	}
	if len(push) > 1024 {
		add(propPush, view+"/push", "is %d bytes", len(push))
	}

	if walled != c.Restricted {
		add(propWalled, view, "card restricted=%v, want %v (%s)", c.Restricted, walled, hostileWalledWhy(h))
	}
	if !c.Restricted {
		out = append(out, hostileCheckRoles(view, h, c, surfaces)...)
	} else {
		out = append(out, hostileCheckLockedRoles(view, h, c, surfaces)...)
	}
	return out
}

// hostileCheckLockedRoles: a restricted card shows no role value, but
// counts each argument's out-of-scope values on a line of its own, or in
// the line that stands for the lines cut, on every surface.
func hostileCheckLockedRoles(view string, h *hostile, c templates.Card, surfaces []hostileSurface) []hostileViolation {
	var out []hostileViolation
	add := func(where, format string, args ...any) {
		out = append(out, hostileViolation{propOutOfScope, where, fmt.Sprintf(format, args...)})
	}
	counted := map[string]int{}
	more := 0
	if c.Roles != nil {
		if len(c.Roles.Rows) > 0 || c.Roles.Table != "" {
			add(view, "a restricted card shows role rows %q", c.Roles.Table)
		}
		for _, note := range c.Roles.Notes {
			if m := hostileLockedRE.FindStringSubmatch(note); m != nil {
				counted[m[1]], _ = strconv.Atoi(cmp.Or(m[2], "0"))
			} else if m := hostileMoreRE.FindStringSubmatch(note); m != nil {
				more, _ = strconv.Atoi(cmp.Or(m[2], "0"))
			} else {
				add(view, "a restricted card's role note %q is neither an argument's count nor the cut", note)
			}
		}
	}
	missing := 0
	for _, r := range h.roles {
		oos := 0
		for _, v := range r.values {
			if v.oos {
				oos++
			}
		}
		if oos > counted[r.arg] {
			missing += oos - counted[r.arg]
		}
	}
	if missing > more {
		add(view, "%d out-of-scope values on the restricted card are not counted (notes %v)", missing-more, c.Roles)
	}
	if c.Roles == nil {
		return out
	}
	for _, s := range surfaces {
		if s.name == "email subject" || strings.Contains(s.text, "to fit") {
			continue
		}
		for _, note := range c.Roles.Notes {
			if !strings.Contains(s.text, note) {
				add(view+"/"+s.name, "the note %q is missing", note)
			}
		}
	}
	return out
}

// hostileCheckRoles: on a card that shows details, every out-of-scope value
// (by origin or by the backend's flag) and every value of an argument new
// to the job is in a row, or counted by its argument's cut line, and a
// cut never hides one while it shows another value; an out-of-scope row
// is marked so.
func hostileCheckRoles(view string, h *hostile, c templates.Card, surfaces []hostileSurface) []hostileViolation {
	var out []hostileViolation
	add := func(where, format string, args ...any) {
		out = append(out, hostileViolation{propOutOfScope, where, fmt.Sprintf(format, args...)})
	}
	if len(h.roles) == 0 {
		return nil
	}
	if c.Roles == nil {
		add(view, "no role rows for %d roles", len(h.roles))
		return out
	}
	rowsOf := map[string]int{}
	shown := map[string]templates.RoleRow{}
	for _, row := range c.Roles.Rows {
		rowsOf[row.Argument]++
		for _, m := range hostileRoleRE.FindAllString(row.Value, -1) {
			shown[m] = row
		}
	}
	// cuts: each argument's count of what its rows leave out, the
	// bot's cut and the backend's left_out on lines of their own; more:
	// the line that stands for the notes cut, and the out-of-scope
	// values it counts.
	type cut struct{ n, oos int }
	cuts := map[string]cut{}
	notesCut, moreOOS := false, 0
	for _, note := range c.Roles.Notes {
		if m := hostileMoreRE.FindStringSubmatch(note); m != nil {
			notesCut = true
			moreOOS, _ = strconv.Atoi(cmp.Or(m[2], "0"))
			continue
		}
		if m := hostileBackendRE.FindStringSubmatch(note); m != nil {
			n, _ := strconv.Atoi(m[1])
			ct := cuts[m[2]]
			ct.n += n
			cuts[m[2]] = ct
			continue
		}
		m := hostileCutRE.FindStringSubmatch(note)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		k := 0
		if o := hostileCutOOSRE.FindStringSubmatch(m[3]); o != nil {
			k, _ = strconv.Atoi(o[1])
		}
		ct := cuts[m[2]]
		ct.n, ct.oos = ct.n+n, ct.oos+k
		cuts[m[2]] = ct
	}
	uncounted := 0 // out-of-scope values left to the cut line's count
	hiddenPriority, shownPlain := "", ""
	for _, r := range h.roles {
		oos, oosShown := 0, 0
		for _, v := range r.values {
			priority := v.oos || r.newJob
			if v.oos {
				oos++
			}
			if r.secret {
				continue
			}
			row, ok := shown[v.marker]
			switch {
			case ok && v.oos:
				oosShown++
				if !row.OutOfScope {
					add(view, "the out-of-scope value %s of %s (origin %s) is not marked out of scope", v.marker, r.arg, row.Origin)
				}
			case ok && !priority:
				shownPlain = cmp.Or(shownPlain, v.marker+" of "+r.arg)
			case !ok && priority:
				hiddenPriority = cmp.Or(hiddenPriority, v.marker+" of "+r.arg+hostilePriorityWhy(v, r))
			}
		}
		if r.secret {
			oosShown = min(oos, rowsOf[r.arg])
		}
		left := len(r.values) + r.leftOut - rowsOf[r.arg]
		ct, counted := cuts[r.arg]
		switch {
		case left > 0 && !counted && notesCut:
			// Its notes are among those the last line counts.
		case left > 0 && !counted:
			add(view, "%d values of %s neither in a row nor counted (notes %q)", left, r.arg, c.Roles.Notes)
		case left > 0 && ct.n != left:
			add(view, "the cut line of %s counts %d values, %d are left out", r.arg, ct.n, left)
		}
		if hidden := oos - oosShown; hidden > 0 && ct.oos < hidden && !(r.secret && ct.oos > 0) {
			if !notesCut {
				add(view, "%d out-of-scope values of %s left out, the cut line says %d of them (notes %q)", hidden, r.arg, ct.oos, c.Roles.Notes)
			}
			uncounted += hidden - ct.oos
		}
	}
	if notesCut && uncounted > moreOOS {
		add(view, "%d out-of-scope values are in no row and no note, and the notes' cut counts %d (notes %q)", uncounted, moreOOS, c.Roles.Notes)
	}
	if hiddenPriority != "" && shownPlain != "" {
		add(view, "the rows leave out %s but show %s, which is neither out of scope nor new to the job", hiddenPriority, shownPlain)
	}
	for _, s := range surfaces {
		if s.name == "email subject" || strings.Contains(s.text, "to fit") {
			continue // a surface that says what it left out to fit
		}
		for m := range shown {
			if !strings.Contains(s.text, m) {
				add(view+"/"+s.name, "the row of %s is missing", m)
			}
		}
		for _, note := range c.Roles.Notes {
			if !strings.Contains(s.text, note) {
				add(view+"/"+s.name, "the note %q is missing", note)
			}
		}
	}
	return out
}

func hostilePriorityWhy(v hostileValue, r hostileRole) string {
	var w []string
	if v.oos {
		w = append(w, "out of scope")
	}
	if r.newJob {
		w = append(w, "new to the job")
	}
	return " (" + strings.Join(w, ", ") + ")"
}

// hostileDenyFirst reports whether the card's first decision button is Deny,
// and the focused one.
func hostileDenyFirst(c templates.Card) bool {
	for _, b := range c.Buttons {
		switch b.Action.Kind {
		case templates.ActionDeny:
			return b.Default
		case templates.ActionApprove, templates.ActionApproveNote:
			return false
		}
	}
	return true // no decision button: nothing to approve first
}

func hostileWalledWhy(h *hostile) string {
	switch {
	case h.restricted && h.private:
		return "restricted private chat's call"
	case h.restricted:
		return "restricted call"
	}
	return "private chat's call (restricted: false)"
}

// hostileContentKinds says what content the markers ms mark.
func hostileContentKinds(ms []string) string {
	var kinds []string
	for _, k := range []struct {
		c    byte
		what string
	}{{'A', "argument values"}, {'T', "agent text, patch, files or waiting calls"}, {'V', "role values"}} {
		if slices.ContainsFunc(ms, func(m string) bool { return m[1] == k.c }) {
			kinds = append(kinds, k.what)
		}
	}
	return strings.Join(kinds, "; ")
}

func hostileUniq(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}

func hostileAround(s string, i int) string {
	from, to := max(i-24, 0), min(i+24, len(s))
	return strings.ToValidUTF8(s[from:to], "")
}

// hostileBase is the fixture every generated call starts from.
func hostileBase(t testing.TB) []byte { return readFixture(t, "mail.json") }

// hostileFailure is the smallest call that broke one property, for one
// cause, in a run.
type hostileFailure struct {
	count int
	seed  uint64
	index int
	trace []byte
	first hostileViolation
	size  int
}

// TestHostileCards checks every property on generated hostile calls. A
// failure names the property, how many calls broke it, and for each
// cause (hostileCause) the smallest call that shows it: its seed and
// index, and with -hostile.keep its corpus file, which FuzzHostileCard
// then runs on every go test.
func TestHostileCards(t *testing.T) {
	r := newRenderer(t)
	base := hostileBase(t)
	seed := *hostileSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	n := cmp.Or(*hostileN, 300)
	if testing.Short() && *hostileN == 0 {
		n = 60
	}
	calls := map[string]int{}                        // by property
	worst := map[string]map[string]*hostileFailure{} // by property, then cause
	for i := range n {
		ch := &hostileRand{r: rand.New(rand.NewPCG(seed, uint64(i)))}
		h := hostileGenerate(t, base, ch)
		seen := map[string]bool{}
		for _, v := range hostileCheck(t, r, h) {
			cause := hostileCause(v)
			if seen[v.prop+"\x00"+cause] {
				continue
			}
			if !seen[v.prop] {
				calls[v.prop]++
			}
			seen[v.prop], seen[v.prop+"\x00"+cause] = true, true
			if worst[v.prop] == nil {
				worst[v.prop] = map[string]*hostileFailure{}
			}
			f := worst[v.prop][cause]
			if f == nil {
				f = &hostileFailure{}
				worst[v.prop][cause] = f
			}
			f.count++
			if f.trace == nil || len(h.body) < f.size {
				f.seed, f.index, f.trace, f.first, f.size = seed, i, slices.Clone(ch.trace), v, len(h.body)
			}
		}
	}
	for _, p := range slices.Sorted(maps.Keys(worst)) {
		var b strings.Builder
		fmt.Fprintf(&b, "property %s broken by %d of %d calls (-hostile.seed=%d):", p, calls[p], n, seed)
		for _, cause := range slices.Sorted(maps.Keys(worst[p])) {
			f := worst[p][cause]
			fmt.Fprintf(&b, "\n  %s: %d calls; the smallest, call %d (%d bytes): %s: %s",
				cause, f.count, f.index, f.size, f.first.where, utf16text.Cut(f.first.detail, 300))
			if *hostileKeep {
				fmt.Fprintf(&b, "\n    kept as %s", hostileKeepCorpus(t, p, f.trace))
			}
		}
		t.Error(b.String())
	}
}

var (
	hostileCauseMarks = regexp.MustCompile(`Q[SATVR][0-9]{4}Z|"[^"]*"|\[[^\]]*\]|[0-9]+`)
	hostileCauseRune  = regexp.MustCompile(`U\+[0-9A-F]{4,5}`)
	hostileCauseArg   = regexp.MustCompile(` of (to|cc|host|payee|repo|path|amount|smtp_password|API-Key|private key)\b`)
)

// hostileCause is what kind of failure v is, without the values of the
// call that showed it: the secret's form and place, or the detail with
// its markers, numbers, names and quotes taken out.
func hostileCause(v hostileViolation) string {
	if v.prop == propSecret {
		form := v.detail[strings.Index(v.detail, "(")+1 : len(v.detail)-1]
		if strings.HasPrefix(form, "scheme-relative") {
			return "scheme-relative URL user-info"
		}
		_, place, _ := strings.Cut(form, " in ")
		return hostileCauseMarks.ReplaceAllString(place, "#")
	}
	d := hostileCauseRune.ReplaceAllString(v.detail, "U+X")
	for _, verb := range []string{" shows ", " keeps "} {
		if i := strings.Index(d, verb); i > 0 && v.prop == propWalled {
			d = d[:i+len(verb)] + "content"
		}
	}
	d = hostileCauseArg.ReplaceAllString(d, " of ARG")
	d = hostileCauseMarks.ReplaceAllString(d, "#")
	if i := strings.Index(d, " (effect line"); i > 0 {
		d = d[:i]
	}
	if i := strings.Index(d, " at byte"); i > 0 {
		d = d[:i]
	}
	return d
}

// hostileKeepCorpus writes trace as FuzzHostileCard's corpus entry for prop.
func hostileKeepCorpus(t *testing.T, prop string, trace []byte) string {
	t.Helper()
	dir := filepath.Join("testdata", "fuzz", "FuzzHostileCard")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(trace)
	path := filepath.Join(dir, prop+"-"+hex.EncodeToString(sum[:4]))
	body := "go test fuzz v1\n[]byte(" + strconv.Quote(string(trace)) + ")\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// FuzzHostileCard decodes the fuzz input into the generator's choices
// (each a byte or two; choices past the input's end are the plainest) and
// checks every property on the call it makes.
func FuzzHostileCard(f *testing.F) {
	r := newRenderer(f)
	base := hostileBase(f)
	f.Add([]byte{})
	f.Add([]byte{3, 1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		h := hostileGenerate(t, base, &hostileBytes{b: data})
		vs := hostileCheck(t, r, h)
		for i, v := range vs {
			if i == 20 {
				t.Errorf("and %d more", len(vs)-i)
				break
			}
			t.Error(v)
		}
		if len(vs) > 0 {
			t.Logf("event: %s", h.body)
		}
	})
}

// TestHostileChooserRoundTrip: a call drawn from math/rand/v2 is made
// again, the same, from its recorded choices, so a kept corpus entry is
// the call that failed.
func TestHostileChooserRoundTrip(t *testing.T) {
	base := hostileBase(t)
	for i := range 20 {
		ch := &hostileRand{r: rand.New(rand.NewPCG(7, uint64(i)))}
		a := hostileGenerate(t, base, ch)
		b := hostileGenerate(t, base, &hostileBytes{b: ch.trace})
		if string(a.body) != string(b.body) {
			t.Fatalf("call %d: replayed choices made another call", i)
		}
	}
}

// TestHostileFlagLineCheckCanFail: the flag-line property holds on every
// card today, so this proves its check fails when a flag line names a
// value (as a line "New to this job: to (recipient) x@evil.example"
// would).
func TestHostileFlagLineCheckCanFail(t *testing.T) {
	r := newRenderer(t)
	base := hostileBase(t)
	for i := range 200 {
		h := hostileGenerate(t, base, &hostileRand{r: rand.New(rand.NewPCG(11, uint64(i)))})
		value := ""
		for _, role := range h.roles {
			if !role.secret {
				value = role.values[0].marker
				break
			}
		}
		if value == "" {
			continue
		}
		ev, err := approval.Parse(h.body)
		if err != nil {
			t.Fatal(err)
		}
		at, plan := templatestest.Pinned(ev.Approval)
		in, err := templates.PreviewInput(ev.Approval, string(approval.StatePending), at, plan)
		if err != nil {
			t.Fatal(err)
		}
		c := templates.Build(in)
		c.Flags = append(c.Flags, "New to this job: to (recipient) "+value)
		for _, v := range hostileCheckCard(h, false, c, hostileRender(t, r, c)) {
			if v.prop == propFlagValue {
				return
			}
		}
		t.Fatalf("a flag line naming %s broke no property", value)
	}
	t.Fatal("no generated call had a role value")
}
