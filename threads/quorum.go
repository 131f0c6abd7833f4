package threads

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"approvalsbot/approval"
	"approvalsbot/ladder"
	"approvalsbot/say"
	"approvalsbot/store"
	"approvalsbot/templates"
	"approvalsbot/tenant"
)

// FrozenQuorum is a call's quorum as frozen at request, like its ladder:
// how many distinct people must approve it, and who may
// (docs/configuration.md#quorum). A change to the configuration after
// the request changes neither; a member removed since, or whose role may
// no longer decide, is refused at the click as any such member is.
type FrozenQuorum struct {
	Need int `json:"need"`
	// From is the rule's From as written, for the card's words.
	From []string `json:"from,omitempty"`
	// Eligible are the members the rule counted at request, with the ways
	// the ladder's approvers target reaches them; never the job's starter.
	Eligible []ladder.RotationMember `json:"eligible"`
}

// freezeQuorum is the quorum a call needs under t as configured now; nil
// when one approval decides it.
func freezeQuorum(t *tenant.Tenant, a *approval.Approval) *FrozenQuorum {
	q := t.QuorumFor(a.Call.Function)
	if q == nil {
		return nil
	}
	fq := &FrozenQuorum{Need: q.Need, From: slices.Clone(q.From), Eligible: []ladder.RotationMember{}}
	for _, m := range t.Eligible(*q) {
		if a.Job.StartedBy != "" && m.User == a.Job.StartedBy {
			continue // a quorum never counts the starter, whatever forbid_self_approval says
		}
		fq.Eligible = append(fq.Eligible, m)
	}
	return fq
}

// counts reports whether the quorum counts user's approval.
func (q *FrozenQuorum) counts(user string) bool {
	return slices.ContainsFunc(q.Eligible, func(m ladder.RotationMember) bool { return m.User == user })
}

// words says who is eligible, as the card and the answers say it:
// "rotation finance or user:kevin".
func (q *FrozenQuorum) words() string {
	return tenant.Quorum{Need: q.Need, From: q.From}.Words()
}

// refuse says why the quorum does not count an Approve by user of a call
// of job; the zero Reason when it does.
func (q *FrozenQuorum) refuse(user string, job approval.Job) say.Reason {
	if job.StartedBy != "" && user == job.StartedBy {
		return say.Reason{Kind: say.StarterNoCount, Job: job.ID, Need: q.Need}
	}
	if !q.counts(user) {
		return say.Reason{Kind: say.NotEligible, Need: q.Need, Who: q.words()}
	}
	return say.Reason{}
}

// counts says why the card's quorum would not count an Approve by user
// now (not eligible, the starter, approved already); the zero Reason when
// it would, or the call has no quorum.
func (c Card) counts(user string) say.Reason {
	q := c.Frozen.Quorum
	if q == nil || c.Approval == nil {
		return say.Reason{}
	}
	return q.standing(user, c.Approval.Job, c.votes, c.Approval.Revision, c.Now, c.Frozen.zone())
}

// standing says why the quorum would not count an Approve by user of
// revision rev of a call of job, given the approvals v (not eligible, the
// starter, approved already, at a time worded for now in zone); the zero
// Reason when it would. The one rule the click and the page both read.
func (q *FrozenQuorum) standing(user string, job approval.Job, v votes, rev int, now time.Time, zone *time.Location) say.Reason {
	if why := q.refuse(user, job); !why.IsZero() {
		return why
	}
	if x, ok := v.of(user, rev); ok {
		return say.Reason{Kind: say.VotedAlready, At: TimeAt(x.At, now, zone),
			Count: len(v.on(rev)), Need: q.Need, Who: q.words()}
	}
	return say.Reason{}
}

// votes are the approvals given towards an approval's quorum
// (store.Approval.Votes): those of one revision, the newest any was given
// to. A reask voids them: they count only for their revision.
//
// The column holds the call's quorum rule too, frozen at request: a
// column of its own, so a replica of a release before quorums, which
// rewrites the plan whole on a reask, cannot drop the rule with it.
type votes struct {
	// Rule is the call's quorum; nil when one approval decides it.
	Rule      *FrozenQuorum `json:"rule,omitempty"`
	Revision  int           `json:"revision"`
	Approvals []vote        `json:"approvals,omitempty"`
	// Voided is how many approvals given to an earlier revision the reask
	// to Revision voided.
	Voided int `json:"voided,omitempty"`
	// Dropped is how many approvals of Revision no longer count: their
	// givers were removed from the tenant since, or may no longer decide.
	Dropped int `json:"dropped,omitempty"`
}

