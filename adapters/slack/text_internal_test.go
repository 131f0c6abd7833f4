package slack

import "testing"

// TestTextShowsHiddenCharacters: the adapter's own mrkdwn and one-line
// text (the lists' headings, notices such as the digest) show an
// invisible character as the cards do.
func TestTextShowsHiddenCharacters(t *testing.T) {
	if got := mrkdwn("a\u200b<b>\U000E0041"); got != "a[U+200B]&lt;b&gt;[U+E0041]" {
		t.Errorf("mrkdwn = %q", got)
	}
	if got := oneLine("mail.\u2060send\n waits\u3164"); got != "mail.[U+2060]send waits[U+3164]" {
		t.Errorf("oneLine = %q", got)
	}
}
