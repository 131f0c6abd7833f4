// Package ladder holds a tenant's escalation ladders and deadlines as plain
// values: targets, steps, rotations, the chat surfaces, and the Plan one
// approval gets when it arrives, frozen into it so that a config reload
// changes only later approvals. It does no I/O and reads no clock; what
// lives here and why: docs/design.md#ladders-and-their-plans.
package ladder

import (
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// DefaultDeadline applies when nothing sets a deadline (Deadline).
const DefaultDeadline = 24 * time.Hour

// DefaultAckPause is how long "I'm looking" holds a ladder's steps when the
// ladder sets no ack_pause.
const DefaultAckPause = 30 * time.Minute

// The bounds of ack_pause: a second, as a repetition's, to a day, past
// which a pause is a stop.
const (
	MinAckPause = time.Second
	MaxAckPause = 24 * time.Hour
)

// Pause is how long an acknowledgement holds the ladder's steps.
func (l Ladder) Pause() time.Duration {
	if l.AckPause <= 0 {
		return DefaultAckPause
	}
	return l.AckPause
}

// TargetKind says what a Target addresses; stored plans hold its values.
type TargetKind string

const (
	// KindSlackChannel is a Slack channel, public (C…) or private (G…).
	KindSlackChannel TargetKind = "slack_channel"
	// KindSlackUser is a Slack user (U…, or W… on Enterprise Grid).
	KindSlackUser TargetKind = "slack_user"
	// KindSlackUserGroup is a Slack user group (S…), mentioned as @group.
	KindSlackUserGroup TargetKind = "slack_user_group"
	// KindDiscordChannel is a Discord channel, by snowflake.
	KindDiscordChannel TargetKind = "discord_channel"
	// KindDiscordUser is a Discord user, by snowflake.
	KindDiscordUser TargetKind = "discord_user"
	// KindDiscordRole is a Discord role, by snowflake, mentioned as @role.
	KindDiscordRole TargetKind = "discord_role"
	// KindEmail is a bare email address.
	KindEmail TargetKind = "email"
	// KindRotation is a tenant's rotation, by name: whoever it puts on
	// duty when a step fires (Plan.Resolve). It is never sent to.
	KindRotation TargetKind = "rotation"
	// KindApprovers is the people a call's quorum still waits for: its
	// eligible members who have not approved the revision on the card,
	// found when a step fires (docs/ladders.md#quorum). Written
	// "approvers"; it has no ID and is never sent to.
	KindApprovers TargetKind = "approvers"
	// KindMember is a tenant member by user id ("user:kevin", the ID
	// whole): a push step reaches them at the push address configured
	// for them when the notice goes, which no plan holds.
	KindMember TargetKind = "member"
)

// Approvers is the target that reaches a quorum's missing approvers.
var Approvers = Target{Kind: KindApprovers}

// TargetKinds lists every kind, so tests and switches can cover them all.
func TargetKinds() []TargetKind {
	return []TargetKind{
		KindSlackChannel, KindSlackUser, KindSlackUserGroup,
		KindDiscordChannel, KindDiscordUser, KindDiscordRole,
		KindEmail, KindRotation, KindApprovers, KindMember,
	}
}

// Surfaces a target can live on, as Target.Surface returns them.
const (
	SurfaceSlack   = "slack"
	SurfaceDiscord = "discord"
	SurfaceEmail   = "email"
)

// Target is one place or person a card, mention, DM or email goes to. Its
// text form (String, ParseTarget) is also its JSON, so plans stay readable.
type Target struct {
	Kind TargetKind
	// ID is the Slack or Discord id without any prefix, or the email address.
	ID string
}

// Forms of a target, quoted in errors so a person can see what is wanted.
const (
	slackForms   = "slack:C… or slack:G… (channel), slack:U… or slack:W… (user), slack:S… (user group)"
	discordForms = "discord:channel:ID, discord:user:ID or discord:role:ID (ID a 17 to 20 digit snowflake)"
	targetForms  = slackForms + "; " + discordForms + "; an email address; rotation:NAME (whoever is on duty); approvers (those a quorum still waits for); or user:NAME (a member, for a push)"
)

// MemberPrefix starts a member's target, which is their user id whole:
// user:kevin.
const MemberPrefix = "user:"

// memberIDMax bounds a member's user id in a target.
const memberIDMax = 256

// ParseTarget reads a target in its text form (targetForms); its errors say
// which form was wanted.
func ParseTarget(s string) (Target, error) {
	switch {
	case strings.HasPrefix(s, "slack:"):
		return parseSlack(s, strings.TrimPrefix(s, "slack:"))
	case strings.HasPrefix(s, "discord:"):
		return parseDiscord(s, strings.TrimPrefix(s, "discord:"))
	case s == "approvers":
		return Approvers, nil
	case strings.HasPrefix(s, MemberPrefix):
		return parseMember(s)
	case strings.HasPrefix(s, "rotation:"):
		name := strings.TrimPrefix(s, "rotation:")
		if !IsRotationName(name) {
			return Target{}, fmt.Errorf("%q: %q is not a rotation name (%s)", s, name, RotationNameRule)
		}
		return Target{Kind: KindRotation, ID: name}, nil
	case strings.Contains(s, "@"):
		return parseEmail(s)
	case s == "":
		return Target{}, fmt.Errorf("empty target: want %s", targetForms)
	default:
		return Target{}, fmt.Errorf("%q is not a target: want %s", s, targetForms)
	}
}

// parseMember reads user:NAME, a member's user id as the tenant writes
// it (members[].user): one word of visible characters.
func parseMember(s string) (Target, error) {
	name := strings.TrimPrefix(s, MemberPrefix)
	ok := name != "" && len(s) <= memberIDMax
	for _, r := range name {
		if r <= ' ' || r == 0x7f || r == utf8.RuneError || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			ok = false
			break
		}
	}
	if !ok {
		return Target{}, fmt.Errorf("%q is not a member's user id: write user:NAME, one word of visible characters (at most %d)", s, memberIDMax)
	}
	return Target{Kind: KindMember, ID: s}, nil
}

