// Package tenant is a tenant's policy as the bot runs it: its people and
// roles, where its cards go, its ladders, deadlines and tool overrides.
// Package config builds it from the file; the core reads only these types.
package tenant

import (
	"path"
	"slices"
	"strings"
	"time"

	"approvalsbot/ladder"
)

// DefaultLadder is the ladder every tenant has, empty unless configured.
const DefaultLadder = "default"

// Tenant is one tenant's people, places and ladders.
type Tenant struct {
	ID string
	// Deadline applies when neither the request nor a tool override sets one.
	Deadline time.Duration
	// MaxDeadline bounds how far off a request's own deadline may lie, so
	// no link stays valid and no ladder waits without end.
	MaxDeadline time.Duration
	// Post is where each card goes (step 0).
	Post []ladder.Target
	// Audit, when set, is the channel approval.auto_granted notices go to.
	Audit *ladder.Target
	// Digest, when set, posts what still waits on a schedule.
	Digest             *Digest
	ForbidSelfApproval bool
	// Zone is the time zone windows, rotations and digests are read in by
	// default; nil means UTC.
	Zone *time.Location
	// Rotations by name; each ladder carries those its steps name.
	Rotations map[string]ladder.Rotation
	// Ladders by name; always holds DefaultLadder.
	Ladders map[string]ladder.Ladder
	// Labels are what a card's plan line calls targets (tenants.ID.labels).
	Labels ladder.Labels
	// Quorum, when set, is how many people must approve any call of the
	// tenant's; a tool override's own replaces it (QuorumFor).
	Quorum *Quorum
	// Tools are per-function overrides; the first whose glob matches wins.
	Tools   []ToolOverride
	Members []Member
	// EmailDecisions is what escalation mail lets a member decide.
	EmailDecisions string
	// Passkeys is which approvals need a member's passkey to approve
	// (PasskeyRequired); "" is PasskeysOff.
	Passkeys PasskeyRule
	// Grants is the tenant's rule for "Approve and allow…"; off unless
	// the file enables it.
	Grants Grants
}

// Digest posts a summary of what still waits.
type Digest struct {
	// Cron is a standard 5-field spec or a descriptor such as @daily.
	Cron string
	Zone *time.Location
	// To is a channel.
	To ladder.Target
}

// ToolOverride changes how calls of matching functions are handled. Zero
// fields leave the tenant's setting in place.
type ToolOverride struct {
	// Glob matches function names with path.Match; "*" also matches dots,
	// so "payments.*" matches "payments.refund".
	Glob     string
	Ladder   string
	Deadline time.Duration
	// Post, when set, replaces the tenant's Post.
	Post []ladder.Target
	// Quorum, when set, replaces the tenant's; one that needs a single
	// approval turns the tenant's off for these functions.
	Quorum *Quorum
}

// Quorum is how many distinct people must approve a call before the bot
// sends the yes, and from whom (docs/configuration.md#quorum). Each is a
// tenant user: one person counts once, whatever surfaces they click on.
type Quorum struct {
	// Need is how many distinct eligible members must approve.
	Need int
	// From names who is eligible, as written: a member's user id,
	// "role:NAME" (the members with exactly that role), "rotation:NAME"
	// (every member of the rotation, on duty or not). Empty: every member
	// who may decide. Always only members whose role may decide.
	From []string
}

// The forms of a Quorum's From.
const (
	QuorumRole     = "role:"
	QuorumRotation = "rotation:"
)

// Words say who a quorum counts, as the card, its answers and bot check
// say it: "rotation finance, user:kevin or role admin".
func (q Quorum) Words() string {
	if len(q.From) == 0 {
		return "any member who may decide"
	}
	words := make([]string, len(q.From))
	for i, f := range q.From {
		switch {
		case strings.HasPrefix(f, QuorumRole):
			words[i] = "role " + strings.TrimPrefix(f, QuorumRole)
		case strings.HasPrefix(f, QuorumRotation):
			words[i] = "rotation " + strings.TrimPrefix(f, QuorumRotation)
		default:
			words[i] = f
		}
	}
	if n := len(words); n > 1 {
		return strings.Join(words[:n-1], ", ") + " or " + words[n-1]
	}
	return words[0]
}

// QuorumFor is the quorum a call of function needs: the tool override's,
// else the tenant's; nil when one approval is enough.
func (t *Tenant) QuorumFor(function string) *Quorum {
	q := t.Quorum
	if o, ok := t.Tool(function); ok && o.Quorum != nil {
		q = o.Quorum
	}
	if q == nil || q.Need < 2 {
		return nil
	}
	return q
}

