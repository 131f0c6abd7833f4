package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"approvalsbot/ladder"
	"approvalsbot/tenant"
)

// Summary is what `bot check` prints for a valid file: the settings, the
// surfaces, where each secret comes from, and each tenant's timelines. No
// secret appears in it. Who is on duty depends on the time: see SummaryAt.
func (c *Config) Summary() string { return c.SummaryAt(time.Time{}) }

// SummaryAt is Summary with who is on duty in each rotation at now,
// unless now is zero.
func (c *Config) SummaryAt(now time.Time) string {
	var b strings.Builder
	if c.ListenPrivate == "" {
		fmt.Fprintf(&b, "listen %s\n", c.Listen)
	} else {
		fmt.Fprintf(&b, "listen %s: interactions, decision page, health\n", c.Listen)
		fmt.Fprintf(&b, "listen_private %s: events, metrics, health\n", c.ListenPrivate)
	}
	if c.IPv6SourcePrefix != DefaultIPv6SourcePrefix {
		fmt.Fprintf(&b, "ipv6_source_prefix %d: connection limits, body budget and refusal lines count per IPv6 /%d\n",
			c.IPv6SourcePrefix, c.IPv6SourcePrefix)
	}
	fmt.Fprintf(&b, "store %s %s\n", c.Store.Driver, redactDSN(c.Store.DSN.Reveal()))
	fmt.Fprintf(&b, "tick %s\n", ladder.FormatDuration(c.Tick))
	fmt.Fprintf(&b, "retention %s: closed approvals and finished outbox rows, then tombstones for %s\n",
		days(c.Retention), days(c.Tombstones()))
	features := ""
	if len(c.Backend.Features) > 0 {
		features = "; features " + strings.Join(c.Backend.Features, ", ")
	}
	fmt.Fprintf(&b, "backend %s (%s, %s%s)\n", c.Backend.URL,
		count(len(c.Backend.EventsSecrets), "events secret"), count(len(c.Backend.CallsSecrets), "calls secret"), features)

	switch {
	case c.Slack == nil:
		b.WriteString("slack off\n")
	case c.Slack.AppToken != "":
		b.WriteString("slack on, interactions over Socket Mode\n")
	default:
		b.WriteString("slack on, interactions at POST /slack/interactions\n")
	}
	switch {
	case c.Discord == nil:
		b.WriteString("discord off\n")
	case c.Discord.PublicKey != "":
		fmt.Fprintf(&b, "discord on (application %s), interactions at POST /discord/interactions\n", c.Discord.ApplicationID)
	default:
		fmt.Fprintf(&b, "discord on (application %s), interactions over the gateway\n", c.Discord.ApplicationID)
	}
	if c.SMTP == nil {
		b.WriteString("email off\n")
	} else {
		fmt.Fprintf(&b, "email on, %s with %s, from %s\n", c.SMTP.Addr, c.SMTP.TLS, c.SMTP.From)
	}
	// Where each secret comes from, never what it is.
	for _, v := range c.SecretVars {
		fmt.Fprintf(&b, "secret %s: %s from ${%s}\n", v.Path, redacted, v.Var)
	}

	ids := make([]string, 0, len(c.Tenants))
	for id := range c.Tenants {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		b.WriteString("\n")
		t := c.Tenants[id]
		summary(t, &b, now, c.DecisionPage != nil)
		if off := c.offSurface(t); len(off) > 0 {
			fmt.Fprintf(&b, "  surface off, shown on the log surface (stdout) instead: %s\n", strings.Join(off, " "))
		}
	}
	return b.String()
}

