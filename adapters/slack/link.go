package slack

import (
	"context"

	"approvalsbot/threads"
)

var _ threads.Linker = (*Surface)(nil)

// Link is the web address of a posted card, for the escalation mail's
// "open the thread" link; "" when Slack gives none.
func (a *Surface) Link(ctx context.Context, p threads.PostRef) string {
	return a.permalink(ctx, a.workspaceURL(ctx), p)
}
