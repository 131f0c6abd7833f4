// Package decidepage serves the decision page that escalation mail links
// to: a member who was mailed can decide a call there without any chat.
//
// A link is a signed token (token.go) bound to the approval, its
// revision and the member, expiring at the deadline: one link per member
// and revision, whose page offers every answer the tenant and the call
// allow. The page checks its signature and expiry, and threads.Click
// (ClickView) all the rest: what the page may show and offer. Opening it
// (GET) only shows: the card as the mail shows it, the approval's state
// and whom the person acts as, so a mail scanner that opens every link
// decides nothing and asks the job backend nothing. The call comes
// first, its answers after it: Deny and Approve, each a button of the
// page's own form, POSTed with its form check and checked by the same
// rules as a chat click (threads.Click: member, role, self-approval,
// superseded revision, typed confirmation), recorded before the page
// answers, and sent to the backend with via.surface "email"; the page
// then shows the outcome as the backend answers it. A destructive call's
// Approve asks again first, as chat does. Beside the answers the page
// offers I'm looking, as a chat card does (threads.Click too: the
// ladder's next steps wait while the member looks), and to a member with
// the content permission the call's full arguments, looked up at the job
// backend as them: a POST of the same form kind too, since a scanner
// follows links inside pages as well, and limited per member (limit.go).
// A content holder approves a restricted call only once the page has
// shown it to them that way.
//
// A link lives as long as the approval waits on the revision its mail
// showed: once the approval is closed, past its deadline, or asked again
// (a new revision), the page shows only how it ended or why the link no
// longer works, with no card, no form and no arguments, and asks the job
// backend nothing.
//
// Every answer is a whole HTML page that needs no JavaScript, escapes
// every value, and carries the headers a decision page needs: no
// caching, no referrer, a content security policy that allows no script,
// no framing and forms only to the bot itself.
package decidepage

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"approvalsbot/adapters/passkey"
	"approvalsbot/approval"
	"approvalsbot/internal/memberlimit"
	"approvalsbot/internal/pagesec"
	"approvalsbot/internal/refusal"
	"approvalsbot/ladder"
	"approvalsbot/say"
	"approvalsbot/store"
	"approvalsbot/templates"
	"approvalsbot/tenant"
	"approvalsbot/threads"
)

// Path is where the page is mounted: links are PublicURL + Path + token.
const Path = "/decide/"

// Service is what the page reads and decides through; *threads.Service
// satisfies it.
type Service interface {
	// Click takes the page's view of a link, its decision, I'm looking
	// and argument look-up as it takes a chat card's clicks.
	Click(ctx context.Context, req threads.ClickRequest) threads.Clicked
	// Receive opens the receipt of a decision just received
	// (threads.Receipt).
	Receive() *threads.Receipt
}

var _ Service = (*threads.Service)(nil)

// Links makes the decision links threads puts in mail, and checks them
// for the page. It needs neither the store nor the service, so threads
// can be built with it before the page exists.
type Links struct {
	base   string
	signer *Signer
}

var _ threads.DecisionLinks = (*Links)(nil)

// NewLinks takes the bot's address as a browser reaches it and the link
// secrets, the signing one first.
func NewLinks(publicURL string, secrets []string) (*Links, error) {
	u, err := url.Parse(publicURL)
	if publicURL == "" || err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("decidepage: public URL %q is not an absolute http(s) URL", publicURL)
	}
	signer, err := NewSigner(secrets)
	if err != nil {
		return nil, err
	}
	return &Links{base: strings.TrimRight(publicURL, "/"), signer: signer}, nil
}

// Link makes the member's one link to the revision: its page offers
// every answer the tenant and the call allow when it is opened.
func (l *Links) Link(req threads.LinkRequest) threads.MailLink {
	c := Claims{Tenant: req.Tenant, ApprovalID: req.ApprovalID, Revision: req.Revision,
		Member: req.Member, Expires: req.Expires}
	if req.Chat {
		c.Via = ViaChat
	}
	tok := l.signer.Sign(c)
	return threads.MailLink{Approve: req.Approve, URL: l.base + Path + tok}
}

