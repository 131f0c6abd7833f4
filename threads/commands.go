package threads

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"approvalsbot/ladder"
	"approvalsbot/store"
	"approvalsbot/templates"
	"approvalsbot/tenant"
)

// What /approvals reads and shows on every chat surface: whose approvals
// a command in a channel is about, what waits in a tenant, and its
// ladders as timelines. A surface lays them out in its own markup; these
// decide what they hold, so Slack's and Discord's answers say the same.
//
// Both surfaces answer about a tenant to its members only, what waits
// as well as its ladders, however public the channel (say.MembersOnly).

// CommandStore is what a command reads; store.Store satisfies it.
type CommandStore interface {
	ApprovalListPending(ctx context.Context, p store.ApprovalListPendingParams) ([]*store.Approval, error)
	PostList(ctx context.Context, approvalID string) ([]*store.Post, error)
}

// What a listing shows at most, so it stays one short answer per tenant.
const (
	// ListMax is the approvals listed per tenant.
	ListMax = 30
	// listScanMax is the pending approvals read per tenant to find them.
	listScanMax = 500
)

// TenantsFor finds whose approvals a command is about: the tenants that
// post to the channel it was given in (postsHere: cards, tool overrides,
// ladder posts, digests), else those the person is a member of
// (isMember). byChannel says which. The ids are sorted.
func TenantsFor(tenants map[string]*tenant.Tenant, postsHere, isMember func(*tenant.Tenant) bool) (ids []string, byChannel bool) {
	for id, t := range tenants {
		if postsHere(t) {
			ids = append(ids, id)
		}
	}
	byChannel = len(ids) > 0
	if !byChannel {
		for id, t := range tenants {
			if isMember(t) {
				ids = append(ids, id)
			}
		}
	}
	slices.Sort(ids)
	return ids, byChannel
}

// PostsTo reports whether a tenant posts anything to a target is
// matches: its cards, a tool override's cards, a ladder step's posts, its
// digest.
func PostsTo(t *tenant.Tenant, is func(ladder.Target) bool) bool {
	if slices.ContainsFunc(t.Post, is) {
		return true
	}
	for _, o := range t.Tools {
		if slices.ContainsFunc(o.Post, is) {
			return true
		}
	}
	for _, l := range t.Ladders {
		for _, s := range l.Steps {
			if slices.ContainsFunc(s.Post, is) {
				return true
			}
		}
	}
	return t.Digest != nil && is(t.Digest.To)
}

// Pending is what waits for a decision in one tenant, oldest first.
type Pending struct {
	Tenant string
	// Failed: the store could not be read (logged); nothing is listed.
	Failed bool
	Items  []Listed
	// More counts the approvals past ListMax.
	More int
}

// Listed is one approval that waits.
type Listed struct {
	ID, Function string
	Waited       time.Duration
	// Due is the deadline as the tenant reads it (TimeAt); ""
	// for none.
	Due string
	// Card is the card to link, nil for none.
	Card *PostRef
}

// ListParams say what ListPending lists.
type ListParams struct {
	Tenant string
	// Zone is the tenant's time zone (tenant.Tenant.Location), which
	// deadlines are worded in; nil is UTC.
	Zone *time.Location
	Now  time.Time
	// InChannel lists only the approvals Card finds a card for.
	InChannel bool
	// Card picks, from an approval's posts, the surface's card to link
	// (a card in the channel, a card anyone may open).
	Card func([]PostRef) (PostRef, bool)
}

