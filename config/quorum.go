package config

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"approvalsbot/ladder"
	"approvalsbot/tenant"
)

// MaxQuorum bounds a quorum's approvals: a rule is a few people's
// agreement, and every one of them is paged until they answer.
const MaxQuorum = 20

// quorumPos is a quorum rule as written, settled against the tenant's
// members and rotations once the tenant is read (settleQuorum).
type quorumPos struct {
	q     tenant.Quorum
	path  string
	at    *yaml.Node // the rule's mapping
	needN *yaml.Node // nil when approvals is missing
	from  []fromRef
	ok    bool // every key read without a problem
}

// fromRef is one entry of a quorum's from, and where it was written.
type fromRef struct {
	entry string
	path  string
	n     *yaml.Node
}

// quorum decodes `quorum: {approvals: 2, from: [...]}`; nil when absent.
func (d *decoder) quorum(v *yaml.Node, p string) *quorumPos {
	if isNull(v) {
		return nil
	}
	qp := &quorumPos{path: p, at: deref(v), ok: true}
	seen, ok := d.mapping(v, p, map[string]field{
		"approvals": func(_, v *yaml.Node, p string) {
			qp.needN = deref(v)
			n, ok := d.wholeNumber(v, p, 1, MaxQuorum)
			qp.q.Need, qp.ok = n, qp.ok && ok
		},
		"from": func(_, v *yaml.Node, p string) {
			_, ok := d.list(v, p, func(_ int, item *yaml.Node, p string) {
				s, ok := d.text(item, p, "a member, role:NAME or rotation:NAME")
				switch {
				case ok && s != "":
					qp.from = append(qp.from, fromRef{entry: s, path: p, n: deref(item)})
					return
				case ok || isNull(item):
					d.problemf(deref(item), p, "empty: %s", fromForms)
				}
				qp.ok = false
			})
			qp.ok = qp.ok && ok
		},
	})
	if !ok {
		return nil
	}
	if !given(seen, "approvals") {
		d.problemf(qp.at, joinKey(p, "approvals"), "missing: how many distinct people must approve, 1 to %d (1: one approval is enough)", MaxQuorum)
		qp.needN, qp.ok = nil, false
	}
	if qp.q.Need == 1 && len(qp.from) > 0 {
		// One approval decides such a call, from anyone who may decide:
		// a from would read as a limit the bot does not apply.
		d.problemf(qp.from[0].n, joinKey(p, "from"), "approvals: 1 is one approval from anyone who may decide, so from would limit nothing: drop from, or need 2 or more approvals")
		qp.ok = false
	}
	return qp
}

// fromForms says what a quorum's from may name.
const fromForms = "name a member by user id (like user:kevin), a role that may decide (role:operator, role:admin or role:owner) or a rotation (rotation:NAME)"

// settleQuorum checks a rule's from against the tenant, each entry once,
// and that enough members are eligible to meet it. The job's starter
// never counts, so a rule with exactly its number of eligible members is
// no problem here: `bot check` warns of it (quorumSummary).
func (d *decoder) settleQuorum(t *tenant.Tenant, qp *quorumPos, rotations []rotationPos) *tenant.Quorum {
	if qp == nil {
		return nil
	}
	q := qp.q
	ok := qp.ok
	first := map[string]string{}
	for _, f := range qp.from {
		if prev, dup := first[f.entry]; dup {
			d.problemf(f.n, f.path, "%s is already %s", f.entry, prev)
			ok = false
			continue
		}
		first[f.entry] = f.path
		if !d.fromEntry(t, f, rotations) {
			ok = false
		}
		q.From = append(q.From, f.entry)
	}
	if ok && q.Need >= 2 {
		if el := t.Eligible(q); len(el) < q.Need {
			remedy := "name more people in from, or need fewer approvals"
			if len(q.From) == 0 {
				remedy = "give more members a role that may decide, or need fewer approvals"
			}
			d.problemf(qp.needN, joinKey(qp.path, "approvals"), "%d approvals cannot be met: %s, each counted once: %s",
				q.Need, eligibleWords(el), remedy)
		}
	}
	return &q
}

