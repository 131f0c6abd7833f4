package passkey

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"

	"approvalsbot/internal/pagesec"
	"approvalsbot/store"
	"approvalsbot/templates"
)

// Where the handler is mounted, and what it serves under it.
const (
	// Path is the handler's prefix: mount it at PublicURL's path + Path.
	Path = "/passkey/"
	// ScriptPath serves the one script: enrolment, and the decision
	// page's approveWithPasskey.
	ScriptPath = Path + "passkey.js"
	// OptionsPath takes a POST of a sealed binding (form field
	// "binding") and answers an approval's request options as JSON.
	OptionsPath = Path + "options"
	// EnrolPath + token is a member's enrolment page.
	EnrolPath = Path + "enrol/"
	// enrolOptions, after EnrolPath + token, answers a POST of the page's
	// form check with an enrolment's creation options as JSON.
	enrolOptions = "/options"
)

// ContentSecurityPolicy is the policy of a page that includes the
// script: the decision page's, with scripts and fetches from the bot
// itself alone. No inline script, no eval, nothing from elsewhere.
const ContentSecurityPolicy = pagesec.WithScript

// secure sets the headers of every answer: the decision page's, with
// ContentSecurityPolicy.
func secure(w http.ResponseWriter) { pagesec.Set(w, ContentSecurityPolicy) }

//go:embed passkey.js
var script []byte

//go:embed page.html.tmpl
var pageText string

var pageTemplate = template.Must(template.New("page").Option("missingkey=error").Parse(pageText))

// maxForm bounds a POST's body: an attestation of maxAnswer bytes,
// percent-encoded, and the form's short fields.
const maxForm = 4*maxAnswer + 4<<10

// Handler serves ScriptPath, OptionsPath and the enrolment pages.
func (s *Service) Handler() http.Handler { return http.HandlerFunc(s.serve) }

func (s *Service) serve(w http.ResponseWriter, r *http.Request) {
	secure(w)
	// Mounted at PublicURL's path + Path: what follows Path decides.
	i := strings.Index(r.URL.Path, Path)
	if i < 0 {
		http.NotFound(w, r)
		return
	}
	rest := r.URL.Path[i+len(Path):]
	switch {
	case rest == "passkey.js":
		s.serveScript(w, r)
	case rest == "options":
		s.serveOptions(w, r)
	case strings.HasPrefix(rest, "enrol/"):
		tok, sub, _ := strings.Cut(strings.TrimPrefix(rest, "enrol/"), "/")
		switch {
		case tok == "" || (sub != "" && "/"+sub != enrolOptions):
			s.page(w, http.StatusNotFound, view{Title: "Not found", Lead: "There is no page at this address."})
		case sub != "":
			s.serveEnrolOptions(w, r, tok)
		default:
			s.serveEnrol(w, r, tok)
		}
	default:
		s.page(w, http.StatusNotFound, view{Title: "Not found", Lead: "There is no page at this address."})
	}
}

func (s *Service) serveScript(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	// A script is no secret; a new release's must be fetched at once.
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Del("Pragma")
	_, _ = w.Write(script)
}

// readForm reads a POST's form: urlencoded only, at most maxForm bytes.
// It answers the request itself and returns false when it cannot.
func readForm(w http.ResponseWriter, r *http.Request, answer func(status int, msg string)) bool {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		answer(http.StatusMethodNotAllowed, "Only a POST from the bot's own page is taken here.")
		return false
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if mt := r.Header.Get("Content-Type"); !strings.HasPrefix(mt, "application/x-www-form-urlencoded") {
		answer(http.StatusUnsupportedMediaType, "The request was not a form.")
		return false
	}
	if err := r.ParseForm(); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			answer(http.StatusRequestEntityTooLarge, "The request was too large.")
			return false
		}
		answer(http.StatusBadRequest, "The form could not be read.")
		return false
	}
	return true
}

