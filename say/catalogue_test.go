package say_test

import (
	"testing"

	"approvalsbot/say"
)

// TestNoDoubledStop: a sentence around the card's status or a person's
// comment ends with one stop, whatever the status or comment ends with.
func TestNoDoubledStop(t *testing.T) {
	for _, tt := range []struct {
		r    say.Reason
		want string
	}{
		{say.Reason{Kind: say.PageInFlight, Message: "Recorded: user:kevin's denial is being sent to the job backend…"},
			"Recorded: user:kevin's denial is being sent to the job backend…"},
		{say.Reason{Kind: say.LinkClosed, Message: "Denied by user:kevin: merge after 10:00."},
			"This call is closed: Denied by user:kevin: merge after 10:00."},
		{say.Reason{Kind: say.LinkClosed, Message: "Denied by user:kevin: why?"}, "This call is closed: Denied by user:kevin: why?"},
		{say.Reason{Kind: say.LinkClosed, Message: "Approved by user:kevin at 18:00 UTC"}, "This call is closed: Approved by user:kevin at 18:00 UTC."},
	} {
		if got := tt.r.String(); got != tt.want {
			t.Errorf("\n got %q\nwant %q", got, tt.want)
		}
	}
}
