package templates

import (
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
)

// TestNewReportsTemplateErrors: a broken or missing template is an error
// from New, never a panic or a blank card later.
func TestNewReportsTemplateErrors(t *testing.T) {
	good := fstest.MapFS{}
	err := fs.WalkDir(embedded, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(embedded, path)
		good[path] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(Options{Templates: good}); err != nil {
		t.Fatalf("a copy of the embedded templates: %v", err)
	}
	tests := map[string]func(fstest.MapFS){
		"syntax error": func(m fstest.MapFS) {
			m["text/card.tmpl"] = &fstest.MapFile{Data: []byte(`{{define "card"}}{{.Status`)}
		},
		"missing part": func(m fstest.MapFS) {
			m["text/thread.tmpl"] = &fstest.MapFile{Data: []byte(strings.ReplaceAll(string(m["text/thread.tmpl"].Data), `"thread"`, `"thred"`))}
		},
		"missing file": func(m fstest.MapFS) { delete(m, "text/thread.tmpl") },
		"unknown field": func(m fstest.MapFS) {
			m["text/card.tmpl"] = &fstest.MapFile{Data: []byte(`{{define "card"}}{{.Nope}}{{end}}`)}
		},
		"html broken": func(m fstest.MapFS) {
			m["email/card.html.tmpl"] = &fstest.MapFile{Data: []byte(`{{define "card.html"}}<a href="{{.ConsoleURL}}{{end}}`)}
		},
	}
	for name, breakIt := range tests {
		t.Run(name, func(t *testing.T) {
			m := fstest.MapFS{}
			for k, v := range good {
				m[k] = v
			}
			breakIt(m)
			if r, err := New(Options{Templates: m}); err == nil {
				t.Errorf("New = %v, want an error", r)
			}
		})
	}
}

// TestTemplateLayout: one file per message kind, namespaced by surface.
func TestTemplateLayout(t *testing.T) {
	want := []string{"email/card.html.tmpl", "email/card.txt.tmpl", "text/card.tmpl", "text/thread.tmpl", "text/turn.tmpl"}
	var got []string
	_ = fs.WalkDir(embedded, ".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			got = append(got, path)
		}
		return err
	})
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("templates %v, want %v", got, want)
	}
}
