package pkgdoc

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"approvalsbot/internal/fixtures"
)

// TestEveryPackageHasADocComment fails on a package of the module (test
// files aside) none of whose files carries a doc comment that names it.
func TestEveryPackageHasADocComment(t *testing.T) {
	root, err := fixtures.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != root {
			return filepath.SkipDir // another module
		}
		pkgs, err := parseDir(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for pkgName, pkg := range pkgs {
			checked++
			want := "Package " + pkgName + " "
			if pkgName == "main" {
				want = "Command "
			}
			found := false
			for _, f := range pkg {
				if f.Doc != nil && strings.HasPrefix(f.Doc.Text(), want) {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("%s: package %s has no doc comment starting %q", rel, pkgName, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 20 {
		t.Fatalf("checked %d packages: the walk did not find the module's", checked)
	}
}

// parseDir reads the package clause and comments of each Go file in dir
// that is not a test, by package name.
func parseDir(dir string) (map[string][]*ast.File, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	pkgs := map[string][]*ast.File{}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			return nil, err
		}
		pkgs[f.Name.Name] = append(pkgs[f.Name.Name], f)
	}
	return pkgs, nil
}
