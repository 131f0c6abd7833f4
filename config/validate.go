package config

import (
	"cmp"
	"fmt"
	"net"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	// Digest zones must load on any machine, including minimal containers
	// without /usr/share/zoneinfo; the embedded copy is only a fallback.
	_ "time/tzdata"

	"github.com/robfig/cron/v3"
	"go.yaml.in/yaml/v3"

	"approvalsbot/ladder"
	"approvalsbot/notify/smtpconf"
	"approvalsbot/tenant"
)

// idPattern is what tenant ids and ladder names may hold: they appear in
// events, stored rows, metrics labels and field paths.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)

const idRule = "1 to 64 of A-Z a-z 0-9 . _ : -"

// decodeFile decodes and validates the whole file, recording every problem.
func (d *decoder) decodeFile(data []byte) *Config {
	root := d.document(data)
	if len(d.problems) > 0 {
		// A syntax error leaves no tree worth checking.
		return nil
	}
	c := &Config{
		Listen:           DefaultListen,
		IPv6SourcePrefix: DefaultIPv6SourcePrefix,
		Store:            Store{Driver: DefaultStoreDriver, DSN: DefaultSQLiteDSN},
		Tick:             DefaultTick,
		Lease:            DefaultLease,
		Retention:        DefaultRetention,
		Tenants:          map[string]*tenant.Tenant{},
	}
	at := deref(root)
	if at == nil {
		at = &yaml.Node{Line: 1}
	}
	var publicURL string
	var linkSecrets []Secret
	seen, ok := d.mapping(root, "", map[string]field{
		"listen": func(_, v *yaml.Node, p string) {
			if s, ok := d.str(v, p); ok && d.hostPort(v, p, s, "like :8080 or 127.0.0.1:8080") {
				c.Listen = s
			}
		},
		"listen_private": func(_, v *yaml.Node, p string) {
			if s, ok := d.str(v, p); ok && d.hostPort(v, p, s, "like 127.0.0.1:9090") {
				c.ListenPrivate = s
			}
		},
		"ipv6_source_prefix": func(_, v *yaml.Node, p string) {
			if n, ok := d.wholeNumber(v, p, 1, 128); ok {
				c.IPv6SourcePrefix = n
			}
		},
		"store": func(k, v *yaml.Node, p string) { c.Store = d.store(k, v, p) },
		"tick": func(_, v *yaml.Node, p string) {
			if t, ok := d.duration(v, p); ok {
				if t < time.Second {
					d.problemf(v, p, "%s is too short: at least 1s", ladder.FormatDuration(t))
					return
				}
				c.Tick = t
			}
		},
		"lease": func(_, v *yaml.Node, p string) {
			if t, ok := d.duration(v, p); ok {
				if t < MinLease {
					d.problemf(v, p, "%s is too short: at least %s", ladder.FormatDuration(t), ladder.FormatDuration(MinLease))
					return
				}
				c.Lease = t
			}
		},
		"retention": func(_, v *yaml.Node, p string) {
			if t, ok := d.duration(v, p); ok {
				if t < MinRetention {
					d.problemf(v, p, "%s is too short: at least %s (what follows a close, such as the call's outcome, needs the approval)",
						ladder.FormatDuration(t), ladder.FormatDuration(MinRetention))
					return
				}
				c.Retention = t
			}
		},
		"log":          func(_, v *yaml.Node, p string) { c.Log = d.logSection(v, p) },
		"stop_timeout": func(_, v *yaml.Node, p string) { c.StopTimeout = d.stopTimeout(v, p) },

		"backend": func(k, v *yaml.Node, p string) { c.Backend = d.backend(k, v, p) },
		"slack":   func(k, v *yaml.Node, p string) { c.Slack = d.slack(k, v, p) },
		"discord": func(k, v *yaml.Node, p string) { c.Discord = d.discord(k, v, p) },
		"smtp":    func(k, v *yaml.Node, p string) { c.SMTP = d.smtp(k, v, p) },
		"tenants": func(k, v *yaml.Node, p string) { d.tenants(k, v, p, c) },
		"public_url": func(_, v *yaml.Node, p string) {
			publicURL, _ = d.publicURL(v, p)
		},
		"link_secrets": func(k, v *yaml.Node, p string) { linkSecrets = d.linkSecrets(k, v, p) },
	})
	c.SecretVars = d.secretVars
	if ok {
		c.DecisionPage = d.decisionPage(seen, publicURL, linkSecrets)
		d.passkeysNeedPage(c, seen)
		d.grantsNeedFeature(c)
	}
	if !ok {
		return c
	}
	d.settleStopTimeout(c, seen["stop_timeout"])
	if n := seen["listen_private"]; n != nil && sharesPort(c.Listen, c.ListenPrivate) {
		d.problemf(n, "listen_private", "%s takes the port of listen (%s): give it a port of its own", c.ListenPrivate, c.Listen)
	}
	if seen["backend"] == nil {
		d.problemf(at, "backend", "missing: the job backend's url and secrets (docs/protocol.md)")
	}
	if seen["tenants"] == nil {
		d.problemf(at, "tenants", "missing: at least one tenant")
	}
	return c
}