// Options configure New.
type Options struct {
	Links   *Links  // required
	Service Service // required
	// Renderer renders the card threads builds. Required.
	Renderer *templates.Renderer
	// Now is the clock; nil uses time.Now.
	Now func() time.Time
	// Logger gets a line per decision and per refused link; nil discards.
	Logger *slog.Logger
	// Registry gets bot_decide_requests_refused_total; nil registers
	// nothing. IPv6Prefix names a refusal's source in the log lines
	// (0: connlimit's default).
	Registry   prometheus.Registerer
	IPv6Prefix int
	// Passkeys checks the passkey an Approve needs where the tenant's
	// rule asks for one (*passkey.Service); nil where the bot cannot take
	// passkeys, and such an Approve is then not offered.
	Passkeys Passkeys
}

// Passkeys is what the page asks of the passkey service: the sealed
// binding its Approve form carries for the script, and the check of the
// assertion the form sends back.
type Passkeys interface {
	SealBinding(b passkey.Binding, expires time.Time) string
	FinishApprove(ctx context.Context, b passkey.Binding, ref string, assertionJSON []byte) (*passkey.Used, error)
}

var _ Passkeys = (*passkey.Service)(nil)

// Handler serves the decision page and makes its links.
type Handler struct {
	signer   *Signer
	passkeys Passkeys
	refusals *refusal.Counter
	service  Service
	render   *templates.Renderer
	now      func() time.Time
	log      *slog.Logger
	lookups  *memberlimit.Limit
}

// New checks o and builds the handler.
func New(o Options) (*Handler, error) {
	if o.Links == nil || o.Service == nil || o.Renderer == nil {
		return nil, errors.New("decidepage: Links, Service and Renderer are required")
	}
	h := &Handler{signer: o.Links.signer, service: o.Service, render: o.Renderer, now: o.Now, log: o.Logger, passkeys: o.Passkeys,
		lookups: &memberlimit.Limit{Burst: LookupBurst, Every: LookupEvery}}
	if h.now == nil {
		h.now = time.Now
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	var err error
	if h.refusals, err = refusal.NewCounter(prometheus.CounterOpts{
		Name: "bot_decide_requests_refused_total",
		Help: "Requests to the decision page refused before any link was read (malformed or altered links, forms not the page's own, bodies too large or unreadable), by what the answer says.",
	}, "decision page: requests refused", h.log, o.Registry, o.IPv6Prefix); err != nil {
		return nil, err
	}
	return h, nil
}

// secure sets the security headers of every answer: a policy that
// allows no script at all, no framing, forms only to the bot itself, and
// nothing loaded; the card's inline styles are the only styles. A page
// whose Approve needs a passkey replaces the policy (page).
func secure(w http.ResponseWriter) { pagesec.Set(w, pagesec.NoScript) }

// maxForm bounds a POST's body: a reason of ReasonMax characters, at up
// to 4 bytes each and percent-encoded, and the form's two short fields.
// maxAnswerForm bounds an answer in words, approval.MaxAnswerText
// characters so encoded: only a form that sends one may be that large.
const (
	maxForm       = 16 << 10
	maxAnswerForm = 32 << 10
)

// ServeHTTP serves GET (and HEAD) and POST on Path + token.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	secure(w)
	token, ok := strings.CutPrefix(r.URL.Path, Path)
	if !ok || token == "" || strings.Contains(token, "/") {
		h.refusals.Refused(r, http.StatusNotFound, "no token")
		h.page(w, http.StatusNotFound, titled(say.Reason{Kind: say.PageNotFound}))
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		h.show(w, r, token)
	case http.MethodPost:
		h.decide(w, r, token)
	default:
		h.refusals.Refused(r, http.StatusMethodNotAllowed, "method")
		w.Header().Set("Allow", "GET, HEAD, POST")
		h.page(w, http.StatusMethodNotAllowed, titled(say.Reason{Kind: say.PageMethod}))
	}
}

// titled is the page of a reason that shows no call.
func titled(why say.Reason) view { return view{Title: why.Title(), Lead: why.String()} }

// link is a link whose signature checked, and what threads says its
// page shows.
type link struct {
	token  string
	claims Claims
	// expired: past the link's own expiry.
	expired bool
	page    *threads.Page
}

// open checks the token and asks threads what its page shows (sending:
// without the card, which a POST that decides does not show). When the
// link opens no page it writes the page that says why and returns nil.
func (h *Handler) open(w http.ResponseWriter, r *http.Request, token string, sending bool, answer string) *link {
	c, err := h.signer.Verify(token, h.now())
	if errors.Is(err, ErrMalformed) {
		h.refusals.Refused(r, http.StatusForbidden, "malformed or altered link")
		h.page(w, http.StatusForbidden, titled(say.Reason{Kind: say.LinkBroken}))
		return nil
	}
	l := &link{token: token, claims: c, expired: errors.Is(err, ErrExpired)}
	out := h.service.Click(r.Context(), l.viewing(sending, answer))
	if out.Page == nil {
		h.page(w, notOpened(out), titled(out.Reason))
		return nil
	}
	l.page = out.Page
	return l
}

