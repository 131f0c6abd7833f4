// Package layers_test holds the rules of which package may depend on
// which: the core knows no platform and no file format, and each edge
// knows only its own platform.
package layers_test

import (
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "approvalsbot"

type pkg struct {
	ImportPath string
	Imports    []string // direct, non-test
	Deps       []string // transitive, non-test
}

// list is every package of the module, as go list sees it.
func list(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps=false", "-json=ImportPath,Imports,Deps", module+"/...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages; the module has more", len(pkgs))
	}
	return pkgs
}

func rel(path string) string { return strings.TrimPrefix(strings.TrimPrefix(path, module), "/") }

func under(path string, roots ...string) bool {
	p := rel(path)
	for _, r := range roots {
		if p == r || strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return false
}

// The configuration file's format is read by app and cmd/bot alone: the
// core and the edges take their own types (package tenant, each
// adapter's Options).
func TestOnlyAppReadsTheFile(t *testing.T) {
	for _, p := range list(t) {
		if under(p.ImportPath, "app", "cmd/bot") {
			continue
		}
		if slices.Contains(p.Imports, module+"/config") {
			t.Errorf("%s imports config; only app and cmd/bot may", rel(p.ImportPath))
		}
	}
}

// The core (what decides, stores and words a card) depends on no chat
// SDK and no adapter, directly or not: a platform lives in its adapter.
func TestCoreKnowsNoPlatform(t *testing.T) {
	core := []string{"threads", "templates", "approval", "ladder", "tenant", "store"}
	sdks := []string{"github.com/slack-go/slack", "github.com/bwmarrin/discordgo"}
	for _, p := range list(t) {
		if !under(p.ImportPath, core...) || strings.HasSuffix(p.ImportPath, "test") {
			continue
		}
		for _, d := range p.Deps {
			if under(d, "adapters", "app", "cmd", "config") || slices.ContainsFunc(sdks, func(s string) bool { return strings.HasPrefix(d, s) }) {
				t.Errorf("%s depends on %s", rel(p.ImportPath), d)
				break
			}
		}
	}
}

// An adapter knows its own platform only: Slack's code never reaches
// Discord's SDK, nor the reverse.
func TestEachPlatformInItsAdapter(t *testing.T) {
	for _, p := range list(t) {
		slackSeen, discordSeen := false, false
		for _, d := range p.Deps {
			switch {
			case !slackSeen && strings.HasPrefix(d, "github.com/slack-go/slack") && !under(p.ImportPath, "adapters/slack", "app", "cmd/bot"):
				slackSeen = true
				t.Errorf("%s depends on slack-go", rel(p.ImportPath))
			case !discordSeen && strings.HasPrefix(d, "github.com/bwmarrin/discordgo") && !under(p.ImportPath, "adapters/discord", "app", "cmd/bot"):
				discordSeen = true
				t.Errorf("%s depends on discordgo", rel(p.ImportPath))
			}
		}
	}
}
