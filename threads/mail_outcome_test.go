package threads_test

import (
	"html"
	"slices"
	"strings"
	"testing"
)

// TestOutcomeMailReachesEachRecipientOnce plays each of mailStories
// (approved, denied with a reason, nobody answered, cancelled, refused by
// the re-check) over SMTP: each recipient who was mailed gets exactly one
// outcome mail, the last of their thread, that says the state, who and
// the reason where the card shows one, with no decision link; nobody
// else is mailed; every mail keeps the approval's one subject, answered
// ("Re: …") after the first; and each follow-up's In-Reply-To and
// References name only that recipient's own earlier mails.
func TestOutcomeMailReachesEachRecipientOnce(t *testing.T) {
	for _, s := range mailStories {
		t.Run(s.name, func(t *testing.T) {
			h, all := s.play(t) // checks who is mailed, how often
			if got := h.state(t, s.id).State; got != string(s.state) {
				t.Fatalf("the approval ended %s, want %s", got, s.state)
			}
			subject := "Approval needed: " + s.function + " · " + s.id
			var addrs []string
			for _, m := range s.mails {
				if !slices.Contains(addrs, m.to) {
					addrs = append(addrs, m.to)
				}
			}
			if len(addrs) < 2 {
				t.Fatalf("the story mails %v: it must mail a list and a member", addrs)
			}
			for _, addr := range addrs {
				ms := sentTo(all, addr)
				var ends []int
				for i, m := range ms {
					if strings.Contains(m.Text, s.outcome[0]) {
						ends = append(ends, i)
					}
				}
				if len(ends) != 1 || ends[0] != len(ms)-1 {
					t.Errorf("%s: the outcome %q is in mails %v of %d, want once, in the last", addr, s.outcome[0], ends, len(ms))
				}
				end := ms[len(ms)-1]
				page := html.UnescapeString(end.HTML)
				for _, want := range s.outcome {
					if !strings.Contains(end.Text, want) {
						t.Errorf("%s: the outcome mail's text lacks %q:\n%s", addr, want, end.Text)
					}
					if !strings.Contains(page, want) {
						t.Errorf("%s: the outcome mail's HTML lacks %q:\n%s", addr, want, end.HTML)
					}
				}
				for part, body := range map[string]string{"text": end.Text, "html": end.HTML} {
					if strings.Contains(body, "/decide/") || strings.Contains(body, "Decide as") {
						t.Errorf("%s: the outcome mail's %s part still invites a decision:\n%s", addr, part, body)
					}
				}
				checkThread(t, addr, ms, subject)
			}
		})
	}
}

// checkThread checks one recipient's mails about one approval: the first
// carries the subject and answers nothing; each later one answers it
// ("Re: "), its In-Reply-To is the recipient's previous mail and its
// References the recipient's own earlier mails, the first of them first.
func checkThread(t *testing.T, addr string, ms []sentMail, subject string) {
	t.Helper()
	for i, m := range ms {
		if i == 0 {
			if m.Subject != subject || len(m.InReplyTo) != 0 || len(m.References) != 0 {
				t.Errorf("%s's first mail: subject %q, In-Reply-To %v, References %v; want %q answering nothing",
					addr, m.Subject, m.InReplyTo, m.References, subject)
			}
			continue
		}
		if m.Subject != "Re: "+subject {
			t.Errorf("%s's mail %d: subject %q, want %q", addr, i+1, m.Subject, "Re: "+subject)
		}
		var own []string
		for _, e := range ms[:i] {
			own = append(own, e.ID)
		}
		if len(m.InReplyTo) != 1 || m.InReplyTo[0] != own[i-1] {
			t.Errorf("%s's mail %d answers %v, want their previous mail %s", addr, i+1, m.InReplyTo, own[i-1])
		}
		if len(m.References) == 0 || m.References[0] != own[0] || m.References[len(m.References)-1] != own[i-1] {
			t.Errorf("%s's mail %d: References %v, want their first mail %s first and their previous %s last",
				addr, i+1, m.References, own[0], own[i-1])
		}
		for _, ref := range m.References {
			if !slices.Contains(own, ref) {
				t.Errorf("%s's mail %d references %s, a mail they never received", addr, i+1, ref)
			}
		}
	}
}
