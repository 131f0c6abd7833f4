package push_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/adapters/backend"
	"approvalsbot/notify/push"
	"approvalsbot/notify/push/pushtest"
	"approvalsbot/templates"
	"approvalsbot/tenant"
	"approvalsbot/threads"
)

// secretTopic is the topic of the tests: the secret part of its URL.
const (
	secretTopic = "kevin-7f3a9c2e1b"
	secretToken = "tk_kevin0123456789abcdefghijklmnop"
	hookKey     = "ada-webhook-key-of-32-bytes-9c1e"
	oldHookKey  = "ada-old-webhook-key-32-bytes-0000"
)

var deadline = time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC)

func notice(link string) templates.PushNotice {
	return templates.PushNotice{Title: "Approval needed: acme_github.merge", Function: "acme_github.merge",
		Lines: []string{"DESTRUCTIVE · reaches outside the tenant", "Deadline 2026-11-30 18:00 CET: denied unless someone decides first.",
			"Open the decision page to see the call and decide as user:kevin."},
		Link: link, Destructive: true, Deadline: deadline}
}

func request(to tenant.Push, link string) threads.PushRequest {
	return threads.PushRequest{To: to, Tenant: "acme", ApprovalID: "a-merge1", Revision: 2, Member: "user:kevin",
		Notice: notice(link), Key: "o-123"}
}

// delivery is how the outbox reads err: permanent, a wait, or neither.
func delivery(err error) (permanent bool, after time.Duration) {
	var de *threads.DeliveryError
	if errors.As(err, &de) {
		return de.Permanent, de.RetryAfter
	}
	return false, 0
}

// TestNtfyPublishesJSON: a notice is one message published as JSON to
// the server's root URL, naming its topic, with the notice's title and
// lines, and one view action that opens the link; a protected topic's
// token goes as a bearer token.
func TestNtfyPublishesJSON(t *testing.T) {
	t.Parallel()
	srv := pushtest.StartNtfy(t, map[string]string{secretTopic: secretToken})
	s := push.New(push.Options{})
	const link = "https://approvals.example/decide/tok.en"
	if err := s.Push(context.Background(), request(tenant.NtfyPush(srv.TopicURL(secretTopic), secretToken), link)); err != nil {
		t.Fatal(err)
	}
	got := srv.Notices()
	if len(got) != 1 || len(srv.Refused()) != 0 {
		t.Fatalf("notices %+v, refused %q", got, srv.Refused())
	}
	want := push.NtfyMessage{Topic: secretTopic, Title: "Approval needed: acme_github.merge",
		Message: "DESTRUCTIVE · reaches outside the tenant\nDeadline 2026-11-30 18:00 CET: denied unless someone decides first.\n" +
			"Open the decision page to see the call and decide as user:kevin.",
		Priority: 4, Tags: []string{"hourglass_flowing_sand", "warning"},
		Actions: []push.NtfyAction{{Action: "view", Label: "Open the decision page", URL: link}}, Click: link}
	if diff := cmp.Diff(want, got[0].NtfyMessage); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
	if got[0].Authorization != "Bearer "+secretToken {
		t.Errorf("Authorization %q", got[0].Authorization)
	}

	// Without a link, no action: the message says where to decide.
	if err := s.Push(context.Background(), request(tenant.NtfyPush(srv.TopicURL(secretTopic), secretToken), "")); err != nil {
		t.Fatal(err)
	}
	if got := srv.Notices(); len(got) != 2 || len(got[1].Actions) != 0 || strings.Contains(string(got[1].Raw), "actions") {
		t.Errorf("a notice without a link: %s", got[1].Raw)
	}
	// A protected topic without its token is refused for good.
	err := s.Push(context.Background(), request(tenant.NtfyPush(srv.TopicURL(secretTopic), ""), link))
	if permanent, _ := delivery(err); !permanent {
		t.Errorf("a topic refused without its token: %v, want a permanent failure", err)
	}
}