func parseSlack(s, id string) (Target, error) {
	if id == "" {
		return Target{}, fmt.Errorf("%q has no Slack id: want %s", s, slackForms)
	}
	if !isSlackID(id) {
		return Target{}, fmt.Errorf("%q: a Slack id is upper-case letters and digits: want %s", s, slackForms)
	}
	switch id[0] {
	case 'C', 'G':
		return Target{Kind: KindSlackChannel, ID: id}, nil
	case 'U', 'W':
		return Target{Kind: KindSlackUser, ID: id}, nil
	case 'S':
		return Target{Kind: KindSlackUserGroup, ID: id}, nil
	}
	return Target{}, fmt.Errorf("%q: a Slack id starting with %q is none of %s", s, id[:1], slackForms)
}

// isSlackID reports whether id looks like a Slack object id. Real ids are 9
// to 11 characters; shorter ones keep examples and tests readable.
func isSlackID(id string) bool {
	if len(id) < 2 || len(id) > 21 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// IsSlackUserID reports whether id is a bare Slack user id (U… or W…).
func IsSlackUserID(id string) bool {
	return isSlackID(id) && (id[0] == 'U' || id[0] == 'W')
}

func parseDiscord(s, rest string) (Target, error) {
	kind, id, ok := strings.Cut(rest, ":")
	if !ok {
		return Target{}, fmt.Errorf("%q: want %s", s, discordForms)
	}
	var k TargetKind
	switch kind {
	case "channel":
		k = KindDiscordChannel
	case "user":
		k = KindDiscordUser
	case "role":
		k = KindDiscordRole
	default:
		return Target{}, fmt.Errorf("%q: %q is not channel, user or role: want %s", s, kind, discordForms)
	}
	if !IsSnowflake(id) {
		return Target{}, fmt.Errorf("%q: %q is not a snowflake id (17 to 20 digits): want %s", s, id, discordForms)
	}
	return Target{Kind: k, ID: id}, nil
}

// IsSnowflake reports whether s is a Discord snowflake: 17 to 20 digits.
func IsSnowflake(s string) bool {
	if len(s) < 17 || len(s) > 20 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func parseEmail(s string) (Target, error) {
	addr, err := ParseBareAddress(s)
	if err != nil {
		return Target{}, err
	}
	return Target{Kind: KindEmail, ID: addr}, nil
}

// ParseBareAddress accepts an email address written on its own, without a
// display name, which a target would lose anyway.
func ParseBareAddress(s string) (string, error) {
	a, err := mail.ParseAddress(s)
	if err != nil {
		return "", fmt.Errorf("%q is not an email address", s)
	}
	if a.Name != "" || a.Address != s {
		return "", fmt.Errorf("%q: write the bare address %s", s, a.Address)
	}
	return a.Address, nil
}

// String gives the text form ParseTarget reads; "" for the zero Target.
func (t Target) String() string {
	switch t.Kind {
	case KindSlackChannel, KindSlackUser, KindSlackUserGroup:
		return "slack:" + t.ID
	case KindDiscordChannel:
		return "discord:channel:" + t.ID
	case KindDiscordUser:
		return "discord:user:" + t.ID
	case KindDiscordRole:
		return "discord:role:" + t.ID
	case KindEmail:
		return t.ID
	case KindRotation:
		return "rotation:" + t.ID
	case KindApprovers:
		return "approvers"
	case KindMember:
		return t.ID
	case "":
		return ""
	}
	return string(t.Kind) + ":" + t.ID
}

// IsZero reports whether t is the zero Target (no target at all).
func (t Target) IsZero() bool { return t == Target{} }

// Surface is where the target lives; "" for the zero Target and a rotation,
// which lives wherever its member on duty is reached.
func (t Target) Surface() string {
	switch t.Kind {
	case KindSlackChannel, KindSlackUser, KindSlackUserGroup:
		return SurfaceSlack
	case KindDiscordChannel, KindDiscordUser, KindDiscordRole:
		return SurfaceDiscord
	case KindEmail:
		return SurfaceEmail
	}
	return ""
}

// IsChannel reports whether a card can be posted to t.
func (t Target) IsChannel() bool {
	return t.Kind == KindSlackChannel || t.Kind == KindDiscordChannel
}

// IsUser reports whether t is one chat person, who can be mentioned and DMed.
func (t Target) IsUser() bool {
	for _, c := range chatSurfaces {
		if t.Kind == c.UserKind {
			return true
		}
	}
	return false
}

// IsGroup reports whether t is a group, mentioned at once but never DMed.
func (t Target) IsGroup() bool {
	return t.Kind == KindSlackUserGroup || t.Kind == KindDiscordRole
}

// IsRotation reports whether t names a rotation (see Plan.Resolve).
func (t Target) IsRotation() bool { return t.Kind == KindRotation }

// IsMember reports whether t names a tenant member by user id, as only
// a push step does.
func (t Target) IsMember() bool { return t.Kind == KindMember }

// IsApprovers reports whether t is a quorum's missing approvers
// (KindApprovers), whom threads finds when a step fires.
func (t Target) IsApprovers() bool { return t.Kind == KindApprovers }

// MarshalText writes the text form, so JSON holds "slack:C0APPROVALS".
func (t Target) MarshalText() ([]byte, error) {
	return []byte(t.String()), nil
}

// UnmarshalText reads the text form; "" reads as the zero Target.
func (t *Target) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*t = Target{}
		return nil
	}
	p, err := ParseTarget(string(b))
	if err != nil {
		return err
	}
	*t = p
	return nil
}

