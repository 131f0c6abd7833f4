package slack

import (
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

const goldenDir = "testdata/golden"

// TestGolden renders every golden case (templatestest.Golden: a card per
// approval fixture and state, a thread reply per other event, and the
// cases no fixture carries) as Block Kit and compares with the files under
// testdata/golden (go test ./adapters/slack -update rewrites them).
func TestGolden(t *testing.T) {
	want := map[string]bool{}
	for _, g := range templatestest.Golden(t) {
		rel := g.Name + ".slack.json"
		want[rel] = true
		var msg Message
		if g.Card != nil {
			msg = CardMessage(*g.Card)
		} else {
			msg = ThreadReply(*g.Thread)
		}
		got, err := templates.MarshalPreview(msg)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(goldenDir, filepath.FromSlash(rel))
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		old, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./adapters/slack -update)", err)
		}
		if diff := cmp.Diff(string(old), string(got)); diff != "" {
			t.Errorf("%s differs (-golden +got):\n%s", rel, diff)
		}
	}
	if *update || t.Failed() {
		return
	}
	// Every golden file is one a case wrote: none is left stale.
	err := filepath.WalkDir(goldenDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(goldenDir, path)
		if !want[filepath.ToSlash(rel)] {
			t.Errorf("stale golden file %s: no case writes it", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(want) < 60 {
		t.Fatalf("%d golden cases: the fixtures were not all rendered", len(want))
	}
}