// binding is what the passkey of the link's Approve is bound to.
func (l *link) binding() passkey.Binding {
	return passkey.Binding{Tenant: l.claims.Tenant, ApprovalID: l.claims.ApprovalID, Revision: l.claims.Revision,
		Digest: l.page.Digest, Member: l.page.User}
}

// viewing is the click that opens the link's page; answer is what a
// POST that decides sends (ActionApprove or ActionDeny), "" for a GET.
func (l *link) viewing(sending bool, answer string) threads.ClickRequest {
	kind := templates.ActionDeny
	switch answer {
	case ActionApprove:
		kind = templates.ActionApprove
	case actionAnswer:
		kind = templates.ActionAnswer
	case actionAnswerText:
		kind = templates.ActionAnswerText
	}
	return threads.ClickRequest{Do: threads.ClickView,
		Action: templates.Action{Kind: kind, ApprovalID: l.claims.ApprovalID, Revision: l.claims.Revision},
		Link: &threads.PageLink{Tenant: l.claims.Tenant, Member: l.claims.Member, Expires: l.claims.Expires,
			Expired: l.expired, Sending: sending, Chat: l.claims.Via == ViaChat}}
}

// notOpened is the status of a link that opens no page.
func notOpened(out threads.Clicked) int {
	switch {
	case out.Retry:
		return http.StatusServiceUnavailable
	case out.Reason.Kind == say.LinkUnknown:
		return http.StatusNotFound
	}
	return http.StatusForbidden
}

// again is the link's page read afresh, after a click that recorded
// nothing: the card as it stands now.
func (h *Handler) again(ctx context.Context, l *link) (view, int) {
	out := h.service.Click(ctx, l.viewing(false, ""))
	if out.Page == nil {
		return titled(out.Reason), notOpened(out)
	}
	l.page = out.Page
	return h.view(ctx, l)
}

// show answers a GET: it never decides, and it looks nothing up at the
// backend but the call a content holder's Approve of a restricted call
// shows first (view). The full arguments are the page's own form's
// (showArguments); a query string asks nothing.
func (h *Handler) show(w http.ResponseWriter, r *http.Request, token string) {
	l := h.open(w, r, token, false, "")
	if l == nil {
		return
	}
	v, status := h.view(r.Context(), l)
	h.page(w, status, v)
}

// showArguments answers a POST of the page's Show the call's full
// arguments (and of a restricted call's Show the call to approve it):
// the page again, with the call's full arguments looked up at the
// backend as the link's member and checked against the card's digest,
// as Show all arguments and Show details answer in chat. Only while the
// link decides and the page offers its answers, only to a member with
// the content permission, and within the member's limit.
func (h *Handler) showArguments(w http.ResponseWriter, r *http.Request, l *link) {
	v, status := h.view(r.Context(), l)
	switch {
	case !l.page.Decides:
		// Closed, changed, expired, in flight or not allowed: the page
		// says which, and asks the backend nothing.
	case !l.page.Content:
		v.Lead = say.Reason{Kind: say.FormNoContent, Tenant: l.claims.Tenant, User: l.page.User}.String()
		status = http.StatusForbidden
	case v.Answers != nil:
		if h.withArguments(r.Context(), l, &v) {
			status = http.StatusTooManyRequests
		}
	}
	h.page(w, status, v)
}

// withArguments puts the call's full arguments on v, and for a
// restricted call's content holder the Approve that carries the digest
// shown. It reports whether the member is over their look-up limit.
func (h *Handler) withArguments(ctx context.Context, l *link, v *view) bool {
	v.Arguments, v.ArgumentsForm = h.arguments(ctx, l), ""
	if v.Arguments.Refusal != "" {
		if v.Answers.ShowToApprove {
			v.Lead = say.Reason{Kind: say.FormNotShown, Message: v.Arguments.Refusal}.String()
		}
		return v.Arguments.RetryAfter > 0
	}
	if v.Answers.ShowToApprove {
		// The page shows the call, checked against the approval's
		// digests, and its Approve carries the digest shown (and asks
		// for the typed confirmation, where the call needs one).
		v.Answers.ShowToApprove, v.Answers.Approve, v.Answers.Shown = false, true, v.Arguments.Digest
		v.Answers.Typed = l.page.Typed
		v.Lead = say.Reason{Kind: say.PageWaitingShown}.String()
	}
	return false
}

