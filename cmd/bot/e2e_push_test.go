package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"approvalsbot/adapters/backend/backendtest"
	"approvalsbot/adapters/backend/standin"
	"approvalsbot/notify/push/pushtest"
)

// A push end to end: the built binary fires a ladder's push step, a fake
// ntfy server on loopback takes the one notice, and its view action opens
// the member's decision page, which shows the call and decides nothing.
func TestPushEndToEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ntfy := pushtest.StartNtfy(t, nil)
	fake := backendtest.New(t, standin.Options{Secrets: [][]byte{[]byte(e2eCallsSecret)}})
	fake.AddApproval(ladderApproval, 1, readArguments(t, ladderApproval+".json"), false)
	fake.SetFunction(ladderApproval, "acme_github.merge")
	listen := freeAddr(t)
	cfg := fmt.Sprintf(`listen: %q
public_url: "http://%s"
link_secrets: ["${BOT_LINK_SECRET}"]
store:
  driver: sqlite
  dsn: "file:%s"
tick: 1s
backend:
  url: %q
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
tenants:
  acme:
    deadline: 10m
    post: [slack:C0APPROVALS]
    ladders:
      default:
        - after: 1s
          push: [user:kevin]
    members:
      - {user: user:kevin, role: operator, content: true, email: kevin@acme.example, push: {ntfy: "${KEVIN_NTFY}"}}
`, listen, listen, filepath.Join(dir, "bot.db"), fake.URL())
	path := filepath.Join(dir, "bot.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	const topic = "kevin-7f3a9c2e1b"
	bot := startBot(t, path, "KEVIN_NTFY="+ntfy.TopicURL(topic))
	body, _ := requestedNow(t)
	if a := bot.send(t, body, nil); a.Status != http.StatusAccepted {
		t.Fatalf("event: %+v", a)
	}
	dump := func() string { return bot.stderr.String() }
	pollUntil(t, 15*time.Second, "the push notice", func() bool { return len(ntfy.Notices()) > 0 }, dump)
	n := ntfy.Notices()[0]
	if n.Topic != topic || n.Title != "Approval needed: acme_github.merge" || len(n.Actions) != 1 || n.Actions[0].Action != "view" ||
		!strings.HasPrefix(n.Actions[0].URL, "http://"+listen+"/decide/") {
		t.Fatalf("notice %+v", n.NtfyMessage)
	}
	for _, v := range []string{"acme/api", "1234", "squash"} {
		if strings.Contains(string(n.Raw), v) {
			t.Errorf("the notice carries the argument value %q: %s", v, n.Raw)
		}
	}
	resp, err := http.Get(n.Actions[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "acme_github.merge") || !strings.Contains(string(page), "user:kevin") {
		t.Fatalf("the notice's link: %d\n%s", resp.StatusCode, page)
	}
	if got := fake.Decisions(); len(got) != 0 {
		t.Errorf("opening the link decided: %+v", got)
	}
	if got := len(ntfy.Notices()); got != 1 || len(ntfy.Refused()) != 0 {
		t.Errorf("ntfy took %d notices, refused %q", got, ntfy.Refused())
	}
	if strings.Contains(bot.stderr.String()+bot.stdout.String(), topic) {
		t.Error("the bot's output carries the topic")
	}
}
