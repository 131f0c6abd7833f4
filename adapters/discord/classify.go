package discord

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/bwmarrin/discordgo"

	"approvalsbot/threads"
)

// Discord's JSON error codes the adapter acts on:
// https://discord.com/developers/docs/topics/opcodes-and-status-codes#json
const (
	codeUnknownWebhook       = 10015
	codeUnknownInteraction   = 10062
	codeInvalidWebhookToken  = 50027
	codeThreadAlreadyCreated = 160004
)

// apiError is a Discord failure said without the request's address: an
// interaction's token sits in the path of its callback and webhook, and
// is a capability for 15 minutes, so it never reaches an error string or
// a log line. Unwrap still reaches discordgo's error.
type apiError struct {
	msg string
	err error
}

func (e *apiError) Error() string { return e.msg }
func (e *apiError) Unwrap() error { return e.err }

// scrub rewords discordgo's errors without the URL they carry.
func scrub(err error) error {
	if err == nil {
		return nil
	}
	var rl *discordgo.RateLimitError
	if errors.As(err, &rl) && rl.RateLimit != nil && rl.TooManyRequests != nil {
		return &apiError{msg: "rate limited by Discord: retry after " + rl.RetryAfter.String(), err: err}
	}
	var re *discordgo.RESTError
	if errors.As(err, &re) {
		return &apiError{msg: describeREST(re), err: err}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s %s: %w", ue.Op, redactURL(ue.URL), ue.Err)
	}
	return err
}

func describeREST(re *discordgo.RESTError) string {
	status := "no answer"
	if re.Response != nil {
		status = re.Response.Status
	}
	if re.Message != nil && (re.Message.Code != 0 || re.Message.Message != "") {
		return fmt.Sprintf("Discord answered HTTP %s: %s (code %d)", status, re.Message.Message, re.Message.Code)
	}
	return "Discord answered HTTP " + status
}

func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<url>"
	}
	return u.Scheme + "://" + u.Host + "/…"
}

// classify wraps a Discord call's error with what was being done and
// marks it for the outbox: a 429 waits as Discord says, another 4xx is
// permanent, anything else (network, 5xx, 408) is retried with backoff.
func classify(what string, err error) error {
	if err == nil {
		return nil
	}
	wrapped := fmt.Errorf("%s: %w", what, scrub(err))
	if d, ok := retryAfter(err); ok {
		return threads.RetryAfter(wrapped, d)
	}
	var re *discordgo.RESTError
	if errors.As(err, &re) && re.Response != nil {
		switch code := re.Response.StatusCode; {
		case code >= 500, code == http.StatusRequestTimeout:
			return wrapped
		case code >= 400:
			return threads.Permanent(wrapped)
		}
	}
	return wrapped
}

// retryAfter is the wait a 429 in err asked for, and whether it was one.
func retryAfter(err error) (time.Duration, bool) {
	var rl *discordgo.RateLimitError
	if errors.As(err, &rl) {
		if rl.RateLimit == nil || rl.TooManyRequests == nil || rl.RetryAfter <= 0 {
			return defaultRetryAfter, true
		}
		return max(rl.RetryAfter, time.Millisecond), true
	}
	var re *discordgo.RESTError
	if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode == http.StatusTooManyRequests {
		return defaultRetryAfter, true
	}
	return 0, false
}

// refused reports whether err is a 4xx other than 429: no retry helps.
func refused(err error) bool {
	var re *discordgo.RESTError
	if !errors.As(err, &re) || re.Response == nil {
		return false
	}
	c := re.Response.StatusCode
	return c >= 400 && c < 500 && c != http.StatusTooManyRequests
}

// restCode is Discord's JSON error code in err, or 0.
func restCode(err error) int {
	var re *discordgo.RESTError
	if errors.As(err, &re) && re.Message != nil {
		return re.Message.Code
	}
	return 0
}
