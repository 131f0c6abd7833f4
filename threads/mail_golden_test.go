package threads_test

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"approvalsbot/adapters/decidepage"
	"approvalsbot/approval"
	"approvalsbot/internal/golden"
	"approvalsbot/notify"
	"approvalsbot/notify/smtpconf"
	"approvalsbot/notify/smtptest"
	"approvalsbot/threads"
	"approvalsbot/threads/threadstest"
)

var update = flag.Bool("update", false, "rewrite the golden mails under testdata/mail")

// smtpConfig is mailConfig with a payments ladder that mails a list and
// kevin at its one step, for refund.json (which names that ladder).
var smtpConfig = strings.Replace(mailConfig, "    tools:\n",
	"      payments:\n        - after: 15m\n          email: [finance@acme.example, kevin@acme.example]\n    tools:\n", 1)

// smtpHarness is the decide harness with the bot's real mailer: every
// mail crosses SMTP to an in-process server and is read back as a mail
// client reads it.
type smtpHarness struct {
	*decideHarness
	sink *smtptest.Sink
}

func newSMTPHarness(t *testing.T) *smtpHarness {
	t.Helper()
	if smtpConfig == mailConfig {
		t.Fatal("smtpConfig has no payments ladder: testConfig changed its tools line")
	}
	sink := smtptest.Start(t, smtptest.Options{})
	links, err := decidepage.NewLinks("https://approvals.example", []string{testLinkSecret})
	if err != nil {
		t.Fatal(err)
	}
	h := newDecideHarnessFrom(t, smtpConfig, time.Minute, func(o *threads.Options) {
		o.Links = links
		m, err := notify.NewMailer(notify.Options{
			SMTP:     smtpconf.Settings{Addr: sink.Addr, TLS: smtpconf.TLSNone, From: "Approvals <approvals@acme.example>"},
			Renderer: threadstest.Renderer(t), Now: o.Clock.Now, CommandTimeout: 5 * time.Second,
		})
		if err != nil {
			t.Fatal(err)
		}
		o.Mailer = m
	})
	return &smtpHarness{decideHarness: h, sink: sink}
}

// sentMail is one mail the SMTP server accepted, read as a mail client
// reads it.
type sentMail struct {
	To         string // the envelope's one recipient
	Msg        smtptest.Message
	Subject    string
	ID         string   // its Message-ID, without angle brackets
	InReplyTo  []string // without angle brackets
	References []string
	Date       time.Time
	Text, HTML string
}

// sent is every mail the server accepted, in order.
func (h *smtpHarness) sent(t *testing.T) []sentMail {
	t.Helper()
	var out []sentMail
	for i, r := range h.sink.Mails() {
		if len(r.To) != 1 {
			t.Fatalf("mail %d went to %d recipients %v: each mail is one recipient's", i+1, len(r.To), r.To)
		}
		pm, err := smtptest.Parse(r.Data)
		if err != nil {
			t.Fatalf("mail %d to %s: %v", i+1, r.To[0], err)
		}
		m := sentMail{To: r.To[0], Msg: pm, Text: pm.Parts["text/plain"], HTML: pm.Parts["text/html"]}
		if len(pm.Parts) != 2 || m.Text == "" || m.HTML == "" {
			t.Fatalf("mail %d to %s has parts %v, want text/plain and text/html", i+1, m.To, keys(pm.Parts))
		}
		if m.Subject, err = pm.Header.Subject(); err != nil {
			t.Fatalf("mail %d subject: %v", i+1, err)
		}
		if m.ID, err = pm.Header.MessageID(); err != nil || m.ID == "" {
			t.Fatalf("mail %d Message-ID %q: %v", i+1, m.ID, err)
		}
		if m.InReplyTo, err = pm.Header.MsgIDList("In-Reply-To"); err != nil {
			t.Fatalf("mail %d In-Reply-To: %v", i+1, err)
		}
		if m.References, err = pm.Header.MsgIDList("References"); err != nil {
			t.Fatalf("mail %d References: %v", i+1, err)
		}
		if m.Date, err = pm.Header.Date(); err != nil {
			t.Fatalf("mail %d Date: %v", i+1, err)
		}
		out = append(out, m)
	}
	return out
}

