package templatestest

import (
	"testing"

	"approvalsbot/approval"
	"approvalsbot/templates"
)

// TurnCase is one turn card the golden files render on every surface.
type TurnCase struct {
	Name  string
	Input templates.TurnInput
}

// turnMember is the merge fixture as one call of a three-call turn: its
// id, function, and whether the tool says it is destructive.
func turnMember(t testing.TB, id, function string, destructive bool) *approval.Approval {
	t.Helper()
	a := *Approval(t, "merge.json")
	a.ID, a.Call.Function = id, function
	d := destructive
	a.Call.Annotations.DestructiveHint = &d
	a.Turn = approval.Turn{ID: "turn-7", Members: []string{"t-merge", "t-comment", "t-label"}}
	return &a
}

// TurnCases are the turn cards of the golden files: every call here and
// waiting (Approve all offered), one still to arrive, one destructive
// (no Approve all, and why), one asked again, one being decided, and
// the turn decided.
func TurnCases(t testing.TB) []TurnCase {
	t.Helper()
	row := func(a *approval.Approval, state, block string) templates.TurnRowInput {
		return templates.TurnRowInput{Input: Input(t, a, state), Block: block}
	}
	merge := turnMember(t, "t-merge", "acme_github.merge", false)
	comment := turnMember(t, "t-comment", "acme_github.comment", false)
	label := turnMember(t, "t-label", "acme_github.label", false)
	destructive := turnMember(t, "t-merge", "acme_github.merge", true)
	reasked := *comment
	reasked.Revision, reasked.Why = 2, approval.WhyArgumentsChanged
	changedRow := row(&reasked, "pending", "")
	changedRow.Input.Reask = &approval.Reask{From: 1, Revision: 2, Why: approval.WhyArgumentsChanged}
	return []TurnCase{
		{"waiting", templates.TurnInput{Key: "t-merge", Members: 3, Rows: []templates.TurnRowInput{
			row(merge, "pending", ""), row(comment, "pending", ""), row(label, "pending", "")}}},
		{"arriving", templates.TurnInput{Key: "t-merge", Members: 3, Rows: []templates.TurnRowInput{
			row(merge, "pending", ""), row(comment, "pending", "")}}},
		{"destructive", templates.TurnInput{Key: "t-merge", Members: 3, Rows: []templates.TurnRowInput{
			row(destructive, "pending", destructive.TurnApproveBlock()), row(comment, "pending", ""), row(label, "pending", "")}}},
		{"reasked", templates.TurnInput{Key: "t-merge", Members: 3, Rows: []templates.TurnRowInput{
			row(merge, "pending", ""), changedRow, row(label, "pending", "")}}},
		{"deciding", templates.TurnInput{Key: "t-merge", Members: 3, Rows: []templates.TurnRowInput{
			row(merge, templates.PreviewDeciding, ""), row(comment, templates.PreviewDeciding, ""), row(label, templates.PreviewDeciding, "")}}},
		{"approved", templates.TurnInput{Key: "t-merge", Members: 3, Rows: []templates.TurnRowInput{
			row(merge, "approved", ""), row(comment, "approved", ""), row(label, "approved", "")}}},
	}
}
