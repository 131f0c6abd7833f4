package threads

import (
	"slices"
	"time"

	"approvalsbot/ladder"
	"approvalsbot/store"
)

// A step naming a rotation tells whoever is on duty when the step fires
// (ladder.Plan.Resolve), so a late step tells who is on duty then.

// postSurfaces are the surfaces the approval's cards went to, where a
// rotation's member on duty is sent a DM.
func postSurfaces(fz Frozen) []string {
	var out []string
	for _, t := range fz.Post {
		if tg, err := ladder.ParseTarget(t); err == nil && !slices.Contains(out, tg.Surface()) {
			out = append(out, tg.Surface())
		}
	}
	return out
}

// threadMentions is whom one thread's escalation reply mentions, each
// rotation as its member on duty at now and the approvers target as the
// members row's quorum still waits for, by their user on that surface.
func (s *Service) threadMentions(row *store.Approval, fz Frozen, mentions []string, thread string, now time.Time) []string {
	var surfaces []string
	if tg, err := ladder.ParseTarget(thread); err == nil {
		surfaces = []string{tg.Surface()}
	}
	out := make([]string, 0, len(mentions))
	for _, m := range mentions {
		tg, err := ladder.ParseTarget(m)
		if err != nil || !tg.IsRotation() && !tg.IsApprovers() {
			out = appendNew(out, m)
			continue
		}
		to := []ladder.Target{tg}
		if tg.IsApprovers() {
			to = s.approversIn(to, row, fz, ladder.VerbMention, surfaces)
		}
		for _, u := range fz.Plan.Resolve(to, ladder.VerbMention, surfaces, now) {
			out = appendNew(out, u.String())
		}
	}
	return out
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