// Eligible is who the quorum counts, in the order its From names them
// (members in the file's order within a role), each once: members whose
// role may decide, with the ways the bot reaches them. A rotation member
// who is no member of the tenant, or may not decide, is not eligible.
func (t *Tenant) Eligible(q Quorum) []ladder.RotationMember {
	var out []ladder.RotationMember
	seen := map[string]bool{}
	add := func(m Member) {
		if seen[m.User] || !m.Role.CanDecide() {
			return
		}
		seen[m.User] = true
		out = append(out, ladder.RotationMember{User: m.User, Chat: m.Chat, Email: m.Email})
	}
	if len(q.From) == 0 {
		for _, m := range t.Members {
			add(m)
		}
		return out
	}
	for _, f := range q.From {
		switch {
		case strings.HasPrefix(f, QuorumRole):
			for _, m := range t.Members {
				if string(m.Role) == strings.TrimPrefix(f, QuorumRole) {
					add(m)
				}
			}
		case strings.HasPrefix(f, QuorumRotation):
			r, ok := t.Rotations[strings.TrimPrefix(f, QuorumRotation)]
			if !ok {
				continue
			}
			for _, rm := range r.Members {
				if m, ok := t.MemberByUser(rm.User); ok {
					add(m)
				}
			}
		default:
			if m, ok := t.MemberByUser(f); ok {
				add(m)
			}
		}
	}
	return out
}

// Member maps a tenant user to their chat identities and permissions.
type Member struct {
	// User is the tenant user id the backend knows ("user:kevin").
	User string
	Role Role
	// Content lets the member see arguments and digests.
	Content bool
	// Governance lets the member give protected paths' second approval.
	Governance bool
	// Chat is the member's bare user id by chat surface name; Email is a
	// bare address or empty.
	Chat  ladder.ChatIDs
	Email string
	// Push is where a push step reaches the member; zero for nowhere.
	Push Push
}

// ChatID is the member's user id on surface, or "" when not on it.
func (m Member) ChatID(surface string) string { return m.Chat[surface] }

// Role is what a member may do.
type Role string

// Roles from least to most powerful.
const (
	RoleViewer   Role = "viewer"
	RoleOperator Role = "operator"
	RoleAdmin    Role = "admin"
	RoleOwner    Role = "owner"
)

// Roles lists every role, least powerful first.
func Roles() []Role { return []Role{RoleViewer, RoleOperator, RoleAdmin, RoleOwner} }

// Valid reports whether r is one of Roles.
func (r Role) Valid() bool { return slices.Contains(Roles(), r) }

// CanDecide reports whether a member with this role may approve or deny.
func (r Role) CanDecide() bool {
	return r == RoleOperator || r == RoleAdmin || r == RoleOwner
}

// What a tenant's escalation mail may let a member decide on the bot's
// decision page (Tenant.EmailDecisions).
const (
	// EmailDecisionsOff: mail carries no decision links.
	EmailDecisionsOff = "off"
	// EmailDecisionsDeny: mail carries a Deny link only. A Deny never
	// makes anything run, so it is the default.
	EmailDecisionsDeny = "deny"
	// EmailDecisionsApprove: Approve and Deny links, Approve only where a
	// click could approve (no typed confirmation, no protected paths).
	EmailDecisionsApprove = "approve"
)

// DefaultEmailDecisions is what a tenant that says nothing allows.
const DefaultEmailDecisions = EmailDecisionsDeny

// MailDecides reports whether the tenant takes this decision (an
// approval, or a denial) by mail, on the decision page: the one rule
// for the links a mail carries and for what the page then takes.
func (t *Tenant) MailDecides(approve bool) bool {
	switch t.EmailDecisions {
	case EmailDecisionsApprove:
		return true
	case EmailDecisionsDeny, "": // "": a tenant not parsed, the default
		return !approve
	}
	return false
}

// PasskeyRule is a tenant's rule for which approvals need a passkey: an
// Approve of such a call is taken only on the decision page, with a
// WebAuthn assertion of the member's (adapters/passkey). Each rule takes
// in the calls of the one before it.
type PasskeyRule string

// The passkey rules, from none to every call.
const (
	// PasskeysOff: no approval needs a passkey (the default).
	PasskeysOff PasskeyRule = "off"
	// PasskeysDestructive: a call the card marks DESTRUCTIVE.
	PasskeysDestructive PasskeyRule = "destructive"
	// PasskeysFlagged: a destructive call, and one the card flags (Deny
	// first: out of scope, new to the job, a class above the job's,
	// warned about, asked by the origin check).
	PasskeysFlagged PasskeyRule = "flagged"
	// PasskeysTyped: a flagged call, and one that needs a typed
	// confirmation.
	PasskeysTyped PasskeyRule = "typed"
	// PasskeysAll: every call.
	PasskeysAll PasskeyRule = "all"
)

