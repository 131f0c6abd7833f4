package config

import (
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"approvalsbot/ladder"
	"approvalsbot/tenant"
)

// grants reads tenants.ID.grants into t (docs/configuration.md#grants).
func (d *decoder) grants(t *tenant.Tenant, v *yaml.Node, p string) {
	if isNull(v) {
		return
	}
	g := tenant.DefaultGrants()
	var enabledN *yaml.Node
	smallest := tenant.GrantTTLs()[0]
	_, ok := d.mapping(v, p, map[string]field{
		"enabled": func(_, v *yaml.Node, p string) { g.Enabled, enabledN = d.boolean(v, p), deref(v) },
		"max_ttl": func(_, v *yaml.Node, p string) {
			x, ok := d.duration(v, p)
			switch {
			case !ok:
			case x < smallest:
				d.problemf(v, p, "%s is shorter than the shortest grant offered (%s): give %s to %s",
					ladder.FormatDuration(x), ladder.FormatDuration(smallest), ladder.FormatDuration(smallest),
					ladder.FormatDuration(tenant.MaxGrantTTL))
			case x > tenant.MaxGrantTTL:
				d.problemf(v, p, "%s is longer than a grant may live (%s)", ladder.FormatDuration(x), ladder.FormatDuration(tenant.MaxGrantTTL))
			default:
				g.MaxTTL = x
			}
		},
		"max_uses": func(_, v *yaml.Node, p string) {
			if n, ok := d.wholeNumber(v, p, 1, tenant.MaxGrantUses); ok {
				g.MaxUses = n
			}
		},
		"destructive": func(_, v *yaml.Node, p string) { g.Destructive = d.boolean(v, p) },
		"free":        func(_, v *yaml.Node, p string) { g.Free = d.grantFree(v, p) },
	})
	if !ok {
		return
	}
	t.Grants = g
	if g.Enabled {
		if d.grantsOn == nil {
			d.grantsOn = map[string]passkeyPos{}
		}
		d.grantsOn[t.ID] = passkeyPos{node: enabledN, path: joinKey(p, "enabled")}
	}
}

// grantFree reads grants.free: function name to the arguments a "these
// values" grant may leave free.
func (d *decoder) grantFree(v *yaml.Node, p string) map[string][]string {
	if isNull(v) {
		return nil
	}
	n := deref(v)
	if n.Kind != yaml.MappingNode {
		d.problemf(n, p, "expected a mapping of function name to a list of arguments, got %s", kindOf(n))
		return nil
	}
	out := map[string][]string{}
	d.pairs(n, p, func(k, v *yaml.Node, fn string) {
		fp := joinKey(p, fn)
		if strings.TrimSpace(fn) == "" || strings.ContainsAny(fn, "*?[") {
			d.problemf(k, fp, "a function is named exactly, without globs: a grant leaves an argument free for one function only")
			return
		}
		var args []string
		d.list(v, fp, func(_ int, item *yaml.Node, ip string) {
			s, ok := d.text(item, ip, "an argument name")
			switch {
			case !ok:
			case strings.TrimSpace(s) == "":
				d.problemf(deref(item), ip, "empty: name an argument of %s", fn)
			case slices.Contains(args, s):
				d.problemf(deref(item), ip, "%q is listed twice", s)
			default:
				args = append(args, s)
			}
		})
		if len(args) > 0 {
			out[fn] = args
		}
	})
	return out
}

// grantsNeedFeature checks that a tenant enabling grants is served by a
// backend that takes them: with none listing the feature, the button is
// never offered, which an operator who enabled it should hear.
func (d *decoder) grantsNeedFeature(c *Config) {
	if len(d.grantsOn) == 0 || c.Backend.Supports(FeatureGrants) {
		return
	}
	ids := make([]string, 0, len(d.grantsOn))
	for id := range d.grantsOn {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		at := d.grantsOn[id]
		d.problemf(at.node, at.path, "grants need a backend that applies them: add %q to backend.features (docs/protocol.md#grants), or set enabled: false",
			FeatureGrants)
	}
}

// grantWords is a tenant's grant rule as `bot check` prints it.
func grantWords(g tenant.Grants) string {
	if !g.Enabled {
		return ""
	}
	var ttls []string
	for _, d := range g.TTLs() {
		ttls = append(ttls, ladder.FormatDuration(d))
	}
	w := "  grants: Approve and allow… for " + strings.Join(ttls, ", ") + ", at most " + strconv.Itoa(g.MaxUses) + " uses"
	if g.Destructive {
		w += "; destructive calls too"
	} else {
		w += "; never a destructive call"
	}
	fns := make([]string, 0, len(g.Free))
	for fn := range g.Free {
		fns = append(fns, fn)
	}
	slices.Sort(fns)
	for _, fn := range fns {
		w += "; " + fn + " may differ in " + strings.Join(g.FreeFor(fn), ", ")
	}
	return w + "\n"
}