// TestNtfyBehindAPrefix: a server reached under a path publishes to the
// root under that path.
func TestNtfyBehindAPrefix(t *testing.T) {
	t.Parallel()
	srv := pushtest.StartNtfy(t, nil)
	mux := http.NewServeMux()
	proxied := make(chan string, 1)
	mux.HandleFunc("/ntfy/", func(w http.ResponseWriter, r *http.Request) {
		proxied <- r.URL.Path
		r2, _ := http.NewRequest(r.Method, srv.URL()+strings.TrimPrefix(r.URL.Path, "/ntfy"), r.Body)
		r2.Header = r.Header
		resp, err := http.DefaultClient.Do(r2)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
	})
	proxy := startServer(t, mux)
	if err := push.New(push.Options{}).Push(context.Background(), request(tenant.NtfyPush(proxy+"/ntfy/"+secretTopic, ""), "")); err != nil {
		t.Fatal(err)
	}
	if p := <-proxied; p != "/ntfy/" {
		t.Errorf("published to %s, want /ntfy/", p)
	}
	if n := srv.Notices(); len(n) != 1 || n[0].Topic != secretTopic {
		t.Errorf("notices %+v", n)
	}
}

func startServer(t *testing.T, h http.Handler) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return "http://" + l.Addr().String()
}

// TestFailuresAreClassified: a 429 waits as it asks (capped), without a
// wait it backs off; another 4xx and a redirect fail for good; a 5xx, a
// dropped connection and a server that is down are retried. No error
// carries the topic or the token.
func TestFailuresAreClassified(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		answer    pushtest.Answer
		permanent bool
		after     time.Duration
	}{
		{"429 with seconds", pushtest.Answer{Status: 429, RetryAfter: "30"}, false, 30 * time.Second},
		{"429 with a date", pushtest.Answer{Status: 429, RetryAfter: now.Add(2 * time.Minute).Format(http.TimeFormat)}, false, 2 * time.Minute},
		{"429 asking too much", pushtest.Answer{Status: 429, RetryAfter: "86400"}, false, push.MaxRetryAfter},
		{"429 without a wait", pushtest.Answer{Status: 429}, false, 0},
		{"429 with nonsense", pushtest.Answer{Status: 429, RetryAfter: "soon"}, false, 0},
		{"400", pushtest.Answer{Status: 400}, true, 0},
		{"401", pushtest.Answer{Status: 401}, true, 0},
		{"403", pushtest.Answer{Status: 403}, true, 0},
		{"404", pushtest.Answer{Status: 404}, true, 0},
		{"413", pushtest.Answer{Status: 413}, true, 0},
		{"408", pushtest.Answer{Status: 408}, false, 0},
		{"a redirect", pushtest.Answer{Status: 301}, true, 0},
		{"500", pushtest.Answer{Status: 500}, false, 0},
		{"503", pushtest.Answer{Status: 503, RetryAfter: "10"}, false, 0},
		{"a dropped connection", pushtest.Answer{Drop: true}, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := pushtest.StartNtfy(t, nil)
			srv.Answer(tt.answer)
			s := push.New(push.Options{Now: func() time.Time { return now }})
			err := s.Push(context.Background(), request(tenant.NtfyPush(srv.TopicURL(secretTopic), secretToken), "https://approvals.example/decide/x"))
			if err == nil {
				t.Fatal("no error")
			}
			permanent, after := delivery(err)
			if permanent != tt.permanent || after != tt.after {
				t.Errorf("%v: permanent %v after %v, want %v %v", err, permanent, after, tt.permanent, tt.after)
			}
			noSecret(t, err)
		})
	}

	t.Run("a server that is down", func(t *testing.T) {
		t.Parallel()
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		for _, to := range []tenant.Push{
			tenant.NtfyPush("http://"+addr+"/"+secretTopic, secretToken),
			tenant.WebhookPush("http://"+addr+"/hooks/"+secretTopic, [][]byte{[]byte(hookKey)}),
		} {
			err := push.New(push.Options{}).Push(context.Background(), request(to, ""))
			if permanent, after := delivery(err); err == nil || permanent || after != 0 {
				t.Errorf("%s down: %v (permanent %v, after %v), want an error retried with backoff", to.Kind(), err, permanent, after)
			}
			noSecret(t, err)
		}
	})
}

func noSecret(t *testing.T, err error) {
	t.Helper()
	for _, s := range []string{secretTopic, secretToken, hookKey} {
		if strings.Contains(err.Error(), s) {
			t.Errorf("the error carries a secret: %v", err)
		}
	}
}

