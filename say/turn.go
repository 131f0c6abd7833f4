package say

import "fmt"

// turn words the reasons of a whole turn's buttons. A batch is all or
// nothing, so every refusal ends by saying that no call of the turn was
// sent.
func (r Reason) turn() string {
	const none = " Nothing of the turn was sent."
	switch r.Kind {
	case TurnChanged:
		if r.Function == "" {
			return "Calls of this turn changed since the card was shown: look at the card again." + none
		}
		return fmt.Sprintf("%s was asked again since the card was shown: look at its row again.%s", r.Function, none)
	case TurnNotAll:
		return fmt.Sprintf("Approve all cannot take %s: %s Decide its row on its own.%s", r.Function, r.Message, none)
	case TurnIncomplete:
		return fmt.Sprintf("Approve all waits for every call of the turn: %d of %d are on the card and waiting.%s", r.Count, r.Need, none)
	case TurnNothing:
		return "No call of this turn is still waiting." + none
	case TurnSending:
		if r.Approve {
			return fmt.Sprintf("Recorded: approving all %d calls of the turn is on its way to the job backend…", r.Count)
		}
		return fmt.Sprintf("Recorded: denying the turn (%d waiting calls) is on its way to the job backend…", r.Count)
	case TurnUnknown:
		return "This button names no turn the bot shows; nothing was sent."
	}
	return ""
}

// TurnReasonHint describes Deny all's reason: it goes with the denial of
// every call, and a restricted call's row keeps it off the card.
const TurnReasonHint = "Sent with the denial of every call of the turn; a restricted call's row does not show it."

// TurnDenyQuestion heads Deny all's dialog.
const TurnDenyQuestion = "None of the turn's calls is made."
