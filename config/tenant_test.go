package config_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/config"
	"approvalsbot/ladder"
	"approvalsbot/tenant"
)

// overrides is a tenant whose tool globs overlap, to show file order wins.
const overrides = base + `    deadline: 12h
    ladders:
      payments:
        - after: 5m
          mention: [slack:S0FINANCE]
      fast:
        - after: 1m
          mention: [slack:S0ONCALL]
    tools:
      "payments.refund": {deadline: 30m}
      "payments.*": {ladder: payments, deadline: 2h, post: [slack:C0FINANCE]}
      "*": {ladder: fast}
`

func overridesTenant(t *testing.T) *tenant.Tenant {
	t.Helper()
	c, problems := parse(t, overrides)
	if problems != nil {
		t.Fatalf("overrides has problems:\n%s", strings.Join(problems, "\n"))
	}
	acme, ok := c.Tenant("acme")
	if !ok {
		t.Fatal("no tenant acme")
	}
	return acme
}

func TestToolFirstMatch(t *testing.T) {
	t.Parallel()
	acme := overridesTenant(t)
	tests := []struct {
		function, wantGlob string
	}{
		{"payments.refund", "payments.refund"}, // also matches the two after it
		{"payments.charge", "payments.*"},      // * matches across the dot
		{"payments", "*"},
		{"mail.send", "*"},
	}
	for _, tt := range tests {
		o, ok := acme.Tool(tt.function)
		if !ok || o.Glob != tt.wantGlob {
			t.Errorf("Tool(%q) = %q, %v; want %q", tt.function, o.Glob, ok, tt.wantGlob)
		}
	}
	if _, ok := loadFull(t).Tenants["acme"].Tool("mail.send"); ok {
		t.Error("Tool(mail.send) matched in full.yaml, which only overrides payments.*")
	}
}

func TestLadderDeadlinePostFor(t *testing.T) {
	t.Parallel()
	acme := overridesTenant(t)
	tests := []struct {
		name, function, requested string
		wantLadder                string
		wantDeadline              time.Duration
		wantPost                  string
	}{
		{"request's ladder wins", "payments.charge", "fast", "fast", 2 * time.Hour, "slack:C0FINANCE"},
		{"unknown requested ladder falls back to the tool's", "payments.charge", "nope", "payments", 2 * time.Hour, "slack:C0FINANCE"},
		{"tool override's ladder", "payments.charge", "", "payments", 2 * time.Hour, "slack:C0FINANCE"},
		{"first match without ladder gives default", "payments.refund", "", "default", 30 * time.Minute, "slack:C0APPROVALS"},
		{"catch-all without deadline keeps the tenant's", "mail.send", "", "fast", 12 * time.Hour, "slack:C0APPROVALS"},
		{"request may name default", "mail.send", "default", "default", 12 * time.Hour, "slack:C0APPROVALS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := acme.LadderFor(tt.function, tt.requested).Name; got != tt.wantLadder {
				t.Errorf("LadderFor(%q, %q) = %q, want %q", tt.function, tt.requested, got, tt.wantLadder)
			}
			if got := acme.DeadlineFor(tt.function); got != tt.wantDeadline {
				t.Errorf("DeadlineFor(%q) = %v, want %v", tt.function, got, tt.wantDeadline)
			}
			if got := joinAll(acme.PostFor(tt.function)); got != tt.wantPost {
				t.Errorf("PostFor(%q) = %q, want %q", tt.function, got, tt.wantPost)
			}
		})
	}

	// With no override at all: the default ladder and the tenant's deadline,
	// and a tenant built in code without a deadline gets 24h.
	full := loadFull(t).Tenants["acme"]
	if got := full.LadderFor("mail.send", ""); got.Name != "default" || len(got.Steps) != 4 {
		t.Errorf("LadderFor(mail.send) = %+v, want the 4-step default", got)
	}
	if got := (&tenant.Tenant{}).DeadlineFor("x"); got != 24*time.Hour {
		t.Errorf("zero tenant DeadlineFor = %v, want 24h", got)
	}
	if got := (&tenant.Tenant{}).LadderFor("x", "y"); got.Name != "default" || len(got.Steps) != 0 {
		t.Errorf("zero tenant LadderFor = %+v, want an empty default", got)
	}
}

func joinAll[T interface{ String() string }](ts []T) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.String()
	}
	return strings.Join(s, " ")
}