// vote is one person's approval, recorded under the approval's lock.
type vote struct {
	Actor   string    `json:"actor"`
	Surface string    `json:"surface"`
	User    string    `json:"user,omitempty"`
	At      time.Time `json:"at"`
	// Digest is the call's digest when the person holds the content
	// permission, as their decision would carry it.
	Digest string `json:"digest,omitempty"`
}

// changeVotes rewrites row's votes column with change. A column the bot
// cannot read is an error, never written over: it may hold the rule.
func changeVotes(row *store.Approval, change func(votes) votes) error {
	var v votes
	if len(row.Votes) > 0 {
		if err := json.Unmarshal(row.Votes, &v); err != nil {
			return fmt.Errorf("decode the quorum of %s: %w", row.ID, err)
		}
	}
	row.Votes = change(v).marshal()
	return nil
}

// votesOf reads the approvals given so far, as stored; none when the row
// holds none or holds what the bot cannot read (never more than were
// given; frozenOf refuses such a row, so it decides nothing).
func votesOf(row *store.Approval) votes {
	var v votes
	if len(row.Votes) == 0 || json.Unmarshal(row.Votes, &v) != nil {
		return votes{}
	}
	return v
}

// liveVotes is the approvals given so far that still count: those whose
// givers the tenant, as configured now, still has as members who may
// decide; the others are counted in Dropped. A quorum is met by people
// who may decide when it is met, not by who could when they clicked.
func (s *Service) liveVotes(row *store.Approval) votes {
	return votesOf(row).still(s.decides(row.Tenant))
}

// decides reports, for the tenant as configured now, whether a user is
// a member whose role may decide.
func (s *Service) decides(tenantID string) func(user string) bool {
	t, ok := s.tenants.Tenant(tenantID)
	return func(user string) bool {
		if !ok {
			return false
		}
		m, found := t.MemberByUser(user)
		return found && m.Role.CanDecide()
	}
}

// still moves the approvals whose givers decides says no to Dropped.
func (v votes) still(decides func(user string) bool) votes {
	if len(v.Approvals) == 0 {
		return v
	}
	kept := make([]vote, 0, len(v.Approvals))
	for _, x := range v.Approvals {
		if decides(x.Actor) {
			kept = append(kept, x)
		} else {
			v.Dropped++
		}
	}
	v.Approvals = kept
	return v
}

// on is the approvals that count for revision rev.
func (v votes) on(rev int) []vote {
	if v.Revision != rev {
		return nil
	}
	return v.Approvals
}

// of finds actor's approval of revision rev.
func (v votes) of(actor string, rev int) (vote, bool) {
	i := slices.IndexFunc(v.on(rev), func(x vote) bool { return x.Actor == actor })
	if i < 0 {
		return vote{}, false
	}
	return v.Approvals[i], true
}

// voided is how many approvals a card of revision rev says a reask voided.
func (v votes) voided(rev int) int {
	switch {
	case v.Revision == rev:
		return v.Voided
	case v.Revision < rev:
		return len(v.Approvals)
	}
	return 0
}

// with adds x to the approvals of revision rev; those of an earlier
// revision are voided.
func (v votes) with(rev int, x vote) votes {
	if v.Revision != rev {
		return votes{Rule: v.Rule, Revision: rev, Approvals: []vote{x}, Voided: v.voided(rev)}
	}
	v.Approvals = append(slices.Clone(v.Approvals), x)
	return v
}

// without takes actor's approval of revision rev away: the one that met
// the quorum, when the decision it sent did not land.
func (v votes) without(actor string, rev int) votes {
	if v.Revision != rev {
		return v
	}
	v.Approvals = slices.DeleteFunc(slices.Clone(v.Approvals), func(x vote) bool { return x.Actor == actor })
	return v
}

// refused takes every approval of revision rev away: the backend refused
// the decision they made together, and it cannot say whose approval it
// refused in a form the bot reads, so each must be given again (a stale
// one kept would refuse every quorum it completed).
func (v votes) refused(rev int) votes {
	if v.Revision != rev {
		return v
	}
	v.Approvals = nil
	return v
}

// marshal is the column's JSON; nil for no rule and no approvals of any
// revision.
func (v votes) marshal() []byte {
	if v.Rule == nil && len(v.Approvals) == 0 && v.Voided == 0 && v.Dropped == 0 {
		return nil
	}
	b, _ := json.Marshal(v) // plain data: cannot fail
	return b
}

