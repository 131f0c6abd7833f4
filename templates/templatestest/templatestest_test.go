package templatestest

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"approvalsbot/templates"
)

// TestGoldenIsTemplatesGolden: Golden holds the cases package templates'
// TestGolden renders, each the same card: its plain text is that
// package's golden text file, and every such file has its case.
func TestGoldenIsTemplatesGolden(t *testing.T) {
	const dir = "../testdata/golden"
	r, err := templates.New(templates.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]bool{}
	for _, g := range Golden(t) {
		rel := filepath.FromSlash(g.Name + ".text.txt")
		if cases[rel] {
			t.Errorf("%s: two cases", rel)
		}
		cases[rel] = true
		var got string
		if g.Card != nil {
			got = r.Text(*g.Card)
		} else {
			got = r.TextThread(*g.Thread)
		}
		want, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		if got != string(want) {
			t.Errorf("%s: the case is not templates' own", rel)
		}
	}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".text.txt") {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if !cases[rel] {
			t.Errorf("%s: no case in Golden", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
