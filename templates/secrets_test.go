package templates_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"approvalsbot/approval"
	"approvalsbot/internal/fixtures"
	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
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
	ev := templatestest.Event(t, "secrets.json")
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
	for _, state := range templates.PreviewStatesOf(ev.Approval) {
		x := renderAll(t, r, templatestest.Card(t, ev.Approval, state))
		x.each(func(surface, s string) {
			for _, sec := range secrets {
				if strings.Contains(s, sec) || strings.Contains(s, htmlEscape(sec)) || strings.Contains(s, templatestest.JSONString(sec)) {
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
	a := templatestest.Synthetic()
	a.AgentSays = "Calling with " + leak
	a.Kind = approval.KindChanges
	a.Changes = &approval.Changes{Files: []approval.ChangedFile{{Path: "ci.yaml"}}, Patch: "+url: " + leak + "\n"}
	a.Roles = []approval.Role{{Argument: "host", Role: approval.RoleHost, Values: []approval.RoleValue{{Value: "https://deploy:" + urlPass + "@ci.example.invalid", Origin: approval.OriginRequest}}}}
	at := a.RequestedAt.Add(time.Minute)
	inputs := []templates.Input{
		{Approval: a},
		{Approval: a, State: approval.StateDenied, Decision: &approval.Decision{Actor: "user:x", Comment: "no: " + leak, At: at}},
		{Approval: a, State: approval.StateRefused, Decision: &approval.Decision{Message: "refused: " + leak, At: at}},
	}
	for _, in := range inputs {
		x := renderAll(t, r, templates.Build(in))
		x.each(func(surface, s string) {
			for _, sec := range []string{bearer, urlPass} {
				if strings.Contains(s, sec) {
					t.Errorf("%s/%s shows %q", in.State, surface, sec)
				}
			}
		})
	}
	for _, m := range []templates.ThreadMessage{templates.BackendMessage(a.ID, leak), templates.RecheckRefused(&approval.RecheckFailed{ApprovalID: a.ID, Message: leak})} {
		dj, err := templates.MarshalPreview(chats.DiscordThread(m))
		if err != nil {
			t.Fatal(err)
		}
		_, slackText := chats.SlackThread(m)
		for surface, s := range map[string]string{"slack": slackText, "discord": string(dj), "text": r.TextThread(m)} {
			for _, sec := range []string{bearer, urlPass} {
				if strings.Contains(s, sec) {
					t.Errorf("thread %s/%s shows %q", m.Kind, surface, sec)
				}
			}
		}
	}
}

// TestSecretShapesNeverShown: secrets in the shapes approval.RedactText
// knows, under harmless and whole-word keys of the arguments,
// in the agent's text and in the patch, appear on no surface in any
// state, while their harmless neighbours (author, oauth_scope) still do.
func TestSecretShapesNeverShown(t *testing.T) {
	r := newRenderer(t)
	args := map[string]string{
		"cmd":            "GITHUB_TOKEN=envT0ken111 make deploy",
		"url":            "https://api.example/x?page=2&access_token=qryT0ken222",
		"body":           `{"user":"ada","password":"jsonPw333"}`,
		"form":           "grant_type=password&client_secret=formS3c444",
		"header":         "Authorization: token hdrT0ken555",
		"jwt":            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.jwtSig666",
		"hook":           "https://hooks.slack.com/services/T0/B0/hookS3c777",
		"aws":            "AKIAAWSKEY8888ABCDEF",
		"gh":             "ghp_ghpT0ken9999999999999999",
		"pem":            "-----BEGIN PRIVATE KEY-----\npemB0dy000\n-----END PRIVATE KEY-----",
		"clone":          "https://deploy:urlPa/ss111@ci.example.invalid/r.git",
		"session_cookie": "cookieS3c222",
		"pwd":            "pwdS3c333",
		"auth":           "authS3c444",
		"author":         "ada-the-author",
		"oauth_scope":    "repo-scope-kept",
	}
	secrets := []string{"envT0ken111", "qryT0ken222", "jsonPw333", "formS3c444", "hdrT0ken555", "jwtSig666", "hookS3c777", "AWSKEY8888ABCDEF",
		"ghpT0ken9999999999999999", "pemB0dy000", "urlPa/ss111", "cookieS3c222", "pwdS3c333", "authS3c444",
		"agentT0k3n", "agentB34rer", "patchPw555", "patchK3y666"}
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	a := templatestest.Synthetic()
	a.Call.Arguments = raw
	a.AgentSays = "Running GITHUB_TOKEN=agentT0k3n ./deploy with Bearer:agentB34rer"
	a.Kind = approval.KindChanges
	a.Changes = &approval.Changes{Files: []approval.ChangedFile{{Path: "config.yaml"}}, Patch: "+DB_PASSWORD=patchPw555\n+  api_key: patchK3y666\n"}
	for _, state := range templates.PreviewStatesOf(a) {
		x := renderAll(t, r, templatestest.Card(t, a, state))
		x.each(func(surface, s string) {
			for _, sec := range secrets {
				if strings.Contains(s, sec) || strings.Contains(s, htmlEscape(sec)) || strings.Contains(s, templatestest.JSONString(sec)) {
					t.Errorf("%s/%s shows the secret %q", state, surface, sec)
				}
			}
			if surface == "email subject" {
				return
			}
			for _, keep := range []string{"ada-the-author", "repo-scope-kept"} {
				if !strings.Contains(s, keep) {
					t.Errorf("%s/%s lacks %q", state, surface, keep)
				}
			}
		})
	}
}