// hostPort checks host:port with a numeric port; like shows an example.
func (d *decoder) hostPort(n *yaml.Node, p, s, like string) bool {
	_, port, err := net.SplitHostPort(s)
	if err == nil {
		if num, perr := strconv.Atoi(port); perr != nil || num < 0 || num > 65535 {
			err = fmt.Errorf("bad port")
		}
	}
	if err != nil {
		d.problemf(n, p, "%q is not host:port (%s)", s, like)
		return false
	}
	return true
}

// sharesPort reports whether two host:port addresses would bind one port.
func sharesPort(a, b string) bool {
	ha, pa, errA := net.SplitHostPort(a)
	hb, pb, errB := net.SplitHostPort(b)
	if errA != nil || errB != nil || pa != pb || pa == "0" {
		return false
	}
	wild := func(h string) bool { return h == "" || h == "0.0.0.0" || h == "::" }
	return ha == hb || wild(ha) || wild(hb)
}

// httpURL checks an absolute http(s) URL. A URL with credentials is
// refused without echoing it: credentials come from the environment.
func (d *decoder) httpURL(n *yaml.Node, p, s string) bool {
	u, err := url.Parse(s)
	switch {
	case err == nil && u.User != nil:
		d.problemf(n, p, "must not carry credentials (user:password@)")
		return false
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		d.problemf(n, p, "%q is not an absolute http(s) URL", s)
		return false
	}
	return true
}

// missing reports a required key that is absent, at its section's line.
func (d *decoder) missing(at *yaml.Node, p, key, what string) {
	d.problemf(at, joinKey(p, key), "missing: %s", what)
}

func (d *decoder) store(k, v *yaml.Node, p string) Store {
	s := Store{Driver: DefaultStoreDriver}
	var dsnNode *yaml.Node
	var dsnOK bool
	d.mapping(v, p, map[string]field{
		"driver": func(_, v *yaml.Node, p string) {
			if x, ok := d.oneOf(v, p, DriverSQLite, DriverPostgres); ok {
				s.Driver = x
			}
		},
		"dsn": func(_, v *yaml.Node, p string) {
			dsnNode = v
			s.DSN, dsnOK = d.dsn(v, p)
		},
	})
	dsnPath := joinKey(p, "dsn")
	switch {
	case dsnNode == nil || isNull(dsnNode):
		if s.Driver == DriverPostgres {
			d.missing(k, p, "dsn", "postgres needs a DSN (postgres://user:${PASSWORD}@host/db)")
		}
		s.DSN = DefaultSQLiteDSN
	case !dsnOK:
		// ${VAR} failed: reported already.
	case s.DSN == "":
		d.problemf(dsnNode, dsnPath, "is empty (is its environment variable set to nothing?)")
	case s.Driver == DriverPostgres:
		// Never echo a DSN: it usually holds a password.
		dsn := s.DSN.Reveal()
		if u, err := url.Parse(dsn); strings.Contains(dsn, "://") && (err != nil || u.Scheme != "postgres" && u.Scheme != "postgresql") {
			d.problemf(dsnNode, dsnPath, "is not a PostgreSQL DSN (postgres://… or key=value pairs)")
		}
	case s.Driver == DriverSQLite:
		if dsn := s.DSN.Reveal(); strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
			d.problemf(dsnNode, dsnPath, "is a PostgreSQL DSN but driver is sqlite")
		}
	}
	return s
}

func (d *decoder) backend(k, v *yaml.Node, p string) Backend {
	var b Backend
	secrets := func(dst *[]Secret) field {
		return func(k, v *yaml.Node, p string) {
			n, ok := d.list(v, p, func(_ int, item *yaml.Node, p string) {
				s, ok := d.hmacKey(item, p)
				switch {
				case ok && s == "":
					d.problemf(deref(item), p, "is empty (is its environment variable set to nothing?)")
				case ok:
					*dst = append(*dst, s)
				case isNull(item):
					d.problemf(deref(item), p, "is empty")
				}
			})
			if ok && n == 0 {
				d.problemf(k, p, "needs at least one secret")
			}
		}
	}
	seen, ok := d.mapping(v, p, map[string]field{
		"url": func(_, v *yaml.Node, p string) {
			if s, ok := d.str(v, p); ok && d.httpURL(v, p, s) {
				b.URL = s
			}
		},
		"events_secrets": secrets(&b.EventsSecrets),
		"calls_secrets":  secrets(&b.CallsSecrets),
		"features":       func(_, v *yaml.Node, p string) { b.Features = d.features(v, p) },
	})
	if !ok {
		return b
	}
	if !given(seen, "url") {
		d.missing(k, p, "url", "the job backend's base URL (https://…)")
	}
	// A present but empty list is reported where it is written.
	if seen["events_secrets"] == nil {
		d.missing(k, p, "events_secrets", "a list of secrets that sign events in")
	}
	if seen["calls_secrets"] == nil {
		d.missing(k, p, "calls_secrets", "a list of secrets that sign calls out")
	}
	return b
}

