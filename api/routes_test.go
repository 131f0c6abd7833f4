package api_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"go.yaml.in/yaml/v3"
)

// openAPIPaths maps each path of openapi.yaml to its operation's tags.
func openAPIPaths(tb testing.TB) map[string][]string {
	tb.Helper()
	b, err := os.ReadFile("openapi.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	var doc struct {
		Paths map[string]struct {
			Post struct {
				Tags []string `yaml:"tags"`
			} `yaml:"post"`
		} `yaml:"paths"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		tb.Fatal(err)
	}
	out := map[string][]string{}
	for p, item := range doc.Paths {
		out[p] = item.Post.Tags
	}
	return out
}

// routes reads the source file at path (from the module root) and
// returns every first submatch of re.
func routes(tb testing.TB, path string, re *regexp.Regexp) []string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("..", path))
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[1])
	}
	return out
}

// TestEveryRouteInOpenAPI: each route the bot serves, each call its
// client makes, and each the stand-in backend serves is in openapi.yaml
// under the side that serves it; and every backend operation of the
// document is one the stand-in serves (it must implement every call).
func TestEveryRouteInOpenAPI(t *testing.T) {
	t.Parallel()
	paths := openAPIPaths(t)
	check := func(source, path, tag string) {
		tags, ok := paths[path]
		switch {
		case !ok:
			t.Errorf("%s serves or calls %s, which openapi.yaml does not describe", source, path)
		case !slices.Contains(tags, tag):
			t.Errorf("%s: openapi.yaml tags %s %v, want %s", source, path, tags, tag)
		}
	}
	bot := routes(t, "app/app.go", regexp.MustCompile(`Mux\.Handle(?:Func)?\("(?:[A-Z]+ )?(/v1/[^"]*)"`))
	if len(bot) == 0 {
		t.Fatal("found no /v1/ route in app/app.go: update this test to where the bot's routes are")
	}
	for _, p := range bot {
		check("app/app.go", p, "bot")
	}
	client := routes(t, "adapters/backend/client.go", regexp.MustCompile(`c\.post\(ctx, op, [^,]+, "([a-z_]+)"`))
	if len(client) < 2 {
		t.Fatalf("found %v as the client's calls: update this test to how adapters/backend/client.go names them", client)
	}
	for _, kind := range client {
		check("adapters/backend/client.go", "/v1/approvals/{id}/"+kind, "backend")
	}
	// The optional features' calls name their whole path.
	for _, file := range []string{"adapters/backend/questions.go"} {
		b, err := os.ReadFile(filepath.Join("..", file))
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, m := range regexp.MustCompile(`c\.base\+"(/v1/[a-z_]+/)"\+url\.PathEscape\([^)]*\)\+"(/[a-z_]+)"`).FindAllStringSubmatch(string(b), -1) {
			paths = append(paths, m[1]+"{id}"+m[2])
		}
		if len(paths) == 0 {
			t.Fatalf("found no call in %s: update this test to how it names them", file)
		}
		for _, p := range paths {
			check(file, p, "backend")
		}
	}
	standin := routes(t, "adapters/backend/standin/standin.go", regexp.MustCompile(`mux\.HandleFunc\("(?:[A-Z]+ )?(/v1/[^"]*)"`))
	for _, p := range standin {
		check("the stand-in backend", p, "backend")
	}
	for p, tags := range paths {
		if slices.Contains(tags, "backend") && !slices.Contains(standin, p) {
			t.Errorf("openapi.yaml describes the backend's %s, which the stand-in backend does not serve", p)
		}
	}
}
