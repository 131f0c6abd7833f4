package approval

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// StoredVersion is the version of the stored form that StoredForm makes. A
// revision body without it is a request as the backend sent it, from a
// release that kept raw bodies.
const StoredVersion = 1

// Stored is the form in which the bot keeps one revision: what its cards
// show, as the bot shows it, and of a restricted approval none of the
// content. It decodes as an Approval; Form marks it. What it keeps, and
// why: docs/design.md#the-stored-form-of-a-revision.
type Stored struct {
	Approval
	Form StoredFormInfo `json:"stored"`
}

// StoredFormInfo says what a Stored keeps.
type StoredFormInfo struct {
	Version int `json:"version"`
	// ContentWithheld: the content is restricted and none of it was kept;
	// only the backend's look-up has it.
	ContentWithheld bool `json:"content_withheld,omitempty"`
}

// StoredForm builds the stored form of a parsed approval, leaving a as it
// is; it fails only on arguments Parse never lets through, and its error
// quotes none of them. secrets (the calls secrets, the first keying) key
// the fingerprints; with none, a reask compares only what the card shows.
func StoredForm(a *Approval, secrets ...[]byte) (*Stored, error) {
	s := &Stored{Approval: *a, Form: StoredFormInfo{Version: StoredVersion}}
	k := &s.Approval
	// Slices and pointers are shared with a until replaced below.
	k.Roles = storedRoles(a.Roles, a.ContentRestricted())
	storedIdentifiers(k, a)
	if a.Question != nil {
		// The digest binds an answer, and a restricted question's
		// look-up, to the question as the backend asked it.
		k.QuestionSHA256 = QuestionDigest(a.Question)
		k.Question = storedQuestion(a.Question, a.ContentRestricted())
	}
	if a.ContentRestricted() {
		s.Form.ContentWithheld = true
		k.Call.Arguments, k.Call.ArgumentsCut, k.Call.Redaction = nil, false, Redaction{}
		k.Call.Fingerprints, k.Call.Received = nil, nil
		k.AgentSays = ""
		// The turn's id and members are the backend's ids, not the
		// call's content: kept, so the turn's card still has its row.
		k.Turn = Turn{ID: a.Turn.ID, Members: a.Turn.Members}
		k.Changes = storedChanges(a.Changes, true)
		return s, nil
	}
	if raw := bytes.TrimSpace(a.Call.Arguments); len(raw) > 0 {
		p, err := Project(raw)
		if err != nil {
			// Project's error may quote the input.
			return nil, fmt.Errorf("stored form of approval %s: %w", a.ID, ErrInvalidJSON)
		}
		k.Call.Arguments = storedArguments(raw, p)
		k.Call.Redaction.Redacted = a.Call.Redaction.Redacted || p.Redacted
		k.Call.Redaction.Truncated = a.Call.Redaction.Truncated || p.Truncated
		k.Call.Fingerprints = newFingerprints(raw, p, secrets)
		k.Call.Received = ReceivedArguments(raw)
	} else {
		k.Call.Fingerprints, k.Call.Received = nil, nil
	}
	k.AgentSays = RedactText(a.AgentSays)
	k.Changes = storedChanges(a.Changes, false)
	if a.Turn.Waiting != nil {
		k.Turn.Waiting = make([]string, len(a.Turn.Waiting))
		for i, w := range a.Turn.Waiting {
			k.Turn.Waiting[i] = RedactText(w)
		}
	}
	return s, nil
}

// storedArguments keeps p, raw's projection, when projecting it again gives
// it back, so the card shows it byte for byte. A string p cut would be cut
// again with another count, so then raw is kept with its secrets redacted
// (Reveal) and nothing cut, which the card projects alike.
func storedArguments(raw []byte, p Projection) json.RawMessage {
	if again, err := Project(p.JSON); err == nil && bytes.Equal(again.JSON, p.JSON) {
		return p.JSON
	}
	full, _, err := Reveal(raw)
	if err != nil {
		return p.JSON
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, full); err != nil {
		return p.JSON
	}
	return compact.Bytes()
}

