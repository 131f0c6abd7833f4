package config_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/tenant"
)

// quorumBase is oncallBase with its rotation primary (user:kevin,
// user:ada): three members may decide (user:kevin and user:nochat are
// operators, user:ada an owner), user:vic is a viewer. Its first appended
// line is line 23.
const quorumBase = oncallBase + rotation

func TestQuorumDecode(t *testing.T) {
	t.Parallel()
	c, problems := parse(t, quorumBase+`    quorum:
      approvals: 2
      from: [rotation:primary, user:nochat]
    tools:
      "payments.*":
        quorum:
          approvals: 3
          from: [role:operator, role:owner]
      "ops.*": {quorum: {approvals: 1}}
      "misc.*": {deadline: 1h}
`)
	if problems != nil {
		t.Fatalf("problems:\n%s", strings.Join(problems, "\n"))
	}
	acme := c.Tenants["acme"]
	tenantRule := &tenant.Quorum{Need: 2, From: []string{"rotation:primary", "user:nochat"}}
	if diff := cmp.Diff(tenantRule, acme.Quorum); diff != "" {
		t.Errorf("tenant quorum (-want +got):\n%s", diff)
	}
	payments := &tenant.Quorum{Need: 3, From: []string{"role:operator", "role:owner"}}
	for _, tt := range []struct {
		function string
		want     *tenant.Quorum
	}{
		{"payments.refund", payments}, // the tool's replaces the tenant's
		{"ops.restart", nil},          // one approval turns the tenant's off
		{"misc.clean", tenantRule},    // an override that sets no quorum keeps the tenant's
		{"deploy", tenantRule},        // no override at all
		{"payments", tenantRule},      // the glob does not match
		{"ops.restart.now", nil},      // "*" matches dots too
		{"misc.payments.refund", tenantRule},
	} {
		if diff := cmp.Diff(tt.want, acme.QuorumFor(tt.function)); diff != "" {
			t.Errorf("QuorumFor(%q) (-want +got):\n%s", tt.function, diff)
		}
	}
	if o, ok := acme.Tool("ops.restart"); !ok || o.Quorum == nil || o.Quorum.Need != 1 || o.Quorum.From != nil {
		t.Errorf("ops.* override %+v, %v: want its quorum of 1 kept", o, ok)
	}

	// Without a tenant rule, a tool's is the only one.
	c, problems = parse(t, quorumBase+"    tools:\n      \"payments.*\": {quorum: {approvals: 2}}\n")
	if problems != nil {
		t.Fatalf("problems:\n%s", strings.Join(problems, "\n"))
	}
	acme = c.Tenants["acme"]
	if acme.Quorum != nil || acme.QuorumFor("deploy") != nil {
		t.Errorf("tenant quorum %+v, QuorumFor(deploy) %+v: want none", acme.Quorum, acme.QuorumFor("deploy"))
	}
	if diff := cmp.Diff(&tenant.Quorum{Need: 2}, acme.QuorumFor("payments.refund")); diff != "" {
		t.Errorf("QuorumFor(payments.refund) (-want +got):\n%s", diff)
	}
}

// Who a rule counts, read from a parsed file: a role is that role
// exactly, a rotation its members, each person once, in the order from
// names them, never a viewer.
func TestQuorumEligible(t *testing.T) {
	t.Parallel()
	c, problems := parse(t, base+`    members:
      - {user: user:kevin, role: operator, slack: U0KEVIN, email: kevin@acme.example}
      - {user: user:ada, role: owner, slack: U0ADA}
      - {user: user:lee, role: admin, slack: U0LEE}
      - {user: user:vic, role: viewer, slack: U0VIC}
      - {user: user:sam, role: operator, slack: U0SAM}
    rotations:
      night:
        members: [user:sam, user:kevin, user:sam]
        every: 1d
        handoff: "20:00"
        start: 2026-11-30
    quorum: {approvals: 2}
    tools:
      "ops.*": {quorum: {approvals: 2, from: [role:operator]}}
      "admin.*": {quorum: {approvals: 2, from: [role:owner, role:admin]}}
      "night.*": {quorum: {approvals: 2, from: [rotation:night, user:kevin, role:operator, user:ada]}}
`)
	if problems != nil {
		t.Fatalf("problems:\n%s", strings.Join(problems, "\n"))
	}
	acme := c.Tenants["acme"]
	for _, tt := range []struct {
		function string
		want     []string
	}{
		{"deploy", []string{"user:kevin", "user:ada", "user:lee", "user:sam"}}, // every member who may decide, in file order
		{"ops.restart", []string{"user:kevin", "user:sam"}},                    // operators only, not the admin or owner
		{"admin.grant", []string{"user:ada", "user:lee"}},                      // in the order from names the roles
		{"night.page", []string{"user:sam", "user:kevin", "user:ada"}},         // each once
	} {
		q := acme.QuorumFor(tt.function)
		if q == nil {
			t.Fatalf("QuorumFor(%q) is nil", tt.function)
		}
		var got []string
		for _, m := range acme.Eligible(*q) {
			got = append(got, m.User)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Eligible(QuorumFor(%q)) (-want +got):\n%s", tt.function, diff)
		}
	}
	// Each eligible member comes with the ways the bot reaches them.
	if el := acme.Eligible(*acme.QuorumFor("deploy")); el[0].Chat["slack"] != "U0KEVIN" || el[0].Email != "kevin@acme.example" {
		t.Errorf("Eligible()[0] = %+v", el[0])
	}
}