// features decodes backend.features: known features, each once.
func (d *decoder) features(v *yaml.Node, p string) []string {
	var out []string
	first := map[string]string{}
	d.list(v, p, func(_ int, item *yaml.Node, p string) {
		f, ok := d.text(item, p, "a feature's name")
		switch {
		case !ok && !isNull(item):
		case f == "":
			d.problemf(deref(item), p, "empty: name a feature the backend supports (%s)", strings.Join(Features(), ", "))
		case !slices.Contains(Features(), f):
			d.problemf(deref(item), p, "%q is not a feature the bot knows: the known ones are %s (docs/protocol.md#optional-features)", f, strings.Join(Features(), ", "))
		case first[f] != "":
			d.problemf(deref(item), p, "%s is already %s", f, first[f])
		default:
			first[f] = p
			out = append(out, f)
		}
	})
	return out
}

// required reports a secret or string that must be present and non-empty.
func (d *decoder) required(at, val *yaml.Node, p, key, what string, present bool, value string) {
	switch {
	case val == nil || isNull(val):
		d.missing(at, p, key, what)
	case present && value == "":
		d.problemf(deref(val), joinKey(p, key), "is empty (is its environment variable set to nothing?)")
	}
}

// secretOrFailed reads an optional secret and folds a failed ${VAR} into
// failed, so a check on the secrets' absence does not report it twice.
func (d *decoder) secretOrFailed(v *yaml.Node, p string, failed bool) (Secret, bool) {
	s, ok := d.secret(v, p)
	return s, failed || !ok && !isNull(v)
}

// apiURL checks an optional API base and makes it end in "/", which the
// Slack and Discord clients need to join paths.
func (d *decoder) apiURL(v *yaml.Node, p string, dst *string) {
	s, ok := d.str(v, p)
	if !ok || s == "" || !d.httpURL(v, p, s) {
		return
	}
	if !strings.HasSuffix(s, "/") {
		s += "/"
	}
	*dst = s
}

func (d *decoder) slack(k, v *yaml.Node, p string) *Slack {
	if isNull(v) {
		return nil
	}
	s := &Slack{APIURL: DefaultSlackAPIURL}
	var botN *yaml.Node
	var botOK, failed bool
	_, ok := d.mapping(v, p, map[string]field{
		"bot_token": func(_, v *yaml.Node, p string) {
			botN = v
			s.BotToken, botOK = d.secret(v, p)
		},
		"signing_secret": func(_, v *yaml.Node, p string) { s.SigningSecret, failed = d.secretOrFailed(v, p, failed) },
		"app_token":      func(_, v *yaml.Node, p string) { s.AppToken, failed = d.secretOrFailed(v, p, failed) },
		"api_url":        func(_, v *yaml.Node, p string) { d.apiURL(v, p, &s.APIURL) },
	})
	if !ok {
		return s
	}
	d.required(k, botN, p, "bot_token", "the bot token (xoxb-…), from the environment", botOK, s.BotToken.Reveal())
	if s.SigningSecret == "" && s.AppToken == "" && !failed {
		d.problemf(k, p, "needs signing_secret (HTTP interactions) or app_token (Socket Mode), or people cannot click")
	}
	return s
}

