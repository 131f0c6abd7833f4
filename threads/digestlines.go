package threads

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"approvalsbot/approval"
	"approvalsbot/store"
)

// The digest's lines a lead can act on (docs/operations.md#the-digests-lines),
// worked out from the outcomes of the last DigestWeek: calls approved the
// same way again and again (a grant would ask fewer questions), ladders
// whose first steps nobody answers, deadlines that deny, and quick
// Approves of destructive calls.

// The digest lines' window and thresholds.
const (
	// DigestWeek is the window the lines read, back from the digest.
	DigestWeek = 7 * 24 * time.Hour
	// GrantHintMin is how many approvals of one call (the same function
	// and arguments digest) in the window suggest a grant.
	GrantHintMin = 5
	// LadderHintMin is how many people's decisions a ladder needs in the
	// window before its share of late ones is worth a line.
	LadderHintMin = 5
	// LadderLateStep is the step a late decision came after.
	LadderLateStep = 2
	// digestHintsMax bounds the suggestions of one kind; the rest are counted.
	digestHintsMax = 5
	// digestOutcomesMax bounds the outcomes one digest reads: past it the
	// lines speak of the latest ones and say so.
	digestOutcomesMax = 100_000
	// digestPage is one read of the outcomes.
	digestPage = 1000
)

// DigestFigures is what a tenant's week of outcomes tells a lead.
type DigestFigures struct {
	Grants []GrantHint  // the most repeated calls first
	More   int          // further calls that would have made a GrantHint
	Lad    []LadderHint // by ladder name
	Quick  int          // quick Approves of destructive calls
	// Partial: the week held more outcomes than one digest reads.
	Partial bool
}

// GrantHint is one call approved the same way again and again.
type GrantHint struct {
	Function  string // as cards show it
	Approvals int
	People    int
	Median    time.Duration // from request to decision
}

// LadderHint is one ladder's week.
type LadderHint struct {
	Ladder  string
	Decided int // decisions (and answers) made by people
	Late    int // of which after step LadderLateStep
	Expired int // calls denied by the deadline
	// Unanswered are agents' questions the deadline closed with nobody's
	// answer: a ladder that reached nobody in time, but no call denied.
	Unanswered int
}

// digestFigures reads a tenant's outcomes decided in the week before now,
// in one pass over one index range, and sums them.
func (s *Service) digestFigures(ctx context.Context, tenantID string, now time.Time) (DigestFigures, error) {
	type callKey struct{ function, digest string }
	type call struct {
		approvals int
		people    map[string]bool
		waits     []time.Duration
	}
	calls := map[callKey]*call{}
	ladders := map[string]*LadderHint{}
	var f DigestFigures
	p := store.OutcomeListParams{Tenant: tenantID, Since: now.Add(-DigestWeek), Until: now, Limit: digestPage}
	read := 0
	for {
		page, err := s.store.OutcomeList(ctx, p)
		if err != nil {
			return DigestFigures{}, fmt.Errorf("read the outcomes of %s: %w", tenantID, err)
		}
		for _, o := range page {
			state := approval.State(o.State)
			question := o.Effect == EffectLabelQuestion
			person := o.Surface != DeadlineSurface &&
				(state == approval.StateApproved || state == approval.StateDenied || state == approval.StateAnswered)
			if o.Ladder != "" {
				l := ladders[o.Ladder]
				if l == nil {
					l = &LadderHint{Ladder: o.Ladder}
					ladders[o.Ladder] = l
				}
				switch {
				case state == approval.StateExpired && question:
					l.Unanswered++
				case state == approval.StateExpired:
					l.Expired++
				case person:
					l.Decided++
					if o.Steps >= LadderLateStep {
						l.Late++
					}
				}
			}
			if o.Quick {
				f.Quick++
			}
			// A content-restricted call is never grouped: that two were
			// identical tells something of what their cards hide.
			if state != approval.StateApproved || o.ArgsSHA256 == "" || !person || o.Restricted {
				continue
			}
			k := callKey{o.Function, o.ArgsSHA256}
			c := calls[k]
			if c == nil {
				c = &call{people: map[string]bool{}}
				calls[k] = c
			}
			c.approvals++
			c.people[o.Actor] = true
			c.waits = append(c.waits, max(o.DecidedAt.Sub(o.RequestedAt), 0))
		}
		read += len(page)
		if len(page) < p.Limit {
			break
		}
		if read >= digestOutcomesMax {
			f.Partial = true
			break
		}
		last := page[len(page)-1]
		p.AfterAt, p.AfterID = last.DecidedAt, last.ApprovalID
	}
	for k, c := range calls {
		if c.approvals < GrantHintMin {
			continue
		}
		f.Grants = append(f.Grants, GrantHint{Function: k.function, Approvals: c.approvals, People: len(c.people),
			Median: median(c.waits)})
	}
	slices.SortFunc(f.Grants, func(a, b GrantHint) int {
		return cmp.Or(b.Approvals-a.Approvals, strings.Compare(a.Function, b.Function), cmp.Compare(a.Median, b.Median))
	})
	if len(f.Grants) > digestHintsMax {
		f.More = len(f.Grants) - digestHintsMax
		f.Grants = f.Grants[:digestHintsMax]
	}
	for _, l := range ladders {
		f.Lad = append(f.Lad, *l)
	}
	slices.SortFunc(f.Lad, func(a, b LadderHint) int { return strings.Compare(a.Ladder, b.Ladder) })
	return f, nil
}