// arguments is what the backend shows the link's member of the call,
// looked up only within the member's limit.
func (h *Handler) arguments(ctx context.Context, l *link) *shown {
	if wait := h.lookups.Take(l.claims.Tenant+"\x00"+l.page.User, h.now()); wait > 0 {
		secs := int64((wait + time.Second - 1) / time.Second)
		h.log.Info("decision page: argument look-up over the member's limit", "tenant", l.claims.Tenant,
			"approval_id", l.claims.ApprovalID, "member", l.claims.Member)
		return &shown{Refusal: say.Reason{Kind: say.FormLookupLimit, Count: int(time.Minute / LookupEvery), Seconds: int(secs)}.String(),
			RetryAfter: time.Duration(secs) * time.Second}
	}
	out := h.service.Click(ctx, l.click(threads.ClickShow, templates.ActionShowArgs))
	switch {
	case out.Retry:
		h.log.Error("decision page: look the arguments up", "approval_id", l.claims.ApprovalID, "why", out.Reason.String())
		return &shown{Refusal: say.FormLookupFailed.Text()}
	case out.Shown == nil:
		return &shown{Refusal: out.Reason.String()}
	}
	res := out.Shown.Arguments
	return &shown{JSON: res.Text(), Note: say.ArgumentsNote(res.Digest, res.Redacted), Digest: res.Digest, confirm: res.ConfirmValue}
}

// shown is the arguments part of a page: the arguments (and a
// changeset's files and patch), and the digest they matched; or why
// not, and when over the member's limit, how long until a look-up may
// go.
type shown struct {
	JSON, Note, Refusal, Digest string
	RetryAfter                  time.Duration
	// confirm is the value of the argument a typed confirmation names,
	// for the page to compare with; never shown.
	confirm json.RawMessage
}

// view lays out the page threads gave for the link: the call first,
// then its answers. It asks the backend nothing: the full arguments are
// the page's own form's (showArguments), also for a restricted call's
// Approve, so a scanner that opens the link causes no look-up.
func (h *Handler) view(_ context.Context, l *link) (view, int) {
	p := l.page
	v := view{Title: p.Title, Lead: p.Lead.String(), ActAs: p.User}
	if p.Email != "" {
		v.ActAs += " (" + p.Email + ")"
	}
	if p.Card != nil {
		c := *p.Card
		if p.Form && p.Question != nil && c.Question != nil {
			// The forms below offer the choices and the words: the card
			// shows the question only.
			q := *c.Question
			q.Choices, q.FreeText = nil, false
			c.Question = &q
		}
		v.Card = h.render.CardHTML(c)
	}
	if p.Question != nil {
		v.Noun = "question"
	}
	switch p.Lead.Kind {
	case say.LinkChanged, say.QuestionChanged, say.LinkExpired:
		return v, http.StatusGone
	case say.PageInFlight:
		v.Refresh = true
	case say.MailOff, say.MailDenyOnly, say.FormPrivateChat, say.OwnJob, say.PageNoAnswers, say.FormQuestionPrivate:
		return v, http.StatusForbidden
	}
	if !p.Form {
		return v, http.StatusOK
	}
	if p.Question != nil {
		check := h.signer.FormCheck(l.token)
		v.Question = questionFormOf(p.Question, check, p.Card)
		v.Look = &lookForm{Check: check, Pause: ladder.FormatDuration(p.Pause)}
		return v, http.StatusOK
	}
	check := h.signer.FormCheck(l.token)
	v.Answers = &answers{Check: check, Approve: p.Approve && !p.ShowFirst, ShowToApprove: p.Approve && p.ShowFirst,
		DenyFirst: p.DenyFirst, ReasonMax: threads.MaxComment}
	switch {
	case !p.Approve:
		v.Answers.ApproveWhy = p.ApproveWhy.String()
	case p.Passkey && h.passkeys == nil:
		v.Answers.Approve, v.Answers.ShowToApprove = false, false
		v.Answers.ApproveWhy = say.Reason{Kind: say.PasskeyNoPage, Tenant: l.claims.Tenant}.String()
	case p.Passkey:
		// The Approve asks for the member's passkey: the script the bot
		// serves, under a policy that lets it run and ask the bot.
		v.Passkey = true
		v.Answers.Passkey = h.passkeys.SealBinding(l.binding(), l.claims.Expires)
	}
	if p.Grant != nil && v.Answers.Approve && !v.Answers.AskAgain {
		v.Answers.Grant = choicesOf(p.Grant)
	}
	v.Look = &lookForm{Check: check, Pause: ladder.FormatDuration(p.Pause)}
	if p.Content && !v.Answers.ShowToApprove {
		v.ArgumentsForm = check
	}
	return v, http.StatusOK
}