// storedIdentifiers redacts a's identifiers into k (copies), restricted or
// not: the calling side shapes them. RedactText is deterministic, so a
// flag still names the role storedRoles keeps.
func storedIdentifiers(k, a *Approval) {
	k.Call.Function = RedactText(a.Call.Function)
	k.Job.ID = RedactText(a.Job.ID)
	k.Job.StartedBy = RedactText(a.Job.StartedBy)
	if c := a.Flags.ClassAbove; c != nil {
		k.Flags.ClassAbove = &ClassAbove{Class: RedactText(c.Class), Previous: RedactText(c.Previous)}
	}
	k.Job.Agent = RedactText(a.Job.Agent)
	k.Level = RedactText(a.Level)
	k.AskedBy.Argument = RedactText(a.AskedBy.Argument)
	k.AskedBy.Rule = RedactText(a.AskedBy.Rule)
	k.AskedBy.Hook = RedactText(a.AskedBy.Hook)
	k.AskedBy.PreviousCall = RedactText(a.AskedBy.PreviousCall)
	if a.AskedBy.Taint != nil {
		k.AskedBy.Taint = make([]Taint, len(a.AskedBy.Taint))
		for i, t := range a.AskedBy.Taint {
			t.Source, t.Function = RedactText(t.Source), RedactText(t.Function)
			k.AskedBy.Taint[i] = t
		}
	}
	if a.Confirm != nil {
		k.Confirm = &Confirm{Argument: RedactText(a.Confirm.Argument)}
	}
	if a.Flags.NotTraced != nil {
		k.Flags.NotTraced = make([]NotTraced, len(a.Flags.NotTraced))
		for i, f := range a.Flags.NotTraced {
			f.Argument = RedactText(f.Argument)
			k.Flags.NotTraced[i] = f
		}
	}
	if a.Flags.NewToJob != nil {
		k.Flags.NewToJob = make([]NewToJob, len(a.Flags.NewToJob))
		for i, f := range a.Flags.NewToJob {
			f.Argument = RedactText(f.Argument)
			k.Flags.NewToJob[i] = f
		}
	}
}

// storedRoles keeps each role's values redacted ([redacted] whole for a
// secret argument), or, restricted, only their origins and scope, which
// decide the card's buttons.
func storedRoles(roles []Role, restricted bool) []Role {
	if roles == nil {
		return nil
	}
	out := make([]Role, len(roles))
	for i, r := range roles {
		out[i] = r
		out[i].Argument = RedactText(r.Argument)
		if r.Values == nil {
			continue
		}
		secret := SensitiveKey(r.Argument) // the name as received decides
		if restricted || secret {
			// Its values are not kept as they came: the warning they
			// called for is. The line names the argument as it is kept.
			named := r
			named.Argument = out[i].Argument
			out[i].Found = roleIdentityLine(named)
		}
		out[i].Values = make([]RoleValue, len(r.Values))
		for j, v := range r.Values {
			switch {
			case restricted:
				v.Value = ""
			case secret && v.Value != "":
				v.Value = redactedMarker
			default:
				v.Value = RedactText(v.Value)
			}
			out[i].Values[j] = v
		}
	}
	return out
}

// storedChanges keeps a changeset's files and its redacted patch, or,
// restricted, only how many files there are and which are protected.
func storedChanges(ch *Changes, restricted bool) *Changes {
	if ch == nil {
		return nil
	}
	out := &Changes{Patch: RedactText(ch.Patch), PatchCut: ch.PatchCut, PatchSHA256: ch.PatchSHA256}
	if ch.Files != nil {
		out.Files = make([]ChangedFile, len(ch.Files))
		for i, f := range ch.Files {
			f.Path = RedactText(f.Path) // as the card shows it
			out.Files[i] = f
		}
	}
	if restricted {
		out.Patch, out.PatchCut = "", false // patch_sha256 stays: a look-up is checked against it
		for i := range out.Files {
			out.Files[i].Path = ""
		}
	}
	return out
}