func TestMemberLookups(t *testing.T) {
	t.Parallel()
	acme := loadFull(t).Tenants["acme"]
	tests := []struct {
		name   string
		lookup func(string) (tenant.Member, bool)
		key    string
		want   string // User, "" for no match
	}{
		{"slack", func(id string) (tenant.Member, bool) { return acme.MemberOn(ladder.SurfaceSlack, id) }, "U0ADA", "user:ada"},
		{"discord", func(id string) (tenant.Member, bool) { return acme.MemberOn(ladder.SurfaceDiscord, id) }, "223344556677889900", "user:kevin"},
		{"user", acme.MemberByUser, "user:kevin", "user:kevin"},
		{"unknown slack", func(id string) (tenant.Member, bool) { return acme.MemberOn(ladder.SurfaceSlack, id) }, "U0NOBODY", ""},
		{"empty discord id never matches a member without one", func(id string) (tenant.Member, bool) { return acme.MemberOn(ladder.SurfaceDiscord, id) }, "", ""},
		{"email", func(id string) (tenant.Member, bool) { return acme.MemberOn(ladder.SurfaceEmail, id) }, "Kevin@ACME.example", "user:kevin"},
	}
	for _, tt := range tests {
		m, ok := tt.lookup(tt.key)
		if ok != (tt.want != "") || m.User != tt.want {
			t.Errorf("%s(%q) = %q, %v; want %q", tt.name, tt.key, m.User, ok, tt.want)
		}
	}
}

// MemberOn is the one lookup by where a person clicked or is reached:
// each chat surface by its bare user id, email by address without regard
// to case.
func TestMemberOn(t *testing.T) {
	t.Parallel()
	acme := loadFull(t).Tenants["acme"]
	tests := []struct {
		surface, id string
		want        string // User, "" for no match
	}{
		{ladder.SurfaceSlack, "U0ADA", "user:ada"},
		{ladder.SurfaceSlack, "U0KEVIN", "user:kevin"},
		{ladder.SurfaceDiscord, "223344556677889900", "user:kevin"},
		{ladder.SurfaceEmail, "ada@acme.example", "user:ada"},
		{ladder.SurfaceEmail, "KEVIN@acme.example", "user:kevin"},
		{ladder.SurfaceSlack, "U0NOBODY", ""},
		{ladder.SurfaceSlack, "u0ada", ""}, // Slack ids are case-sensitive
		{ladder.SurfaceDiscord, "U0KEVIN", ""},
		{ladder.SurfaceSlack, "223344556677889900", ""}, // kevin's Discord id, on Slack
		{ladder.SurfaceDiscord, "", ""},                 // ada has none
		{ladder.SurfaceEmail, "", ""},
		{"user", "user:kevin", ""}, // MemberByUser's, not a surface
		{"deadline", "system:deadline", ""},
		{"teams", "U0ADA", ""},
	}
	for _, tt := range tests {
		m, ok := acme.MemberOn(tt.surface, tt.id)
		if ok != (tt.want != "") || m.User != tt.want {
			t.Errorf("MemberOn(%q, %q) = %q, %v; want %q", tt.surface, tt.id, m.User, ok, tt.want)
		}
	}
	kevin, _ := acme.MemberByUser("user:kevin")
	for _, c := range ladder.ChatSurfaces() {
		id := kevin.ChatID(c.Name)
		if id == "" {
			t.Fatalf("kevin has no %s id", c.Name)
		}
		if m, ok := acme.MemberOn(c.Name, id); !ok || m.User != kevin.User {
			t.Errorf("MemberOn(%q, kevin's id %q) = %q, %v", c.Name, id, m.User, ok)
		}
	}
	if ada, _ := acme.MemberByUser("user:ada"); ada.ChatID(ladder.SurfaceDiscord) != "" || ada.ChatID("teams") != "" {
		t.Errorf("ada's chat ids %v: want Slack only", ada.Chat)
	}
}

func TestRoles(t *testing.T) {
	t.Parallel()
	want := map[tenant.Role]bool{tenant.RoleViewer: false, tenant.RoleOperator: true, tenant.RoleAdmin: true, tenant.RoleOwner: true}
	got := map[tenant.Role]bool{}
	for _, r := range tenant.Roles() {
		if !r.Valid() {
			t.Errorf("%q is not Valid", r)
		}
		got[r] = r.CanDecide()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CanDecide (-want +got):\n%s", diff)
	}
	if tenant.Role("approver").Valid() || tenant.Role("").CanDecide() {
		t.Error("an unknown role is valid or can decide")
	}
}

