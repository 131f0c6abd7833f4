package config

import (
	"slices"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"approvalsbot/approval"
	"approvalsbot/ladder"
	"approvalsbot/tenant"
)

// labelMax bounds a label: a name on the plan line, not a sentence.
const labelMax = 64

// labels decodes tenants.ID.labels: a target, as a step writes it, to what
// a card's plan line calls it ("on-call group").
func (d *decoder) labels(v *yaml.Node, p string) ladder.Labels {
	if isNull(v) {
		return nil
	}
	v = deref(v)
	if v.Kind != yaml.MappingNode {
		d.problemf(v, p, "expected a mapping of targets to labels, got %s", kindOf(v))
		return nil
	}
	out := ladder.Labels{}
	d.pairs(v, p, func(k, lv *yaml.Node, key string) {
		lp := joinKey(p, key)
		t, err := ladder.ParseTarget(key)
		if err != nil {
			d.problemf(k, lp, "%v", err)
			return
		}
		s, ok := d.str(lv, lp)
		switch {
		case !ok || s == "":
			d.problemf(deref(lv), lp, "empty label: write what the card calls %s, or leave it out", t)
		case utf8.RuneCountInString(s) > labelMax:
			d.problemf(deref(lv), lp, "a label is at most %d characters", labelMax)
		case hasInvisible(s):
			d.problemf(deref(lv), lp, "a label is one line of visible characters")
		case strings.ContainsAny(s, "<>@") || strings.Contains(s, "://"):
			d.problemf(deref(lv), lp, "a label is plain words: no <, >, @ or link")
		default:
			out[t.String()] = s
		}
	})
	return out
}

// hasInvisible reports whether s holds a character a card would not show
// as itself: a control, a line break, an invisible one.
func hasInvisible(s string) bool {
	for _, r := range s {
		if r < 0x20 || approval.Invisible(r) {
			return true
		}
	}
	return false
}

// labelTargets gives each ladder the labels of the targets its steps name:
// the tenant's own, else a member's user id for the member a target
// reaches, so the plan line names people as the tenant knows them.
func labelTargets(t *tenant.Tenant) {
	for name, l := range t.Ladders {
		var labels ladder.Labels
		for _, s := range l.Steps {
			for _, tg := range slices.Concat(s.Post, s.Mention, s.DM, s.Email, s.Push) {
				label := t.Labels.Label(tg)
				if label == "" {
					label = memberUser(t, tg)
				}
				if label == "" {
					continue
				}
				if labels == nil {
					labels = ladder.Labels{}
				}
				labels[tg.String()] = label
			}
		}
		l.Labels = labels
		t.Ladders[name] = l
	}
}

// memberUser is the user id of the member a person's target reaches, or "".
func memberUser(t *tenant.Tenant, tg ladder.Target) string {
	if !tg.IsUser() && tg.Kind != ladder.KindEmail {
		return ""
	}
	m, _ := t.MemberOn(tg.Surface(), tg.ID)
	return m.User
}
