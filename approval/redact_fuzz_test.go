package approval

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

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
	for _, tt := range secretShapes {
		b, err := json.Marshal(map[string]string{"note": tt.in, tt.in: "x"})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
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
		// Redaction is idempotent, so what was shown whole shows again as
		// it is (a cut string would be cut again, so only uncut ones).
		if got.Truncated {
			return
		}
		again, err := Project(got.JSON)
		if err != nil {
			t.Fatalf("Project(%q) of its own projection %s: %v", in, got.JSON, err)
		}
		if !bytes.Equal(again.JSON, got.JSON) {
			t.Fatalf("Project(%q) is not a fixed point:\n once %s\ntwice %s", in, got.JSON, again.JSON)
		}
	})
}

// fuzzSecret is the secret the fuzz target plants; fuzzAWSSecret the body
// of an AWS key id, which has exactly 16 bytes.
const (
	fuzzSecret    = "QZ7KX9WR2M4TPV6N8HJ3YLD5GF0C"
	fuzzAWSSecret = "QZ7KX9WR2M4TPV6N"
)

// fuzzPlants are the secret shapes FuzzRedactText plants, each with the
// secret it must hide.
var fuzzPlants = []struct{ text, secret string }{
	{"Authorization: Bearer " + fuzzSecret, fuzzSecret},
	{"Bearer:" + fuzzSecret, fuzzSecret},
	{"Bearer\n  " + fuzzSecret, fuzzSecret},
	{"Basic " + fuzzSecret + "==", fuzzSecret},
	{"Authorization: token " + fuzzSecret, fuzzSecret},
	{`curl -H "Authorization: token ` + fuzzSecret + `" https://api.example`, fuzzSecret},
	{"curl -H 'X-Api-Key: " + fuzzSecret + "' -d x", fuzzSecret},
	{"Cookie: a=1; session=" + fuzzSecret, fuzzSecret},
	{"GITHUB_TOKEN=" + fuzzSecret + " make deploy", fuzzSecret},
	{`export DB_PASSWORD="` + fuzzSecret + `"`, fuzzSecret},
	{"aws_secret_access_key = " + fuzzSecret, fuzzSecret},
	{"  password: " + fuzzSecret + " more", fuzzSecret},
	{"https://api.example/x?a=1&access_token=" + fuzzSecret + "&b=2", fuzzSecret},
	{"grant_type=password&username=ada&password=" + fuzzSecret, fuzzSecret},
	{`{"user":"ada","client_secret":"` + fuzzSecret + `"}`, fuzzSecret},
	{`{\"pwd\":\"` + fuzzSecret + `\"}`, fuzzSecret},
	{`{'auth': '` + fuzzSecret + `'}`, fuzzSecret},
	{"https://deploy:" + fuzzSecret + "@ci.example/x", fuzzSecret},
	{"https://deploy:pa/" + fuzzSecret + "@ci.example/x", fuzzSecret},
	{"https://hooks.slack.com/services/T0/B0/" + fuzzSecret, fuzzSecret},
	{"https://discord.com/api/webhooks/1/" + fuzzSecret, fuzzSecret},
	{"ghp_" + fuzzSecret, fuzzSecret},
	{"github_pat_" + fuzzSecret, fuzzSecret},
	{"xoxb-1-" + fuzzSecret, fuzzSecret},
	{"xapp-1-" + fuzzSecret, fuzzSecret},
	{"sk_live_" + fuzzSecret, fuzzSecret},
	{"AKIA" + fuzzAWSSecret, fuzzAWSSecret},
	{"AIza" + fuzzSecret + "abcdefgh", fuzzSecret},
	{"eyJhbGciOiJIUzI1NiJ9.eyJ" + fuzzSecret + ".sig", fuzzSecret},
	{"-----BEGIN PRIVATE KEY-----\n" + fuzzSecret + "\n-----END PRIVATE KEY-----", fuzzSecret},
}

// FuzzRedactText checks what RedactText promises for any text: it is
// idempotent, it keeps valid UTF-8 valid, it changes a text only by putting
// [redacted] in it, and a secret of every shape on a line of its own never
// survives, whatever text comes before and after it, as free text or as a
// whole value.
func FuzzRedactText(f *testing.F) {
	for i, p := range fuzzPlants {
		f.Add("", "", uint8(i))
		f.Add("note", p.text, uint8(i))
	}
	for _, tt := range secretShapes {
		f.Add(tt.in, tt.want, uint8(0))
	}
	f.Add("Authorization: Bearer", "", uint8(0))
	f.Add("-----BEGIN PRIVATE KEY-----", "-----END ", uint8(0))
	f.Add(`"creds": {`, "}", uint8(0))
	f.Fuzz(func(t *testing.T, before, after string, plant uint8) {
		for _, s := range []string{before, after, before + after} {
			for _, value := range []bool{false, true} {
				once, changed := redactText(s, value)
				if twice, _ := redactText(once, value); twice != once {
					t.Fatalf("redactText(%q, %v) is not idempotent:\n once %q\ntwice %q", s, value, once, twice)
				}
				if changed != (once != s) {
					t.Fatalf("redactText(%q, %v) = %q, changed %v", s, value, once, changed)
				}
				if changed && !strings.Contains(once, redactedMarker) {
					t.Fatalf("redactText(%q, %v) = %q changed it without %s", s, value, once, redactedMarker)
				}
				if utf8.ValidString(s) && !utf8.ValidString(once) {
					t.Fatalf("redactText(%q, %v) = %q is not valid UTF-8", s, value, once)
				}
			}
		}
		p := fuzzPlants[int(plant)%len(fuzzPlants)]
		in := before + "\n" + p.text + "\n" + after
		if strings.Count(in, p.secret) != 1 {
			return // the fuzzer's own text holds the secret
		}
		for _, value := range []bool{false, true} {
			if out, _ := redactText(in, value); strings.Contains(out, p.secret) {
				t.Fatalf("redactText(%q, %v) shows the secret:\n%q", in, value, out)
			}
		}
	})
}
