package decidepage

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"approvalsbot/approval"
	"approvalsbot/say"
	"approvalsbot/threads"
)

// "Approve and allow…" on the decision page: beside a plain Approve the
// page offers the grant's choices, each scope in words as the core
// worded them; "Approve" with a scope chosen sends the approval with its
// grant, which the core checks as if crafted. No choice (the default)
// approves the call alone.

// grantChoices is what the page shows of a grant offer.
type grantChoices struct {
	Call, Values, ValuesWhyNot string
	TTLs, Uses                 []choice
	Footnote                   string
}

// choice is one option of a select: its value and its words.
type choice struct{ Value, Label string }

func choicesOf(o *threads.GrantOffer) *grantChoices {
	g := &grantChoices{Call: o.Call, Values: o.Values, Footnote: say.GrantFootnote}
	if o.Values == "" {
		g.ValuesWhyNot = say.GrantNoValues(o.ValuesWhyNot)
	}
	for _, d := range o.TTLs {
		g.TTLs = append(g.TTLs, choice{Value: d.String(), Label: approval.TTLWords(d)})
	}
	for _, n := range o.Uses {
		g.Uses = append(g.Uses, choice{Value: strconv.Itoa(n), Label: say.GrantUsesWords(n)})
	}
	return g
}

// grantAsked reads the form's grant choice for an Approve: false when
// none was chosen (or the answer is not Approve); an error when one was
// chosen but cannot be read.
func grantAsked(r *http.Request, answer string) (*threads.GrantAsk, bool, error) {
	scope := r.PostForm.Get("grant_scope")
	if answer != ActionApprove || scope == "" {
		return nil, false, nil
	}
	ttl, err := time.ParseDuration(r.PostForm.Get("grant_ttl"))
	if err != nil {
		return nil, false, errors.New("the grant's lifetime is not a duration")
	}
	uses, err := strconv.Atoi(r.PostForm.Get("grant_uses"))
	if err != nil {
		return nil, false, errors.New("the grant's uses are not a number")
	}
	return &threads.GrantAsk{Scope: approval.GrantScope(scope), TTL: ttl, Uses: uses}, true, nil
}