func TestSummary(t *testing.T) {
	t.Parallel()
	want := `listen :8080
store sqlite file:bot.db
tick 10s
retention 720h (30 days): closed approvals and finished outbox rows, then tombstones for 8760h (365 days)
backend https://jobs.acme.example (1 events secret, 1 calls secret)
slack on, interactions over Socket Mode
discord on (application 1100000000000000000), interactions at POST /discord/interactions
email on, smtp.acme.example:587 with starttls, from Approvals <approvals@acme.example>
secret backend.events_secrets[0]: <secret> from ${BOT_EVENTS_SECRET}
secret backend.calls_secrets[0]: <secret> from ${BOT_CALLS_SECRET}
secret slack.bot_token: <secret> from ${SLACK_BOT_TOKEN}
secret slack.signing_secret: <secret> from ${SLACK_SIGNING_SECRET}
secret slack.app_token: <secret> from ${SLACK_APP_TOKEN}
secret discord.bot_token: <secret> from ${DISCORD_BOT_TOKEN}
secret smtp.password: <secret> from ${SMTP_PASSWORD}

tenant acme: deadline 24h, 2 members (2 can decide), self-approval forbidden
  post slack:C0APPROVALS discord:channel:112233445566778899
  audit slack:C0AUDIT
  digest "0 9 * * 1-5" in Europe/Berlin to slack:C0APPROVALS
  ladder default, deadline 24h:
    0s post slack:C0APPROVALS discord:channel:112233445566778899
    15m mention slack:U0KEVIN slack:S0ONCALL discord:role:998877665544332211
    1h dm slack:U0LEAD · email leads@acme.example
    4h email owner@acme.example
    23h mention slack:S0ONCALL (1h before the deadline)
    24h deadline: denied, nobody answered
    any time: I'm looking holds the steps to come 30m (never the deadline) · Escalate now fires the next one at once
  ladder payments, deadline 24h:
    0s post slack:C0APPROVALS discord:channel:112233445566778899
    5m mention slack:S0FINANCE
    30m email cfo@acme.example
    24h deadline: denied, nobody answered
    any time: I'm looking holds the steps to come 30m (never the deadline) · Escalate now fires the next one at once
  tool "payments.*": ladder payments, deadline 2h, post slack:C0FINANCE
    0s post slack:C0FINANCE
    5m mention slack:S0FINANCE
    30m email cfo@acme.example
    2h deadline: denied, nobody answered
    any time: I'm looking holds the steps to come 30m (never the deadline) · Escalate now fires the next one at once
`
	if diff := cmp.Diff(want, loadFull(t).Summary()); diff != "" {
		t.Errorf("Summary (-want +got):\n%s", diff)
	}
}

func TestSummaryRedactsDSN(t *testing.T) {
	t.Parallel()
	tests := []struct{ dsn, want string }{
		{"postgres://bot:hunter2@db.acme.example:5432/bot?sslmode=require", "store postgres postgres://bot:xxxxx@db.acme.example:5432/bot?sslmode=require\n"},
		{"postgres://db.acme.example/bot?password=hunter2&sslmode=require", "store postgres postgres://db.acme.example/bot?password=xxxxx&sslmode=require\n"},
		{"host=db user=bot password='hun ter2' dbname=bot", "store postgres host=db user=bot password=xxxxx dbname=bot\n"},
		{"host=db user=bot password=hunter2", "store postgres host=db user=bot password=xxxxx\n"},
		{"host=db user=bot password=hun\\ ter2", "store postgres host=db user=bot password=xxxxx\n"},
		{"host=db sslpassword=hunter2 user=bot", "store postgres host=db sslpassword=xxxxx user=bot\n"},
		{"postgres://bot@db.acme.example/bot?sslpassword=hunter2", "store postgres postgres://bot@db.acme.example/bot?sslpassword=xxxxx\n"},
		{"postgres://db.acme.example?application_name=bot:hunter2@x", "store postgres postgres://db.acme.example?application_name=bot:xxxxx@x\n"},
	}
	for _, tt := range tests {
		text := base + "store:\n  driver: postgres\n  dsn: ${DSN}\n"
		c, err := config.Parse("bot.yaml", []byte(text), baseEnv(map[string]string{"DSN": tt.dsn}))
		if err != nil {
			t.Fatalf("Parse with DSN %q: %v", tt.dsn, err)
		}
		s := c.Summary()
		if strings.Contains(s, "hunter2") || strings.Contains(s, "hun ter2") || strings.Contains(s, "ter2") {
			t.Errorf("Summary leaks the DSN password:\n%s", s)
		}
		if !strings.Contains(s, tt.want) {
			t.Errorf("Summary lacks %q:\n%s", tt.want, s)
		}
		// A DSN from the environment is named like any secret.
		if want := "secret store.dsn: <secret> from ${DSN}\n"; !strings.Contains(s, want) {
			t.Errorf("Summary lacks %q:\n%s", want, s)
		}
	}
}

func TestSummaryListsTargetsOnSurfacesOff(t *testing.T) {
	t.Parallel()
	text := base + `    audit: discord:channel:112233445566778899
    ladders:
      default:
        - after: 1h
          mention: [slack:U0KEVIN]
          email: [ops@acme.example]
          dm: [discord:user:223344556677889900]
`
	c, problems := parse(t, text)
	if problems != nil {
		t.Fatalf("targets on surfaces that are off are not problems, got:\n%s", strings.Join(problems, "\n"))
	}
	want := "  surface off, shown on the log surface (stdout) instead: discord:channel:112233445566778899 discord:user:223344556677889900 ops@acme.example\n"
	if s := c.Summary(); !strings.Contains(s, want) {
		t.Errorf("Summary lacks %q:\n%s", want, s)
	}
	if s := loadFull(t).Summary(); strings.Contains(s, "not reached") {
		t.Errorf("full.yaml runs every surface, yet Summary says:\n%s", s)
	}
}

