package templates

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"approvalsbot/approval"
)

// A turn card shows every call of one model turn that waits as a whole
// (docs/cards.md#the-turn-card): one row per call, in call order, each
// with its function, effect line, flags and arguments on one line, its
// status, and its own Deny and Approve (single decisions, bound to the
// row's revision as any card's); below them Deny all, and Approve all N
// when every call is on the card, waiting, shown in full and asks no
// more than one click of one person.

// MaxTurnRows is the most calls one turn card shows: within Slack's 50
// blocks and Discord's 5 action rows of 5 buttons with every row's two
// buttons and the two of the turn. A longer turn is shown as one card
// per call, each saying why.
const MaxTurnRows = 10

// turnArgsMax bounds a row's arguments line; longer arguments are cut,
// and a cut row keeps the card from offering Approve all.
const turnArgsMax = 300

// The turn card's fixed sentences.
const (
	turnNote         = "Denying any call ends the whole turn: the others are not made."
	turnWaitingFmt   = "%d of %d calls of this turn are here; the card adds the others as they arrive."
	turnChangedFmt   = "%s (call %d) was asked again (%s): look at its row again."
	turnNoApproveAll = "Approve all is not offered: %s: %s"
	labelDenyAll     = "Deny all"
	labelApproveAll  = "Approve all %d"
	turnArgsCut      = " …[cut]"
)

// TurnInput is what a turn card is built from: the member whose copy it
// is, how many calls the turn has, and each member that arrived as its
// own card's input, in the turn's order.
type TurnInput struct {
	// Key is the approval id Deny all and Approve all name: the first
	// member on the card.
	Key     string
	Members int
	Rows    []TurnRowInput
}

// TurnRowInput is one member: its own card's input (its newest
// revision), and why Approve all may not take it ("" when it may), which
// the core decides with the tenant's rules.
type TurnRowInput struct {
	Input Input
	Block string
}

// TurnCard is a turn card, decided: renderers only lay it out.
type TurnCard struct {
	Tenant string
	Job    Job
	// Title: "Turn of 3 calls".
	Title    string
	Headline string
	Note     string
	// Waiting says how many calls arrived, while some have not.
	Waiting string
	// Changed names each call asked again since the turn was first shown.
	Changed []string
	Rows    []TurnRow
	// NoApproveAll says why Approve all is not offered while calls wait.
	NoApproveAll string
	// Buttons are Deny all and Approve all N, when offered.
	Buttons []Button
}

// TurnRow is one call of the turn.
type TurnRow struct {
	Index      int // 1-based, in call order
	ApprovalID string
	Revision   int
	Function   string
	Effect     string
	Flags      []string
	Warnings   []string
	// Args is the call's arguments on one line; "" for a restricted call,
	// whose content no shared card shows (RestrictedNote says so).
	Args           string
	Restricted     bool
	RestrictedNote string
	Status         string
	Tone           Tone
	// Buttons are the row's own Deny and Approve, as its own card has
	// them; none once it is decided or being decided.
	Buttons []Button
}

