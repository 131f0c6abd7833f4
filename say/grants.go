package say

import "fmt"

// The words of "Approve and allow…" (docs/protocol.md#grants), on every
// chat surface: the dialog's labels and question, and how uses are said.
const (
	// GrantButton is the card's button beside Approve.
	GrantButton = "Approve and allow…"
	// GrantTitle heads the dialog (Slack's 24 characters at most).
	GrantTitle = "Approve and allow"
	// GrantSubmit approves the call and sends the grant with it.
	GrantSubmit = "Approve and allow"
	// GrantScopeLabel, GrantTTLLabel and GrantUsesLabel name the choices.
	GrantScopeLabel = "Allow"
	GrantTTLLabel   = "For"
	GrantUsesLabel  = "At most"
	// GrantScopeCallLabel and GrantScopeValuesLabel name the two scopes.
	GrantScopeCallLabel   = "This exact call"
	GrantScopeValuesLabel = "These values"
	// GrantRevoke is /approvals grants' button that ends a grant.
	GrantRevoke = "Revoke"
	// GrantFootnote says who applies the grant and how it ends.
	GrantFootnote = "The job backend applies the grant, never wider than the scope above; each use is posted in this card's thread. " +
		"Anyone who may decide can revoke it with /approvals grants."
)

// GrantQuestion asks, above the choices, to approve the call and allow
// more like it, with what it does when effect says anything.
func GrantQuestion(function, approvalID string, revision int, effect string) string {
	if effect != "" {
		return fmt.Sprintf("%s is %s. Approve it (approval %s, revision %d) and allow more calls like it for a while?",
			function, effect, approvalID, revision)
	}
	return fmt.Sprintf("Approve %s (approval %s, revision %d) and allow more calls like it for a while?", function, approvalID, revision)
}

// GrantNoValues says why "these values" is not offered.
func GrantNoValues(why string) string {
	return "These values: not offered, because " + why + ": a grant pins only values shown whole."
}

// GrantUsesWords says a use cap: "1 use", "5 uses".
func GrantUsesWords(n int) string {
	if n == 1 {
		return "1 use"
	}
	return fmt.Sprintf("%d uses", n)
}
