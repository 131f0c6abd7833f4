// Package push sends the push notices of a ladder's push step to a
// member's phone: to an ntfy topic (ntfy.go), or as a signed JSON body to
// a webhook the tenant runs (webhook.go), for Pushover, a pager or a
// gateway of its own. A notice says little (templates.Push) and its one
// action opens the member's decision page, a GET that decides nothing;
// never a request that decides.
//
// The integration classifies its failures and the outbox decides what
// follows (threads.DeliveryError): a 429 with Retry-After reschedules the
// row, a refusal no retry can fix (another 4xx, a redirect) fails it for
// good, anything else is retried with the outbox's backoff. Its errors
// never carry the address, the token or a signature: a topic's URL is a
// secret, and errors are logged and stored.
package push

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"approvalsbot/tenant"
	"approvalsbot/threads"
)

// Defaults of Options.
const (
	// DefaultTimeout bounds one notice's request; the outbox bounds it too.
	DefaultTimeout = 15 * time.Second
	// MaxRetryAfter caps the wait a 429 asks for: a notice that waits
	// longer is likely moot (the outbox drops it once the call closes).
	MaxRetryAfter = time.Hour
	// errorBodyMax is how much of a refusal's body is read, and dropped,
	// so the connection can be reused.
	errorBodyMax = 4 << 10
)

// Options configure a Sender.
type Options struct {
	// Client makes the requests; nil: a client with DefaultTimeout that
	// follows no redirect.
	Client *http.Client
	// Now is the clock a webhook's signature is stamped with; nil uses
	// time.Now.
	Now func() time.Time
	// UserAgent names the bot to the push services; "" uses
	// "approvalsbot".
	UserAgent string
}

// Sender sends push notices. It is immutable and safe for concurrent use.
type Sender struct {
	client    *http.Client
	now       func() time.Time
	userAgent string
}

var _ threads.Pusher = (*Sender)(nil)

// New builds a Sender.
func New(o Options) *Sender {
	s := &Sender{client: o.Client, now: o.Now, userAgent: o.UserAgent}
	if s.client == nil {
		s.client = &http.Client{Timeout: DefaultTimeout, CheckRedirect: noRedirect}
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.userAgent == "" {
		s.userAgent = "approvalsbot"
	}
	return s
}

// noRedirect keeps a notice, which carries a decision link, at the address
// configured: a redirect fails it for good (classify).
func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// Push sends req's notice to req.To, ntfy or webhook.
func (s *Sender) Push(ctx context.Context, req threads.PushRequest) error {
	addr := req.To.Reveal()
	switch addr.Kind {
	case tenant.PushNtfy:
		return s.ntfy(ctx, addr, req)
	case tenant.PushWebhook:
		return s.webhook(ctx, addr, req)
	}
	return threads.Permanent(fmt.Errorf("push: %s has no push address", req.Member))
}

// send performs one request and classifies its answer. what names the
// service in errors ("ntfy", "webhook"); no error holds the URL.
func (s *Sender) send(ctx context.Context, what string, r *http.Request) error {
	r = r.WithContext(ctx)
	r.Header.Set("User-Agent", s.userAgent)
	resp, err := s.client.Do(r)
	if err != nil {
		return fmt.Errorf("push to %s: %w", what, withoutURL(err))
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, errorBodyMax))
	return classify(what, resp, s.now())
}

// withoutURL is err without the URL an *url.Error names: a topic's URL
// is a secret, and a webhook's may hold a token.
func withoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Timeout() {
			return fmt.Errorf("%s: timed out: %w", ue.Op, ue.Err)
		}
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}

// classify turns an answer into the outbox's terms: nil for 2xx; a 429
// waits as asked (else backs off); another 4xx or a redirect will never
// succeed; a 5xx and the rest are retried.
func classify(what string, resp *http.Response, now time.Time) error {
	code := resp.StatusCode
	switch {
	case code >= 200 && code < 300:
		return nil
	case code == http.StatusTooManyRequests:
		err := fmt.Errorf("push to %s: %s: rate limited", what, resp.Status)
		if d := retryAfter(resp.Header.Get("Retry-After"), now); d > 0 {
			return threads.RetryAfter(err, min(d, MaxRetryAfter))
		}
		return err
	case code == http.StatusRequestTimeout:
		return fmt.Errorf("push to %s: %s", what, resp.Status)
	case code >= 300 && code < 400:
		return threads.Permanent(fmt.Errorf("push to %s: answered %s, a redirect: configure the address it redirects to", what, resp.Status))
	case code >= 400 && code < 500:
		return threads.Permanent(fmt.Errorf("push to %s: refused: %s%s", what, resp.Status, hint(what, code)))
	}
	return fmt.Errorf("push to %s: %s", what, resp.Status)
}

// hint says what a refusal most likely means, without the address.
func hint(what string, code int) string {
	switch code {
	case http.StatusUnauthorized, http.StatusForbidden:
		if what == serviceNtfy {
			return " (a protected topic needs the member's push token, with write access)"
		}
		return " (does the webhook take the bot's signature with the member's secrets?)"
	case http.StatusNotFound:
		return " (is the address right?)"
	}
	return ""
}

// retryAfter reads a Retry-After header, in seconds or as an HTTP date;
// 0 when it says nothing usable.
func retryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if n, err := strconv.ParseInt(h, 10, 64); err == nil {
		switch {
		case n <= 0:
			return 0
		case n > int64(MaxRetryAfter/time.Second):
			return MaxRetryAfter // and no overflow
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