func TestQuorumProblems(t *testing.T) {
	t.Parallel()
	rule := func(body string) string { return quorumBase + "    quorum:\n" + body }
	from := func(entries string) string { return rule("      approvals: 2\n      from: " + entries + "\n") }
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"no approvals", rule("      from: [user:kevin, user:ada]\n"), []string{
			`bot.yaml:24: tenants.acme.quorum.approvals: missing: how many distinct people must approve, 1 to 20 (1: one approval is enough)`,
		}},
		{"approvals 0", rule("      approvals: 0\n"), []string{
			`bot.yaml:24: tenants.acme.quorum.approvals: 0 is not 1 to 20`,
		}},
		{"approvals past 20", rule("      approvals: 21\n"), []string{
			`bot.yaml:24: tenants.acme.quorum.approvals: 21 is not 1 to 20`,
		}},
		{"approvals in words", rule("      approvals: two\n"), []string{
			`bot.yaml:24: tenants.acme.quorum.approvals: expected a whole number, got a string`,
		}},
		{"approvals not whole", rule("      approvals: 1.5\n"), []string{
			`bot.yaml:24: tenants.acme.quorum.approvals: expected a whole number, got a number`,
		}},
		{"from with one approval", rule("      approvals: 1\n      from: [user:kevin]\n"), []string{
			`bot.yaml:25: tenants.acme.quorum.from: approvals: 1 is one approval from anyone who may decide, so from would limit nothing: drop from, or need 2 or more approvals`,
		}},
		{"unknown key", rule("      approvals: 2\n      form: [user:kevin]\n"), []string{
			`bot.yaml:25: tenants.acme.quorum.form: unknown key (did you mean from?)`,
		}},
		{"not a mapping", quorumBase + "    quorum: 2\n", []string{
			`bot.yaml:23: tenants.acme.quorum: expected a mapping, got a number`,
		}},
		{"from not a list", from("user:kevin"), []string{
			`bot.yaml:25: tenants.acme.quorum.from: expected a list, got a string (a list of one is written in brackets: [item])`,
		}},
		{"an empty entry", from(`[user:kevin, ""]`), []string{
			`bot.yaml:25: tenants.acme.quorum.from[1]: empty: name a member by user id (like user:kevin), a role that may decide (role:operator, role:admin or role:owner) or a rotation (rotation:NAME)`,
		}},
		{"an entry twice", from("[user:kevin, user:ada, user:kevin]"), []string{
			`bot.yaml:25: tenants.acme.quorum.from[2]: user:kevin is already tenants.acme.quorum.from[0]`,
		}},
		{"no member", from("[user:kevin, user:bob]"), []string{
			`bot.yaml:25: tenants.acme.quorum.from[1]: user:bob is not a member of tenant acme (members[].user): name a member by user id (like user:kevin), a role that may decide (role:operator, role:admin or role:owner) or a rotation (rotation:NAME)`,
		}},
		{"a viewer", from("[user:kevin, user:vic]"), []string{
			`bot.yaml:25: tenants.acme.quorum.from[1]: user:vic is a viewer and cannot decide: their approval would never count`,
		}},
		{"role viewer", from("[role:viewer]"), []string{
			`bot.yaml:25: tenants.acme.quorum.from[0]: role:viewer cannot decide: a viewer's approval never counts; name role:operator, role:admin or role:owner`,
		}},
		{"no such role", from("[role:finance]"), []string{
			`bot.yaml:25: tenants.acme.quorum.from[0]: "finance" is not a role: name a member by user id (like user:kevin), a role that may decide (role:operator, role:admin or role:owner) or a rotation (rotation:NAME)`,
		}},
		{"no such rotation", from("[rotation:finance]"), []string{
			`bot.yaml:25: tenants.acme.quorum.from[0]: rotation "finance" is not defined in tenants.acme.rotations (it has primary)`,
		}},
		{"a Slack user group", from("[slack:S0FINANCE]"), []string{
			`bot.yaml:25: tenants.acme.quorum.from[0]: slack:S0FINANCE is a Slack user group, whose members the bot cannot list, so it cannot tell whose approval counts: name a member by user id (like user:kevin), a role that may decide (role:operator, role:admin or role:owner) or a rotation (rotation:NAME)`,
		}},
		{"a Discord role", from("[discord:role:998877665544332211]"), []string{
			`bot.yaml:25: tenants.acme.quorum.from[0]: discord:role:998877665544332211 is a Discord role, whose members the bot cannot list, so it cannot tell whose approval counts: name a member by user id (like user:kevin), a role that may decide (role:operator, role:admin or role:owner) or a rotation (rotation:NAME)`,
		}},
		{"a channel", from("[slack:C0FINANCE]"), []string{
			`bot.yaml:25: tenants.acme.quorum.from[0]: slack:C0FINANCE is a channel, whose members the bot cannot list, so it cannot tell whose approval counts: name a member by user id (like user:kevin), a role that may decide (role:operator, role:admin or role:owner) or a rotation (rotation:NAME)`,
		}},
		{"a malformed chat target", from("[slack:finance]"), []string{
			`bot.yaml:25: tenants.acme.quorum.from[0]: slack:finance is a chat target, whose people the bot cannot list, so it cannot tell whose approval counts: name a member by user id (like user:kevin), a role that may decide (role:operator, role:admin or role:owner) or a rotation (rotation:NAME)`,
		}},
		{"a member's chat user and address", from(`[slack:U0KEVIN, "discord:user:223344556677889900", nochat@acme.example]`), []string{
			`bot.yaml:25: tenants.acme.quorum.from[0]: slack:U0KEVIN is user:kevin's: a quorum names a member by user id, so write user:kevin`,
			`bot.yaml:25: tenants.acme.quorum.from[1]: discord:user:223344556677889900 is user:ada's: a quorum names a member by user id, so write user:ada`,
			`bot.yaml:25: tenants.acme.quorum.from[2]: nochat@acme.example is user:nochat's: a quorum names a member by user id, so write user:nochat`,
		}},
		{"a chat user who is no member", from("[slack:U0NOBODY]"), []string{
			`bot.yaml:25: tenants.acme.quorum.from[0]: slack:U0NOBODY is no member's of tenant acme: a quorum counts members only; name a member by user id (like user:kevin), a role that may decide (role:operator, role:admin or role:owner) or a rotation (rotation:NAME)`,
		}},
		{"approvers", from("[approvers]"), []string{
			`bot.yaml:25: tenants.acme.quorum.from[0]: approvers is a ladder step's target, the people a quorum still waits for, not who is eligible: name a member by user id (like user:kevin), a role that may decide (role:operator, role:admin or role:owner) or a rotation (rotation:NAME)`,
		}},
		{"fewer eligible than approvals", rule("      approvals: 3\n      from: [rotation:primary]\n"), []string{
			`bot.yaml:24: tenants.acme.quorum.approvals: 3 approvals cannot be met: only 2 members are eligible (user:kevin, user:ada), each counted once: name more people in from, or need fewer approvals`,
		}},
		{"fewer members who may decide than approvals", rule("      approvals: 4\n"), []string{
			`bot.yaml:24: tenants.acme.quorum.approvals: 4 approvals cannot be met: only 3 members are eligible (user:kevin, user:ada, user:nochat), each counted once: give more members a role that may decide, or need fewer approvals`,
		}},
		{"one eligible", from("[role:owner]"), []string{
			`bot.yaml:24: tenants.acme.quorum.approvals: 2 approvals cannot be met: only 1 member is eligible (user:ada), each counted once: name more people in from, or need fewer approvals`,
		}},
		{"a role nobody has", from("[role:admin]"), []string{
			`bot.yaml:24: tenants.acme.quorum.approvals: 2 approvals cannot be met: no member is eligible, each counted once: name more people in from, or need fewer approvals`,
		}},
		{"a tool's rule", quorumBase + "    tools:\n      \"payments.*\":\n        quorum: {approvals: 2, from: [slack:S0FINANCE, rotation:primary], need: 2}\n", []string{
			`bot.yaml:25: tenants.acme.tools["payments.*"].quorum.need: unknown key`,
			`bot.yaml:25: tenants.acme.tools["payments.*"].quorum.from[0]: slack:S0FINANCE is a Slack user group, whose members the bot cannot list, so it cannot tell whose approval counts: name a member by user id (like user:kevin), a role that may decide (role:operator, role:admin or role:owner) or a rotation (rotation:NAME)`,
		}},
		{"a tool's rule that cannot be met", quorumBase + "    tools:\n      \"payments.*\":\n        quorum: {approvals: 5}\n", []string{
			`bot.yaml:25: tenants.acme.tools["payments.*"].quorum.approvals: 5 approvals cannot be met: only 3 members are eligible (user:kevin, user:ada, user:nochat), each counted once: give more members a role that may decide, or need fewer approvals`,
		}},
		{"a broken rotation is reported only where it is defined", strings.Replace(quorumBase, "every: 1w", "every: 1y", 1) + "    quorum: {approvals: 2, from: [rotation:primary]}\n", []string{
			`bot.yaml:20: tenants.acme.rotations.primary.every: "1y" is not a shift length: write days or weeks, like 1d, 3d, 1w or 2w (daily and weekly too), at most a year`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, got := parse(t, tt.text)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// approvers stands in a step's mention, dm and email, and nowhere a
// channel goes.
func TestApproversTarget(t *testing.T) {
	t.Parallel()
	c, problems := parse(t, quorumBase+`    quorum: {approvals: 2}
    ladders:
      default:
        - after: 15m
          mention: [approvers]
          dm: [approvers]
          email: [approvers, leads@acme.example]
`)
	if problems != nil {
		t.Fatalf("problems:\n%s", strings.Join(problems, "\n"))
	}
	s := c.Tenants["acme"].Ladders["default"].Steps[0]
	if got := joinAll(s.Mention) + " | " + joinAll(s.DM) + " | " + joinAll(s.Email); got != "approvers | approvers | approvers leads@acme.example" {
		t.Errorf("step targets %s", got)
	}

	why := "approvers is not a channel (slack:C…, slack:G… or discord:channel:ID): it is the people a quorum still waits for, named only in a ladder step's mention, dm, email or push"
	for _, tt := range []struct {
		name, text string
		want       []string
	}{
		{"a step's post", quorumBase + "    ladders:\n      default:\n        - after: 15m\n          post: [approvers]\n", []string{
			"bot.yaml:26: tenants.acme.ladders.default[0].post[0]: " + why,
		}},
		{"the tenant's post", strings.Replace(quorumBase, "post: [slack:C0APPROVALS]", "post: [slack:C0APPROVALS, approvers]", 1), []string{
			"bot.yaml:10: tenants.acme.post[1]: " + why,
		}},
		{"a tool's post", quorumBase + "    tools:\n      \"payments.*\": {post: [approvers]}\n", []string{
			`bot.yaml:24: tenants.acme.tools["payments.*"].post[0]: ` + why,
		}},
		{"audit", quorumBase + "    audit: approvers\n", []string{
			"bot.yaml:23: tenants.acme.audit: " + why,
		}},
		{"digest", quorumBase + "    digest: {cron: \"0 9 * * *\", to: approvers}\n", []string{
			"bot.yaml:23: tenants.acme.digest.to: " + why,
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, got := parse(t, tt.text)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// `bot check` prints each rule with the timeline it runs beside: the
// tenant's, a tool's own, one a tool turns off, one a tool keeps; and
// warns of a rule its starter could leave unmet, and of approvers that
// no rule gives anyone to reach.
func TestQuorumSummary(t *testing.T) {
	t.Parallel()
	c, problems := parse(t, quorumBase+`    quorum: {approvals: 2, from: [rotation:primary]}
    ladders:
      default:
        - after: 15m
          mention: [approvers]
      finance:
        - after: 15m
          dm: [approvers]
          email: [approvers]
    tools:
      "payments.*":
        ladder: finance
        quorum: {approvals: 2, from: [rotation:primary, user:nochat, role:owner]}
      "ops.*": {quorum: {approvals: 1}}
      "misc.*": {deadline: 1h}
`)
	if problems != nil {
		t.Fatalf("problems:\n%s", strings.Join(problems, "\n"))
	}
	s := c.Summary()
	want := `tenant acme: deadline 24h, 4 members (3 can decide)
  zone Europe/Berlin
  post slack:C0APPROVALS
  rotation primary: user:kevin, user:ada take turns of 1w, handing off mon 09:00 Europe/Berlin, the first on 2026-11-30
  quorum: 2 approvals from rotation primary (eligible: user:kevin, user:ada)
    warning: exactly 2 are eligible, so a job one of them started cannot get 2 approvals: its starter never counts
  ladder default, deadline 24h:
    0s post slack:C0APPROVALS
    15m mention approvers
    24h deadline: denied, nobody answered
    any time: I'm looking holds the steps to come 30m (never the deadline) · Escalate now fires the next one at once
  ladder finance, deadline 24h:
    0s post slack:C0APPROVALS
    15m dm approvers · email approvers
    24h deadline: denied, nobody answered
    any time: I'm looking holds the steps to come 30m (never the deadline) · Escalate now fires the next one at once
  tool "payments.*": ladder finance, deadline 24h, post slack:C0APPROVALS
    quorum for payments.*: 2 approvals from rotation primary, user:nochat or role owner (eligible: user:kevin, user:ada, user:nochat)
    0s post slack:C0APPROVALS
    15m dm approvers · email approvers
    24h deadline: denied, nobody answered
    any time: I'm looking holds the steps to come 30m (never the deadline) · Escalate now fires the next one at once
  tool "ops.*": ladder default, deadline 24h, post slack:C0APPROVALS
    quorum for ops.*: 1 approval is enough (the tenant's quorum is off)
    0s post slack:C0APPROVALS
    15m mention approvers
    24h deadline: denied, nobody answered
    any time: I'm looking holds the steps to come 30m (never the deadline) · Escalate now fires the next one at once
  tool "misc.*": ladder default, deadline 1h, post slack:C0APPROVALS
    quorum for misc.*: the tenant's, 2 approvals
    0s post slack:C0APPROVALS
    15m mention approvers
    1h deadline: denied, nobody answered
    any time: I'm looking holds the steps to come 30m (never the deadline) · Escalate now fires the next one at once
`
	if i := strings.Index(s, "tenant acme"); i < 0 || s[i:] != want {
		t.Errorf("summary of acme:\n%s\nwant:\n%s", s[max(i, 0):], want)
	}

	// Approvers with no rule that needs more than one approval reach
	// nobody; a rule of any member who may decide says so.
	nobody := "    warning: approvers reach nobody: no quorum of tenant acme needs more than one approval\n"
	for _, tt := range []struct {
		name, add string
		want      []string
		not       string
	}{
		{"no quorum", "", []string{nobody}, "  quorum"},
		{"only one approval", "    quorum: {approvals: 1}\n", []string{"  quorum: 1 approval is enough\n", nobody}, "approvals from"},
		{"every member who may decide", "    quorum: {approvals: 2}\n", []string{"  quorum: 2 approvals from any member who may decide (eligible: user:kevin, user:ada, user:nochat)\n"}, "warning"},
	} {
		c, problems := parse(t, quorumBase+tt.add+"    ladders:\n      default:\n        - after: 15m\n          mention: [approvers]\n")
		if problems != nil {
			t.Fatalf("%s: problems:\n%s", tt.name, strings.Join(problems, "\n"))
		}
		s := c.Summary()
		for _, w := range tt.want {
			if !strings.Contains(s, w) {
				t.Errorf("%s: summary lacks %q:\n%s", tt.name, w, s)
			}
		}
		if strings.Contains(s, tt.not) {
			t.Errorf("%s: summary holds %q:\n%s", tt.name, tt.not, s)
		}
	}
}
