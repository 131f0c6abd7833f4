package approval

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"approvalsbot/internal/utf16text"
)

// A grant is a person's "Approve and allow…": with their decision, the
// backend is told it may let the same kind of call through for a while
// (docs/protocol.md#grants). The bot approves nothing itself; it decides
// which calls may be offered one, and words the scope exactly as sent.

// GrantScope is how far a grant reaches; never further than the call.
type GrantScope string

// Grant scopes.
const (
	// GrantScopeCall: the same function with the same args_sha256.
	GrantScopeCall GrantScope = "call"
	// GrantScopeValues: the same function, each role-marked argument
	// pinned to the value the card showed, every other argument equal to
	// this call's unless the tenant leaves it free.
	GrantScopeValues GrantScope = "values"
)

// GrantPin is one role-marked argument's value a "values" grant holds
// fixed.
type GrantPin struct {
	Argument string   `json:"argument"`
	Role     RoleKind `json:"role"`
	Value    string   `json:"value"`
}

// GrantIDPattern is a grant id as the bot mints it (NewGrantID).
var GrantIDPattern = regexp.MustCompile(`^g-[0-9a-f]{16}$`)

// NewGrantID mints the id of the grant a decision carries from the
// decision's own key (its outbox row's id), so every retry of the
// decision sends the same id.
func NewGrantID(decisionKey string) string {
	sum := sha256.Sum256([]byte("grant:" + decisionKey))
	return "g-" + hex.EncodeToString(sum[:8])
}

// MaxGrantPins bounds the pins of one grant: the card's role rows.
const MaxGrantPins = 20

// GrantBar is why a call admits no grant, whoever decides it; "" when
// nothing about the call bars one.
type GrantBar string

// Why a call admits no grant.
const (
	GrantOK          GrantBar = ""
	GrantBarConfirm  GrantBar = "it needs a typed confirmation"
	GrantBarPaths    GrantBar = "it changes protected paths"
	GrantBarScope    GrantBar = "a value of it is out of scope"
	GrantBarNew      GrantBar = "it reaches something new to the job"
	GrantBarClass    GrantBar = "it is of a class above the job's"
	GrantBarDestruct GrantBar = "it is destructive"
	GrantBarDigest   GrantBar = "it carries no digest to hold it to"
)

// GrantBar says why the call admits no grant (GrantOK when none): a typed
// confirmation or protected paths (a grant must not get around either),
// flags out of scope, new to the job or above the job's class, and a
// destructive call unless destructive is allowed. Who decides, and the
// tenant's quorum and passkey rules, are the caller's to check.
func (a *Approval) GrantBar(destructive bool) GrantBar {
	switch {
	case a.Confirm != nil:
		return GrantBarConfirm
	case a.Kind == KindProtectedPaths:
		return GrantBarPaths
	case a.OutOfScope():
		return GrantBarScope
	case len(a.Flags.NewToJob) > 0:
		return GrantBarNew
	case a.Flags.ClassAbove != nil:
		return GrantBarClass
	case a.Destructive() && !destructive:
		return GrantBarDestruct
	case a.Call.ArgsSHA256 == "":
		return GrantBarDigest
	}
	return GrantOK
}

// MaxGrantPinValue is the longest value a pin holds, in UTF-16 code units
// as the card counts: it cuts a role's value past this, and a pin needs
// the whole value.
const MaxGrantPinValue = 120

