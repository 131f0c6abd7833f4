package passkey_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"approvalsbot/adapters/passkey"
	"approvalsbot/store/sqlite"
)

// decided is one POST of the test's decision page: what the form
// carried, and what FinishApprove said.
type decided struct {
	ref, assertion string
	err            error
}

// TestBrowser runs both ceremonies in headless Chromium with the CDP
// WebAuthn domain's virtual authenticator (CTAP2, internal, resident
// keys, user verification): a member enrols on the real enrolment page,
// then approves through a tiny decision page that includes the script
// and carries a sealed binding, and FinishApprove takes the assertion
// once. An authenticator that cannot verify the user gives nothing.
func TestBrowser(t *testing.T) {
	t.Parallel()
	browser, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (Debian's chromium package; .ci/run installs it): the browser test cannot run")
	}
	// The relying party id must be a host name: the server listens on
	// loopback, and the browser reaches it as localhost.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	publicURL := fmt.Sprintf("http://localhost:%d", ln.Addr().(*net.TCPAddr).Port)
	st, err := sqlite.Open(t.Context(), sqlite.Options{Path: filepath.Join(t.TempDir(), "bot.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	svc, err := passkey.New(passkey.Options{PublicURL: publicURL, Secrets: []string{secret}, Store: st, Tenants: acme})
	if err != nil {
		t.Fatal(err)
	}
	binding := kevinsYes

	var mu sync.Mutex
	var posts []decided
	mux := http.NewServeMux()
	mux.Handle(passkey.Path, svc.Handler())
	// The decision page as the contract asks: the script, a form with the
	// sealed binding, the policy; its POST finishes the ceremony with
	// the binding it knows, never one read from the form.
	mux.HandleFunc("/decide/test", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", passkey.ContentSecurityPolicy)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.Method == http.MethodPost {
			if err := r.ParseForm(); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			d := decided{ref: r.PostForm.Get("passkey_ref"), assertion: r.PostForm.Get("passkey_assertion")}
			_, d.err = svc.FinishApprove(r.Context(), binding, d.ref, []byte(d.assertion))
			mu.Lock()
			posts = append(posts, d)
			mu.Unlock()
			outcome := "approved"
			if d.err != nil {
				outcome = "refused: " + passkey.Why(d.err)
			}
			fmt.Fprintf(w, `<!DOCTYPE html><title>outcome</title><p id="outcome">%s</p>`, html.EscapeString(outcome))
			return
		}
		fmt.Fprintf(w, `<!DOCTYPE html><html><head><title>decide</title><script src="../passkey/passkey.js" defer></script></head>
<body><form id="approve" method="post" data-passkey-binding="%s">
<input type="hidden" name="action" value="approve">
<button id="decide" type="submit">Approve</button>
<button id="deny" type="submit" name="action" value="deny" data-passkey-skip>Deny</button>
<p id="status" data-passkey-status></p>
</form></body></html>`, html.EscapeString(svc.SealBinding(binding, time.Now().Add(time.Hour))))
	})
	srv := httptest.NewUnstartedServer(mux)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)

	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	browserCtx, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()
	if err := chromedp.Do(browserCtx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start the browser: %v", err)
	}
	ctx, cancel := context.WithTimeout(browserCtx, 90*time.Second)
	defer cancel()

	if _, err := chromedp.Call(ctx, webauthn.Enable, webauthn.EnableParams{}); err != nil {
		t.Fatalf("WebAuthn.enable: %v", err)
	}
	va, err := chromedp.Call(ctx, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{
		Options: &webauthn.VirtualAuthenticatorOptions{Protocol: webauthn.AuthenticatorProtocolCtap2,
			Transport: webauthn.AuthenticatorTransportInternal, HasResidentKey: true, HasUserVerification: true,
			IsUserVerified: true, AutomaticPresenceSimulation: true}})
	if err != nil {
		t.Fatalf("WebAuthn.addVirtualAuthenticator: %v", err)
	}
	// waitText waits for the text of the element sel to hold want. A
	// page being replaced (a form's POST, its redirect) fails a read,
	// which is then tried again.
	waitText := func(sel, want string) string {
		t.Helper()
		expr := fmt.Sprintf(`(function(){var e=document.querySelector(%q);return e?e.textContent:"";})()`, sel)
		deadline := time.Now().Add(30 * time.Second)
		var got string
		for time.Now().Before(deadline) {
			s, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
			if err == nil && strings.Contains(s, want) {
				return s
			}
			if ctx.Err() != nil {
				break
			}
			got = s
			time.Sleep(50 * time.Millisecond)
		}
		page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
		t.Fatalf("%s says %q, want %q\n%s", sel, got, want, page)
		return ""
	}

	// Enrol on the real enrolment page.
	link, _ := svc.EnrolLink("acme", "user:kevin")
	if err := chromedp.Do(ctx, chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("#add")),
		chromedp.SendKeys(chromedp.CSS("#name"), "Virtual laptop"), chromedp.Click(chromedp.CSS("#add"))); err != nil {
		t.Fatalf("enrol: %v", err)
	}
	waitText("#passkeys .name", "Virtual laptop")
	pks, err := svc.List(t.Context(), "acme", "user:kevin")
	if err != nil || len(pks) != 1 || pks[0].Name != "Virtual laptop" {
		t.Fatalf("enrolled: %+v, %v", pks, err)
	}
	creds, err := chromedp.Call(ctx, webauthn.GetCredentials, webauthn.GetCredentialsParams(va))
	if err != nil || len(creds.Credentials) != 1 || credentialText(creds.Credentials[0].CredentialID) != pks[0].ID {
		t.Fatalf("the authenticator holds %+v (%v); the store %s", creds, err, pks[0].ID)
	}

	// Approve: the button's submit asks for the passkey first.
	decidePage := publicURL + "/decide/test"
	if err := chromedp.Do(ctx, chromedp.Navigate(decidePage), chromedp.WaitVisible(chromedp.CSS("#decide")),
		chromedp.Click(chromedp.CSS("#decide"))); err != nil {
		t.Fatalf("approve: %v", err)
	}
	waitText("#outcome", "approved")
	mu.Lock()
	first := posts[len(posts)-1]
	mu.Unlock()
	if first.err != nil || first.ref == "" || !strings.Contains(first.assertion, `"authenticatorData"`) {
		t.Fatalf("the approval: %+v", first)
	}
	// The same answer again decides nothing.
	if _, err := svc.FinishApprove(t.Context(), binding, first.ref, []byte(first.assertion)); err == nil || passkey.Why(err) != passkey.Why(passkey.ErrUsed) {
		t.Errorf("a replay of the browser's answer: %v", err)
	}
	pks, _ = svc.List(t.Context(), "acme", "user:kevin")
	if pks[0].LastUsedAt.IsZero() || pks[0].SignCount == 0 {
		t.Errorf("the passkey after the approval: %+v", pks[0])
	}

	// Called by a page's own code, approveWithPasskey does the same.
	if err := chromedp.Do(ctx, chromedp.Navigate(decidePage), chromedp.WaitVisible(chromedp.CSS("#decide"))); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`typeof window.approveWithPasskey === "function"`)); err != nil {
		t.Fatalf("the script did not load: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.approveWithPasskey(document.getElementById("approve"))`, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatalf("approveWithPasskey: %v", err)
	}
	waitText("#outcome", "approved")

	// Deny beside it is not held for a passkey: it is sent as it is.
	if err := chromedp.Do(ctx, chromedp.Navigate(decidePage), chromedp.WaitVisible(chromedp.CSS("#deny")),
		chromedp.Click(chromedp.CSS("#deny"))); err != nil {
		t.Fatal(err)
	}
	waitText("#outcome", "refused: "+passkey.Why(passkey.ErrMissing))

	// A device that cannot verify the user gives no assertion: the page
	// says so and sends nothing.
	if _, err := chromedp.Call(ctx, webauthn.SetUserVerified, webauthn.SetUserVerifiedParams{AuthenticatorID: va.AuthenticatorID,
		IsUserVerified: false}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	before := len(posts)
	mu.Unlock()
	if err := chromedp.Do(ctx, chromedp.Navigate(decidePage), chromedp.WaitVisible(chromedp.CSS("#decide")),
		chromedp.Click(chromedp.CSS("#decide"))); err != nil {
		t.Fatal(err)
	}
	waitText("#status", "The passkey was not given")
	mu.Lock()
	defer mu.Unlock()
	if len(posts) != before {
		t.Errorf("a refused passkey sent the form: %+v", posts[before:])
	}
}

func credentialText(id []byte) string { return base64.RawURLEncoding.EncodeToString(id) }
