// Package pagesec sets the security headers of the bot's own HTML pages,
// the decision page and passkey enrolment, so that both answer with one
// set: no caching, no referrer, no framing, no sniffing, no indexing, a
// window and resources of their own, and a content security policy.
package pagesec

import "net/http"

// The two content security policies of the bot's pages. NoScript
// allows no script at all, no framing, forms only to the bot itself and
// nothing loaded; the pages' inline styles are the only styles.
// WithScript is NoScript with scripts and fetches from the bot itself
// alone (the one script WebAuthn needs): no inline script, no eval,
// nothing from elsewhere.
const (
	NoScript = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; " +
		"frame-ancestors 'none'; base-uri 'none'"
	WithScript = "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; " +
		"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)

// Set sets every security header of a page on w, with the policy csp.
func Set(w http.ResponseWriter, csp string) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", csp)
	hd.Set("Cache-Control", "no-store")
	hd.Set("Pragma", "no-cache")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
	hd.Set("X-Robots-Tag", "noindex, nofollow")
}