// eligibleWords says how many members are eligible, and who.
func eligibleWords(el []ladder.RotationMember) string {
	switch len(el) {
	case 0:
		return "no member is eligible"
	case 1:
		return "only 1 member is eligible (" + el[0].User + ")"
	}
	return fmt.Sprintf("only %d members are eligible (%s)", len(el), eligibleUsers(el))
}

func eligibleUsers(el []ladder.RotationMember) string {
	users := make([]string, len(el))
	for i, m := range el {
		users[i] = m.User
	}
	return strings.Join(users, ", ")
}

// fromEntry checks one entry of a quorum's from: a member who may decide,
// a role that may decide, or a rotation of the tenant. Sets whose people
// the bot cannot list (a Slack user group, a Discord role, a channel) are
// refused: a quorum must know who counts.
func (d *decoder) fromEntry(t *tenant.Tenant, f fromRef, rotations []rotationPos) bool {
	e := f.entry
	switch {
	case strings.HasPrefix(e, tenant.QuorumRole):
		r := tenant.Role(strings.TrimPrefix(e, tenant.QuorumRole))
		switch {
		case !r.Valid():
			d.problemf(f.n, f.path, "%q is not a role: %s", r, fromForms)
			return false
		case !r.CanDecide():
			d.problemf(f.n, f.path, "%s cannot decide: a %s's approval never counts; name role:operator, role:admin or role:owner", e, r)
			return false
		}
		return true
	case strings.HasPrefix(e, tenant.QuorumRotation):
		name := strings.TrimPrefix(e, tenant.QuorumRotation)
		if _, ok := t.Rotations[name]; ok {
			return true
		}
		for _, rp := range rotations {
			if rp.name == name {
				return false // defined, but wrong: reported where it is written
			}
		}
		d.problemf(f.n, f.path, "rotation %q is not defined in tenants.%s.rotations%s", name, t.ID, haveNames(t.ID, rotations))
		return false
	}
	if m, ok := t.MemberByUser(e); ok {
		if !m.Role.CanDecide() {
			d.problemf(f.n, f.path, "%s is a %s and cannot decide: their approval would never count", e, m.Role)
			return false
		}
		return true
	}
	tg, err := ladder.ParseTarget(e)
	switch {
	case err == nil && tg.IsGroup() || err == nil && tg.IsChannel():
		d.problemf(f.n, f.path, "%s is %s, whose members the bot cannot list, so it cannot tell whose approval counts: %s",
			e, setWords(tg), fromForms)
	case err == nil && (tg.IsUser() || tg.Kind == ladder.KindEmail):
		if m, ok := t.MemberOn(tg.Surface(), tg.ID); ok {
			d.problemf(f.n, f.path, "%s is %s's: a quorum names a member by user id, so write %s", e, m.User, m.User)
		} else {
			d.problemf(f.n, f.path, "%s is no member's of tenant %s: a quorum counts members only; %s", e, t.ID, fromForms)
		}
	case err == nil && tg.IsApprovers():
		d.problemf(f.n, f.path, "approvers is a ladder step's target, the people a quorum still waits for, not who is eligible: %s", fromForms)
	case strings.HasPrefix(e, "slack:") || strings.HasPrefix(e, "discord:"):
		d.problemf(f.n, f.path, "%s is a chat target, whose people the bot cannot list, so it cannot tell whose approval counts: %s", e, fromForms)
	default:
		d.problemf(f.n, f.path, "%s is not a member of tenant %s (members[].user): %s", e, t.ID, fromForms)
	}
	return false
}

// setWords names a group or a channel by what it is.
func setWords(t ladder.Target) string {
	switch t.Kind {
	case ladder.KindSlackUserGroup:
		return "a Slack user group"
	case ladder.KindDiscordRole:
		return "a Discord role"
	}
	return "a channel"
}