// Anchor says what a Step's time is counted from; it tells `after: 0s`
// from no after at all.
type Anchor string

const (
	// AnchorRequest counts Step.After from the request.
	AnchorRequest Anchor = "request"
	// AnchorDeadline counts Step.BeforeDeadline back from the deadline.
	AnchorDeadline Anchor = "deadline"
)

// Step is one rung of a ladder: when it fires and whom it reaches. People a
// step reaches are told in addition to everyone told before: a ladder only
// widens.
type Step struct {
	// Anchor is AnchorRequest (After applies) or AnchorDeadline
	// (BeforeDeadline applies); the other duration is zero.
	Anchor         Anchor        `json:"anchor"`
	After          time.Duration `json:"after,omitempty"`
	BeforeDeadline time.Duration `json:"before_deadline,omitempty"`
	// Mention replies in each of the card's threads, mentioning these.
	Mention []Target `json:"mention,omitempty"`
	// DM sends these users the card with its buttons.
	DM []Target `json:"dm,omitempty"`
	// Email sends these addresses the escalation email.
	Email []Target `json:"email,omitempty"`
	// Push sends these members a push notice at their push address.
	Push []Target `json:"push,omitempty"`
	// Post posts the card to more channels.
	Post []Target `json:"post,omitempty"`
	// Repeat, when set, fires the step again, one message per thread.
	Repeat *Repeat `json:"repeat,omitempty"`
	// During, when set, holds the step and its repetitions to a window
	// (docs/ladders.md, "Working hours").
	During *Window `json:"during,omitempty"`
}

// repeats is how many more times the step fires after its first.
func (s Step) repeats() int {
	if s.Repeat == nil {
		return 0
	}
	return s.Repeat.Times
}

// Every is how long after a firing the step fires again; zero when it
// does not repeat.
func (s Step) Every() time.Duration {
	if s.Repeat == nil || s.Repeat.Times == 0 {
		return 0
	}
	return s.Repeat.Every
}