// jsonAnswer writes v as JSON with status.
func jsonAnswer(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// jsonError is a JSON refusal: what the script shows the person.
func jsonError(w http.ResponseWriter, status int, msg string) {
	jsonAnswer(w, status, map[string]string{"error": msg})
}

// statusOf is the HTTP status of a ceremony's error.
func statusOf(err error) int {
	switch {
	case errors.Is(err, ErrNoPasskey), errors.Is(err, ErrEnrolled), errors.Is(err, ErrMissing):
		return http.StatusConflict
	case errors.Is(err, ErrLinkExpired), errors.Is(err, ErrExpired), errors.Is(err, ErrUsed):
		return http.StatusGone
	case errors.Is(err, ErrLinkBroken), errors.Is(err, ErrNotMember), errors.Is(err, ErrWrongBinding),
		errors.Is(err, ErrUnknownRequest), errors.Is(err, ErrNotYours):
		return http.StatusForbidden
	case errors.Is(err, ErrNotVerified), errors.Is(err, ErrCloned), errors.Is(err, ErrRefused):
		return http.StatusUnprocessableEntity
	}
	return http.StatusServiceUnavailable
}

// serveOptions begins an approval's ceremony for the decision page: the
// script POSTs the page's sealed binding and gets {ref, options}.
func (s *Service) serveOptions(w http.ResponseWriter, r *http.Request) {
	if !readForm(w, r, func(status int, msg string) { jsonError(w, status, msg) }) {
		return
	}
	b, err := s.openBinding(r.PostForm.Get("binding"))
	if err != nil {
		s.log.Info("passkey: options refused", "why", err.Error(), "remote", r.RemoteAddr)
		jsonError(w, statusOf(err), Why(err))
		return
	}
	if !s.mayAsk(w, b.Tenant, b.Member) {
		return
	}
	req, err := s.BeginApprove(store.ForPerson(r.Context()), b)
	if err != nil {
		if statusOf(err) == http.StatusServiceUnavailable {
			s.log.Error("passkey: begin an approval", "tenant", b.Tenant, "approval_id", b.ApprovalID, "err", err.Error())
		}
		jsonError(w, statusOf(err), Why(err))
		return
	}
	jsonAnswer(w, http.StatusOK, req)
}

// mayAsk counts a challenge asked for a member's page, and when the
// member is over ChallengeBurst at once answers 429 with Retry-After.
func (s *Service) mayAsk(w http.ResponseWriter, tenantID, member string) bool {
	wait := s.asks.Take(tenantID+"\x00"+member, s.now())
	if wait <= 0 {
		return true
	}
	secs := int64((wait + time.Second - 1) / time.Second)
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	jsonError(w, http.StatusTooManyRequests, fmt.Sprintf("Too many passkey requests at once; try again in %d s.", secs))
	return false
}

// serveEnrolOptions begins an enrolment for the enrolment page's script.
func (s *Service) serveEnrolOptions(w http.ResponseWriter, r *http.Request, tok string) {
	if !readForm(w, r, func(status int, msg string) { jsonError(w, status, msg) }) {
		return
	}
	c, err := s.openEnrol(tok)
	if err == nil && !s.forms.Checks(tok, r.PostForm.Get("check")) {
		err = ErrLinkBroken
	}
	if err != nil {
		jsonError(w, statusOf(err), Why(err))
		return
	}
	if !s.mayAsk(w, c.Tenant, c.Member) {
		return
	}
	req, err := s.BeginEnrol(store.ForPerson(r.Context()), c.Tenant, c.Member)
	if err != nil {
		if statusOf(err) == http.StatusServiceUnavailable {
			s.log.Error("passkey: begin an enrolment", "tenant", c.Tenant, "err", err.Error())
		}
		jsonError(w, statusOf(err), Why(err))
		return
	}
	jsonAnswer(w, http.StatusOK, req)
}

// The enrolment form's actions.
const (
	actionAdd    = "add"
	actionRemove = "remove"
)

// serveEnrol shows a member's passkeys (GET) and takes the page's own
// forms (POST): a new passkey's attestation, or a removal. A POST that
// changed something is answered with a redirect to the page, so a reload
// sends nothing again.
func (s *Service) serveEnrol(w http.ResponseWriter, r *http.Request, tok string) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodPost:
		s.enrolPost(w, r, tok)
		return
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		s.page(w, http.StatusMethodNotAllowed, view{Title: "Not allowed", Lead: "This page takes only its own forms."})
		return
	}
	c, err := s.openEnrol(tok)
	if err != nil {
		s.refuse(w, err)
		return
	}
	if err := s.isMember(c.Tenant, c.Member); err != nil {
		s.refuse(w, err)
		return
	}
	v, status := s.enrolView(r.Context(), tok, c)
	s.page(w, status, v)
}

// refuse writes the page of a link that opens nothing.
func (s *Service) refuse(w http.ResponseWriter, err error) {
	title := "Link not valid"
	if errors.Is(err, ErrLinkExpired) {
		title = "Link expired"
	}
	s.page(w, statusOf(err), view{Title: title, Lead: Why(err)})
}