// BuildTurn decides the turn card. It never fails.
func BuildTurn(in TurnInput) TurnCard {
	tc := TurnCard{Title: fmt.Sprintf("Turn of %d calls", in.Members), Note: turnNote}
	shown := make([]TurnMember, 0, len(in.Rows))
	allWaiting := len(in.Rows) == in.Members && in.Members > 1
	anyWaiting := false
	var block, blockFn string
	for i, r := range in.Rows {
		c := Build(r.Input)
		a := r.Input.Approval
		if a == nil {
			allWaiting = false
			continue
		}
		if i == 0 {
			tc.Tenant, tc.Job = c.Tenant, c.Job
		}
		row := TurnRow{Index: i + 1, ApprovalID: a.ID, Revision: a.Revision, Function: c.Function, Effect: c.Effect,
			Flags: c.Flags, Warnings: c.Warnings, Restricted: c.Restricted, RestrictedNote: c.RestrictedNote,
			Status: c.Status, Tone: c.Tone}
		cut := false
		if !c.Restricted && c.Arguments != nil {
			row.Args, cut = oneLineArgs(c.Arguments.JSON)
			cut = cut || c.Arguments.CutNote != ""
		}
		for _, b := range c.Buttons {
			if b.Action.Kind == ActionApprove || b.Action.Kind == ActionDeny {
				row.Buttons = append(row.Buttons, b)
			}
		}
		waiting := c.State == approval.StatePending && !c.Superseded && !c.Deciding
		anyWaiting = anyWaiting || waiting
		allWaiting = allWaiting && waiting
		if block == "" {
			switch {
			case r.Block != "":
				block, blockFn = r.Block, c.Function
			case cut:
				block, blockFn = "its arguments are too long to show in full on this card.", c.Function
			}
		}
		if a.Revision > 1 {
			why := "changed"
			if r.Input.Reask != nil && r.Input.Reask.Why != "" {
				why = strings.ReplaceAll(string(r.Input.Reask.Why), "_", " ")
			}
			tc.Changed = append(tc.Changed, fmt.Sprintf(turnChangedFmt, c.Function, i+1, why))
		}
		shown = append(shown, TurnMember{ApprovalID: a.ID, Revision: a.Revision})
		tc.Rows = append(tc.Rows, row)
	}
	if len(tc.Rows) < in.Members {
		tc.Waiting = fmt.Sprintf(turnWaitingFmt, len(tc.Rows), in.Members)
	}
	fns := make([]string, len(tc.Rows))
	for i, r := range tc.Rows {
		fns[i] = r.Function
	}
	tc.Headline = cutLine(tc.Title+": "+strings.Join(fns, ", "), statusMax)
	if !anyWaiting || !approval.ValidID(in.Key) {
		return tc
	}
	check := TurnCheck(shown)
	deny := Button{Label: labelDenyAll, Style: StyleDanger, Default: true,
		Payload: EncodeTurnAction(TurnAction{ApprovalID: in.Key, Check: check}),
		Confirm: &Confirmation{Title: "Deny the whole turn?", Confirm: labelDenyAll, Cancel: confirmCancel,
			Text: cutLine(fmt.Sprintf("None of the turn's %d calls is made.", in.Members), confirmTextMax)}}
	tc.Buttons = append(tc.Buttons, deny)
	switch {
	case !allWaiting && len(tc.Rows) < in.Members:
		tc.NoApproveAll = fmt.Sprintf(turnNoApproveAll, "not every call is here yet", "decide the rows one by one, or wait for them.")
	case !allWaiting:
		tc.NoApproveAll = fmt.Sprintf(turnNoApproveAll, "not every call still waits", "decide the rows one by one.")
	case block != "":
		tc.NoApproveAll = cutLine(fmt.Sprintf(turnNoApproveAll, blockFn, block), statusMax)
	default:
		tc.Buttons = append(tc.Buttons, Button{Label: fmt.Sprintf(labelApproveAll, in.Members), Style: StylePrimary,
			Payload: EncodeTurnAction(TurnAction{Approve: true, ApprovalID: in.Key, Check: check}),
			Confirm: &Confirmation{Title: fmt.Sprintf("Approve all %d calls?", in.Members), Confirm: fmt.Sprintf(labelApproveAll, in.Members),
				Cancel: confirmCancel, Text: cutLine("Each call runs as shown on the card: "+strings.Join(fns, ", ")+".", confirmTextMax)}})
	}
	return tc
}

// oneLineArgs is the card's pretty-printed arguments on one line, cut to
// turnArgsMax; true when cut.
func oneLineArgs(pretty string) (string, bool) {
	var b bytes.Buffer
	s := pretty
	if json.Compact(&b, []byte(pretty)) == nil {
		s = b.String()
	}
	s = oneLine(s)
	if cut := cutLine(s, turnArgsMax); cut != s {
		return cut + turnArgsCut, true
	}
	return s, false
}

// turnTooMany is the line a call's own card carries when its turn has
// more calls than one turn card shows.
func turnTooMany(n int) string {
	return fmt.Sprintf("This call is one of a turn of %d calls, more than one card shows (%d): each has its own card. "+
		"Denying any call ends the whole turn: the others are not made.", n, MaxTurnRows)
}

// TurnText renders a turn card as plain text for the log surface; a
// replacement template set without "turn" renders each row's status.
func (r *Renderer) TurnText(tc TurnCard) string {
	if r.text.Lookup("turn") == nil {
		var b strings.Builder
		b.WriteString(tc.Title + "\n" + tc.Note + "\n")
		for _, row := range tc.Rows {
			fmt.Fprintf(&b, "%d. %s: %s\n", row.Index, row.Function, row.Status)
		}
		return b.String()
	}
	s, err := execText(r.text, "turn", &tc)
	if err != nil {
		return brokenPart + "\n"
	}
	return strings.TrimSpace(s) + "\n"
}