// decide answers a POST from the page's form: it records the answer
// pressed through threads before it answers, then sends the person to
// the page, which shows the decision on its way and then the outcome.
// The Approve of a destructive call asks again first, as chat does.
func (h *Handler) decide(w http.ResponseWriter, r *http.Request, token string) {
	// The link's signature is checked before a byte of the body is read:
	// a body is read only for a link this bot made.
	if _, err := h.signer.Verify(token, h.now()); errors.Is(err, ErrMalformed) {
		h.refusals.Refused(r, http.StatusForbidden, "malformed or altered link")
		h.page(w, http.StatusForbidden, titled(say.Reason{Kind: say.LinkBroken}))
		return
	}
	body := &countingReader{r: http.MaxBytesReader(w, r.Body, maxAnswerForm)}
	r.Body = body
	if mt := r.Header.Get("Content-Type"); !strings.HasPrefix(mt, "application/x-www-form-urlencoded") {
		h.refusals.Refused(r, http.StatusUnsupportedMediaType, "not a form")
		h.page(w, http.StatusUnsupportedMediaType, titled(say.Reason{Kind: say.FormNotForm}))
		return
	}
	if err := r.ParseForm(); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			h.refusals.Refused(r, http.StatusRequestEntityTooLarge, "form too large")
			h.page(w, http.StatusRequestEntityTooLarge, titled(say.Reason{Kind: say.FormTooLarge, Count: threads.MaxComment}))
			return
		}
		h.refusals.Refused(r, http.StatusBadRequest, "form unreadable")
		h.page(w, http.StatusBadRequest, titled(say.Reason{Kind: say.FormUnreadable}))
		return
	}
	action := r.PostForm.Get("action")
	if body.n > maxForm && action != actionAnswerText {
		// Only an answer in words may be larger than a decision's form.
		h.refusals.Refused(r, http.StatusRequestEntityTooLarge, "form too large")
		h.page(w, http.StatusRequestEntityTooLarge, titled(say.Reason{Kind: say.FormTooLarge, Count: threads.MaxComment}))
		return
	}
	fromForm := h.signer.CheckForm(token, r.PostForm.Get("check"))
	answer := ""
	if fromForm && (action == ActionApprove || action == ActionDeny || action == actionAnswer || action == actionAnswerText) {
		answer = action
	}
	l := h.open(w, r, token, !fromForm || (action != actionArguments && action != actionQuestion), answer)
	if l == nil {
		return
	}
	if fromForm && action == actionLook {
		h.look(w, r, l)
		return
	}
	if fromForm && action == actionArguments && l.page.Question == nil {
		h.showArguments(w, r, l)
		return
	}
	if fromForm && action == actionQuestion && l.page.Question != nil {
		h.showQuestion(w, r, l)
		return
	}
	if l.page.Decides && (l.page.Question != nil) != (answer == actionAnswer || answer == actionAnswerText) {
		// A question's page takes its answers, a call's its decisions:
		// nothing else came from the page's own form.
		answer = ""
	}
	if answer == "" {
		h.refusals.Refused(r, http.StatusForbidden, "a POST not from the page's form")
		h.page(w, http.StatusForbidden, titled(say.Reason{Kind: say.FormNotOwn}))
		return
	}
	if !l.page.Decides {
		// Closed, changed, expired, in flight or not allowed: the page
		// says which, and nothing is sent. (Only then did threads build
		// the card: a decision goes to threads without that work.)
		v, status := h.view(r.Context(), l)
		h.page(w, status, v)
		return
	}
	if l.page.Question != nil {
		h.answer(w, r, l, answer)
		return
	}
	reason := strings.TrimSpace(r.PostForm.Get("reason"))
	shown := shownDigest(r.PostForm.Get("shown"), answer)
	if utf8.RuneCountInString(reason) > threads.MaxComment {
		v, _ := h.again(r.Context(), l)
		v.Lead = say.Reason{Kind: say.FormTooLong, Count: threads.MaxComment}.String()
		if v.Answers != nil {
			v.Answers.Reason = reason
		}
		h.page(w, http.StatusUnprocessableEntity, v)
		return
	}
	if answer == ActionApprove && r.PostForm.Get("again") != "yes" {
		// A destructive call's Approve asks again on the page, as chat
		// does: the page reads the call (nothing is recorded) and, for a
		// destructive one, answers with the question.
		if v, status, ask := h.askAgain(r.Context(), l, reason, shown); ask {
			h.page(w, status, v)
			return
		}
	}
	typed := ""
	if answer == ActionApprove && l.page.Typed != "" {
		typed = r.PostForm.Get("typed")
		if !h.checkTyped(w, r, l, typed, reason) {
			return
		}
	}
	passkeyed := false
	if answer == ActionApprove && l.page.Passkey {
		if !h.checkPasskey(w, r, l, reason) {
			return
		}
		passkeyed = true
	}
	// The decision is received once the form is read and checked: the
	// deadline judges it by then.
	rc := h.service.Receive()
	defer rc.Done()
	ctx, cancel := rc.Bound(r.Context())
	defer cancel()
	kind := templates.ActionDeny
	if answer == ActionApprove {
		kind = templates.ActionApprove
	}
	grant, granting, err := grantAsked(r, answer)
	if err != nil {
		h.refusals.Refused(r, http.StatusBadRequest, "grant choice unreadable")
		h.page(w, http.StatusBadRequest, titled(say.Reason{Kind: say.FormUnreadable}))
		return
	}
	if granting {
		kind = templates.ActionGrant
	}
	req := l.click(threads.ClickRecord, kind)
	req.Comment, req.ReceivedAt, req.ShownDigest, req.Passkey, req.Typed = reason, rc.At, shown, passkeyed, typed
	req.Grant = grant
	res := h.service.Click(ctx, req)
	log := h.log.With("tenant", l.claims.Tenant, "approval_id", l.claims.ApprovalID, "member", l.claims.Member,
		"action", answer)
	switch {
	case res.Retry:
		log.Error("decision page: record a decision", "why", res.Reason.String())
		v, _ := h.again(context.WithoutCancel(r.Context()), l)
		v.Lead = say.FormNotRecorded.Text()
		if v.Answers != nil {
			v.Answers.Reason = reason
		}
		h.page(w, http.StatusServiceUnavailable, v)
	case res.Reveal:
		// Nothing was recorded: the form did not carry the content it
		// showed. The page offers to show it now, with the Approve that
		// decides.
		log.Info("decision page: approval of a restricted call not shown first")
		v, status := h.again(r.Context(), l)
		h.page(w, status, v)
	case !res.Sent:
		log.Info("decision page: decision refused", "why", res.Reason.String())
		v, _ := h.again(r.Context(), l)
		v.Lead, v.Answers, v.Look, v.ArgumentsForm = res.Reason.String(), nil, nil, ""
		h.page(w, http.StatusConflict, v)
	default:
		log.Info("decision page: decision recorded")
		// POST, then GET: the page shows the decision on its way, then
		// its outcome, and reloading it sends nothing again.
		// Relative: the page's own address, wherever public_url's path
		// puts it.
		w.Header().Set("Location", token)
		w.WriteHeader(http.StatusSeeOther)
	}
}

