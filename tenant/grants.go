package tenant

import (
	"slices"
	"time"
)

// Grants is a tenant's rule for "Approve and allow…" (tenants.ID.grants,
// docs/configuration.md#grants): whether a member may approve a call and
// allow the same kind of call for a while, how long and how many times at
// most, and which arguments a "these values" grant may leave free. The
// zero Grants offers none.
type Grants struct {
	Enabled bool
	// MaxTTL caps the presets offered (GrantTTLs); MaxUses caps the use
	// presets (GrantUses).
	MaxTTL  time.Duration
	MaxUses int
	// Destructive: a destructive call may be granted too (off by default).
	Destructive bool
	// Free lists, per function, the arguments other than role-marked ones
	// that a "these values" grant leaves free to differ.
	Free map[string][]string
}

// The defaults and bounds of a tenant's grants.
const (
	DefaultGrantMaxTTL  = 8 * time.Hour
	DefaultGrantMaxUses = 20
	// MaxGrantTTL is the longest any grant lives: a day, so a rule nobody
	// remembers does not outlive the work it was given for.
	MaxGrantTTL = 24 * time.Hour
	// MaxGrantUses bounds max_uses.
	MaxGrantUses = 100
)

// GrantTTLs are the lifetimes a person may pick, shortest first.
func GrantTTLs() []time.Duration {
	return []time.Duration{15 * time.Minute, time.Hour, 8 * time.Hour, 24 * time.Hour}
}

// GrantUses are the use caps a person may pick, smallest first.
func GrantUses() []int { return []int{1, 3, 5, 10, 20, 50, 100} }

// DefaultGrants is a tenant's rule when its file says nothing: off.
func DefaultGrants() Grants {
	return Grants{MaxTTL: DefaultGrantMaxTTL, MaxUses: DefaultGrantMaxUses}
}

// TTLs are the lifetimes offered under the tenant's cap.
func (g Grants) TTLs() []time.Duration {
	var out []time.Duration
	for _, d := range GrantTTLs() {
		if d <= g.MaxTTL {
			out = append(out, d)
		}
	}
	return out
}

// Uses are the use caps offered under the tenant's cap.
func (g Grants) Uses() []int {
	var out []int
	for _, n := range GrantUses() {
		if n <= g.MaxUses {
			out = append(out, n)
		}
	}
	return out
}

// AllowsTTL reports whether d is a preset offered under the cap.
func (g Grants) AllowsTTL(d time.Duration) bool { return slices.Contains(g.TTLs(), d) }

// AllowsUses reports whether n is a preset offered under the cap.
func (g Grants) AllowsUses(n int) bool { return slices.Contains(g.Uses(), n) }

// FreeFor is the arguments a "these values" grant of function leaves
// free, sorted; nil for none.
func (g Grants) FreeFor(function string) []string {
	free := slices.Clone(g.Free[function])
	slices.Sort(free)
	return slices.Compact(free)
}
