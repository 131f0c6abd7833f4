package approval

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"approvalsbot/internal/fixtures"
)

// FuzzProject checks what Project promises for any input: it accepts
// exactly the JSON texts encoding/json accepts, and what it returns keeps
// every limit, with each flag backed by a visible marker.
func FuzzProject(f *testing.F) {
	dir, err := fixtures.Path("arguments")
	if err != nil {
		f.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		var a struct {
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal(b, &a); err != nil {
			f.Fatal(err)
		}
		f.Add([]byte(a.Arguments))
	}
	f.Add(benchArguments())
	f.Add([]byte(`[[[[[[[["Bearer x"]]]]]]]]`))
	f.Add([]byte(`{"a":"https://u:p@h/x","b":"basic dXNlcjpwYXNz"}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := Project(in)
		if valid := json.Valid(in); (err == nil) != valid {
			t.Fatalf("Project(%q) error %v, but json.Valid = %v", in, err, valid)
		}
		if err != nil {
			return
		}
		if err := checkShape(got.JSON); err != nil {
			t.Fatalf("Project(%q): %v", in, err)
		}
		if err := checkFlagsVisible(got); err != nil {
			t.Fatalf("Project(%q): %v", in, err)
		}
	})
}