// sentTo is what addr received, in order.
func sentTo(all []sentMail, addr string) []sentMail {
	var out []sentMail
	for _, m := range all {
		if strings.EqualFold(m.To, addr) {
			out = append(out, m)
		}
	}
	return out
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// storyMail is one mail a story sends: to whom, what it is (the golden
// file's name), and whether its golden files are kept.
type storyMail struct {
	to, label string
	golden    bool
}

// mailStory is one approval's life from its first mail to its outcome,
// driven through the service as the bot runs it.
type mailStory struct {
	name string
	run  func(t *testing.T, h *smtpHarness)
	// mails is what each recipient receives, each recipient's in order;
	// nobody else is mailed.
	mails []storyMail
	// function and id name the approval, for the subject.
	function, id string
	// state is how the approval ends; outcome is what each recipient's
	// outcome mail says, its first line the state and who (the reason
	// where the card shows one, when).
	state   approval.State
	outcome []string
}

const (
	kevinAddr   = "kevin@acme.example"
	leadsAddr   = "leads@acme.example"
	financeAddr = "finance@acme.example"
)

// mergeAtStep2 is merge.json's approval an hour in: step 2 has mailed
// the list address and kevin.
func mergeAtStep2(t *testing.T, h *smtpHarness) {
	t.Helper()
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	h.drain(t)
	h.at(t, time.Hour)
	h.tick(t)
	h.drain(t)
}

// mailStories are the outcomes of issue 13's list: approved (after a
// reask and a later step), denied with a reason, nobody answered,
// cancelled, refused by the re-check.
var mailStories = []mailStory{
	{
		name: "approved", function: "acme_github.merge", id: "a-merge1",
		run: func(t *testing.T, h *smtpHarness) {
			mergeAtStep2(t, h)
			h.at(t, 90*time.Minute)
			h.fake.AddApproval("a-merge1", 2, arguments(t, "a-merge1.r2.json"), false)
			h.ingest(t, "merge-reasked.json")
			h.drain(t)
			h.at(t, 4*time.Hour)
			h.tick(t)
			h.drain(t)
			h.at(t, 4*time.Hour+10*time.Minute)
			if res := h.decide(t, "a-merge1", 2, true, "U0LEE"); !res.Sent {
				t.Fatalf("approve: %+v", res)
			}
			h.drain(t)
		},
		mails: []storyMail{
			{leadsAddr, "step2", true}, {leadsAddr, "reask", true}, {leadsAddr, "approved", true},
			{kevinAddr, "step2", true}, {kevinAddr, "reask", true}, {kevinAddr, "step3", true}, {kevinAddr, "approved", true},
		},
		state: approval.StateApproved, outcome: []string{"Approved by user:lee at 22:10 UTC: ok by me", "via slack"},
	},
	{
		name: "denied", function: "acme_github.merge", id: "a-merge1",
		run: func(t *testing.T, h *smtpHarness) {
			mergeAtStep2(t, h)
			h.at(t, 80*time.Minute)
			// kevin denies on the decision page, with a reason.
			res, err := h.svc.Decide(context.Background(), threads.DecideRequest{Tenant: "acme", ApprovalID: "a-merge1",
				Revision: 1, Person: threads.Person{Surface: threads.SurfaceEmail, User: kevinAddr},
				Comment: "not before the release freeze ends"})
			if err != nil || !res.Sent {
				t.Fatalf("deny on the decision page: %+v %v", res, err)
			}
			h.drain(t)
		},
		mails: []storyMail{
			{leadsAddr, "step2", false}, {leadsAddr, "denied", false},
			{kevinAddr, "step2", false}, {kevinAddr, "denied", true},
		},
		state:   approval.StateDenied,
		outcome: []string{"Denied by user:kevin: not before the release freeze ends", "at 19:20 UTC · via email"},
	},
	{
		name: "expired", function: "acme_github.merge", id: "a-merge1",
		run: func(t *testing.T, h *smtpHarness) {
			mergeAtStep2(t, h)
			h.at(t, 24*time.Hour+threads.RecordBound)
			h.tick(t)
			h.drain(t)
			h.drain(t)
		},
		mails: []storyMail{
			{leadsAddr, "step2", false}, {leadsAddr, "expired", false},
			{kevinAddr, "step2", false}, {kevinAddr, "expired", true},
		},
		state: approval.StateExpired, outcome: []string{"Denied: nobody answered by the deadline", "deadline 2026-11-30 18:00 UTC"},
	},
	{
		name: "cancelled", function: "mail.send", id: "a-mail1",
		run: func(t *testing.T, h *smtpHarness) {
			h.fake.AddApproval("a-mail1", 1, arguments(t, "a-mail1.json"), false)
			h.ingest(t, "mail.json")
			h.drain(t)
			h.at(t, time.Hour)
			h.tick(t)
			h.drain(t)
			h.at(t, 65*time.Minute)
			h.ingest(t, "mail-cancelled.json")
			h.drain(t)
		},
		mails: []storyMail{
			{leadsAddr, "step2", false}, {leadsAddr, "cancelled", false},
			{kevinAddr, "step2", false}, {kevinAddr, "cancelled", true},
		},
		state: approval.StateCancelled, outcome: []string{"Cancelled: the job was stopped by user:ada", "at 19:05 UTC"},
	},
	{
		name: "refused", function: "payments.refund", id: "a-refund1",
		run: func(t *testing.T, h *smtpHarness) {
			h.fake.AddApproval("a-refund1", 1, arguments(t, "a-refund1.json"), false)
			h.ingest(t, "refund.json")
			h.drain(t)
			h.at(t, 15*time.Minute)
			h.tick(t)
			h.drain(t)
			h.at(t, 30*time.Minute)
			h.ingest(t, "refund-recheck.json")
			h.drain(t)
		},
		mails: []storyMail{
			{financeAddr, "step1", true}, {financeAddr, "refused", false},
			{kevinAddr, "step1", true}, {kevinAddr, "refused", true},
		},
		state: approval.StateRefused, outcome: []string{"The platform refused the call after approval", "at 18:30 UTC",
			"Re-checked after a long wait: the job's starter user:ada no longer holds the operator role in tenant acme"},
	},
}

// approvedThenRefused is the re-check's usual path: lee approves the
// merge, everyone mailed reads "Approved", then the platform's re-check
// refuses the call before it runs (refund-recheck.json's event, of this
// approval), and everyone mailed is told so.
var approvedThenRefused = mailStory{
	name: "approved-then-refused", function: "acme_github.merge", id: "a-merge1",
	run: func(t *testing.T, h *smtpHarness) {
		mergeAtStep2(t, h)
		h.at(t, 80*time.Minute)
		if res := h.decide(t, "a-merge1", 1, true, "U0LEE"); !res.Sent {
			t.Fatalf("approve: %+v", res)
		}
		h.drain(t)
		if got := h.state(t, "a-merge1").State; got != string(approval.StateApproved) {
			t.Fatalf("after lee's approval: %s", got)
		}
		h.at(t, 90*time.Minute)
		recheckMerge(t, h.decideHarness)
		h.at(t, 90*time.Minute+time.Minute) // the re-check's mail waits a minute (threads' recheckMailDelay)
		h.drain(t)
	},
	mails: []storyMail{
		{leadsAddr, "step2", false}, {leadsAddr, "approved", false}, {leadsAddr, "refused", false},
		{kevinAddr, "step2", false}, {kevinAddr, "approved", false}, {kevinAddr, "refused", true},
	},
	state: approval.StateRefused, outcome: []string{"The platform refused the call after user:lee approved it", "at 19:30 UTC",
		"Re-checked after a long wait: the job's starter user:ada no longer holds the operator role in tenant acme"},
}

func init() { mailStories = append(mailStories, approvedThenRefused) }

// play runs the story on a new harness and returns every mail sent,
// having checked that each recipient got the story's mails and nobody
// else any, and that nothing more is mailed after the outcome.
func (s mailStory) play(t *testing.T) (*smtpHarness, []sentMail) {
	t.Helper()
	h := newSMTPHarness(t)
	s.run(t, h)
	// Nothing more is mailed once the approval is closed: not by later
	// ticks, not after a restart.
	h.at(t, 48*time.Hour)
	h.tick(t)
	h.drain(t)
	h.restart(t)
	h.tick(t)
	h.drain(t)
	all := h.sent(t)
	want := map[string]int{}
	for _, m := range s.mails {
		want[m.to]++
	}
	got := map[string]int{}
	for _, m := range all {
		got[strings.ToLower(m.To)]++
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("mails per recipient %v, want %v", got, want)
	}
	return h, all
}

// linkPattern is a decision link as the mail carries it.
var linkPattern = regexp.MustCompile(`https://approvals\.example/decide/[A-Za-z0-9_.\-]+`)

// midTag is a Message-ID's tag (from its outbox row, random per run).
var midTag = regexp.MustCompile(`^(.+\.)[0-9a-f]{16}(@acme\.example)$`)

// stableMail is a mail as its golden files keep it: its header fields
// (decoded, sorted, the MIME boundary and the Message-IDs' tags replaced
// by whose mail it is) above the text part; the HTML part alone. A
// decision link's token shows as the claims it verifies to.
func stableMail(t *testing.T, m sentMail, ids map[string]string) (text, html string) {
	t.Helper()
	name := func(id string) string {
		if n, ok := ids[id]; ok {
			return n
		}
		t.Errorf("mail to %s names Message-ID %s, which no mail carried", m.To, id)
		return "unknown@acme.example"
	}
	var lines []string
	for f := m.Msg.Header.Fields(); f.Next(); {
		v, err := f.Text()
		if err != nil {
			t.Fatalf("header %s: %v", f.Key(), err)
		}
		switch strings.ToLower(f.Key()) {
		case "content-type":
			v = regexp.MustCompile(`boundary=\S+`).ReplaceAllString(v, "boundary=BOUNDARY")
		case "message-id":
			v = "<" + name(m.ID) + ">"
		case "in-reply-to", "references":
			ids, err := m.Msg.Header.MsgIDList(f.Key())
			if err != nil {
				t.Fatal(err)
			}
			var named []string
			for _, id := range ids {
				named = append(named, "<"+name(id)+">")
			}
			v = strings.Join(named, " ")
		}
		lines = append(lines, f.Key()+": "+v)
	}
	sort.Strings(lines)
	links := func(s string) string {
		return linkPattern.ReplaceAllStringFunc(s, func(link string) string { return stableLink(t, link, m.Date) })
	}
	return strings.Join(lines, "\n") + "\n\n" + links(m.Text), links(m.HTML)
}

// stableLink is a decision link with its token replaced by the claims it
// verifies to at when.
func stableLink(t *testing.T, link string, when time.Time) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	s, err := decidepage.NewSigner([]string{testLinkSecret})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Verify(strings.TrimPrefix(u.Path, decidepage.Path), when)
	if err != nil {
		t.Errorf("link %s does not verify at %v: %v", link, when, err)
		return "https://approvals.example/decide/{UNVERIFIED}"
	}
	return fmt.Sprintf("https://approvals.example/decide/{%s %s revision %d as %s until %s}",
		c.Action, c.ApprovalID, c.Revision, c.Member, c.Expires.UTC().Format(time.RFC3339))
}

