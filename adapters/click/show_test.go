package click_test

import (
	"cmp"
	"context"
	"errors"
	"strings"
	"testing"

	"approvalsbot/adapters/click"
	"approvalsbot/store"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// lookupFails is threads whose argument look-up fails outright.
type lookupFails struct{ *threads.Service }

func (lookupFails) ShowArguments(context.Context, threads.ShowRequest) (threads.ShowResult, error) {
	return threads.ShowResult{}, errors.New("read revision 1 of a-merge1: database is locked")
}

// revisionsDown is a store whose revisions cannot be read.
type revisionsDown struct{ click.Store }

func (revisionsDown) RevisionGet(context.Context, string, int) (*store.Revision, error) {
	return nil, errors.New("database is locked")
}

func TestShowAllArgumentsShowsThemToWhoMaySee(t *testing.T) {
	t.Parallel()
	b := newBot(t)
	b.ingest(t, "merge.json")
	shown := b.flow.Show(context.Background(), action(templates.ActionShowArgs, "a-merge1"), person("U0KEVIN"))
	if shown.Say != "" || shown.Tenant != "acme" || shown.Details != nil {
		t.Fatalf("shown %+v: want the arguments alone", shown)
	}
	if shown.Arguments.Digest != b.backend.Digest("a-merge1") || shown.Arguments.Function != "acme_github.merge" ||
		len(shown.Arguments.Arguments) == 0 {
		t.Fatalf("arguments %+v: want the backend's, with their digest", shown.Arguments)
	}
}

// A restricted call's content is never stored (approval.StoredForm), so
// Show details answers with the arguments looked up at the backend,
// checked against the digest, and no card of the stored revision.
func TestShowDetailsOnARestrictedCardShowsTheLookedUpArguments(t *testing.T) {
	t.Parallel()
	b := newBot(t)
	b.ingest(t, "private.json")
	act := action(templates.ActionShowDetails, "a-priv1")
	shown := b.flow.Show(context.Background(), act, person("U0KEVIN"))
	if shown.Say != "" || shown.Arguments.Digest != b.backend.Digest("a-priv1") || len(shown.Arguments.Arguments) == 0 {
		t.Fatalf("shown %+v: want the backend's arguments", shown)
	}
	if shown.Details != nil {
		t.Fatalf("details %+v: a restricted revision keeps no content to reveal", shown.Details)
	}

	// Without the revision the arguments are still shown.
	f := b.with(t, func(o *click.Options) { o.Store = revisionsDown{o.Store} })
	if shown := f.Show(context.Background(), act, person("U0KEVIN")); shown.Say != "" || shown.Details != nil ||
		shown.Arguments.Digest != b.backend.Digest("a-priv1") {
		t.Fatalf("with the revision unreadable: %+v, want the arguments alone", shown)
	}
}

func TestShowRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		edit func(b *bot, o *click.Options)
		user string
		id   string
		want string
	}{
		{name: "no content permission", user: "U0NOC", want: "content permission"},
		{name: "not a member", user: "U0STRANGER", want: "not a member of tenant acme"},
		{name: "unknown card", id: "a-none", want: click.SayUnknownCard},
		{name: "store down", edit: func(_ *bot, o *click.Options) { o.Store = brokenStore{o.Store} }, want: click.SayStoreDown},
		{name: "look-up fails", edit: func(b *bot, o *click.Options) {
			o.Service = lookupFails{b.svc}
		}, want: click.SayLookupFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := newBot(t)
			b.ingest(t, "private.json")
			f := b.flow
			if c.edit != nil {
				f = b.with(t, func(o *click.Options) { c.edit(b, o) })
			}
			shown := f.Show(context.Background(), action(templates.ActionShowDetails, cmp.Or(c.id, "a-priv1")), person(cmp.Or(c.user, "U0KEVIN")))
			if !strings.Contains(shown.Say, c.want) || shown.Details != nil || shown.Arguments.Arguments != nil || shown.Arguments.Digest != "" {
				t.Fatalf("shown %+v: want only %q", shown, c.want)
			}
		})
	}
}
