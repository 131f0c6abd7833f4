package slack_test

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"

	slackgo "github.com/slack-go/slack"
	"go.yaml.in/yaml/v3"

	slackad "approvalsbot/adapters/slack"
	"approvalsbot/internal/fixtures"
)

// TestManifests reads both app manifests strictly as slack-go's Manifest
// and checks that they ask for exactly the scopes the adapter uses, and
// point Slack at the routes it serves (HTTP) or at none (Socket Mode).
func TestManifests(t *testing.T) {
	root, err := fixtures.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	read := func(t *testing.T, name string) slackgo.Manifest {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(root, "deploy", name))
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(true)
		var m slackgo.Manifest
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := slices.Sorted(slices.Values(slackad.RequiredScopes))
		if got := slices.Sorted(slices.Values(m.OAuthConfig.Scopes.Bot)); !slices.Equal(got, want) {
			t.Errorf("%s: bot scopes %v, want exactly %v", name, got, want)
		}
		if len(m.OAuthConfig.Scopes.User) > 0 {
			t.Errorf("%s: asks for user scopes", name)
		}
		if m.Settings.Interactivity == nil || !m.Settings.Interactivity.IsEnabled {
			t.Errorf("%s: interactivity off: buttons would not work", name)
		}
		if len(m.Features.SlashCommands) != 1 || m.Features.SlashCommands[0].Command != "/approvals" {
			t.Errorf("%s: slash commands %+v", name, m.Features.SlashCommands)
		}
		if n := len([]rune(m.Display.Name)); n == 0 || n > 35 {
			t.Errorf("%s: app name %q", name, m.Display.Name)
		}
		return m
	}
	path := func(raw string) string {
		u, err := url.Parse(raw)
		if err != nil || u.Scheme != "https" {
			return "bad URL " + raw
		}
		return u.Path
	}

	t.Run("http", func(t *testing.T) {
		m := read(t, "slack-app-manifest.yaml")
		if m.Settings.SocketModeEnabled {
			t.Error("Socket Mode on")
		}
		if got := path(m.Settings.Interactivity.RequestUrl); got != "/slack/interactions" {
			t.Errorf("interactivity URL path %q", got)
		}
		if got := path(m.Features.SlashCommands[0].Url); got != "/slack/commands" {
			t.Errorf("command URL path %q", got)
		}
	})
	t.Run("socket", func(t *testing.T) {
		m := read(t, "slack-app-manifest-socket.yaml")
		if !m.Settings.SocketModeEnabled || m.Settings.Interactivity.RequestUrl != "" || m.Features.SlashCommands[0].Url != "" {
			t.Errorf("socket manifest %+v", m.Settings)
		}
	})
}