// mailIDs names each mail's Message-ID by whose it is: the approval,
// revision and step the bot puts in it, then the recipient and the
// mail's place in their thread in place of the random tag.
func mailIDs(t *testing.T, all []sentMail) map[string]string {
	t.Helper()
	ids := map[string]string{}
	n := map[string]int{}
	for _, m := range all {
		local := strings.ToLower(m.To[:strings.IndexByte(m.To, '@')])
		n[local]++
		sm := midTag.FindStringSubmatch(m.ID)
		if sm == nil {
			t.Fatalf("Message-ID %q has no tag where the bot puts one", m.ID)
		}
		if _, dup := ids[m.ID]; dup {
			t.Fatalf("two mails carry Message-ID %s", m.ID)
		}
		ids[m.ID] = fmt.Sprintf("%s%s-%d%s", sm[1], local, n[local], sm[2])
	}
	return ids
}

// TestMailGoldenAsSent compares the mails the bot sends over SMTP, as a
// mail client reads them, with the files under testdata/mail (go test
// ./threads -run TestMailGoldenAsSent -update rewrites them): a ladder
// step's mail to a list address and to a member with a decision link, a
// reask with what changed, a later step's follow-up, and each outcome.
func TestMailGoldenAsSent(t *testing.T) {
	for _, s := range mailStories {
		t.Run(s.name, func(t *testing.T) {
			_, all := s.play(t)
			ids := mailIDs(t, all)
			for _, addr := range []string{leadsAddr, financeAddr, kevinAddr} {
				var labels []storyMail
				for _, m := range s.mails {
					if m.to == addr {
						labels = append(labels, m)
					}
				}
				for i, m := range sentTo(all, addr) {
					if !labels[i].golden {
						continue
					}
					text, html := stableMail(t, m, ids)
					base := filepath.Join("testdata", "mail", s.name, fmt.Sprintf("%s-%d-%s", addr[:strings.IndexByte(addr, '@')], i+1, labels[i].label))
					golden.Check(t, base+".txt", text, *update)
					golden.Check(t, base+".html", html, *update)
				}
			}
		})
	}
}

// TestMailGoldenShowsNoOtherRecipient: no mail names another
// recipient's address, in any part (the step line counts them).
func TestMailGoldenShowsNoOtherRecipient(t *testing.T) {
	for _, s := range mailStories {
		t.Run(s.name, func(t *testing.T) {
			_, all := s.play(t)
			var addrs []string
			for _, m := range s.mails {
				if !slices.Contains(addrs, m.to) {
					addrs = append(addrs, m.to)
				}
			}
			for _, m := range all {
				for _, other := range addrs {
					if strings.EqualFold(other, m.To) {
						continue
					}
					for part, body := range map[string]string{"text": m.Text, "html": m.HTML} {
						if strings.Contains(strings.ToLower(body), other) {
							t.Errorf("the mail to %s names %s in its %s part", m.To, other, part)
						}
					}
				}
			}
		})
	}
}