// Addresses compare by tenant.AddressKey alone: ASCII case is one mailbox,
// and a character that a Unicode fold would take for an ASCII letter (long
// s, the Kelvin sign, dotless i, full-width letters) is another mailbox,
// whose holder must never be taken for the member with the ASCII address.
// bot check accepts such members side by side, and each address finds its
// own member only.
func TestMemberAddressesLookAlike(t *testing.T) {
	t.Parallel()
	pairs := []struct{ ascii, lookAlike string }{
		{"sam@acme.example", "\u017fam@acme.example"}, // ſ, long s: EqualFold takes it for s
		{"kim@acme.example", "\u212aim@acme.example"}, // K, the Kelvin sign: ToLower gives k
		{"ian@acme.example", "\u0131an@acme.example"}, // ı, dotless i
		{"ida@acme.example", "\u0130da@acme.example"}, // İ, I with a dot: ToLower gives i and a dot
		{"sue@acme.example", "\uff53ue@acme.example"}, // ｓ, full-width
		{"ann@acme.example", "ann@\uff41cme.example"}, // ａ, full-width, in the domain
		{"eve@acme.example", "eve@acme.exampl\u0435"}, // е, Cyrillic
	}
	text := base + "    members:\n"
	for i, p := range pairs {
		text += fmt.Sprintf("      - {user: user:a%d, role: operator, email: %q}\n", i, p.ascii)
		text += fmt.Sprintf("      - {user: user:b%d, role: operator, email: %q}\n", i, p.lookAlike)
	}
	c, problems := parse(t, text)
	if problems != nil {
		t.Fatalf("look-alike addresses refused as one:\n%s", strings.Join(problems, "\n"))
	}
	acme := c.Tenants["acme"]
	for i, p := range pairs {
		for _, tt := range []struct{ id, want string }{
			{p.ascii, fmt.Sprintf("user:a%d", i)},
			{strings.ToUpper(p.ascii), fmt.Sprintf("user:a%d", i)},
			{p.lookAlike, fmt.Sprintf("user:b%d", i)},
		} {
			if m, ok := acme.MemberOn(ladder.SurfaceEmail, tt.id); !ok || m.User != tt.want {
				t.Errorf("MemberOn(email, %q) = %q, %v; want %q", tt.id, m.User, ok, tt.want)
			}
		}
	}
	// Alone, a look-alike finds nobody rather than the ASCII member.
	text = base + "    members:\n"
	for i, p := range pairs {
		text += fmt.Sprintf("      - {user: user:a%d, role: operator, email: %q}\n", i, p.ascii)
	}
	if c, problems = parse(t, text); problems != nil {
		t.Fatal(problems)
	}
	for _, p := range pairs {
		if m, ok := c.Tenants["acme"].MemberOn(ladder.SurfaceEmail, p.lookAlike); ok {
			t.Errorf("look-alike %q found %s", p.lookAlike, m.User)
		}
	}
}

func TestAddressKey(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                   "",
		"sam@acme.example":   "sam@acme.example",
		"Sam@ACME.Example":   "sam@acme.example",
		"\u017fam@Acme.ex":   "\u017fam@acme.ex",
		"\u212aIM@acme.ex":   "\u212aim@acme.ex",
		"\u0130DA@acme.ex":   "\u0130da@acme.ex",
		"\uff33UE@acme.ex":   "\uff33ue@acme.ex",
		"\u00c9MILE@acme.ex": "\u00c9mile@acme.ex",
	} {
		if got := tenant.AddressKey(in); got != want {
			t.Errorf("tenant.AddressKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// max_deadline bounds a request's own deadline (threads checks it at
// ingest): 30 days unless the tenant sets another.
func TestMaxDeadline(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		add  string
		want time.Duration
	}{
		{"", 30 * 24 * time.Hour},
		{"    max_deadline: 48h\n", 48 * time.Hour},
		{"    max_deadline: 2160h\n", 90 * 24 * time.Hour},
	} {
		c, problems := parse(t, base+tt.add)
		if problems != nil {
			t.Fatalf("%q: %s", tt.add, strings.Join(problems, "\n"))
		}
		if got := c.Tenants["acme"].MaxDeadline; got != tt.want || config.DefaultMaxDeadline != 30*24*time.Hour {
			t.Errorf("%q: MaxDeadline = %v, want %v", tt.add, got, tt.want)
		}
	}
}