// offSurface lists the tenant's targets on surfaces this config does not
// run: no error, since a deployment may run fewer surfaces than its
// tenants name, but skipped at run time.
func (c *Config) offSurface(t *tenant.Tenant) []string {
	on := map[string]bool{
		ladder.SurfaceSlack:   c.Slack != nil,
		ladder.SurfaceDiscord: c.Discord != nil,
		ladder.SurfaceEmail:   c.SMTP != nil,
	}
	var all []ladder.Target
	all = append(all, t.Post...)
	if t.Audit != nil {
		all = append(all, *t.Audit)
	}
	if t.Digest != nil {
		all = append(all, t.Digest.To)
	}
	for _, name := range ladderNames(t.Ladders) {
		for _, s := range t.Ladders[name].Steps {
			all = append(all, s.Post...)
			all = append(all, s.Mention...)
			all = append(all, s.DM...)
			all = append(all, s.Email...)
		}
	}
	for _, o := range t.Tools {
		all = append(all, o.Post...)
	}
	var off []string
	seen := map[ladder.Target]bool{}
	for _, tg := range all {
		if tg.IsRotation() || tg.IsApprovers() {
			continue // their members are reached on the surfaces that are on
		}
		if !on[tg.Surface()] && !seen[tg] {
			seen[tg] = true
			off = append(off, tg.String())
		}
	}
	return off
}

// passkeyWords says which calls each passkey rule covers.
var passkeyWords = map[tenant.PasskeyRule]string{
	tenant.PasskeysDestructive: "a destructive call",
	tenant.PasskeysFlagged:     "a destructive or flagged call",
	tenant.PasskeysTyped:       "a destructive or flagged call, or one that needs a typed confirmation,",
	tenant.PasskeysAll:         "any call",
}

func summary(t *tenant.Tenant, b *strings.Builder, now time.Time, page bool) {
	deciders := 0
	for _, m := range t.Members {
		if m.Role.CanDecide() {
			deciders++
		}
	}
	fmt.Fprintf(b, "tenant %s: deadline %s, %s (%d can decide)", t.ID, ladder.FormatDuration(t.Deadline), count(len(t.Members), "member"), deciders)
	if t.ForbidSelfApproval {
		b.WriteString(", self-approval forbidden")
	}
	b.WriteString("\n")
	if w := passkeyWords[t.Passkeys]; w != "" {
		fmt.Fprintf(b, "  passkeys %s: approving %s needs the member's passkey, on the decision page\n", t.Passkeys, w)
	}
	b.WriteString(grantWords(t.Grants))
	if t.Zone != nil {
		fmt.Fprintf(b, "  zone %s\n", t.Zone)
	}
	fmt.Fprintf(b, "  post %s\n", joinTargets(t.Post))
	if t.Audit != nil {
		fmt.Fprintf(b, "  audit %s\n", t.Audit)
	}
	if t.Digest != nil {
		fmt.Fprintf(b, "  digest %q in %s to %s\n", t.Digest.Cron, t.Digest.Zone, t.Digest.To)
	}
	rotationSummary(t, b, now)
	for _, k := range slices.Sorted(maps.Keys(t.Labels)) {
		fmt.Fprintf(b, "  label %s: %q on the card's plan line\n", k, t.Labels[k])
	}
	pushSummary(t, b, page)
	if t.Quorum != nil {
		quorumSummary(t, b, "  ", "quorum", *t.Quorum)
	}
	for _, name := range ladderNames(t.Ladders) {
		fmt.Fprintf(b, "  ladder %s, deadline %s:\n", name, ladder.FormatDuration(t.Deadline))
		for _, line := range t.Ladders[name].Timeline(t.Post, t.Deadline) {
			fmt.Fprintf(b, "    %s\n", line)
		}
		if namesApprovers(t.Ladders[name]) && !anyQuorum(t) {
			fmt.Fprintf(b, "    warning: approvers reach nobody: no quorum of tenant %s needs more than one approval\n", t.ID)
		}
	}
	for _, o := range t.Tools {
		l := t.Ladders[tenant.DefaultLadder]
		if o.Ladder != "" {
			l = t.Ladders[o.Ladder]
		}
		deadline := t.Deadline
		if o.Deadline > 0 {
			deadline = o.Deadline
		}
		post := t.Post
		if len(o.Post) > 0 {
			post = o.Post
		}
		fmt.Fprintf(b, "  tool %q: ladder %s, deadline %s, post %s\n", o.Glob, l.Name, ladder.FormatDuration(deadline), joinTargets(post))
		switch lead := "quorum for " + o.Glob; {
		case o.Quorum != nil && o.Quorum.Need < 2 && t.Quorum != nil && t.Quorum.Need >= 2:
			fmt.Fprintf(b, "    %s: 1 approval is enough (the tenant's quorum is off)\n", lead)
		case o.Quorum != nil:
			quorumSummary(t, b, "    ", lead, *o.Quorum)
		case t.Quorum != nil && t.Quorum.Need >= 2:
			fmt.Fprintf(b, "    %s: the tenant's, %s\n", lead, count(t.Quorum.Need, "approval"))
		}
		for _, line := range l.Timeline(post, deadline) {
			fmt.Fprintf(b, "    %s\n", line)
		}
	}
}