func (s *Service) enrolPost(w http.ResponseWriter, r *http.Request, tok string) {
	answer := func(status int, msg string) { s.page(w, status, view{Title: "Not taken", Lead: msg}) }
	if !readForm(w, r, answer) {
		return
	}
	c, err := s.openEnrol(tok)
	if err != nil {
		s.refuse(w, err)
		return
	}
	if !s.forms.Checks(tok, r.PostForm.Get("check")) {
		s.log.Info("passkey: a POST not from the enrolment page's form", "tenant", c.Tenant, "member", c.Member)
		answer(http.StatusForbidden, "This request did not come from the bot's own page: open the link again.")
		return
	}
	ctx := store.ForPerson(r.Context())
	var lead string
	switch r.PostForm.Get("action") {
	case actionRemove:
		err = s.Remove(ctx, c.Tenant, c.Member, r.PostForm.Get("id"))
		if errors.Is(err, store.ErrNotFound) {
			lead = "That passkey was removed already."
			err = nil
		}
	case actionAdd:
		if r.PostForm.Get("ref") == "" && r.PostForm.Get("credential") == "" {
			lead = "Adding a passkey needs the page's script: turn JavaScript on for this page and try again."
			break
		}
		_, err = s.FinishEnrol(ctx, c.Tenant, c.Member, r.PostForm.Get("ref"), r.PostForm.Get("name"), []byte(r.PostForm.Get("credential")))
	default:
		answer(http.StatusBadRequest, "The form asked for nothing this page does.")
		return
	}
	if err != nil {
		if statusOf(err) == http.StatusServiceUnavailable {
			s.log.Error("passkey: enrolment page", "tenant", c.Tenant, "member", c.Member, "err", err.Error())
		}
		v, _ := s.enrolView(ctx, tok, c)
		v.Lead = Why(err)
		s.page(w, statusOf(err), v)
		return
	}
	if lead != "" {
		v, status := s.enrolView(ctx, tok, c)
		v.Lead = lead
		s.page(w, status, v)
		return
	}
	// Relative: the page's own address, wherever public_url's path puts it.
	w.Header().Set("Location", tok)
	w.WriteHeader(http.StatusSeeOther)
}

// view is what one page shows.
type view struct {
	Title, Lead string
	// Enrol is the member's page; nil for a page that only says why not.
	Enrol *enrolView
}

type enrolView struct {
	Tenant, Member string
	Check          string
	Expires        string
	// Options is the script's endpoint for a new passkey's options,
	// relative to the page.
	Options  string
	Script   string // relative to the page
	Passkeys []listed
	MaxName  int
}

type listed struct {
	ID, Name, Added, LastUsed string
}

// enrolView lays out a member's page.
func (s *Service) enrolView(ctx context.Context, tok string, c enrolClaims) (view, int) {
	v := view{Title: "Your passkeys", Enrol: &enrolView{Tenant: c.Tenant, Member: c.Member, Check: s.forms.Check(tok),
		Expires: c.Expires.UTC().Format("2006-01-02 15:04 UTC"), Options: tok + enrolOptions, Script: "../passkey.js", MaxName: MaxName}}
	rows, err := s.List(ctx, c.Tenant, c.Member)
	if err != nil {
		s.log.Error("passkey: enrolment page", "tenant", c.Tenant, "member", c.Member, "err", err.Error())
		v.Lead = errUnavailable.Error()
		return v, http.StatusServiceUnavailable
	}
	for _, p := range rows {
		l := listed{ID: p.ID, Name: p.Name, Added: stamp(p.CreatedAt), LastUsed: "never"}
		if !p.LastUsedAt.IsZero() {
			l.LastUsed = stamp(p.LastUsedAt)
		}
		v.Enrol.Passkeys = append(v.Enrol.Passkeys, l)
	}
	return v, http.StatusOK
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

func (s *Service) page(w http.ResponseWriter, status int, v view) {
	v.Title, v.Lead = templates.VisibleLine(v.Title), templates.Visible(v.Lead)
	var b strings.Builder
	if err := pageTemplate.Execute(&b, v); err != nil {
		s.log.Error("passkey: render the page", "err", err.Error())
		status = http.StatusInternalServerError
		b.Reset()
		b.WriteString("<!DOCTYPE html><title>Error</title><p>The page could not be shown.</p>")
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}