// AfterStep returns a step counted from the request.
func AfterStep(d time.Duration) Step { return Step{Anchor: AnchorRequest, After: d} }

// BeforeDeadlineStep returns a step counted back from the deadline.
func BeforeDeadlineStep(d time.Duration) Step {
	return Step{Anchor: AnchorDeadline, BeforeDeadline: d}
}

// At is when the step falls for an approval with these times.
func (s Step) At(requested, deadline time.Time) time.Time {
	if s.Anchor == AnchorDeadline {
		return deadline.Add(-s.BeforeDeadline)
	}
	return requested.Add(s.After)
}

// Offset is when the step falls after the request under that deadline;
// negative for a before_deadline step longer than it.
func (s Step) Offset(deadline time.Duration) time.Duration {
	if s.Anchor == AnchorDeadline {
		return deadline - s.BeforeDeadline
	}
	return s.After
}

// HasTargets reports whether the step reaches anyone at all.
func (s Step) HasTargets() bool {
	return len(s.Mention)+len(s.DM)+len(s.Email)+len(s.Push)+len(s.Post) > 0
}

// Validate checks what a Step must hold on its own; config reports the same
// with file and line, so this guards values built in code.
func (s Step) Validate() error {
	var errs []error
	switch s.Anchor {
	case AnchorRequest:
		if s.After < 0 {
			errs = append(errs, fmt.Errorf("after %s is negative", FormatDuration(s.After)))
		}
		if s.BeforeDeadline != 0 {
			errs = append(errs, errors.New("a step counted from the request has no before_deadline"))
		}
	case AnchorDeadline:
		if s.BeforeDeadline <= 0 {
			errs = append(errs, fmt.Errorf("before_deadline %s is not positive", FormatDuration(s.BeforeDeadline)))
		}
		if s.After != 0 {
			errs = append(errs, errors.New("a step counted from the deadline has no after"))
		}
	default:
		errs = append(errs, fmt.Errorf("anchor %q is not %q or %q", s.Anchor, AnchorRequest, AnchorDeadline))
	}
	if !s.HasTargets() {
		errs = append(errs, errors.New("the step has no targets"))
	}
	for _, t := range s.Post {
		switch {
		case t.IsRotation():
			errs = append(errs, fmt.Errorf("post %s: a rotation is people, not a channel", t))
		case t.IsApprovers():
			errs = append(errs, fmt.Errorf("post %s: a quorum's approvers are people, not a channel", t))
		}
	}
	for _, t := range s.Push {
		if !t.IsMember() && !t.IsRotation() && !t.IsApprovers() {
			errs = append(errs, fmt.Errorf("push %s: a push reaches members (user:NAME), a rotation or approvers", t))
		}
	}
	if s.Repeat != nil {
		if err := s.Repeat.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if s.During != nil {
		if err := s.During.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Ladder is a named list of steps in the config's order.
type Ladder struct {
	Name  string `json:"name"`
	Steps []Step `json:"steps"`
	// AckPause is how long "I'm looking" holds the steps to come (zero:
	// DefaultAckPause), never the deadline.
	AckPause time.Duration `json:"ack_pause,omitempty"`
	// Rotations are the rotations the steps name, frozen into a Plan.
	Rotations map[string]Rotation `json:"rotations,omitempty"`
	// Labels say what a card calls the steps' targets, frozen into a Plan.
	Labels Labels `json:"labels,omitempty"`
}

// Deadline resolves an approval's deadline: the request's own, else the
// tool override's, else the tenant's, else DefaultDeadline. A duration of
// zero or less and a nil or zero time count as unset.
func Deadline(requestOwn *time.Time, requested time.Time, toolOverride, tenantDefault time.Duration) time.Time {
	if requestOwn != nil && !requestOwn.IsZero() {
		return *requestOwn
	}
	for _, d := range []time.Duration{toolOverride, tenantDefault} {
		if d > 0 {
			return requested.Add(d)
		}
	}
	return requested.Add(DefaultDeadline)
}

// FormatDuration prints d as the config writes it: 0s, 15m, 1h30m, 1.5s.
func FormatDuration(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	var b strings.Builder
	if d < 0 {
		b.WriteByte('-')
		d = -d
	}
	if h := d / time.Hour; h > 0 {
		fmt.Fprintf(&b, "%dh", h)
		d -= h * time.Hour
	}
	if m := d / time.Minute; m > 0 {
		fmt.Fprintf(&b, "%dm", m)
		d -= m * time.Minute
	}
	if d > 0 {
		b.WriteString(d.String())
	}
	return b.String()
}