// checkTyped compares the value typed to confirm the call with its
// argument in the call's full arguments, looked up at the backend as the
// member and checked against the digest (within the member's look-up
// limit), as the platform compares them (approval.TypedMatches). When
// they differ, or cannot be compared, it writes the page again with the
// call shown, saying why, nothing recorded, and returns false.
func (h *Handler) checkTyped(w http.ResponseWriter, r *http.Request, l *link, typed, reason string) bool {
	v, _ := h.view(r.Context(), l)
	if v.Answers == nil {
		h.page(w, http.StatusForbidden, v)
		return false
	}
	over := h.withArguments(r.Context(), l, &v)
	v.Answers.Reason, v.Answers.TypedValue = reason, typed
	switch {
	case over:
		h.page(w, http.StatusTooManyRequests, v)
		return false
	case v.Arguments.Refusal != "":
		h.page(w, http.StatusServiceUnavailable, v)
		return false
	case v.Arguments.confirm == nil || !approval.TypedMatches(v.Arguments.confirm, typed):
		h.log.Info("decision page: a typed confirmation that does not match", "tenant", l.claims.Tenant,
			"approval_id", l.claims.ApprovalID, "member", l.claims.Member)
		v.Lead = say.Reason{Kind: say.TypedWrong, Argument: l.page.Typed}.String()
		h.page(w, http.StatusUnprocessableEntity, v)
		return false
	}
	return true
}

