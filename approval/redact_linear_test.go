package approval

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// The redactor's scans remember how far they read, so that a rule tried
// from many starts reads the text once. These tests hold the remembered
// scans to the plain ones they replace, on texts made of the bytes that
// steer them.

// randomText returns n bytes drawn from alphabet.
func randomText(r *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

func TestUserInfoScanMatchesPlainSearch(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		s := randomText(r, "a@/?# :", 1+r.IntN(40))
		var u userInfoScan
		for i := 0; i <= len(s); i++ {
			at, h := u.next(s, i)
			wantAt, wantH := len(s), len(s)
			for j := i; j < len(s); j++ {
				if s[j] != '@' {
					continue
				}
				e := scanUntil(s, j+1, isAuthorityEnd)
				if e > j+1 && strings.IndexByte(s[j+1:e], '@') < 0 {
					wantAt, wantH = j, e
					break
				}
			}
			if at != wantAt || h != wantH {
				t.Fatalf("userInfoScan.next(%q, %d) = %d, %d; want %d, %d", s, i, at, h, wantAt, wantH)
			}
		}
	}
}

func TestForwardMatchesScanUntil(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		s := randomText(r, "ab -.", 1+r.IntN(30))
		var f forward
		for i := 0; i <= len(s); i++ {
			if got, want := f.next(s, i, notBase64URL), scanUntil(s, i, notBase64URL); got != want {
				t.Fatalf("forward.next(%q, %d) = %d; want %d", s, i, got, want)
			}
		}
	}
}

// quotedValueByLine is quotedValue as it read before: the end of the line
// first, then the quote within it.
func quotedValueByLine(s string, v, q int) (from, to, next int) {
	from = v + q
	eol := lineEnd(s, from)
	if q == 2 {
		if k := strings.Index(s[from:eol], `\"`); k >= 0 {
			return from, from + k, from + k + 2
		}
		return from, trimEnd(s, from, eol), eol
	}
	quote := s[v]
	for j := from; j < eol; j++ {
		switch s[j] {
		case '\\':
			if quote == '"' {
				j++
			}
		case quote:
			return from, j, j + 1
		}
	}
	return from, trimEnd(s, from, eol), eol
}

func TestQuotedValueMatchesLineFirst(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 5000 {
		s := randomText(r, "a \"'`\\\n\r", 1+r.IntN(20))
		for v := 0; v < len(s); v++ {
			q := quoteAt(s, v)
			if q == 0 {
				continue
			}
			f, to, n := quotedValue(s, v, q)
			wf, wto, wn := quotedValueByLine(s, v, q)
			if f != wf || to != wto || n != wn {
				t.Fatalf("quotedValue(%q, %d, %d) = %d, %d, %d; want %d, %d, %d", s, v, q, f, to, n, wf, wto, wn)
			}
		}
	}
}

// TestRevealIndentsAsJSONIndent holds Reveal's capped indentation to
// json.Indent's up to revealMaxIndent levels, and past them to no deeper
// indentation than that.
func TestRevealIndentsAsJSONIndent(t *testing.T) {
	shallow := []string{
		`{}`, `[]`, `{"a":[]}`, `[{},{"b":{}}]`,
		`{"a":1,"b":[true,false,null,"x\"y,z:{"],"c":{"d":{"e":-1.5e3}}}`,
		`{"html":"<a href=\"x\">&</a>","u":"é\u2028"}`,
		strings.Repeat(`[`, revealMaxIndent) + `"deep"` + strings.Repeat(`]`, revealMaxIndent),
		string(benchArguments()),
	}
	for _, in := range shallow {
		got, _, err := Reveal([]byte(in))
		if err != nil {
			t.Fatalf("Reveal(%s): %v", in, err)
		}
		var compact, want bytes.Buffer
		if err := json.Compact(&compact, got); err != nil {
			t.Fatalf("Reveal(%s) = %s: %v", in, got, err)
		}
		if err := json.Indent(&want, compact.Bytes(), "", "  "); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("Reveal(%s)\n got %s\nwant %s", in, got, want.Bytes())
		}
	}
	deep := strings.Repeat(`{"a":[`, 3000) + `1` + strings.Repeat(`]}`, 3000)
	got, _, err := Reveal([]byte(deep))
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(got) {
		t.Fatalf("Reveal of deep arguments is not JSON")
	}
	for _, line := range strings.Split(string(got), "\n") {
		if indent := len(line) - len(strings.TrimLeft(line, " ")); indent > 2*revealMaxIndent {
			t.Fatalf("Reveal indented a line by %d spaces, more than %d levels: %q", indent, revealMaxIndent, line)
		}
	}
	if len(got) > 40*len(deep) {
		t.Errorf("Reveal of %d bytes nested 6000 deep wrote %d bytes", len(deep), len(got))
	}
}