// days writes a duration of whole days as "720h (30 days)".
func days(d time.Duration) string {
	const day = 24 * time.Hour
	if d%day != 0 {
		return ladder.FormatDuration(d)
	}
	return fmt.Sprintf("%s (%s)", ladder.FormatDuration(d), count(int(d/day), "day"))
}

func joinTargets(ts []ladder.Target) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.String()
	}
	return strings.Join(s, " ")
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// quorumSummary writes a quorum rule: how many approvals from whom, and
// who is eligible; with a warning when a job one of them started could
// not be approved, since its starter never counts.
func quorumSummary(t *tenant.Tenant, b *strings.Builder, indent, lead string, q tenant.Quorum) {
	if q.Need < 2 {
		fmt.Fprintf(b, "%s%s: 1 approval is enough\n", indent, lead)
		return
	}
	el := t.Eligible(q)
	fmt.Fprintf(b, "%s%s: %s from %s (eligible: %s)\n", indent, lead, count(q.Need, "approval"), q.Words(), eligibleUsers(el))
	if len(el) == q.Need {
		fmt.Fprintf(b, "%s  warning: exactly %d are eligible, so a job one of them started cannot get %d approvals: its starter never counts\n",
			indent, len(el), q.Need)
	}
}

// quorumFromWords says whom a quorum counts, as a person reads it:
// "rotation finance or user:kevin", "any member who may decide".
// namesApprovers reports whether a step of l names approvers.
func namesApprovers(l ladder.Ladder) bool {
	for _, s := range l.Steps {
		for _, tg := range slices.Concat(s.Mention, s.DM, s.Email, s.Push) {
			if tg.IsApprovers() {
				return true
			}
		}
	}
	return false
}

// anyQuorum reports whether some call of t can need more than one approval.
func anyQuorum(t *tenant.Tenant) bool {
	if t.Quorum != nil && t.Quorum.Need >= 2 {
		return true
	}
	return slices.ContainsFunc(t.Tools, func(o tenant.ToolOverride) bool { return o.Quorum != nil && o.Quorum.Need >= 2 })
}

// pushSummary writes how each member with a push address is reached,
// never the address, and what a notice cannot link to: the decision
// page serves members with an email address, and only with public_url.
func pushSummary(t *tenant.Tenant, b *strings.Builder, page bool) {
	for _, m := range t.Members {
		if m.Push.IsZero() {
			continue
		}
		fmt.Fprintf(b, "  push %s by %s", m.User, m.Push.Kind())
		if page && m.Email == "" {
			b.WriteString(" (no email address, so the decision page is not theirs: notices carry no link)")
		}
		b.WriteString("\n")
	}
	if !page && slices.ContainsFunc(ladderNames(t.Ladders), func(name string) bool { return pushes(t.Ladders[name]) }) {
		b.WriteString("  warning: without public_url, push notices carry no link to the decision page: they say to decide in the console or the chat thread\n")
	}
}

// pushes reports whether a step of l sends a push.
func pushes(l ladder.Ladder) bool {
	return slices.ContainsFunc(l.Steps, func(s ladder.Step) bool { return len(s.Push) > 0 })
}
