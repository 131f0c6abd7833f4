package passkey_test

import (
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"approvalsbot/adapters/passkey"
	"approvalsbot/adapters/passkey/passkeytest"
)

// serve answers one request of the handler.
func (f *fixture) serve(t *testing.T, method, target string, form url.Values) *httptest.ResponseRecorder {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	r := httptest.NewRequest(method, target, body)
	if form != nil {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	w := httptest.NewRecorder()
	f.svc.Handler().ServeHTTP(w, r)
	return w
}

// enrolPath is the path of member's enrolment link.
func (f *fixture) enrolPath(t *testing.T, member string) string {
	t.Helper()
	link, exp := f.svc.EnrolLink("acme", member)
	if !exp.Equal(f.clock.Now().Add(passkey.EnrolTTL)) {
		t.Errorf("the link expires at %v", exp)
	}
	u, err := url.Parse(link)
	if err != nil || !strings.HasPrefix(link, origin+passkey.EnrolPath) {
		t.Fatalf("enrolment link %q", link)
	}
	return u.Path
}

var checkField = regexp.MustCompile(`name="check" value="([^"]+)"`)

func wantSecure(t *testing.T, w *httptest.ResponseRecorder) {
	t.Helper()
	h := w.Header()
	for k, v := range map[string]string{
		"Content-Security-Policy": passkey.ContentSecurityPolicy,
		"Referrer-Policy":         "no-referrer",
		"X-Frame-Options":         "DENY",
		"X-Content-Type-Options":  "nosniff",
	} {
		if h.Get(k) != v {
			t.Errorf("%s: %q, want %q", k, h.Get(k), v)
		}
	}
	if !strings.Contains(h.Get("Content-Security-Policy"), "script-src 'self'") {
		t.Errorf("the policy allows other scripts: %s", h.Get("Content-Security-Policy"))
	}
}

// The enrolment page adds a passkey through its script's two requests
// (options, then the form with the answer), lists it escaped, and
// removes it with a form that needs no script.
func TestEnrolPage(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	path := f.enrolPath(t, "user:kevin")
	w := f.serve(t, http.MethodGet, path, nil)
	wantSecure(t, w)
	if w.Code != http.StatusOK || w.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("GET: %d %v", w.Code, w.Header())
	}
	page := w.Body.String()
	for _, want := range []string{`<script src="../passkey.js" defer></script>`, "You have no passkey here yet.",
		"For user:kevin in tenant acme.", `data-passkey-enrol="`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "<script>") || strings.Contains(page, "onclick") {
		t.Error("the page carries inline script")
	}
	m := checkField.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no form check:\n%s", page)
	}
	check := m[1]

	// The script's first request: the options.
	w = f.serve(t, http.MethodPost, path+"/options", url.Values{"check": {check}})
	if w.Code != http.StatusOK || !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
		t.Fatalf("options: %d %s", w.Code, w.Body)
	}
	var req passkey.Request
	if err := json.Unmarshal(w.Body.Bytes(), &req); err != nil {
		t.Fatal(err)
	}
	att, cred, err := f.auth.Create(req.Options, passkeytest.Spoil{})
	if err != nil {
		t.Fatal(err)
	}
	// Its second: the form, with the answer.
	w = f.serve(t, http.MethodPost, path, url.Values{"check": {check}, "action": {"add"}, "ref": {req.Ref},
		"credential": {string(att)}, "name": {`<img src=x onerror=alert(1)>`}})
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != strings.TrimPrefix(path, passkey.EnrolPath) {
		t.Fatalf("add: %d %v %s", w.Code, w.Header(), w.Body)
	}
	page = f.serve(t, http.MethodGet, path, nil).Body.String()
	if !strings.Contains(page, "&lt;img src=x onerror=alert(1)&gt;") || strings.Contains(page, "<img") {
		t.Errorf("the name is not escaped:\n%s", page)
	}
	if !strings.Contains(page, `name="id" value="`+cred.IDText()+`"`) || !strings.Contains(page, "last used never") {
		t.Errorf("the page does not list the passkey:\n%s", page)
	}

	// A removal not from the page's form removes nothing.
	for name, form := range map[string]url.Values{
		"no check":        {"action": {"remove"}, "id": {cred.IDText()}},
		"another's check": {"check": {"AAAA"}, "action": {"remove"}, "id": {cred.IDText()}},
	} {
		if w := f.serve(t, http.MethodPost, path, form); w.Code != http.StatusForbidden {
			t.Errorf("%s: %d", name, w.Code)
		}
	}
	// Ana's page's check does not remove Kevin's passkey through his.
	anaPath := f.enrolPath(t, "user:ana")
	anaCheck := checkField.FindStringSubmatch(f.serve(t, http.MethodGet, anaPath, nil).Body.String())[1]
	if w := f.serve(t, http.MethodPost, path, url.Values{"check": {anaCheck}, "action": {"remove"}, "id": {cred.IDText()}}); w.Code != http.StatusForbidden {
		t.Errorf("another page's check: %d", w.Code)
	}
	if w := f.serve(t, http.MethodPost, anaPath, url.Values{"check": {anaCheck}, "action": {"remove"}, "id": {cred.IDText()}}); w.Code != http.StatusOK ||
		!strings.Contains(w.Body.String(), "That passkey was removed already.") {
		t.Errorf("removing another member's passkey: %d %s", w.Code, w.Body)
	}
	if pks, _ := f.svc.List(t.Context(), "acme", "user:kevin"); len(pks) != 1 {
		t.Fatalf("refused removals removed: %+v", pks)
	}
	w = f.serve(t, http.MethodPost, path, url.Values{"check": {check}, "action": {"remove"}, "id": {cred.IDText()}})
	if w.Code != http.StatusSeeOther {
		t.Fatalf("remove: %d %s", w.Code, w.Body)
	}
	if pks, _ := f.svc.List(t.Context(), "acme", "user:kevin"); len(pks) != 0 {
		t.Errorf("after a removal: %+v", pks)
	}
	// Without script, Add says what it needs.
	w = f.serve(t, http.MethodPost, path, url.Values{"check": {check}, "action": {"add"}, "name": {"x"}})
	if !strings.Contains(w.Body.String(), "Adding a passkey needs the page&#39;s script") {
		t.Errorf("add without script: %d %s", w.Code, w.Body)
	}
}