// GrantPins are the pins of a "values" grant of the call: each value of
// each role-marked argument, exactly as the card shows it. ok is false,
// with why, when any value would not be shown whole: the call marks no
// argument, a role's values were left out or not compared, a value is
// redacted, cut, spans lines or holds invisible characters, an argument's
// name is not shown as it is, the call's content is restricted (its
// shared card shows no values), or there are more than MaxGrantPins.
func (a *Approval) GrantPins() (pins []GrantPin, why string) {
	switch {
	case a.ContentRestricted():
		return nil, "the call's content is restricted"
	case len(a.Roles) == 0:
		return nil, "the call marks no argument to pin"
	}
	for _, r := range a.Roles {
		switch {
		case r.LeftOut > 0:
			return nil, "values of " + r.Argument + " were left out"
		case r.NotCompared:
			return nil, "values of " + r.Argument + " were not compared"
		case len(r.Values) == 0:
			return nil, r.Argument + " shows no value"
		case !wholeName(r.Argument):
			return nil, "an argument's name is not shown as it is"
		}
		for _, v := range r.Values {
			if !wholeValue(r, v.Value) {
				return nil, "a value of " + r.Argument + " is not shown whole"
			}
			pins = append(pins, GrantPin{Argument: r.Argument, Role: r.Role, Value: v.Value})
		}
	}
	if len(pins) > MaxGrantPins {
		return nil, fmt.Sprintf("more than %d values to pin", MaxGrantPins)
	}
	return pins, ""
}

// wholeValue reports whether the card shows v, a value of r, exactly.
func wholeValue(r Role, v string) bool {
	return v != "" && utf16text.Len(v) <= MaxGrantPinValue && r.RoleValueShown(RoleValue{Value: v}) == v && plainLine(v)
}

// wholeName reports whether an argument's name shows as it is.
func wholeName(s string) bool {
	return s != "" && len(s) <= 64 && RedactText(s) == s && plainLine(s)
}

// plainLine reports whether s is valid UTF-8 on one line with no
// invisible or control character: shown, it reads as it is.
func plainLine(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || Invisible(r) || r == '\u2028' || r == '\u2029' {
			return false
		}
	}
	return true
}

// GrantTerms is a grant's reach as words are made of it.
type GrantTerms struct {
	Scope    GrantScope
	Function string
	Pins     []GrantPin // scope values
	Free     []string   // scope values: arguments left free
	TTL      time.Duration
	Uses     int
}

// ScopeWords words the scope alone ("acme_github.merge to acme/api
// only, message may differ"), redacted and on one line; the dialog shows
// it beside each choice.
func (g GrantTerms) ScopeWords() string {
	fn := oneLineName(RedactText(g.Function))
	if g.Scope == GrantScopeCall {
		return "this exact call of " + fn + " (the same arguments)"
	}
	var parts []string
	for _, p := range g.Pins {
		parts = append(parts, rolePreposition(p.Role)+" "+p.Value)
	}
	w := fn + " " + strings.Join(parts, " and ") + " only"
	if len(g.Free) > 0 {
		var free []string
		for _, f := range g.Free {
			free = append(free, oneLineName(RedactText(f)))
		}
		verb := " may differ"
		w += ", " + andList(free) + verb
	} else {
		w += ", every other argument as in this call"
	}
	return w
}

// Words words the whole grant: "for 1 h: acme_github.merge to acme/api
// only, message may differ, 5 uses".
func (g GrantTerms) Words() string {
	uses := fmt.Sprintf("%d uses", g.Uses)
	if g.Uses == 1 {
		uses = "1 use"
	}
	return "for " + TTLWords(g.TTL) + ": " + g.ScopeWords() + ", " + uses
}

// TTLWords words a grant's lifetime: "15 min", "1 h", "8 h", "24 h".
func TTLWords(d time.Duration) string {
	if d < time.Hour {
		return fmt.Sprintf("%d min", int(d/time.Minute))
	}
	if d%time.Hour == 0 {
		return fmt.Sprintf("%d h", int(d/time.Hour))
	}
	return d.String()
}

// rolePreposition is how a pinned value reads after the function.
func rolePreposition(r RoleKind) string {
	switch r {
	case RoleRecipient, RolePayee, RoleHost, RoleRepository:
		return "to"
	case RolePath:
		return "on"
	case RoleAmount:
		return "for"
	}
	return "with " + oneLineName(RedactText(string(r)))
}

// oneLineName shows a name on one line, its invisible characters shown.
func oneLineName(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
	return visibleName(s)
}
