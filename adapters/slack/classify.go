package slack

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"

	slackgo "github.com/slack-go/slack"

	"approvalsbot/threads"
)

// permanentCodes are Slack's error codes no retry can fix; the outbox
// records them and stops, and retries any other:
// https://api.slack.com/methods/chat.postMessage#errors,
// https://api.slack.com/methods/chat.update#errors,
// https://api.slack.com/methods/conversations.open#errors
var permanentCodes = map[string]bool{
	"channel_not_found": true, "not_in_channel": true, "is_archived": true, "channel_is_archived": true,
	"invalid_auth": true, "account_inactive": true, "token_revoked": true, "token_expired": true,
	"not_authed": true, "no_permission": true, "missing_scope": true, "not_allowed_token_type": true,
	"org_login_required": true, "ekm_access_denied": true, "team_access_not_granted": true,
	"restricted_action": true, "restricted_action_read_only_channel": true,
	"restricted_action_thread_only_channel": true, "restricted_action_non_threadable_channel": true,
	"cannot_reply_to_message": true, "access_denied": true, "team_not_found": true, "enterprise_is_restricted": true,
	"msg_too_long": true, "no_text": true, "invalid_blocks": true, "invalid_blocks_format": true,
	"too_many_attachments": true, "invalid_arguments": true, "invalid_metadata_format": true,
	"invalid_metadata_schema": true, "metadata_too_large": true, "markdown_text_conflict": true,
	"message_not_found": true, "cant_update_message": true, "edit_window_closed": true,
	"user_not_found": true, "user_not_visible": true, "user_disabled": true, "user_not_in_channel": true,
	"cannot_dm_bot": true, "not_allowed": true, "method_deprecated": true, "deprecated_endpoint": true,
	"two_factor_setup_required": true, "invalid_charset": true, "invalid_form_data": true,
	"invalid_post_type": true, "missing_post_type": true, "duplicate_channel_not_found": true,
	"duplicate_message_not_found": true, "thread_not_found": true,
}

// classify wraps a Slack call's error with what was being done and marks
// it for the outbox: a rate limit waits as Slack says, a refusal no retry
// can fix is permanent, anything else is retried with backoff.
func classify(what string, err error) error {
	if err == nil {
		return nil
	}
	err = scrub(err)
	wrapped := fmt.Errorf("%s: %w", what, err)
	var rl *slackgo.RateLimitedError
	if errors.As(err, &rl) {
		d := rl.RetryAfter
		if d <= 0 {
			d = defaultRetryAfter
		}
		return threads.RetryAfter(wrapped, d)
	}
	var sc slackgo.StatusCodeError
	if errors.As(err, &sc) {
		switch {
		case sc.Code == http.StatusTooManyRequests:
			return threads.RetryAfter(wrapped, defaultRetryAfter)
		case sc.Code >= 500:
			return wrapped
		case sc.Code == http.StatusRequestTimeout:
			return wrapped
		default:
			// 4xx: the request itself is wrong (or a response_url has
			// expired): sending it again changes nothing.
			return threads.Permanent(wrapped)
		}
	}
	var se slackgo.SlackErrorResponse
	if errors.As(err, &se) {
		switch {
		case se.Err == "ratelimited":
			return threads.RetryAfter(wrapped, defaultRetryAfter)
		case permanentCodes[se.Err]:
			return threads.Permanent(wrapped)
		}
		return wrapped
	}
	return wrapped
}

// slackCode is Slack's error code in err, or "".
func slackCode(err error) string {
	var se slackgo.SlackErrorResponse
	if errors.As(err, &se) {
		return se.Err
	}
	return ""
}

// scrub takes the address out of a transport error: a response_url is a
// capability (anyone holding it may answer that person for 30 minutes),
// so it never reaches an error string or a log line.
func scrub(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s %s: %w", ue.Op, redactURL(ue.URL), ue.Err)
	}
	return err
}

func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<url>"
	}
	return u.Scheme + "://" + u.Host + "/…"
}