// Lines words the figures, one line each; none when nothing is worth a
// lead's time. A ladder is worth a line when at least half of its
// LadderHintMin or more decisions came after step LadderLateStep, or the
// deadline denied any of its approvals or closed any of its questions
// with nobody's answer.
func (f DigestFigures) Lines() []string {
	var out []string
	for _, g := range f.Grants {
		people := counted(g.People, "person", "people")
		out = append(out, fmt.Sprintf("%s: %d identical approvals by %s this week, median %s: consider a grant",
			shownText(g.Function), g.Approvals, people, roughly(g.Median)))
	}
	if f.More > 0 {
		out = append(out, fmt.Sprintf("… and %s approved as often: bot report lists them", counted(f.More, "more call", "more calls")))
	}
	for _, l := range f.Lad {
		var says []string
		if l.Decided >= LadderHintMin && 2*l.Late >= l.Decided {
			says = append(says, fmt.Sprintf("%d of %d decisions came after step %d", l.Late, l.Decided, LadderLateStep))
		}
		if l.Expired > 0 {
			says = append(says, fmt.Sprintf("%s at the deadline", counted(l.Expired, "call expired", "calls expired")))
		}
		if l.Unanswered > 0 {
			says = append(says, fmt.Sprintf("%s by the deadline", counted(l.Unanswered, "question nobody answered", "questions nobody answered")))
		}
		if len(says) > 0 {
			out = append(out, fmt.Sprintf("%s ladder: %s", shownText(l.Ladder), strings.Join(says, "; ")))
		}
	}
	switch {
	case f.Quick == 1:
		out = append(out, fmt.Sprintf("1 destructive call was approved within %s of its card being posted where it was decided",
			roughly(QuickApproval)))
	case f.Quick > 1:
		out = append(out, fmt.Sprintf("%d destructive calls were approved within %s of their cards being posted where they were decided",
			f.Quick, roughly(QuickApproval)))
	}
	if len(out) > 0 && f.Partial {
		out = append(out, "(from the latest decisions only: the week held more than one digest reads)")
	}
	return out
}

// median is the middle of ds (the mean of the two middle ones for an
// even count), which it sorts; ds is never empty.
func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	n := len(ds)
	if n%2 == 1 {
		return ds[n/2]
	}
	return (ds[n/2-1] + ds[n/2]) / 2
}

// counted is n with its noun: "1 person", "3 people".
func counted(n int, one, many string) string { return fmt.Sprintf("%d %s", n, plural(n, one, many)) }

// roughly words a wait for a lead: seconds under two minutes, minutes
// under two hours, then hours.
func roughly(d time.Duration) string {
	switch {
	case d < 2*time.Minute:
		return fmt.Sprintf("%d s", int(d.Round(time.Second)/time.Second))
	case d < 2*time.Hour:
		return fmt.Sprintf("%d min", int(d.Round(time.Minute)/time.Minute))
	}
	return fmt.Sprintf("%d h", int(d.Round(time.Hour)/time.Hour))
}

// FatigueText is the digest's section of lines, "" when there are none.
func FatigueText(tenantID string, lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n\nThe last 7 days in %s:", tenantID)
	for _, l := range lines {
		b.WriteString("\n• " + l)
	}
	return b.String()
}
