package threads

import (
	"slices"
	"time"

	"approvalsbot/ladder"
)

// A step that names a rotation tells whoever the rotation, as frozen into
// the approval's plan, puts on duty at the moment the step fires
// (ladder.Plan.Resolve): a late step after downtime tells who is on duty
// then, not who was when it was due.

// postSurfaces are the surfaces the approval's cards went to: a
// rotation's member on duty is sent a DM there.
func postSurfaces(fz Frozen) []string {
	var out []string
	for _, t := range fz.Post {
		if tg, err := ladder.ParseTarget(t); err == nil && !slices.Contains(out, tg.Surface()) {
			out = append(out, tg.Surface())
		}
	}
	return out
}

// threadMentions is whom one thread's escalation reply mentions: the
// steps' mentions, each rotation as its member on duty at now, by their
// user on the thread's surface (or named, when they have none there).
func threadMentions(p ladder.Plan, mentions []string, thread string, now time.Time) []string {
	var surfaces []string
	if tg, err := ladder.ParseTarget(thread); err == nil {
		surfaces = []string{tg.Surface()}
	}
	out := make([]string, 0, len(mentions))
	for _, m := range mentions {
		tg, err := ladder.ParseTarget(m)
		if err != nil || !tg.IsRotation() {
			out = appendNew(out, m)
			continue
		}
		for _, u := range p.Resolve([]ladder.Target{tg}, ladder.VerbMention, surfaces, now) {
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