// TestWebhookIsSigned: a webhook gets the notice as JSON, signed as the
// bot signs its calls to the backend, one v1 per secret, so a receiver
// that knows only the old secret still takes it while secrets rotate;
// one that knows none refuses it, and that is a failure for good.
func TestWebhookIsSigned(t *testing.T) {
	t.Parallel()
	now := time.Now()
	clock := func() time.Time { return now }
	hook := pushtest.StartWebhook(t, [][]byte{[]byte(oldHookKey)}, clock)
	s := push.New(push.Options{Now: clock})
	const link = "https://approvals.example/decide/tok.en"
	if err := s.Push(context.Background(), request(tenant.WebhookPush(hook.URL(), [][]byte{[]byte(hookKey), []byte(oldHookKey)}), link)); err != nil {
		t.Fatal(err)
	}
	got := hook.Hooks()
	if len(got) != 1 || len(hook.Refused()) != 0 {
		t.Fatalf("hooks %+v, refused %q", got, hook.Refused())
	}
	want := push.WebhookBody{Type: "approval.push", ID: "o-123", Tenant: "acme", ApprovalID: "a-merge1", Revision: 2, Member: "user:kevin",
		Title: "Approval needed: acme_github.merge", Message: notice(link).Message(), Function: "acme_github.merge", Destructive: true,
		Deadline: "2026-11-30T17:00:00Z", URL: link}
	if diff := cmp.Diff(want, got[0].WebhookBody); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
	if v := (backend.Verifier{Secrets: [][]byte{[]byte(hookKey)}, Now: clock}); v.Verify(got[0].Signature, got[0].Raw) != nil {
		t.Errorf("the signature %q does not verify with the signing secret", got[0].Signature)
	}
	if strings.Count(got[0].Signature, "v1=") != 2 {
		t.Errorf("signature %q: want one v1 per secret", got[0].Signature)
	}

	// Signed with a secret the receiver does not know: refused, for good.
	err := s.Push(context.Background(), request(tenant.WebhookPush(hook.URL(), [][]byte{[]byte(hookKey)}), link))
	if permanent, _ := delivery(err); !permanent {
		t.Errorf("a refused signature: %v, want a permanent failure", err)
	}
	noSecret(t, err)
	if r := hook.Refused(); len(r) != 1 || !strings.Contains(r[0], "bad signature") || len(hook.Hooks()) != 1 {
		t.Errorf("refused %q, hooks %d", r, len(hook.Hooks()))
	}
}

// TestWebhookReceiverRefusesForgeries: the test's receiver is a real
// check: a body changed after signing, an old signature and none at all
// are refused.
func TestWebhookReceiverRefusesForgeries(t *testing.T) {
	t.Parallel()
	now := time.Now()
	hook := pushtest.StartWebhook(t, [][]byte{[]byte(hookKey)}, func() time.Time { return now })
	body := `{"type":"approval.push","id":"o-1","tenant":"acme","approval_id":"a-1","revision":1,"member":"user:kevin","title":"t","message":"m","function":"f","destructive":false}`
	for _, tt := range []struct {
		name, body, sig string
	}{
		{"changed after signing", strings.Replace(body, "user:kevin", "user:mallory", 1), backend.Sign([]byte(hookKey), now, []byte(body))},
		{"too old", body, backend.Sign([]byte(hookKey), now.Add(-10*time.Minute), []byte(body))},
		{"another key", body, backend.Sign([]byte(oldHookKey), now, []byte(body))},
		{"none", body, ""},
	} {
		r, _ := http.NewRequest(http.MethodPost, hook.URL(), strings.NewReader(tt.body))
		if tt.sig != "" {
			r.Header.Set(backend.SignatureHeader, tt.sig)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: %d, want 401", tt.name, resp.StatusCode)
		}
	}
	if len(hook.Hooks()) != 0 || len(hook.Refused()) != 4 {
		t.Errorf("took %d, refused %q", len(hook.Hooks()), hook.Refused())
	}
}

// TestPushPrintsNoSecret: a request, as the outbox may log it, never
// prints the address.
func TestPushPrintsNoSecret(t *testing.T) {
	t.Parallel()
	req := request(tenant.NtfyPush("https://ntfy.sh/"+secretTopic, secretToken), "")
	for _, s := range []string{secretTopic, secretToken} {
		for _, out := range []string{sprint(req), sprint(req.To)} {
			if strings.Contains(out, s) {
				t.Errorf("printed %s", out)
			}
		}
	}
}

func sprint(v any) string { return fmt.Sprintf("%v %+v %#v", v, v, v) }