// checkPasskey checks the passkey assertion an Approve's form carries,
// against the binding the page computes itself (never one the form
// says). When it does not check out it writes the page again, saying
// why, with nothing recorded, and returns false.
func (h *Handler) checkPasskey(w http.ResponseWriter, r *http.Request, l *link, reason string) bool {
	var err error
	if h.passkeys == nil {
		err = passkey.ErrMissing
	} else {
		_, err = h.passkeys.FinishApprove(r.Context(), l.binding(), r.PostForm.Get("passkey_ref"),
			[]byte(r.PostForm.Get("passkey_assertion")))
	}
	if err == nil {
		return true
	}
	h.log.Info("decision page: an Approve without a good passkey", "tenant", l.claims.Tenant,
		"approval_id", l.claims.ApprovalID, "member", l.claims.Member, "why", err.Error())
	v, _ := h.again(context.WithoutCancel(r.Context()), l)
	v.Lead = say.Reason{Kind: say.PasskeyRefused, Message: passkey.Why(err)}.String()
	if v.Answers != nil {
		v.Answers.Reason = reason
	}
	status := http.StatusForbidden
	if errors.Is(err, store.ErrUnavailable) {
		status = http.StatusServiceUnavailable
	}
	h.page(w, status, v)
	return false
}

// askAgain is the page that asks again before a destructive call's
// Approve is sent, with the comment and the digest shown carried on;
// ask is false for a call that needs no second question.
func (h *Handler) askAgain(ctx context.Context, l *link, reason, shown string) (v view, status int, ask bool) {
	v, status = h.again(ctx, l)
	if !l.page.Destructive || l.page.Passkey || l.page.Typed != "" || v.Answers == nil || !(v.Answers.Approve || v.Answers.ShowToApprove) {
		// A passkey's own prompt, or the value typed, is the second
		// question.
		return v, status, false
	}
	question := templates.VisibleLine(l.page.Title) + " is " + l.page.Effect + ". Approve it?"
	v.Lead = say.Reason{Kind: say.PageAskAgain, Message: question}.String()
	v.Answers.AskAgain, v.Answers.Approve, v.Answers.ShowToApprove = true, true, false
	v.Answers.Reason, v.Answers.Shown, v.Answers.Cancel = reason, shown, l.token
	v.Look, v.ArgumentsForm = nil, ""
	return v, http.StatusOK, true
}

// shownDigest is the digest an Approve form says the page showed, kept
// only when it has a digest's form: threads checks it is the call's.
func shownDigest(s, action string) string {
	if action != ActionApprove || !approval.ValidDigest(s) {
		return ""
	}
	return s
}

// actionLook is the form field of the page's I'm looking. A link's
// claims name its decision; any link whose page offers a decision offers
// this too.
const actionLook = "look"

// actionArguments is the form field of the page's Show the call's full
// arguments, offered with the decision to a member with the content
// permission.
const actionArguments = "arguments"

// look answers a POST of the page's I'm looking: recorded through
// threads before the page answers, then the page again, which shows who
// is looking on its card. It records nothing where the link does not
// decide (closed, changed, expired, in flight, not allowed).
func (h *Handler) look(w http.ResponseWriter, r *http.Request, l *link) {
	if !l.page.Decides {
		v, status := h.view(r.Context(), l)
		h.page(w, status, v)
		return
	}
	// Bounded by threads.RecordBound, as a chat card's I'm looking.
	res := h.service.Click(r.Context(), l.click(threads.ClickLadder, templates.ActionLook))
	log := h.log.With("tenant", l.claims.Tenant, "approval_id", l.claims.ApprovalID, "member", l.claims.Member)
	switch {
	case res.Retry:
		log.Error("decision page: record an acknowledgement", "why", res.Reason.String())
		v, _ := h.again(context.WithoutCancel(r.Context()), l)
		v.Lead = say.FormNotLooking.Text()
		h.page(w, http.StatusServiceUnavailable, v)
	case !res.Sent:
		log.Info("decision page: acknowledgement refused", "why", res.Reason.String())
		v, _ := h.again(r.Context(), l)
		v.Lead, v.Look = res.Reason.String(), nil
		h.page(w, http.StatusConflict, v)
	default:
		log.Info("decision page: acknowledgement recorded")
		w.Header().Set("Location", l.token)
		w.WriteHeader(http.StatusSeeOther)
	}
}