// ListPending lists a tenant's pending approvals, oldest first, each
// with the card p.Card picks from its posts; with p.InChannel only those
// that have one. The functions and ids are the backend's: a surface
// shows them as literal text.
func ListPending(ctx context.Context, st CommandStore, log *slog.Logger, p ListParams) Pending {
	out := Pending{Tenant: p.Tenant}
	rows, err := st.ApprovalListPending(ctx, store.ApprovalListPendingParams{Tenant: p.Tenant, Limit: listScanMax})
	if err != nil {
		log.Error("list pending approvals", "tenant", p.Tenant, "err", err.Error())
		out.Failed = true
		return out
	}
	for _, row := range rows {
		if !p.InChannel && len(out.Items) == ListMax {
			// Counted, not shown: its posts would pick no card.
			out.More++
			continue
		}
		posts, err := st.PostList(ctx, row.ID)
		if err != nil {
			log.Warn("list the posts of an approval", "tenant", p.Tenant, "approval_id", row.ID, "err", err.Error())
		}
		var post *PostRef
		if c, ok := p.Card(RefsOf(posts)); ok {
			post = &c
		}
		if p.InChannel && post == nil {
			continue
		}
		if len(out.Items) == ListMax {
			out.More++
			continue
		}
		w := Listed{ID: row.ID, Function: templates.VisibleLine(cmp.Or(row.Function, row.ID)), Waited: p.Now.Sub(row.RequestedAt),
			Card: post}
		if !row.DeadlineAt.IsZero() {
			w.Due = TimeAt(row.DeadlineAt, p.Now, p.Zone)
		}
		out.Items = append(out.Items, w)
	}
	return out
}

// LadderView is one timeline a tenant's ladders command shows: a ladder
// as configured (Glob empty), or the ladder a tool override gives the
// calls its Glob matches.
type LadderView struct {
	Ladder   string
	Glob     string
	Deadline time.Duration
	Lines    []string // as bot check prints them
}

// Ladders are a tenant's ladders as timelines, by name, then each tool
// override with the ladder, deadline and channels it takes. A ladder
// names people and addresses: show them to the tenant's members only.
func Ladders(t *tenant.Tenant) []LadderView {
	var out []LadderView
	names := make([]string, 0, len(t.Ladders))
	for name := range t.Ladders {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		out = append(out, LadderView{Ladder: name, Deadline: orDefault(t.Deadline),
			Lines: t.Ladders[name].Timeline(t.Post, t.Deadline)})
	}
	for _, o := range t.Tools {
		post, deadline := t.Post, t.Deadline
		if len(o.Post) > 0 {
			post = o.Post
		}
		if o.Deadline > 0 {
			deadline = o.Deadline
		}
		lad, ok := t.Ladders[o.Ladder]
		if !ok {
			lad = t.Ladders[tenant.DefaultLadder]
			lad.Name = tenant.DefaultLadder
		}
		out = append(out, LadderView{Ladder: lad.Name, Glob: o.Glob, Deadline: orDefault(deadline),
			Lines: lad.Timeline(post, deadline)})
	}
	return out
}

func orDefault(d time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return ladder.DefaultDeadline
}

// Waited words a wait as people say it: 45s, 15m, 2h5m, 3d4h.
func Waited(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 24*time.Hour:
		if m := int(d.Minutes()) % 60; m > 0 {
			return fmt.Sprintf("%dh%dm", int(d.Hours()), m)
		}
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
}

// EnrolLinks makes members' passkey enrolment links
// (adapters/passkey.Links): whoever holds one enrols passkeys as the
// member, so a surface gives it to that person alone.
type EnrolLinks interface {
	EnrolLink(tenant, user string) (url string, expires time.Time)
}

// PasskeyLink is one tenant's enrolment link for the person who asked.
type PasskeyLink struct {
	Tenant, User string // the tenant, and the member the person is there
	URL          string
	Expires      time.Time
}

// PasskeyLinks are what /approvals passkey answers a person privately:
// an enrolment link for each tenant they are a member of on surface (by
// their chat user id there), by tenant id. None when links is nil (no
// decision page on a host name) or the person is no member.
func PasskeyLinks(tenants map[string]*tenant.Tenant, links EnrolLinks, surface, chatUser string) []PasskeyLink {
	if links == nil {
		return nil
	}
	ids := make([]string, 0, len(tenants))
	for id := range tenants {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var out []PasskeyLink
	for _, id := range ids {
		m, ok := tenants[id].MemberOn(surface, chatUser)
		if !ok {
			continue
		}
		url, exp := links.EnrolLink(id, m.User)
		out = append(out, PasskeyLink{Tenant: id, User: m.User, URL: url, Expires: exp})
	}
	return out
}
