package decidepage_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"

	"approvalsbot/templates"
	"approvalsbot/tenant"
	"approvalsbot/threads"
)

// copies is a chat surface that keeps each card it posted as the card
// model it was last shown as, and every edit of it, so a test reads
// what each copy showed.
type copies struct {
	surface string
	mu      sync.Mutex
	seq     int
	cards   map[string][]templates.Card // by ref: as posted, then each edit
}

var _ threads.Surface = (*copies)(nil)

func newCopies(surface string) *copies {
	return &copies{surface: surface, cards: map[string][]templates.Card{}}
}

func (c *copies) Post(_ context.Context, req threads.PostRequest) (threads.PostResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	ref := fmt.Sprintf("%s-%d", c.surface, c.seq)
	c.cards[ref] = []templates.Card{templates.Build(req.Card.Input())}
	return threads.PostResult{Channel: strings.TrimPrefix(req.Target, c.surface+":"), Ref: ref}, nil
}

func (c *copies) Edit(_ context.Context, req threads.EditRequest) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.cards[req.Post.Ref]; !ok {
		return fmt.Errorf("edit of %s, which was never posted", req.Post.Ref)
	}
	c.cards[req.Post.Ref] = append(c.cards[req.Post.Ref], templates.Build(req.Card.Input()))
	return nil
}

func (c *copies) Reply(context.Context, threads.ReplyRequest) error   { return nil }
func (c *copies) Notice(context.Context, threads.NoticeRequest) error { return nil }

// shown is every state the copy ref was shown in, as posted first.
func (c *copies) shown(ref string) []templates.Card {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]templates.Card(nil), c.cards[ref]...)
}

// TestADecisionFromThePageEditsEveryChatCopy: a decision made on the
// decision page (from a mail's link) reaches every copy of the card in
// chat, on each surface and in each channel: each is edited to the
// decision, made via email, with its Approve and Deny gone.
func TestADecisionFromThePageEditsEveryChatCopy(t *testing.T) {
	for _, c := range []struct {
		action         string
		extra          url.Values
		status, detail string
	}{
		{"approve", nil, "Approved by user:kevin at 18:00 UTC", "via email"},
		{"deny", url.Values{"reason": {"not before the release"}}, "Denied by user:kevin: not before the release",
			"at 18:00 UTC · via email"},
	} {
		t.Run(c.action, func(t *testing.T) {
			slack, discord := newCopies("slack"), newCopies("discord")
			cfg := strings.Replace(strings.ReplaceAll(pageConfig, "EMAIL_DECISIONS", tenant.EmailDecisionsApprove),
				"    post: [slack:C0APPROVALS]\n",
				"    post: [slack:C0APPROVALS, slack:C0LEADS, discord:channel:112233445566778899]\n", 1)
			p := newPageSetUp(t, pageSetup{config: cfg, publicURL: "https://approvals.example",
				surfaces: map[string]threads.Surface{"slack": slack, "discord": discord}})
			p.ingest("merge.json")
			p.drain()
			posts, err := p.store.PostList(context.Background(), "a-merge1")
			if err != nil {
				t.Fatal(err)
			}
			if len(posts) != 3 {
				t.Fatalf("posts %+v, want the card in each of the three channels", posts)
			}

			if a := p.submit(p.link("acme", "a-merge1", 1, "user:kevin", c.action), c.extra); a.status != 303 {
				t.Fatalf("POST %d:\n%s", a.status, a.body)
			}
			p.drain()
			if got := p.fake.Decisions(); len(got) != 1 || got[0].Request.Via.Surface != "email" {
				t.Fatalf("the backend received %+v, want one decision via email", got)
			}
			for _, post := range posts {
				var shown []templates.Card
				switch {
				case strings.HasPrefix(post.Target, "slack:"):
					shown = slack.shown(post.Ref)
				case strings.HasPrefix(post.Target, "discord:"):
					shown = discord.shown(post.Ref)
				}
				if len(shown) < 2 {
					t.Fatalf("the copy in %s was shown %d times, want posted and then edited", post.Target, len(shown))
				}
				last := shown[len(shown)-1]
				if last.Status != c.status || last.StatusDetail != c.detail {
					t.Errorf("the copy in %s shows %q (%q), want %q (%q)", post.Target, last.Status, last.StatusDetail, c.status, c.detail)
				}
				for _, b := range last.Buttons {
					if b.Action.Kind == templates.ActionApprove || b.Action.Kind == templates.ActionDeny {
						t.Errorf("the copy in %s still offers %s", post.Target, b.Action.Kind)
					}
				}
			}
		})
	}
}
