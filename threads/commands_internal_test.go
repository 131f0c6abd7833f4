package threads

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"approvalsbot/store"
)

func TestWaited(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second: "0s", 45 * time.Second: "45s", 15 * time.Minute: "15m", 2 * time.Hour: "2h",
		2*time.Hour + 5*time.Minute: "2h5m", 76 * time.Hour: "3d4h",
	} {
		if got := Waited(d); got != want {
			t.Errorf("Waited(%s) = %q, want %q", d, got, want)
		}
	}
}

// pendingStore is a CommandStore of n pending approvals, each with one
// post, that counts the posts read.
type pendingStore struct {
	n     int
	reads int
}

func (p *pendingStore) ApprovalListPending(_ context.Context, q store.ApprovalListPendingParams) ([]*store.Approval, error) {
	var rows []*store.Approval
	for i := range min(p.n, q.Limit) {
		rows = append(rows, &store.Approval{ID: fmt.Sprintf("a-%03d", i), Function: "f"})
	}
	return rows, nil
}

func (p *pendingStore) PostList(_ context.Context, id string) ([]*store.Post, error) {
	p.reads++
	return []*store.Post{{ApprovalID: id, Target: "slack:C1", Ref: "1"}}, nil
}

// A listing reads the posts of the approvals it shows, and only counts
// the rest; one in a channel reads them all, to know which are there.
func TestListPendingReadsThePostsItNeeds(t *testing.T) {
	first := func(refs []PostRef) (PostRef, bool) {
		if len(refs) == 0 {
			return PostRef{}, false
		}
		return refs[0], true
	}
	for _, inChannel := range []bool{false, true} {
		st := &pendingStore{n: ListMax + 7}
		p := ListPending(context.Background(), st, slog.New(slog.DiscardHandler), ListParams{Tenant: "acme",
			Now: time.Now(), InChannel: inChannel, Card: first})
		if len(p.Items) != ListMax || p.More != 7 || p.Failed || p.Items[0].Card == nil {
			t.Fatalf("in channel %v: %d listed, %d more, failed %v", inChannel, len(p.Items), p.More, p.Failed)
		}
		want := ListMax
		if inChannel {
			want = ListMax + 7
		}
		if st.reads != want {
			t.Errorf("in channel %v: the posts of %d approvals read, want %d", inChannel, st.reads, want)
		}
	}
}