// approvers is the approvals the backend is told of with the decision
// that met the quorum.
func approvers(vs []vote) []Approver {
	out := make([]Approver, len(vs))
	for i, x := range vs {
		out[i] = Approver{Actor: x.Actor, Surface: x.Surface, User: x.User, At: x.At, ArgsSHA256: x.Digest}
	}
	return out
}

// quorumCard is where the quorum of the card's revision stands, as the
// card shows it; nil for a call one approval decides.
func (c Card) quorumCard() *templates.Quorum {
	q := c.Frozen.Quorum
	if q == nil || c.Approval == nil {
		return nil
	}
	rev := c.Approval.Revision
	out := &templates.Quorum{Need: q.Need, From: q.words(), Voided: c.votes.voided(rev)}
	if c.votes.Revision == rev {
		out.Dropped = c.votes.Dropped
	}
	for _, x := range c.votes.on(rev) {
		out.Approvals = append(out.Approvals, templates.QuorumApproval{Actor: x.Actor, At: x.At})
	}
	return out
}

// sameVotes reports whether two reads show one quorum standing.
func sameVotes(a, b votes) bool {
	return a.Revision == b.Revision && a.Voided == b.Voided && len(a.Approvals) == len(b.Approvals)
}

// missing is the eligible members the quorum still waits for on revision
// rev, among those decides says may still decide: whom the ladder's
// approvers target reaches.
func (q *FrozenQuorum) missing(v votes, rev int, decides func(user string) bool) []ladder.RotationMember {
	var out []ladder.RotationMember
	for _, m := range q.Eligible {
		if _, ok := v.of(m.User, rev); !ok && decides(m.User) {
			out = append(out, m)
		}
	}
	return out
}

// reach puts the members a step's approvers target stands for into
// targets a step reaches, for verb: each member's address for email, the
// member for a push, else their users on surfaces (or, on none there,
// wherever they are).
func reach(members []ladder.RotationMember, verb string, surfaces []string) []ladder.Target {
	var out []ladder.Target
	for _, m := range members {
		if verb == ladder.VerbPush {
			if t, ok := m.MemberTarget(); ok {
				out = append(out, t)
			}
			continue
		}
		if verb == ladder.VerbEmail {
			if e, ok := m.EmailTarget(); ok {
				out = append(out, e)
			}
			continue
		}
		var here []ladder.Target
		for _, s := range surfaces {
			if u, ok := m.UserOn(s); ok {
				here = append(here, u)
			}
		}
		if len(here) == 0 {
			here = m.ChatUsers()
		}
		out = append(out, here...)
	}
	return out
}

// approversIn replaces the approvers target in targets with the members
// the quorum still waits for; a call without a quorum reaches nobody
// through it.
func (s *Service) approversIn(targets []ladder.Target, row *store.Approval, fz Frozen, verb string, surfaces []string) []ladder.Target {
	if !slices.ContainsFunc(targets, ladder.Target.IsApprovers) {
		return targets
	}
	out := slices.DeleteFunc(slices.Clone(targets), ladder.Target.IsApprovers)
	if fz.Quorum == nil {
		return out
	}
	decides := s.decides(row.Tenant)
	return append(out, reach(fz.Quorum.missing(votesOf(row).still(decides), row.Revision, decides), verb, surfaces)...)
}

// quorumUnmet says why an approve in flight may not go to the backend:
// its call needs a quorum, and the approvals it carries (distinct
// members the rule counts who may still decide, the sender last) fall
// short. A replica of a release before quorums puts a lone approve in
// flight; a member removed since no longer counts. The zero Reason when
// the decision may go.
func (s *Service) quorumUnmet(row *store.Approval, d deciding) (say.Reason, error) {
	if !d.Approve || d.Surface == DeadlineSurface {
		return say.Reason{}, nil
	}
	fz, err := frozenOf(row)
	if err != nil || fz.Quorum == nil {
		return say.Reason{}, err
	}
	q, decides := fz.Quorum, s.decides(row.Tenant)
	counted := map[string]bool{}
	for _, x := range d.Approvers {
		if q.counts(x.Actor) && decides(x.Actor) {
			counted[x.Actor] = true
		}
	}
	last := len(d.Approvers) > 0 && d.Approvers[len(d.Approvers)-1].Actor == d.Actor
	if last && counted[d.Actor] && len(counted) >= q.Need {
		return say.Reason{}, nil
	}
	return say.Reason{Kind: say.QuorumShort, Count: len(counted), Need: q.Need, Who: q.words()}, nil
}