// An enrolment link that is altered, expired or for someone no longer a
// member opens nothing.
func TestEnrolLinkRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	path := f.enrolPath(t, "user:kevin")
	stranger := f.enrolPath(t, "user:mallory")
	for _, c := range []struct {
		name, path string
		wait       time.Duration
		status     int
		want       string
	}{
		{"altered", path[:len(path)-2] + "AA", 0, http.StatusForbidden, passkey.ErrLinkBroken.Error()},
		{"not a token", passkey.EnrolPath + "x", 0, http.StatusForbidden, passkey.ErrLinkBroken.Error()},
		{"a stranger's", stranger, 0, http.StatusForbidden, passkey.ErrNotMember.Error()},
		{"an unknown page", passkey.EnrolPath + "x/y", 0, http.StatusNotFound, "There is no page at this address."},
		{"expired", path, passkey.EnrolTTL, http.StatusGone, "the link has expired"},
	} {
		f.clock.Advance(c.wait)
		w := f.serve(t, http.MethodGet, c.path, nil)
		wantSecure(t, w)
		if w.Code != c.status || !strings.Contains(strings.ToLower(w.Body.String()), strings.ToLower(html.EscapeString(c.want))) ||
			strings.Contains(w.Body.String(), "<form") {
			t.Errorf("%s: %d\n%s", c.name, w.Code, w.Body)
		}
	}
	// The options of an expired link are refused too.
	if w := f.serve(t, http.MethodPost, path+"/options", url.Values{"check": {"x"}}); w.Code != http.StatusGone {
		t.Errorf("options of an expired link: %d %s", w.Code, w.Body)
	}
}

// The decision page's options: a sealed binding begins the ceremony; an
// altered or expired one, or a member without a passkey, gets a JSON
// refusal the script shows.
func TestOptions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	sealed := f.svc.SealBinding(kevinsYes, f.clock.Now().Add(time.Hour))
	w := f.serve(t, http.MethodPost, passkey.OptionsPath, url.Values{"binding": {sealed}})
	if w.Code != http.StatusConflict || !strings.Contains(w.Body.String(), "You have no passkey enrolled here") {
		t.Errorf("no passkey: %d %s", w.Code, w.Body)
	}
	f.enrol(t, "user:kevin", "Laptop")
	w = f.serve(t, http.MethodPost, passkey.OptionsPath, url.Values{"binding": {sealed}})
	wantSecure(t, w)
	var req passkey.Request
	if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &req) != nil {
		t.Fatalf("options: %d %s", w.Code, w.Body)
	}
	if _, err := f.svc.FinishApprove(t.Context(), kevinsYes, req.Ref, get(t, f, &req, nil, passkeytest.Spoil{})); err != nil {
		t.Errorf("FinishApprove of the options' answer: %v", err)
	}
	for _, c := range []struct {
		name   string
		form   url.Values
		ctype  string
		status int
	}{
		{"altered", url.Values{"binding": {sealed[:len(sealed)-2] + "AA"}}, "", http.StatusForbidden},
		{"none", url.Values{}, "", http.StatusForbidden},
		{"not a form", url.Values{"binding": {sealed}}, "application/json", http.StatusUnsupportedMediaType},
	} {
		r := httptest.NewRequest(http.MethodPost, passkey.OptionsPath, strings.NewReader(c.form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if c.ctype != "" {
			r.Header.Set("Content-Type", c.ctype)
		}
		w := httptest.NewRecorder()
		f.svc.Handler().ServeHTTP(w, r)
		var body map[string]string
		if w.Code != c.status || json.Unmarshal(w.Body.Bytes(), &body) != nil || body["error"] == "" {
			t.Errorf("%s: %d %s", c.name, w.Code, w.Body)
		}
	}
	if w := f.serve(t, http.MethodGet, passkey.OptionsPath, nil); w.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET options: %d", w.Code)
	}
	f.clock.Advance(time.Hour)
	if w := f.serve(t, http.MethodPost, passkey.OptionsPath, url.Values{"binding": {sealed}}); w.Code != http.StatusGone {
		t.Errorf("an expired binding: %d %s", w.Code, w.Body)
	}
	// A binding sealed by another bot's secret is not ours.
	other, err := passkey.New(passkey.Options{PublicURL: origin, Secrets: []string{strings.Repeat("z", 32)}, Store: f.store, Tenants: acme})
	if err != nil {
		t.Fatal(err)
	}
	if w := f.serve(t, http.MethodPost, passkey.OptionsPath, url.Values{"binding": {other.SealBinding(kevinsYes, f.clock.Now().Add(time.Hour))}}); w.Code != http.StatusForbidden {
		t.Errorf("another secret's binding: %d", w.Code)
	}
}

