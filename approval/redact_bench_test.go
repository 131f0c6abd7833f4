package approval

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// adversarialTexts are texts shaped to make a redaction rule read far
// ahead from many starts: each repeats a piece that opens a rule (a URL
// that may hold a password, a named value, an authentication scheme, a
// quote that does not close, PEM armor, a token header) and never lets it
// finish early.
var adversarialTexts = []struct{ name, piece string }{
	{"url-password", "https://a:"},
	{"url-password-path", "https://a:b/"},
	{"url-password-query", "http://a:b?"},
	{"scheme-relative", "//a:b/"},
	{"named-value", "a="},
	{"named-colon", "a:"},
	{"bearer", "Bearer "},
	{"quoted-token", `"token": "`},
	{"quoted-token-tight", `"token":`},
	{"escaped-token", `\"token\": \"`},
	{"pem-begin", "-----BEGIN "},
	{"jwt-header", "eyJ"},
	{"jwt-dashed", "eyJ-"},
	{"jwt-parts", "eyJaaaaaaaaaaa."},
	{"open-object", `"pwd": {`},
}

// repeatTo returns piece repeated to exactly n bytes.
func repeatTo(piece string, n int) string {
	return strings.Repeat(piece, n/len(piece)+1)[:n]
}

// deepJSON returns n bytes or so of valid JSON: one array of objects, each
// nested as deeply as the decoder allows, so that Project and Reveal walk
// many levels many times.
func deepJSON(n int) []byte {
	depth := min(max(n/16, 1), 4000)
	one := strings.Repeat(`{"a":[`, depth) + `"Bearer x"` + strings.Repeat(`]}`, depth)
	var b strings.Builder
	b.WriteByte('[')
	for b.Len() < n-len(one)-1 || b.Len() == 1 {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.WriteString(one)
	}
	b.WriteByte(']')
	return []byte(b.String())
}

var benchSizes = []int{1 << 10, 16 << 10, 256 << 10, 1 << 20}

// scanSink keeps plainScan's result alive.
var scanSink int

// plainScan reads every byte of s once, counting one that does not occur:
// the least any pass over the text can cost, on the same machine and in
// the same run as the redactor.
//
//go:noinline
func plainScan(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == 0xff {
			n++
		}
	}
	return n
}

// benchPerByte runs do over an input of size bytes and reports its cost
// per byte (ns/byte) and that cost over a plain scan's of the same input
// in the same run (x-scan). Redaction is linear when x-scan stays flat
// from 1 KiB to 1 MiB.
func benchPerByte(b *testing.B, in string, do func()) {
	b.SetBytes(int64(len(in)))
	loops := 0
	for b.Loop() {
		do()
		loops++
	}
	perByte := float64(b.Elapsed().Nanoseconds()) / float64(loops) / float64(len(in))
	// The baseline gets at least as many bytes as the redactor read, and
	// enough rounds to be timed, though the redactor's loop may be short.
	rounds := max(loops, (64<<20)/len(in))
	start := time.Now()
	for range rounds {
		scanSink += plainScan(in)
	}
	scan := float64(time.Since(start).Nanoseconds()) / float64(rounds) / float64(len(in))
	b.ReportMetric(perByte, "ns/byte")
	b.ReportMetric(perByte/scan, "x-scan")
}

// BenchmarkRedactAdversarial measures RedactText, Project and Reveal on
// adversarial inputs from 1 KiB to 1 MiB against a plain scan of the same
// bytes: every pass over call data must stay linear in its size, because
// it runs while an event is ingested.
func BenchmarkRedactAdversarial(b *testing.B) {
	type input struct {
		name string
		make func(size int) string
		do   func(b *testing.B, in string)
	}
	text := func(b *testing.B, in string) { redactText(in, false) }
	project := func(b *testing.B, in string) {
		if _, err := Project([]byte(in)); err != nil {
			b.Fatal(err)
		}
	}
	inputs := []input{{"scan", func(n int) string { return repeatTo("https://a:", n) }, func(b *testing.B, in string) { scanSink += plainScan(in) }}}
	for _, tt := range adversarialTexts {
		inputs = append(inputs, input{"text/" + tt.name, func(n int) string { return repeatTo(tt.piece, n) }, text})
	}
	inputs = append(inputs,
		input{"project-string/url-password", func(n int) string { return `{"url":"` + repeatTo("https://a:", n) + `"}` }, project},
		input{"project/deep-json", func(n int) string { return string(deepJSON(n)) }, project},
		input{"reveal/deep-json", func(n int) string { return string(deepJSON(n)) }, func(b *testing.B, in string) {
			if _, _, err := Reveal([]byte(in)); err != nil {
				b.Fatal(err)
			}
		}},
	)
	for _, in := range inputs {
		for _, size := range benchSizes {
			b.Run(in.name+"/"+strconv.Itoa(size>>10)+"KiB", func(b *testing.B) {
				s := in.make(size)
				benchPerByte(b, s, func() { in.do(b, s) })
			})
		}
	}
}