func (d *decoder) discord(k, v *yaml.Node, p string) *Discord {
	if isNull(v) {
		return nil
	}
	s := &Discord{APIURL: DefaultDiscordAPIURL}
	var botN, appN *yaml.Node
	var botOK bool
	_, ok := d.mapping(v, p, map[string]field{
		"bot_token": func(_, v *yaml.Node, p string) {
			botN = v
			s.BotToken, botOK = d.secret(v, p)
		},
		"application_id": func(_, v *yaml.Node, p string) {
			appN = v
			if id, ok := d.str(v, p); ok {
				if !ladder.IsSnowflake(id) {
					d.problemf(v, p, "%q is not a snowflake id (17 to 20 digits)", id)
					return
				}
				s.ApplicationID = id
			}
		},
		"public_key": func(_, v *yaml.Node, p string) {
			// A public key is no secret: it may be written in the file.
			raw, ok := d.str(v, p)
			key := Secret(raw)
			if !ok || key == "" {
				return
			}
			if !isHex(key.Reveal(), 64) {
				d.problemf(v, p, "is not an Ed25519 public key (64 hex digits, as the developer portal shows it)")
				return
			}
			s.PublicKey = key
		},
		"api_url": func(_, v *yaml.Node, p string) { d.apiURL(v, p, &s.APIURL) },
	})
	if !ok {
		return s
	}
	d.required(k, botN, p, "bot_token", "the bot token, from the environment", botOK, s.BotToken.Reveal())
	if appN == nil || isNull(appN) {
		d.missing(k, p, "application_id", "the application's id (a snowflake)")
	}
	return s
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func (d *decoder) smtp(k, v *yaml.Node, p string) *SMTP {
	if isNull(v) {
		return nil
	}
	s := &SMTP{TLS: smtpconf.TLSStartTLS}
	// at is where each setting was written, for its problems; unread
	// marks one unread or missing (reported already), whose problems are
	// left out (reads).
	at := map[string]*yaml.Node{}
	unread := map[string]bool{}
	text := func(key string, dst *string) field {
		return func(_, v *yaml.Node, p string) {
			at[key] = v
			if x, ok := d.str(v, p); ok {
				*dst = x
			} else if !isNull(v) {
				unread[key] = true
			}
		}
	}
	credential := func(key string, read func(v *yaml.Node, p string) bool) field {
		return func(_, v *yaml.Node, p string) {
			at[key] = deref(v)
			if !read(v, p) && !isNull(v) {
				unread[key] = true
			}
		}
	}
	seen, ok := d.mapping(v, p, map[string]field{
		"addr": text("addr", &s.Addr),
		"tls":  text("tls", &s.TLS),
		"username": credential("username", func(v *yaml.Node, p string) (ok bool) {
			s.Username, ok = d.str(v, p)
			return ok
		}),
		"password": credential("password", func(v *yaml.Node, p string) (ok bool) {
			s.Password, ok = d.secret(v, p)
			return ok
		}),
		"from": text("from", &s.From),
	})
	if !ok {
		return s
	}
	if !given(seen, "addr") {
		d.missing(k, p, "addr", "the SMTP server's host:port")
		unread["addr"] = true
	}
	if !given(seen, "from") {
		d.missing(k, p, "from", "the From address")
		unread["from"] = true
	}
	for _, pr := range s.Settings().Problems() {
		if slices.ContainsFunc(reads(pr), func(key string) bool { return unread[key] }) {
			continue
		}
		d.problemf(at[pr.Key], joinKey(p, pr.Key), "%s", pr.Msg)
	}
	return s
}

func (d *decoder) tenants(k, v *yaml.Node, p string, c *Config) {
	if isNull(v) {
		d.problemf(k, p, "needs at least one tenant")
		return
	}
	v = deref(v)
	if v.Kind != yaml.MappingNode {
		d.problemf(v, p, "expected a mapping of tenant ids, got %s", kindOf(v))
		return
	}
	d.pairs(v, p, func(tk, tv *yaml.Node, id string) {
		tp := joinKey(p, id)
		if !idPattern.MatchString(id) {
			d.problemf(tk, tp, "%q is not a tenant id (%s)", id, idRule)
		}
		c.Tenants[id] = d.tenant(tk, tv, tp, id)
	})
	if len(v.Content) == 0 {
		d.problemf(k, p, "needs at least one tenant")
	}
}

// stepPos keeps where a step's fields were written.
type stepPos struct {
	step              ladder.Step
	path              string
	afterN, beforeN   *yaml.Node
	afterOK, beforeOK bool
	repeat            repeatPos
	rotations         []rotationRef // where the step names rotation:NAME
	members           []memberRef   // where its push names user:NAME
}

type ladderPos struct {
	name  string
	steps []stepPos
	// ackPause is the ladder's ack_pause; zero when it names none.
	ackPause time.Duration
}

type toolPos struct {
	override  tenant.ToolOverride
	path      string
	ladderN   *yaml.Node
	deadlineN *yaml.Node // nil when the override sets none
	deadlineP string
	quorum    *quorumPos // nil when the override sets none
}

// positiveDuration decodes a duration that must be more than 0s.
func (d *decoder) positiveDuration(v *yaml.Node, p string) (time.Duration, bool) {
	x, ok := d.duration(v, p)
	if ok && x == 0 {
		d.problemf(v, p, "must be more than 0s")
		return 0, false
	}
	return x, ok
}

func (d *decoder) tenant(k, v *yaml.Node, p, id string) *tenant.Tenant {
	t := &tenant.Tenant{ID: id, Deadline: ladder.DefaultDeadline, MaxDeadline: DefaultMaxDeadline, Ladders: map[string]ladder.Ladder{},
		EmailDecisions: tenant.DefaultEmailDecisions, Passkeys: tenant.PasskeysOff, Grants: tenant.DefaultGrants()}
	var decisionsAt string // the key that set EmailDecisions, when one did
	pageDecisions := func(k, v *yaml.Node, p string) {
		if decisionsAt != "" {
			d.problemf(k, p, "says what the decision page takes, as %s does already: keep one (page_decisions)", decisionsAt)
			return
		}
		decisionsAt = k.Value
		if s, ok := d.oneOf(v, p, tenant.EmailDecisionsOff, tenant.EmailDecisionsDeny, tenant.EmailDecisionsApprove); ok {
			t.EmailDecisions = s
		}
	}
	var ladders []ladderPos
	var tools []toolPos
	var rotations []rotationPos
	var quorum *quorumPos
	var deadlineN, maxDeadlineN *yaml.Node
	postGiven := 0
	_, ok := d.mapping(v, p, map[string]field{
		"deadline": func(_, v *yaml.Node, p string) {
			if x, ok := d.positiveDuration(v, p); ok {
				t.Deadline, deadlineN = x, v
			}
		},
		"max_deadline": func(_, v *yaml.Node, p string) {
			if x, ok := d.positiveDuration(v, p); ok {
				t.MaxDeadline, maxDeadlineN = x, v
			}
		},
		"post": func(_, v *yaml.Node, p string) { t.Post, postGiven = d.targets(v, p, channels) },
		"audit": func(_, v *yaml.Node, p string) {
			if isNull(v) {
				return
			}
			if a, ok := d.target(v, p, channels); ok {
				t.Audit = &a
			}
		},
		"digest":               func(_, v *yaml.Node, p string) { t.Digest = d.digest(v, p) },
		"forbid_self_approval": func(_, v *yaml.Node, p string) { t.ForbidSelfApproval = d.boolean(v, p) },
		"ladders":              func(_, v *yaml.Node, p string) { ladders = d.ladders(v, p) },
		"tools":                func(_, v *yaml.Node, p string) { tools = d.tools(v, p) },
		"members":              func(_, v *yaml.Node, p string) { t.Members = d.members(v, p) },
		"zone": func(_, v *yaml.Node, p string) {
			if z, ok := d.zone(v, p); ok {
				t.Zone = z.Location()
			}
		},
		"rotations": func(_, v *yaml.Node, p string) { rotations = d.rotations(v, p) },
		"labels":    func(_, v *yaml.Node, p string) { t.Labels = d.labels(v, p) },
		"quorum":    func(_, v *yaml.Node, p string) { quorum = d.quorum(v, p) },
		// page_decisions, and email_decisions, its name before the page
		// took answers from chat too: one of them.
		"page_decisions":  pageDecisions,
		"email_decisions": pageDecisions,
		"passkeys":        func(_, v *yaml.Node, p string) { d.passkeyRule(t, v, p) },
		"grants":          func(_, v *yaml.Node, p string) { d.grants(t, v, p) },
	})
	if !ok {
		return t
	}
	if postGiven == 0 {
		d.problemf(k, joinKey(p, "post"), "needs at least one channel: where each card goes")
	}

	for _, l := range ladders {
		steps := make([]ladder.Step, len(l.steps))
		for i, s := range l.steps {
			steps[i] = s.step
		}
		t.Ladders[l.name] = ladder.Ladder{Name: l.name, Steps: steps, AckPause: l.ackPause}
	}
	if _, ok := t.Ladders[tenant.DefaultLadder]; !ok {
		t.Ladders[tenant.DefaultLadder] = ladder.Ladder{Name: tenant.DefaultLadder}
	}
	d.tenantTimes(t, ladders, rotations)
	d.pushMembers(t, ladders)
	labelTargets(t)
	// Who a quorum counts needs the members and the rotations, settled.
	t.Quorum = d.settleQuorum(t, quorum, rotations)

	// A deadline the tenant gives must not reach further than a request's
	// own may.
	if t.Deadline > t.MaxDeadline {
		n := cmp.Or(deadlineN, maxDeadlineN, v)
		d.problemf(n, joinKey(p, "deadline"), "%s is longer than max_deadline (%s), the furthest a deadline may lie",
			ladder.FormatDuration(t.Deadline), ladder.FormatDuration(t.MaxDeadline))
	}
	for _, tp := range tools {
		if tp.deadlineN != nil && tp.override.Deadline > t.MaxDeadline {
			d.problemf(tp.deadlineN, tp.deadlineP, "%s is longer than the tenant's max_deadline (%s), the furthest a deadline may lie",
				ladder.FormatDuration(tp.override.Deadline), ladder.FormatDuration(t.MaxDeadline))
		}
		if name := tp.override.Ladder; name != "" {
			if _, ok := t.Ladders[name]; !ok {
				d.problemf(tp.ladderN, tp.path, "%q is not a ladder of tenant %s (it has %s)", name, id, strings.Join(ladderNames(t.Ladders), ", "))
			}
		}
		tp.override.Quorum = d.settleQuorum(t, tp.quorum, rotations)
		t.Tools = append(t.Tools, tp.override)
	}

	d.stepsUnderDeadlines(t, ladders)
	return t
}

// stepsUnderDeadlines reports steps at or after the longest deadline
// their ladder runs under in the file: the tenant's, or a tool override's
// that picks it. A step that only a request's own deadline could reach is
// better moved; one skipped under shorter deadlines only is no problem.
func (d *decoder) stepsUnderDeadlines(t *tenant.Tenant, ladders []ladderPos) {
	for _, l := range ladders {
		longest := t.Deadline
		for _, o := range t.Tools {
			name := o.Ladder
			if name == "" {
				name = tenant.DefaultLadder
			}
			if name == l.name && o.Deadline > longest {
				longest = o.Deadline
			}
		}
		for _, s := range l.steps {
			switch {
			case s.afterOK && s.step.Anchor == ladder.AnchorRequest && s.step.After >= longest:
				d.problemf(s.afterN, joinKey(s.path, "after"), "%s is at or after the deadline it runs under (%s), so it would always be skipped",
					ladder.FormatDuration(s.step.After), ladder.FormatDuration(longest))
			case s.beforeOK && s.step.Anchor == ladder.AnchorDeadline && s.step.BeforeDeadline > longest:
				d.problemf(s.beforeN, joinKey(s.path, "before_deadline"), "%s is longer than the deadline it runs under (%s), so it would always be skipped",
					ladder.FormatDuration(s.step.BeforeDeadline), ladder.FormatDuration(longest))
			default:
				d.repeatsUnderDeadline(s, longest)
			}
		}
	}
}

// ladderNames lists the names default first, then alphabetically.
func ladderNames(ls map[string]ladder.Ladder) []string {
	names := make([]string, 0, len(ls))
	for n := range ls {
		if n != tenant.DefaultLadder {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	if _, ok := ls[tenant.DefaultLadder]; ok {
		names = append([]string{tenant.DefaultLadder}, names...)
	}
	return names
}

func (d *decoder) ladders(v *yaml.Node, p string) []ladderPos {
	if isNull(v) {
		return nil
	}
	v = deref(v)
	if v.Kind != yaml.MappingNode {
		d.problemf(v, p, "expected a mapping of ladder names, got %s", kindOf(v))
		return nil
	}
	var out []ladderPos
	d.pairs(v, p, func(k, lv *yaml.Node, name string) {
		lp := joinKey(p, name)
		if !idPattern.MatchString(name) {
			d.problemf(k, lp, "%q is not a ladder name (%s)", name, idRule)
		}
		l := ladderPos{name: name}
		steps := func(v *yaml.Node, p string) {
			d.list(v, p, func(_ int, item *yaml.Node, sp string) {
				l.steps = append(l.steps, d.step(item, sp))
			})
		}
		if longLadder(lv) {
			seen, _ := d.mapping(lv, lp, map[string]field{
				"steps":     func(_, v *yaml.Node, p string) { steps(v, p) },
				"ack_pause": func(_, v *yaml.Node, p string) { l.ackPause = d.ackPause(v, p) },
			})
			if !given(seen, "steps") {
				d.problemf(deref(lv), joinKey(lp, "steps"), "missing: the ladder's steps (a list; [] for none)")
			}
		} else {
			steps(lv, lp)
		}
		d.stepOrder(l.steps)
		out = append(out, l)
	})
	return out
}

// longLadder reports whether a ladder is a mapping of steps and
// ack_pause; a mapping of neither is a step written without its dash.
func longLadder(v *yaml.Node) bool {
	v = deref(v)
	if v.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i < len(v.Content); i += 2 {
		if k := deref(v.Content[i]); k.Value == "steps" || k.Value == "ack_pause" {
			return true
		}
	}
	return false
}

// ackPause decodes a ladder's ack_pause: how long a member's "I'm
// looking" holds the steps still to come (never the deadline).
func (d *decoder) ackPause(v *yaml.Node, p string) time.Duration {
	x, ok := d.duration(v, p)
	switch {
	case !ok:
		return 0
	case x < ladder.MinAckPause:
		d.problemf(v, p, "%s is too short: an acknowledgement holds the ladder at least %s",
			ladder.FormatDuration(x), ladder.FormatDuration(ladder.MinAckPause))
		return 0
	case x > ladder.MaxAckPause:
		d.problemf(v, p, "%s is too long: an acknowledgement holds the ladder at most %s (the deadline is what ends a call nobody decides)",
			ladder.FormatDuration(x), ladder.FormatDuration(ladder.MaxAckPause))
		return 0
	}
	return x
}

// stepOrder checks that steps are listed in the order they fire, for
// each anchor, so a person reads a ladder top to bottom.
func (d *decoder) stepOrder(steps []stepPos) {
	prevAfter, prevBefore := -1, -1
	for i, s := range steps {
		switch {
		case s.afterOK && s.step.Anchor == ladder.AnchorRequest:
			if prevAfter >= 0 && s.step.After <= steps[prevAfter].step.After {
				d.problemf(s.afterN, joinKey(s.path, "after"), "%s is not after step %d (%s)",
					ladder.FormatDuration(s.step.After), prevAfter, ladder.FormatDuration(steps[prevAfter].step.After))
			}
			prevAfter = i
		case s.beforeOK && s.step.Anchor == ladder.AnchorDeadline:
			if prevBefore >= 0 && s.step.BeforeDeadline >= steps[prevBefore].step.BeforeDeadline {
				d.problemf(s.beforeN, joinKey(s.path, "before_deadline"), "%s is not closer to the deadline than step %d (%s before it)",
					ladder.FormatDuration(s.step.BeforeDeadline), prevBefore, ladder.FormatDuration(steps[prevBefore].step.BeforeDeadline))
			}
			prevBefore = i
		}
	}
}

func (d *decoder) step(item *yaml.Node, p string) stepPos {
	sp := stepPos{path: p}
	s := &sp.step
	given := 0
	addTargets := func(dst *[]ladder.Target, rule targetRule, verb string) field {
		return func(_, v *yaml.Node, p string) {
			var n int
			*dst, n = d.stepTargets(v, p, rule, verb, &sp)
			if n < 0 {
				n = 1 // not a list: reported already, not also as reaching nobody
			}
			given += n
		}
	}
	_, ok := d.mapping(item, p, map[string]field{
		"after": func(_, v *yaml.Node, p string) {
			sp.afterN = v
			s.After, sp.afterOK = d.duration(v, p)
		},
		"before_deadline": func(_, v *yaml.Node, p string) {
			sp.beforeN = v
			s.BeforeDeadline, sp.beforeOK = d.duration(v, p)
			if sp.beforeOK && s.BeforeDeadline == 0 {
				d.problemf(v, p, "must be more than 0s: a step at the deadline never fires")
				sp.beforeOK = false
			}
		},
		"mention": addTargets(&s.Mention, mentionableOrRotation, ladder.VerbMention),
		"dm":      addTargets(&s.DM, peopleOrRotation, ladder.VerbDM),
		"email":   addTargets(&s.Email, addressesOrRotation, ladder.VerbEmail),
		"push":    addTargets(&s.Push, pushTargets, ladder.VerbPush),
		"post":    addTargets(&s.Post, channels, ""),
		"repeat":  func(k, v *yaml.Node, p string) { s.Repeat, sp.repeat = d.repeat(k, v, p) },
		"during":  func(_, v *yaml.Node, p string) { s.During = d.window(v, p) },
	})
	if !ok {
		return sp
	}
	at := deref(item)
	hasAfter := sp.afterN != nil && !isNull(sp.afterN)
	hasBefore := sp.beforeN != nil && !isNull(sp.beforeN)
	switch {
	case hasAfter && hasBefore:
		d.problemf(at, p, "has both after and before_deadline: a step counts from the request or back from the deadline, not both")
		sp.afterOK, sp.beforeOK = false, false
	case hasAfter:
		s.Anchor = ladder.AnchorRequest
	case hasBefore:
		s.Anchor = ladder.AnchorDeadline
	default:
		d.problemf(at, p, "has neither after nor before_deadline: say when the step fires")
	}
	if given == 0 {
		d.problemf(at, p, "reaches nobody: give it mention, dm, email, push or post")
	}
	return sp
}

func (d *decoder) tools(v *yaml.Node, p string) []toolPos {
	if isNull(v) {
		return nil
	}
	v = deref(v)
	if v.Kind != yaml.MappingNode {
		d.problemf(v, p, "expected a mapping of function globs, got %s", kindOf(v))
		return nil
	}
	var out []toolPos
	// pairs keeps file order, which is what "first match wins" means.
	d.pairs(v, p, func(k, ov *yaml.Node, glob string) {
		op := joinKey(p, glob)
		if _, err := path.Match(glob, ""); err != nil || glob == "" {
			d.problemf(k, op, "%q is not a glob on function names (*, ? and [a-z] as in path.Match)", glob)
		}
		tp := toolPos{override: tenant.ToolOverride{Glob: glob}, path: joinKey(op, "ladder")}
		o := &tp.override
		seen, ok := d.mapping(ov, op, map[string]field{
			"ladder": func(_, v *yaml.Node, p string) {
				tp.ladderN = v
				o.Ladder, _ = d.str(v, p)
			},
			"deadline": func(_, v *yaml.Node, p string) {
				if x, ok := d.positiveDuration(v, p); ok {
					o.Deadline, tp.deadlineN, tp.deadlineP = x, v, p
				}
			},
			"post":   func(_, v *yaml.Node, p string) { o.Post, _ = d.targets(v, p, channels) },
			"quorum": func(_, v *yaml.Node, p string) { tp.quorum = d.quorum(v, p) },
		})
		if ok && len(seen) == 0 {
			d.problemf(k, op, "sets nothing: give it ladder, deadline, post or quorum")
		}
		out = append(out, tp)
	})
	return out
}

func (d *decoder) digest(v *yaml.Node, p string) *tenant.Digest {
	if isNull(v) {
		return nil
	}
	dg := &tenant.Digest{} // no zone: the tenant's (tenantTimes)
	seen, ok := d.mapping(v, p, map[string]field{
		"cron": func(_, v *yaml.Node, p string) {
			if spec, ok := d.str(v, p); ok {
				if err := checkCron(spec); err != nil {
					d.problemf(v, p, "%q %v", spec, err)
					return
				}
				dg.Cron = spec
			}
		},
		"zone": func(_, v *yaml.Node, p string) {
			name, ok := d.str(v, p)
			if !ok || name == "" {
				return
			}
			if name == "Local" {
				d.problemf(v, p, "Local depends on the machine: name a zone like Europe/Berlin or UTC")
				return
			}
			loc, err := time.LoadLocation(name)
			if err != nil {
				d.problemf(v, p, "%q is not a time zone (like Europe/Berlin or UTC)", name)
				return
			}
			dg.Zone = loc
		},
		"to": func(_, v *yaml.Node, p string) { dg.To, _ = d.target(v, p, channels) },
	})
	if !ok {
		return nil
	}
	at := deref(v)
	if !given(seen, "cron") {
		d.problemf(at, joinKey(p, "cron"), "missing: when to post, as a cron spec like \"0 9 * * 1-5\"")
	}
	if !given(seen, "to") {
		d.problemf(at, joinKey(p, "to"), "missing: the channel the digest goes to")
	}
	return dg
}

// checkCron parses a spec with the standard 5-field parser the scheduler
// uses. A TZ= prefix is refused because the zone has its own key, and the
// parser is guarded because robfig/cron v3.0.1 panics on some malformed
// TZ= specs.
func checkCron(spec string) (err error) {
	if strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=") {
		return fmt.Errorf("carries a time zone: put it in zone instead")
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("is not a cron spec")
		}
	}()
	if _, perr := cron.ParseStandard(spec); perr != nil {
		return fmt.Errorf("is not a cron spec (minute hour day-of-month month day-of-week): %v", perr)
	}
	return nil
}

func (d *decoder) members(v *yaml.Node, p string) []tenant.Member {
	var out []tenant.Member
	// First path each identity was seen at, to name it in a duplicate.
	first := map[string]string{}
	type emailSeen struct {
		addr, path string
		line       int
	}
	firstEmail := map[string]emailSeen{}
	unique := func(n *yaml.Node, p, kind, value string) {
		if value == "" {
			return
		}
		if prev, dup := first[kind+"\x00"+value]; dup {
			d.problemf(n, p, "%s is already %s", value, prev)
			return
		}
		first[kind+"\x00"+value] = p
	}
	var pushes []pushPos
	roles := make([]string, 0, len(tenant.Roles()))
	for _, r := range tenant.Roles() {
		roles = append(roles, string(r))
	}
	d.list(v, p, func(_ int, item *yaml.Node, mp string) {
		var m tenant.Member
		fields := map[string]field{
			"user": func(_, v *yaml.Node, p string) { m.User, _ = d.str(v, p) },
			"role": func(_, v *yaml.Node, p string) {
				if r, ok := d.oneOf(v, p, roles...); ok {
					m.Role = tenant.Role(r)
				}
			},
			"content":    func(_, v *yaml.Node, p string) { m.Content = d.boolean(v, p) },
			"governance": func(_, v *yaml.Node, p string) { m.Governance = d.boolean(v, p) },
			"email": func(_, v *yaml.Node, p string) {
				e, ok := d.str(v, p)
				if !ok || e == "" {
					return
				}
				addr, err := ladder.ParseBareAddress(e)
				if err != nil {
					d.problemf(v, p, "%v", err)
					return
				}
				m.Email = addr
			},
			"push": func(_, v *yaml.Node, p string) {
				var ok bool
				if m.Push, ok = d.memberPush(v, p); ok && m.Push.Kind() == tenant.PushNtfy {
					pushes = append(pushes, pushPos{ntfy: m.Push.Reveal().URL, path: p, n: deref(v)})
				}
			},
		}
		// Each chat surface's user id is written under the surface's
		// name (slack: U0KEVIN, discord: "2233…"), bare.
		for _, c := range ladder.ChatSurfaces() {
			fields[c.Name] = func(_, v *yaml.Node, p string) {
				written, ok := d.str(v, p)
				if !ok || written == "" {
					return
				}
				id, err := c.ParseUserID(written)
				if err != nil {
					d.problemf(v, p, "%v", err)
					return
				}
				if m.Chat == nil {
					m.Chat = ladder.ChatIDs{}
				}
				m.Chat[c.Name] = id
			}
		}
		seen, ok := d.mapping(item, mp, fields)
		if !ok {
			return
		}
		at := deref(item)
		if !given(seen, "user") {
			d.problemf(at, joinKey(mp, "user"), "missing: the tenant user id the backend knows (like user:kevin)")
		}
		if !given(seen, "role") {
			d.problemf(at, joinKey(mp, "role"), "missing: viewer, operator, admin or owner")
		}
		if m.Governance && m.Role == tenant.RoleViewer {
			d.problemf(seen["governance"], joinKey(mp, "governance"), "a viewer cannot decide, so governance has no effect")
		}
		unique(seen["user"], joinKey(mp, "user"), "user", m.User)
		for _, c := range ladder.ChatSurfaces() {
			unique(seen[c.Name], joinKey(mp, c.Name), c.Name, m.ChatID(c.Name))
		}
		// An address is one member's: a decision link, and a decision
		// from the decision page, act as the member it belongs to. Two
		// addresses are one when MemberOn could not tell them apart.
		if m.Email != "" {
			key := tenant.AddressKey(m.Email)
			n := seen["email"]
			if prev, dup := firstEmail[key]; dup {
				d.problemf(n, joinKey(mp, "email"), "%s is already %s (%s, line %d)", m.Email, prev.path, prev.addr, prev.line)
			} else {
				firstEmail[key] = emailSeen{m.Email, joinKey(mp, "email"), n.Line}
			}
		}
		if n := len(pushes); n > 0 && pushes[n-1].user == "" {
			pushes[n-1].user = cmp.Or(m.User, mp)
		}
		out = append(out, m)
	})
	d.pushTopicsOnce(pushes)
	return out
}