// The script is served as a script, under the same headers, and holds
// the contract's names.
func TestScript(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	w := f.serve(t, http.MethodGet, passkey.ScriptPath, nil)
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "text/javascript; charset=utf-8" ||
		w.Header().Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("script: %d %v", w.Code, w.Header())
	}
	for _, want := range []string{"window.approveWithPasskey", "data-passkey-binding", "passkey_ref", "passkey_assertion",
		"data-passkey-enrol", "data-passkey-skip", "navigator.credentials.get", "navigator.credentials.create"} {
		if !strings.Contains(w.Body.String(), want) {
			t.Errorf("the script lacks %q", want)
		}
	}
	if w := f.serve(t, http.MethodPost, passkey.ScriptPath, url.Values{}); w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST the script: %d", w.Code)
	}
	// Mounted under public_url's path, it serves the same.
	if w := f.serve(t, http.MethodGet, "/bot"+passkey.ScriptPath, nil); w.Code != http.StatusOK {
		t.Errorf("under a prefix: %d", w.Code)
	}
}

// Links made apart from the service (bot passkey enrol, beside a running
// bot) open the service's page; a link secret rotated in keeps them.
func TestLinks(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	links, err := passkey.NewLinks(origin+"/", []string{secret}, f.clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	link, exp := links.EnrolLink("acme", "user:kevin")
	if !strings.HasPrefix(link, origin+passkey.EnrolPath) || !exp.Equal(f.clock.Now().Add(passkey.EnrolTTL)) {
		t.Fatalf("link %q until %v", link, exp)
	}
	if w := f.serve(t, http.MethodGet, strings.TrimPrefix(link, origin), nil); w.Code != http.StatusOK {
		t.Errorf("the link: %d %s", w.Code, w.Body)
	}
	rotated, err := passkey.NewLinks(origin, []string{strings.Repeat("n", 32), secret}, f.clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := passkey.New(passkey.Options{PublicURL: origin, Secrets: []string{strings.Repeat("n", 32), secret}, Store: f.store,
		Tenants: acme, Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []*passkey.Links{links, rotated} {
		link, _ := l.EnrolLink("acme", "user:kevin")
		w := httptest.NewRecorder()
		svc.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, strings.TrimPrefix(link, origin), nil))
		if w.Code != http.StatusOK {
			t.Errorf("after a rotation: %d", w.Code)
		}
	}
	for _, bad := range []struct {
		url     string
		secrets []string
	}{{"http://127.0.0.1:8080", []string{secret}}, {origin, []string{"short"}}, {origin, nil}} {
		if _, err := passkey.NewLinks(bad.url, bad.secrets, nil); err == nil {
			t.Errorf("NewLinks(%q, %d secrets): accepted", bad.url, len(bad.secrets))
		}
	}
}

// TestOptionsLimitedPerMember: each challenge is a row in the store, so
// one member's pages get ChallengeBurst at once, then one every
// ChallengeEvery; past it, 429 with Retry-After and nothing written.
func TestOptionsLimitedPerMember(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.enrol(t, "user:kevin", "Laptop")
	sealed := f.svc.SealBinding(kevinsYes, f.clock.Now().Add(time.Hour))
	for i := 1; i <= passkey.ChallengeBurst; i++ {
		if w := f.serve(t, http.MethodPost, passkey.OptionsPath, url.Values{"binding": {sealed}}); w.Code != http.StatusOK {
			t.Fatalf("options %d: %d %s", i, w.Code, w.Body)
		}
	}
	w := f.serve(t, http.MethodPost, passkey.OptionsPath, url.Values{"binding": {sealed}})
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != strconv.Itoa(int(passkey.ChallengeEvery/time.Second)) {
		t.Fatalf("over the limit: %d, Retry-After %q, %s", w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	f.clock.Advance(passkey.ChallengeEvery)
	if w := f.serve(t, http.MethodPost, passkey.OptionsPath, url.Values{"binding": {sealed}}); w.Code != http.StatusOK {
		t.Fatalf("after %v: %d", passkey.ChallengeEvery, w.Code)
	}
}