// PasskeyRules lists every rule, from none to every call.
func PasskeyRules() []PasskeyRule {
	return []PasskeyRule{PasskeysOff, PasskeysDestructive, PasskeysFlagged, PasskeysTyped, PasskeysAll}
}

// PasskeyFacts are what a passkey rule reads of a call.
type PasskeyFacts struct {
	// Destructive: the card says DESTRUCTIVE (approval.Approval.Destructive).
	Destructive bool
	// Flagged: the card puts Deny first (approval.Approval.DenyFirst).
	Flagged bool
	// Typed: the call needs a typed confirmation (approval.Approval.Confirm).
	Typed bool
}

// PasskeyRequired reports whether rule asks for a passkey to approve a
// call with facts f: the one rule the decision page and chat read. An
// unknown rule asks for one (a rule misread must not let a yes through
// without it).
func PasskeyRequired(rule PasskeyRule, f PasskeyFacts) bool {
	switch rule {
	case PasskeysOff, "":
		return false
	case PasskeysDestructive:
		return f.Destructive
	case PasskeysFlagged:
		return f.Destructive || f.Flagged
	case PasskeysTyped:
		return f.Destructive || f.Flagged || f.Typed
	}
	return true
}

// Tool returns the first override whose glob matches function.
func (t *Tenant) Tool(function string) (ToolOverride, bool) {
	for _, o := range t.Tools {
		if ok, _ := path.Match(o.Glob, function); ok {
			return o, true
		}
	}
	return ToolOverride{}, false
}

// LadderFor picks the ladder for a call of function whose request named
// requested (may be ""): the requested ladder when the tenant has it, else
// the tool override's, else the default.
func (t *Tenant) LadderFor(function, requested string) ladder.Ladder {
	if l, ok := t.Ladders[requested]; ok && requested != "" {
		return l
	}
	if o, ok := t.Tool(function); ok && o.Ladder != "" {
		if l, ok := t.Ladders[o.Ladder]; ok {
			return l
		}
	}
	if l, ok := t.Ladders[DefaultLadder]; ok {
		return l
	}
	return ladder.Ladder{Name: DefaultLadder}
}

// PostFor is where cards for function go: the tool override's, else the tenant's.
func (t *Tenant) PostFor(function string) []ladder.Target {
	if o, ok := t.Tool(function); ok && len(o.Post) > 0 {
		return o.Post
	}
	return t.Post
}

// DeadlineFor is the deadline a call of function gets when its request
// sets none: the tool override's, else the tenant's, else
// ladder.DefaultDeadline. ladder.Deadline applies the request's own first.
func (t *Tenant) DeadlineFor(function string) time.Duration {
	if o, ok := t.Tool(function); ok && o.Deadline > 0 {
		return o.Deadline
	}
	if t.Deadline > 0 {
		return t.Deadline
	}
	return ladder.DefaultDeadline
}

// MemberOn is the one lookup of a person by where they clicked or were
// reached: by user id on a chat surface, by AddressKey on email. An empty
// id matches nobody.
func (t *Tenant) MemberOn(surface, id string) (Member, bool) {
	if surface == SurfacePage {
		// The decision page reached from a chat link: the member by user id.
		return t.MemberByUser(id)
	}
	if surface == ladder.SurfaceEmail {
		key := AddressKey(id)
		return t.member(func(m Member) bool { return m.Email != "" && AddressKey(m.Email) == key }, id)
	}
	return t.member(func(m Member) bool { return m.Chat[surface] == id }, id)
}

// SurfacePage names decisions made on the decision page reached from a
// link the bot gave in chat (via.surface "page", via.user the tenant
// user id); a page reached from mail is ladder.SurfaceEmail.
const SurfacePage = "page"

// AddressKey is the one form in which two e-mail addresses are compared:
// ASCII A to Z lowered, every other character as written. Never a Unicode
// fold, which would take a look-alike mailbox (ſam@) for a member's:
// docs/design.md#one-key-for-an-e-mail-address.
func AddressKey(addr string) string {
	for i := 0; i < len(addr); i++ {
		if c := addr[i]; 'A' <= c && c <= 'Z' {
			b := []byte(addr)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return addr
}

// MemberByUser finds the member with a tenant user id.
func (t *Tenant) MemberByUser(user string) (Member, bool) {
	return t.member(func(m Member) bool { return m.User == user }, user)
}

// member scans linearly: member lists are short, and keeping Tenant free of
// hidden indexes keeps it a plain value.
func (t *Tenant) member(match func(Member) bool, key string) (Member, bool) {
	if key == "" {
		return Member{}, false
	}
	for _, m := range t.Members {
		if match(m) {
			return m, true
		}
	}
	return Member{}, false
}

// Location is the tenant's time zone, UTC when the file names none.
func (t *Tenant) Location() *time.Location {
	if t.Zone == nil {
		return time.UTC
	}
	return t.Zone
}
