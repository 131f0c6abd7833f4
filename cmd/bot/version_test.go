package main

import (
	"bytes"
	"context"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestVersionText(t *testing.T) {
	t.Parallel()
	settings := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i+1 < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	for _, c := range []struct {
		name string
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{"a tagged build", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "approvalsbot", Version: "v1.4.0"},
			Settings: settings("GOOS", "linux", "GOARCH", "arm64", "vcs.revision", "4238347a1b2c3d4e5f60718293a4b5c6d7e8f901",
				"vcs.time", "2026-12-01T14:56:00Z", "vcs.modified", "false")},
			true, "bot v1.4.0 (module approvalsbot)\ncommit 4238347a1b2c3d4e5f60718293a4b5c6d7e8f901 of 2026-12-01T14:56:00Z\nbuilt with go1.26.8 for linux/arm64\n"},
		{"a checkout with changes", &debug.BuildInfo{GoVersion: "go1.26.8",
			Main:     debug.Module{Path: "approvalsbot", Version: "v0.0.0-20261201145600-4238347a1b2c+dirty"},
			Settings: settings("GOOS", "linux", "GOARCH", "amd64", "vcs.revision", "4238347a1b2c", "vcs.modified", "true")},
			true, "bot v0.0.0-20261201145600-4238347a1b2c+dirty (module approvalsbot)\ncommit 4238347a1b2c, with changes not committed\nbuilt with go1.26.8 for linux/amd64\n"},
		{"no version control", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "approvalsbot", Version: "(devel)"}},
			true, "bot (devel) (module approvalsbot)\ncommit unknown: built without version control information\nbuilt with go1.26.8 for " +
				runtime.GOOS + "/" + runtime.GOARCH + "\n"},
		{"no build information", nil, false, "bot: no build information in this binary\n"},
	} {
		if diff := cmp.Diff(c.want, versionText(c.bi, c.ok)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
}

// `bot version`, `bot --version` and `bot -version` print this binary's
// own build information, and need no configuration.
func TestVersionCommand(t *testing.T) {
	t.Parallel()
	bi, ok := readBuildInfo()
	if !ok {
		t.Fatal("a test binary has build information")
	}
	for _, arg := range []string{"version", "--version", "-version"} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), []string{arg}, &out, &errOut, lookup(nil)); code != 0 || errOut.Len() != 0 {
			t.Fatalf("bot %s: exit %d, %s", arg, code, errOut.String())
		}
		if !strings.HasPrefix(out.String(), "bot ") || !strings.Contains(out.String(), "built with "+bi.GoVersion+" for ") {
			t.Errorf("bot %s printed:\n%s", arg, out.String())
		}
	}
}