// click is a click on the link's approval and revision, as its member
// on the decision page.
func (l *link) click(do threads.ClickDo, kind templates.ActionKind) threads.ClickRequest {
	return threads.ClickRequest{Do: do, Action: templates.Action{Kind: kind, ApprovalID: l.claims.ApprovalID, Revision: l.claims.Revision},
		Person: l.person()}
}

// person is who acts on the link's page: the member's mail address on
// the page surface of mail, or their user id on the page reached from
// chat.
func (l *link) person() threads.Person {
	if l.claims.Via == ViaChat {
		return threads.Person{Surface: tenant.SurfacePage, User: l.page.User}
	}
	return threads.Person{Surface: threads.SurfaceEmail, User: l.page.Email}
}

// view is what one page shows.
type view struct {
	// Noun is what the page is about, in its title: "approval" or
	// "question" ("" reads as approval).
	Noun  string
	Title string
	Lead  string
	ActAs string
	Card  template.HTML
	// Answers is the page's answers, offered while the link decides.
	Answers *answers
	// Question is a question's answers (its choices, its words),
	// offered while the link answers; nil for a call.
	Question *questionForm
	// Look is the page's I'm looking, offered with the answers.
	Look    *lookForm
	Refresh bool // a decision is on its way: look again shortly
	// ArgumentsForm offers the full arguments to a member with the
	// content permission, as a POST of the page's form with this check;
	// Arguments is them, when asked.
	ArgumentsForm string
	Arguments     *shown
	// Passkey: the page carries the passkey script (its Approve asks for
	// the member's passkey), and the policy that lets it run.
	Passkey bool
}

// answers is the answer bar: Deny always, Approve where the tenant and
// the call allow it, each with the comment, all in one form.
type answers struct {
	Check string
	// Approve: Approve is offered. ShowToApprove: it is offered once the
	// page has shown the call (a restricted call to a content holder),
	// through a button that shows it. ApproveWhy: why neither is.
	Approve, ShowToApprove bool
	ApproveWhy             string
	// DenyFirst: Deny comes first and takes the focus.
	DenyFirst bool
	// AskAgain: the second question of a destructive call's Approve;
	// Cancel is the page's own address, which keeps it as it was.
	AskAgain bool
	Cancel   string
	// Reason is the comment as typed, kept across a refusal.
	Reason    string
	ReasonMax int
	// Shown is the digest of the arguments the page showed with its
	// Approve (a restricted call, to a content holder); "" for none.
	Shown string
	// Passkey is the sealed binding the script asks a challenge with,
	// where the Approve needs the member's passkey; "" for none.
	Passkey string
	// Typed names the argument whose value the Approve needs typed;
	// TypedValue is what was typed, kept across a refusal.
	Typed, TypedValue string
	// Grant is "Approve and allow…"'s choices beside Approve; nil for none.
	Grant *grantChoices
}

// lookForm is I'm looking: the form check, and how long the ladder's
// steps wait (the approval's ack_pause).
type lookForm struct {
	Check string
	Pause string
}

//go:embed page.html.tmpl
var pageFS embed.FS

var pageTemplate = template.Must(template.New("").Option("missingkey=error").ParseFS(pageFS, "page.html.tmpl"))

func (h *Handler) page(w http.ResponseWriter, status int, v view) {
	// The title and the lead may quote the call (its function name, its
	// job's id): each invisible character in them is shown, as on the card.
	v.Title, v.Lead = templates.VisibleLine(v.Title), templates.Visible(v.Lead)
	var b strings.Builder
	if err := pageTemplate.ExecuteTemplate(&b, "page", v); err != nil {
		h.log.Error("decision page: render", "err", err.Error())
		status = http.StatusInternalServerError
		b.Reset()
		b.WriteString("<!DOCTYPE html><title>Error</title><p>" + say.PageBroken.Text() + "</p>")
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if v.Passkey {
		// The one script, the bot's own, and its requests to the bot.
		w.Header().Set("Content-Security-Policy", passkey.ContentSecurityPolicy)
	}
	if v.Arguments != nil && v.Arguments.RetryAfter > 0 { // over the member's look-up limit
		w.Header().Set("Retry-After", fmt.Sprint(int64((v.Arguments.RetryAfter+time.Second-1)/time.Second)))
	}
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}
