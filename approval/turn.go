package approval

import "fmt"

// MaxTurnMembers bounds turn.members: a turn card shows each member as a
// row, and one batch decision carries each member's revision and digest.
const MaxTurnMembers = 20

// InTurn reports whether a is a member of a turn of several calls that
// waits as a whole (docs/protocol.md#turns): the bot shows such a turn on
// one card when the backend supports the `turns` feature. A turn of one
// call is shown as any other call.
func (a *Approval) InTurn() bool {
	return a.Turn.ID != "" && len(a.Turn.Members) > 1
}

// validateTurn checks turn.id and turn.members: both or neither; the
// members distinct approval ids, at most MaxTurnMembers, this approval's
// own among them. One pass over the members, each compared once through a
// set.
func validateTurn(v *validator, p string, a *Approval) {
	t := a.Turn
	if t.ID == "" && t.Members == nil {
		return
	}
	if t.ID == "" {
		v.add(p+"turn.id", "required with turn.members")
	} else {
		v.check(idPattern.MatchString(t.ID), p+"turn.id", "want 1–64 of [A-Za-z0-9._:-]")
	}
	switch {
	case len(t.Members) == 0:
		v.add(p+"turn.members", "required with turn.id: the approval ids of the turn's calls, in call order")
		return
	case len(t.Members) > MaxTurnMembers:
		v.add(p+"turn.members", fmt.Sprintf("want at most %d approval ids", MaxTurnMembers))
		return
	}
	seen := make(map[string]struct{}, len(t.Members))
	own := false
	for i, m := range t.Members {
		mp := fmt.Sprintf("%sturn.members[%d]", p, i)
		if !idPattern.MatchString(m) {
			v.add(mp, "want 1–64 of [A-Za-z0-9._:-]")
			continue
		}
		if _, dup := seen[m]; dup {
			v.add(mp, "listed twice: each call of the turn once")
			continue
		}
		seen[m] = struct{}{}
		own = own || m == a.ID
	}
	if !own && idPattern.MatchString(a.ID) {
		v.add(p+"turn.members", fmt.Sprintf("want this approval's own id %q among the turn's members", a.ID))
	}
}

// TurnApproveBlock says why a's row keeps a turn card from offering
// Approve all, "" when nothing does: Approve all is one click for
// several calls, so it is offered only when each is shown on the card in
// full and none is a call that asks for more than one look (the calls a
// grant never covers either). a is the stored form, as the card shows it.
func (a *Approval) TurnApproveBlock() string {
	switch {
	case a.ContentRestricted():
		return "its content is not shown on shared cards."
	case a.Confirm != nil:
		return "it needs a typed confirmation."
	case a.Kind == KindProtectedPaths:
		return "it changes protected paths."
	case a.Call.Redaction.Redacted || a.Call.Redaction.Truncated || a.Call.ArgumentsCut,
		a.Changes != nil && a.Changes.PatchCut:
		return "its arguments are not shown in full."
	case a.Destructive():
		return "it is destructive."
	case a.OutOfScope():
		return "it reaches below the job's scope."
	case len(a.Flags.NewToJob) > 0:
		return "it is new to this job."
	case a.Flags.ClassAbove != nil:
		return "its action class is above the job's."
	case len(a.IdentityWarnings()) > 0:
		return "it holds characters a reader does not see as themselves."
	}
	for _, r := range a.Roles {
		if r.LeftOut > 0 || r.NotCompared {
			return "values of its marked arguments are left out or not compared."
		}
	}
	return ""
}
