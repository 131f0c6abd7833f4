package store

import (
	"errors"
	"time"
)

// Outcomes: one row per approval, of what the call was and how it was
// decided, kept for the figures of approval fatigue (threads' digest
// lines, `bot report`) and never holding the call's arguments, values or
// agent text (store/migrations/0011_outcomes.sql).

// Outcome is one approval's row.
type Outcome struct {
	ApprovalID string
	Tenant     string
	Job        string // the job's id, as cards show it
	Function   string // as cards show it (redacted)
	// ArgsSHA256 tells identical calls apart; never shown.
	ArgsSHA256 string
	Effect     string // threads' fixed set: reads_only, write, destructive, egress, unknown
	Ladder     string // the ladder frozen at request (tenant configuration)
	Restricted bool   // the call's content is walled off from shared places
	Revision   int    // the latest revision
	State      string // approval.State
	Actor      string // who decided; empty while pending
	Surface    string // where: slack, discord, email, page, deadline, or the backend's via
	Grant      string // the grant a decision carried; empty for none
	Steps      int    // ladder steps reached (fired or skipped) when it closed
	// Quick: a destructive call approved within seconds of its card being
	// posted where that person decided.
	Quick       bool
	RequestedAt time.Time
	DecidedAt   time.Time // zero while pending
	FirstLookAt time.Time // the first act a person recorded; zero for none
}

// OutcomeRequestParams records what a revision's call is; a later
// revision's replaces it, and a closed row keeps its state.
type OutcomeRequestParams struct {
	ApprovalID, Tenant, Job, Function, ArgsSHA256, Effect, Ladder string
	Restricted                                                    bool
	Revision                                                      int
	RequestedAt                                                   time.Time
}

// OutcomeCloseParams records how an approval closed; a later close (a
// re-check refusing an approval) changes the state alone.
type OutcomeCloseParams struct {
	ApprovalID, State, Actor, Surface, Grant string
	Steps                                    int
	Quick                                    bool
	DecidedAt, FirstLookAt                   time.Time
}

// OutcomeListParams selects decided rows, in decision order (then id).
type OutcomeListParams struct {
	Tenant string    // empty: every tenant
	Since  time.Time // decided at or after
	Until  time.Time // decided before; zero: no bound
	// After continues a listing past the last row read (its DecidedAt and
	// ApprovalID); zero: from Since.
	AfterAt time.Time
	AfterID string
	Limit   int // required: a page; callers read on until fewer come back
}

// OutcomeRepeatedParams asks whether an approval's call was approved
// before: the same tenant, function and digest, approved within Window
// before it was (an earlier decision, or the same instant's lower id, so
// of two at once one counts).
type OutcomeRepeatedParams struct {
	ApprovalID string
	Window     time.Duration
}

// OutcomePruneParams selects decided rows to delete.
type OutcomePruneParams struct {
	Before time.Time // decided at or before
	Limit  int
}

// errOutcomeList: a listing without a page size.
var errOutcomeList = errors.New("an outcome listing needs a Since and a Limit")

// Check reports what is wrong with p, before the database is touched.
func (p OutcomeListParams) Check() error {
	if p.Limit <= 0 || p.Since.IsZero() {
		return errOutcomeList
	}
	return nil
}
