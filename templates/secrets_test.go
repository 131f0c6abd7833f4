package templates

import (
	"strings"
	"testing"
	"time"

	"approvalsbot/approval"
	"approvalsbot/internal/fixtures"
)

// fixtureSecrets reads the secrets out of a fixture's raw event: every
// string under a secret-named key, the credential after "Bearer", and the
// password of any URL.
func fixtureSecrets(t *testing.T, raw []byte) []string {
	t.Helper()
	out, err := fixtures.SecretsIn(raw)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSecretsNeverShown renders secrets.json in every state on every
// surface: none of its secrets appears, while the harmless "token
// rotation" does wherever arguments are shown.
func TestSecretsNeverShown(t *testing.T) {
	r := newRenderer(t)
	ev := loadEvent(t, "secrets.json")
	body := readFixture(t, "secrets.json")
	secrets := fixtureSecrets(t, body)
	if len(secrets) < 6 {
		t.Fatalf("found only %d secrets in the fixture: %q", len(secrets), secrets)
	}
	// The fixture's note under a harmless key.
	const harmless = "token rotation"
	if !strings.Contains(string(body), harmless) {
		t.Fatalf("fixture lacks %q", harmless)
	}
	for _, state := range PreviewStates() {
		x := renderAll(t, r, cardIn(t, ev.Approval, state))
		x.each(func(surface, s string) {
			for _, sec := range secrets {
				if strings.Contains(s, sec) || strings.Contains(s, htmlEscape(sec)) || strings.Contains(s, jsonString(sec)) {
					t.Errorf("%s/%s shows the secret %q", state, surface, sec)
				}
			}
			if surface != "email subject" && !strings.Contains(s, harmless) {
				t.Errorf("%s/%s lacks %q", state, surface, harmless)
			}
		})
	}
}

// TestSecretsInFreeText: credentials in the agent's text, the patch, a
// role value, a comment and the backend's messages are redacted too.
func TestSecretsInFreeText(t *testing.T) {
	r := newRenderer(t)
	const bearer, urlPass = "s3cr3t-b3arer-t0ken", "hunter2pass"
	leak := "Authorization: Bearer " + bearer + " and https://deploy:" + urlPass + "@ci.example.invalid/x"
	a := synthetic()
	a.AgentSays = "Calling with " + leak
	a.Kind = approval.KindChanges
	a.Changes = &approval.Changes{Files: []approval.ChangedFile{{Path: "ci.yaml"}}, Patch: "+url: " + leak + "\n"}
	a.Roles = []approval.Role{{Argument: "host", Role: approval.RoleHost, Values: []approval.RoleValue{{Value: "https://deploy:" + urlPass + "@ci.example.invalid", Origin: approval.OriginRequest}}}}
	at := a.RequestedAt.Add(time.Minute)
	inputs := []Input{
		{Approval: a},
		{Approval: a, State: approval.StateDenied, Decision: &approval.Decision{Actor: "user:x", Comment: "no: " + leak, At: at}},
		{Approval: a, State: approval.StateRefused, Decision: &approval.Decision{Message: "refused: " + leak, At: at}},
	}
	for _, in := range inputs {
		x := renderAll(t, r, Build(in))
		x.each(func(surface, s string) {
			for _, sec := range []string{bearer, urlPass} {
				if strings.Contains(s, sec) {
					t.Errorf("%s/%s shows %q", in.State, surface, sec)
				}
			}
		})
	}
	for _, m := range []ThreadMessage{BackendMessage(a.ID, leak), RecheckRefused(&approval.RecheckFailed{ApprovalID: a.ID, Message: leak})} {
		for surface, s := range map[string]string{"slack": r.SlackThread(m).Text, "discord": r.DiscordThread(m).Content, "text": r.TextThread(m)} {
			for _, sec := range []string{bearer, urlPass} {
				if strings.Contains(s, sec) {
					t.Errorf("thread %s/%s shows %q", m.Kind, surface, sec)
				}
			}
		}
	}
}
