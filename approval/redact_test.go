package approval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/internal/fixtures"
)

func TestSensitiveKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		key  string
		want bool
	}{
		{"token", true},
		{"Token", true},
		{"access-token", true},
		{"access_token", true},
		{"refreshToken", true},
		{"password", true},
		{"PASSWORD", true},
		{"db password", true},
		{"passwd", true},
		{"secret", true},
		{"client_secret", true},
		{"Client-Secret", true},
		{"Authorization", true},
		{"Proxy-Authorization", true},
		{"credential", true},
		{"Credentials", true},
		{"X-Api-Key", true},
		{"api key", true},
		{"api_key", true},
		{"apiKey", true},
		{"APIKEY", true},
		{"x.api.key", true},
		{"Private_Key", true},
		{"private key", true},
		{"privateKey", true},
		{"PRIVATE-KEY", true},
		{"max_tokens", true}, // broad on purpose: see SensitiveKey
		{"key_passphrase", true},
		// Whole words: a whole segment, split at separators, digits and
		// camelCase, with a plural s.
		{"auth", true},
		{"AUTH", true},
		{"x-auth", true},
		{"basicAuth", true},
		{"HTTPAuth", true},
		{"HTTP_AUTH", true},
		{"auth2", true},
		{"auths", true},
		{"pwd", true},
		{"PWD", true},
		{"DB_PWD", true},
		{"dbPwd", true},
		{"DBPwd", true},
		{"PWDs", true},
		{"Cookie", true},
		{"cookies", true},
		{"Set-Cookie", true},
		{"session_cookie", true},
		{"sessionCookie", true},
		{"cookie_consent", true}, // a segment is enough
		{"author", false},
		{"Author", false},
		{"authors", false},
		{"oauth", false},
		{"oauth_scope", false},
		{"OAuth", false},
		{"OAuthScope", false},
		{"authenticated", false},
		{"authority", false},
		{"XAuth", false}, // one capital before is not an acronym
		{"pwdx", false},
		{"OLDPWD", false},
		{"cookiecutter", false},
		{"sessioncookie", false},
		{"", false},
		{"note", false},
		{"key", false},
		{"api", false},
		{"api_url", false},
		{"private", false},
		{"public_key", false},
		{"pass", false},
		{"passenger", false},
		{"cred", false},
		{"tok", false},
		{"privacy", false},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			t.Parallel()
			if got := SensitiveKey(tt.key); got != tt.want {
				t.Errorf("SensitiveKey(%q) = %v, want %v", tt.key, got, tt.want)
			}
		})
	}
}

// TestSensitiveKeyDisguised: a secret name written with invisible,
// compatibility or look-alike characters is still a secret name, and a
// word of another script that only resembles none stays shown.
func TestSensitiveKeyDisguised(t *testing.T) {
	t.Parallel()
	secret := []string{
		"pass\u200bword",                 // zero width space
		"p\u0430ssword",                  // Cyrillic а
		"\uff34\uff2f\uff2b\uff25\uff2e", // full-width TOKEN
		"pa\u017fsword",                  // long s
		"pass\tword",                     // a control
		"api\u2010key",                   // Unicode hyphen
		"api\u2212key",                   // minus sign
		"api\ufe63key",                   // small hyphen-minus
		"api\uff0dkey",                   // full-width hyphen-minus
		"api\u00a0key",                   // no-break space
		"api\u3000key",                   // ideographic space
		"Pass\u00adword",                 // soft hyphen
		"p\u0430ss\u200dw\u043erd",       // Cyrillic а and о, and a joiner
		"to\u212aEN",                     // Kelvin sign
		"cr\u0435dent\u0131al",           // Cyrillic е, dotless ı
		"\u0455\u0435\u0441r\u0435t",     // Cyrillic ѕ е с
		"\u03c4\u03bf\u03ba\u03b5n",      // Greek τ ο κ ε
		"\u0422\u041e\u041a\u0415N",      // Cyrillic capitals
		"\u03a4\u039f\u039a\u0395\u039d", // Greek capitals
		"\U0001d42d\U0001d428\U0001d424\U0001d41e\U0001d427", // mathematical bold token
		"db_\u0440wd",                            // Cyrillic р in a whole word
		"x\u200bauth",                            // an invisible separator before a whole word
		"coo\u212aie",                            // a capital look-alike inside a whole word
		"session\u0421ookie",                     // Cyrillic С in camelCase
		"\u0430uth",                              // Cyrillic а in a whole word
		"pa\u0073\u0301sword",                    // a combining mark
		"\ufeffpassword",                         // a BOM before it
		"pass\U000e0041word",                     // a tag character
		"\u1d18\u1d00ss\u1d21\u1d0f\u0280\u1d05", // small capitals
		"api\u3164key",                           // Hangul filler
		"private\u2003key",                       // em space
		// Precomposed letters are their base letters.
		"p\u00e4ssword",         // ä
		"secr\u00e9t",           // é
		"cr\u00e9dential",       // é
		"t\u00f6k\u00e9n",       // ö é
		"\u00e5pi_key",          // å
		"\u00e1uth",             // á, a whole word
		"P\u00c4SSW\u00d6RD",    // Ä Ö
		"x-\u00c1uth",           // Á after a separator
		"c\u00f4\u00f5kie",      // ô õ
		"\u01d6\u0165oken",      // ǖ is not a u of token, but ť is a t
		"pr\u012bv\u0101te_key", // ī ā, Latin Extended-A
		"\u01a1auth_\u0163oken", // ơ ţ, Latin Extended-B and -A
		// Letters with a stroke, kra and sharp s.
		"to\u0138en",       // ĸ
		"t\u00f8ken",       // ø
		"\u0142ogin_pwd",   // ł, before a whole word
		"pa\u00dfword",     // ß
		"PA\u1e9eWORD",     // ẞ
		"\u0111b_p\u0175d", // đ, and ŵ
		// Separators beyond '-', '_', ' ' and '.'.
		"api\u00b7key",   // middle dot
		"pass\u2024word", // one dot leader
		"api\u30fbkey",   // katakana middle dot
		"api\u2215key",   // division slash
		"api\uff0fkey",   // full-width solidus
		"api\uff1akey",   // full-width colon
		"api\u2236key",   // ratio
		"x\u00b7auth",    // a middle dot before a whole word
		"p\u00e4ssw0rd",  // an accent and a digit
	}
	for _, k := range secret {
		if !SensitiveKey(k) {
			t.Errorf("SensitiveKey(%+q) = false, want true: it folds to a secret name", k)
		}
	}
	shown := []string{
		"\u041f\u0430\u0440\u043e\u043b\u044c",                         // Russian: password
		"\u043f\u043e\u043b\u0443\u0447\u0430\u0442\u0435\u043b\u044c", // Russian: recipient
		"\u03bb\u03ad\u03be\u03b7",                                     // Greek: word
		"\u03c0\u03b1\u03c1\u03b1\u03bb\u03ae\u03c0\u03c4\u03b7\u03c2", // Greek: recipient
		"\u5b9b\u5148",                   // Japanese: address
		"\u30e6\u30fc\u30b6\u30fc\u540d", // Japanese: user name
		"\u30c8\u30fc\u30af\u30f3",       // Japanese: token, in katakana
		"\u4ef6\u540d",                   // Japanese: subject
		"caf\u00e9_name",
		"\uff41\uff55\uff54\uff48\uff4f\uff52", // full-width author
		"\u043e\u0430uth_scope",                // oauth_scope, disguised
		"na\u00efve\u2010count",
		"r\u00e9sum\u00e9",
		"\u00e1uthor", // author, with an accent
		"\u00fcber",
		"se\u00f1or",
		"fa\u00e7ade",
		"cr\u00e8me",
		"stra\u00dfe",
		"\u00c5ngstr\u00f6m",
		"\u0142\u00f3d\u017a",
		"p\u00e1ss", // pass is no secret word
		"api\u00b7url",
		"public\u00b7key",
		"\u00f8\u00e1uth_scope", // oauth_scope, with ø and á
	}
	for _, k := range shown {
		if SensitiveKey(k) {
			t.Errorf("SensitiveKey(%+q) = true, want false: it names no secret", k)
		}
	}
	// In text, a disguised NAME of a NAME=value is a secret name too.
	for _, text := range []string{"p\u0430ssword=hunter2", "set \u0422\u041e\u041a\u0415N: hunter2",
		"p\u00e4ssword=hunter2", "set secr\u00e9t: hunter2", "t\u00f6k\u00e9n=hunter2 next", "api\u00b7key=hunter2",
		"{\"\u00e1uth\": \"hunter2\"}", "pass\u2024word = 'hunter2'", "to\u0138en=hunter2",
		"\u30d1\u30b9\u30ef\u30fc\u30c9\u306fpassword=hunter2", "{\"pass\u200bword\": \"hunter2\"}"} {
		if got := RedactText(text); strings.Contains(got, "hunter2") {
			t.Errorf("RedactText(%+q) = %+q, want the value redacted", text, got)
		}
	}
	// The Arguments block: a disguised secret key's value is redacted.
	p, err := Project([]byte(`{"p\u0430ssword":"hunter2","api\u2010key":"k-7731","\u5b9b\u5148":"ada@acme.example"}`))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(p.JSON, []byte("hunter2")) || bytes.Contains(p.JSON, []byte("k-7731")) || !bytes.Contains(p.JSON, []byte("ada@acme.example")) {
		t.Errorf("Project = %s: want the disguised secrets redacted and the address shown", p.JSON)
	}
}

// TestSensitiveKeyLetterSigns: a digit or sign written for a letter of a
// secret name (0 o, 1 i or l, 3 e, 4 a, 5 s, 7 t, @ a, $ s) is read as
// that letter, and the separators '/' and ':' join parts as '-' does; the
// ordinary keys that hold such digits and signs stay shown, and words of
// plain letters are judged as before (tokenizer holds token, a part word).
func TestSensitiveKeyLetterSigns(t *testing.T) {
	t.Parallel()
	secret := []string{
		"passw0rd", "t0ken", "secr3t", "p4ssword", "s3cret", "4pi_key", "pa55word", "t0k3n", "au7h",
		"p@ssword", "pa$$word", "PASSW0RD", "X-4PI-K3Y", "c00kie", "cook1e", "c0ok1es", "cr3d3nt1al",
		"cred3ntia1", "pr1vate_key", "passphr4se", "Authorizati0n", "5ecret", "7oken", "@uth", "au7hs",
		"au7h2", "x-au7h", "basicAu7h", "DB_PWD", "api/key", "api:key", "api.key", "pass/word",
		"private:key", "X/Api/Key", "db:passw0rd", "a/au7h",
		// Plain letters, as before.
		"tokenizer", "tokenizer_config", "auth0_domain", "0auth",
	}
	for _, k := range secret {
		if !SensitiveKey(k) {
			t.Errorf("SensitiveKey(%q) = false, want true", k)
		}
	}
	shown := []string{
		"t0", "step1", "a1b2", "v3", "h264", "id", "author", "au7hor", "4uthor", "oauth2", "o@uth",
		"s3_bucket", "ec2_instance", "x509", "sha256", "base64", "utf8", "ipv4", "l10n", "i18n", "k8s",
		"p99", "gpt4o", "$ref", "$schema", "@id", "@type", "@context", "p4ss", "pa55enger", "t0k",
		"c00kiecutter", "api/url", "api:version", "api/v1", "public/key", "s3://bucket/key", "se7en",
		"aut0", "p4wd", "a0e4b7c1", "3f2a7c9e-1b2c-4d5e-8f90-a1b2c3d4e5f6", "md5", "crc32", "int64",
		"to/ke", "pass:port",
	}
	for _, k := range shown {
		if SensitiveKey(k) {
			t.Errorf("SensitiveKey(%q) = true, want false", k)
		}
	}
}

// TestSensitiveKeyASCIIAllocatesNothing: SensitiveKey runs on every key
// of every call; a plain key costs no allocation.
func TestSensitiveKeyASCIIAllocatesNothing(t *testing.T) {
	keys := []string{"to", "smtp_password", "sessionCookie", "recipient_list", "X-Api-Key",
		"passw0rd", "au7h", "api/key", "pa$$word", "h264", "c00kiecutter"}
	if n := testing.AllocsPerRun(100, func() {
		for _, k := range keys {
			SensitiveKey(k)
		}
	}); n != 0 {
		t.Errorf("SensitiveKey of ASCII keys allocates %v times, want 0", n)
	}
}

func TestRedactText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"empty", "", ""},
		{"nothing to redact", "rotate the token on Monday", "rotate the token on Monday"},
		{"bearer in a header line", "Authorization: Bearer abc.def-ghi", "Authorization: Bearer [redacted]"},
		{"bearer any case", "BEARER abc and bearer def", "BEARER [redacted] and bearer [redacted]"},
		{"bearer after a tab", "bearer\tabc", "bearer\t[redacted]"},
		{"bearer keeps the text after the token", "Bearer abc then more", "Bearer [redacted] then more"},
		{"bearer token ends at white space or a quote", "-H 'Bearer abc' -d x", "-H 'Bearer [redacted]' -d x"},
		{"bearer needs a separator", "Bearers are here", "Bearers are here"},
		{"bearer needs a word start", "forbearer abc", "forbearer abc"},
		{"bearer without a token", "Bearer   ", "Bearer   "},
		{"bearer before a new line", "Bearer \nabc", "Bearer \nabc"},
		{"basic credential", "use Basic dXNlcjpwYXNz here", "use Basic [redacted] here"},
		{"basic credential with padding and full stop", "Basic YWxhZGRpbjpvcGVuc2VzYW1l=.", "Basic [redacted]"},
		{"basic as an English word", "the basic idea", "the basic idea"},
		{"basic before an acronym", "basic HTTP auth", "basic HTTP auth"},
		{"url user and password", "clone https://u:p@git.example/r.git now", "clone https://[redacted]@git.example/r.git now"},
		{"url user only", "ssh://git@git.example/r", "ssh://[redacted]@git.example/r"},
		{"url with port", "postgres://app:pw@db.example:5432/x", "postgres://[redacted]@db.example:5432/x"},
		{"two urls", "https://a:b@x.example and https://c:d@y.example", "https://[redacted]@x.example and https://[redacted]@y.example"},
		{"url ends at a quote", `"https://a:b@x.example" or me@y.example`, `"https://[redacted]@x.example" or me@y.example`},
		{"at sign in the path is not user-info", "https://host.example/a@b?e=c@d", "https://host.example/a@b?e=c@d"},
		{"mail address is not a url", "mailto:ada@acme.example", "mailto:ada@acme.example"},
		{"already redacted url", "https://[redacted]@x.example", "https://[redacted]@x.example"},
		{"scheme-relative url", "load //u:p@cdn.example/a.js", "load //[redacted]@cdn.example/a.js"},
		{"scheme-relative url in an attribute", `src="//deploy:pw@cdn.example/a.js"`, `src="//[redacted]@cdn.example/a.js"`},
		{"scheme-relative url with a slash in the password", "//u:pa/ss@cdn.example/x", "//[redacted]@cdn.example/x"},
		{"scheme-relative url without user-info", "//cdn.example/a@b", "//cdn.example/a@b"},
		{"comment is not a url", "// ask me@acme.example", "// ask me@acme.example"},
		{"already redacted bearer", "Bearer [redacted]", "Bearer [redacted]"},
		{"accented name", "p\u00e4ssword=hunter2 next", "p\u00e4ssword=[redacted] next"},
		{"accented header name", "Secr\u00e9t: hunter2", "Secr\u00e9t: [redacted]"},
		{"accented whole word", "\u00e1uth=hunter2", "\u00e1uth=[redacted]"},
		{"name with a digit for a letter", "export PASSW0RD=hunter2", "export PASSW0RD=[redacted]"},
		{"name with digits for letters", "t0k3n: hunter2", "t0k3n: [redacted]"},
		{"whole word with a digit for a letter", "au7h=hunter2", "au7h=[redacted]"},
		{"name with signs for letters", "p@ssword=hunter2 and pa$$word=hunter3", "p@ssword=[redacted] and pa$$word=[redacted]"},
		{"name joined by a slash", "set api/key=hunter2", "set api/key=[redacted]"},
		{"name joined by a colon", "api:key: hunter2", "api:key: [redacted]"},
		{"name joined by a middle dot", "api\u00b7key=hunter2", "api\u00b7key=[redacted]"},
		{"name joined by a dot leader", "pass\u2024word=hunter2", "pass\u2024word=[redacted]"},
		{"quoted name joined by a slash", `{"api/key": "hunter2"}`, `{"api/key": "[redacted]"}`},
		{"path before a name", "see docs/token=hunter2", "see docs/token=[redacted]"},
		{"ordinary names with digits", "step1=go h264=on v3=x t0=y", "step1=go h264=on v3=x t0=y"},
		{"ordinary names with signs", "$ref=x api/v1=y scope:read s3://bucket/key=z", "$ref=x api/v1=y scope:read s3://bucket/key=z"},
		{"accented ordinary name", "r\u00e9sum\u00e9=hunter2", "r\u00e9sum\u00e9=hunter2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := RedactText(tt.in)
			if got != tt.want {
				t.Errorf("RedactText(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if again := RedactText(got); again != got {
				t.Errorf("RedactText is not idempotent: %q then %q", got, again)
			}
		})
	}
}

func TestProject(t *testing.T) {
	t.Parallel()
	long := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name                string
		in                  string
		want                string
		redacted, truncated bool
	}{
		{
			name: "order and numbers kept as written",
			in:   `{ "b" : 1.50, "a" : [1e400, -0, 1E2], "c" : null, "d" : true }`,
			want: `{"b":1.50,"a":[1e400,-0,1E2],"c":null,"d":true}`,
		},
		{
			name: "top-level scalar",
			in:   ` "hello" `,
			want: `"hello"`,
		},
		{
			name: "escapes",
			in:   `{"s":"a\u0001\n\"\\\/<&é"}`,
			want: `{"s":"a\u0001\n\"\\/<&é"}`,
		},
		{
			name: "invalid UTF-8 becomes U+FFFD",
			in:   "{\"s\":\"a\xffb\"}",
			want: "{\"s\":\"a\uFFFDb\"}",
		},
		{
			name:     "secret-named keys lose the whole value",
			in:       `{"X-Api-Key":"k1","client_secret":"s1","Private_Key":{"pem":"p1"},"access-token":["t1"],"APIKEY":12,"passwd":null,"api key":true,"Credentials":{"u":"c1"}}`,
			want:     `{"X-Api-Key":"[redacted]","client_secret":"[redacted]","Private_Key":"[redacted]","access-token":"[redacted]","APIKEY":"[redacted]","passwd":"[redacted]","api key":"[redacted]","Credentials":"[redacted]"}`,
			redacted: true,
		},
		{
			name: "a value mentioning token is shown",
			in:   `{"note":"token rotation","why":"password reset flow"}`,
			want: `{"note":"token rotation","why":"password reset flow"}`,
		},
		{
			name:     "bearer value redacted whole",
			in:       `{"h":"Bearer abc def","l":"bearer x","b":"BASIC dXNl","p":"Basic plan"}`,
			want:     `{"h":"Bearer [redacted]","l":"bearer [redacted]","b":"BASIC [redacted]","p":"Basic [redacted]"}`,
			redacted: true,
		},
		{
			name:     "bearer inside text",
			in:       `{"cmd":"curl -H 'Authorization: Bearer abc' https://x.example"}`,
			want:     `{"cmd":"curl -H 'Authorization: Bearer [redacted]' https://x.example"}`,
			redacted: true,
		},
		{
			name:     "url user-info",
			in:       `{"url":"https://deploy:pw@ci.example/hooks/run","plain":"https://ci.example/a@b"}`,
			want:     `{"url":"https://[redacted]@ci.example/hooks/run","plain":"https://ci.example/a@b"}`,
			redacted: true,
		},
		{
			name:     "keys are redacted as text",
			in:       `{"Bearer abc":1}`,
			want:     `{"Bearer [redacted]":1}`,
			redacted: true,
		},
		{
			name:     "already redacted by the backend",
			in:       `{"url":"https://[redacted]@ci.example/x","h":"Bearer [redacted]","password":"[redacted]"}`,
			want:     `{"url":"https://[redacted]@ci.example/x","h":"Bearer [redacted]","password":"[redacted]"}`,
			redacted: true, // the secret-named key's rule fires whatever the value
		},
		{
			name: "string at the bound",
			in:   `["` + long(ProjectionMaxString) + `"]`,
			want: `["` + long(ProjectionMaxString) + `"]`,
		},
		{
			name:      "string over the bound",
			in:        `["` + long(300) + `"]`,
			want:      `["` + long(256) + `…[cut: 44 bytes]"]`,
			truncated: true,
		},
		{
			name:      "string cut on a UTF-8 boundary",
			in:        `["` + long(255) + `éyyy"]`,
			want:      `["` + long(255) + `…[cut: 5 bytes]"]`,
			truncated: true,
		},
		{
			name:      "cut never splits a redaction",
			in:        `["` + long(240) + ` Bearer abc"]`,
			want:      `["` + long(240) + ` Bearer …[cut: 10 bytes]"]`,
			truncated: true, // the [redacted] is cut away, so Redacted is false
		},
		{
			name:      "redaction before the cut",
			in:        `["Bearer ` + long(300) + `"]`,
			want:      `["Bearer [redacted]"]`,
			redacted:  true,
			truncated: false,
		},
		{
			name:      "key over the bound",
			in:        `{"` + long(260) + `":1}`,
			want:      `{"` + long(256) + `…[cut: 4 bytes]":1}`,
			truncated: true,
		},
		{
			name:      "long number shown as a cut string",
			in:        `[` + strings.Repeat("9", 300) + `]`,
			want:      `["` + strings.Repeat("9", 256) + `…[cut: 44 bytes]"]`,
			truncated: true,
		},
		{
			name: "array at the member bound",
			in:   `[` + numbers(ProjectionMaxMembers) + `]`,
			want: `[` + numbers(ProjectionMaxMembers) + `]`,
		},
		{
			name:      "array over the member bound",
			in:        `[` + numbers(40) + `]`,
			want:      `[` + numbers(31) + `,"[9 more left out]"]`,
			truncated: true,
		},
		{
			name:      "object over the member bound",
			in:        `{` + members(33) + `}`,
			want:      `{` + members(31) + `,"…":"[2 more left out]"}`,
			truncated: true,
		},
		{
			name: "six levels kept",
			in:   `[[[[[[1]]]]]]`,
			want: `[[[[[[1]]]]]]`,
		},
		{
			name:      "seventh level replaced",
			in:        `{"a":[[[[{"deep":{"x":1},"y":2}]]]]}`,
			want:      `{"a":[[[[{"deep":"[nested deeper than 6 levels]","y":2}]]]]}`,
			truncated: true,
		},
		{
			name:     "a secret-named key at the depth bound is redacted, not cut",
			in:       `[[[[[{"password":{"x":1}}]]]]]`,
			want:     `[[[[[{"password":"[redacted]"}]]]]]`,
			redacted: true,
		},
		{
			name:      "total size: trailing members left out",
			in:        `[` + strings.Repeat(`"`+long(200)+`",`, 30) + `"` + long(200) + `"]`,
			want:      `[` + strings.Repeat(`"`+long(200)+`",`, 20) + `"[11 more left out]"]`,
			truncated: true,
		},
		{
			name:      "total size: nested collection cut and later members left out",
			in:        `{"a":[` + strings.Repeat(`"`+long(200)+`",`, 25) + `"x"],"b":"y"}`,
			want:      `{"a":[` + strings.Repeat(`"`+long(200)+`",`, 19) + `"[7 more left out]"],"…":"[1 more left out]"}`,
			truncated: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Project([]byte(tt.in))
			if err != nil {
				t.Fatalf("Project: %v", err)
			}
			want := Projection{JSON: []byte(tt.want), Redacted: tt.redacted, Truncated: tt.truncated}
			if diff := cmp.Diff(want, got, cmp.Transformer("string", func(b []byte) string { return string(b) })); diff != "" {
				t.Errorf("Project(%.80q) mismatch (-want +got):\n%s", tt.in, diff)
			}
			if err := checkShape(got.JSON); err != nil {
				t.Error(err)
			}
		})
	}
}

// numbers is "0,1,...,n-1".
func numbers(n int) string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprint(i)
	}
	return strings.Join(s, ",")
}

// members is `"k0":0,...` with n members.
func members(n int) string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprintf(`"k%d":%d`, i, i)
	}
	return strings.Join(s, ",")
}

func TestProjectRejects(t *testing.T) {
	t.Parallel()
	const secret = "hunter2"
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	for _, in := range []string{deep, ``, ` `, `{`, `{"a":"hunter2"`, `{"a" "hunter2"}`, `["hunter2",]`, `{"a":"hunter2"} x`, `{"a":"hunter2"}{}`, `hunter2`, `{"password":hunter2}`} {
		t.Run(fmt.Sprintf("%.20s", in), func(t *testing.T) {
			t.Parallel()
			got, err := Project([]byte(in))
			if err == nil {
				t.Fatalf("Project(%q) = %s, want an error", in, got.JSON)
			}
			if !errors.Is(err, ErrInvalidJSON) {
				t.Errorf("error %q does not wrap ErrInvalidJSON", err)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error %q quotes the input", err)
			}
		})
	}
}

// secretKeyPattern recognises secret-named keys in the test, written apart
// from SensitiveKey so that a mistake there is not repeated here.
var secretKeyPattern = regexp.MustCompile(`(?i)token|passw(or)?d|passphrase|secret|authorization|credential|api[-_ ]?key|private[-_ ]?key|(^|[^a-z0-9])(auth|pwd|cookie)s?($|[^a-z0-9])`)

// fixtureStrings sorts the strings of decoded arguments into secrets (under
// a secret-named key, a Bearer credential, a URL's user-info and password)
// and harmless values that must be shown as they are.
type fixtureStrings struct {
	keyed, bearer, userinfo []string
	harmless                []string
}

func (fs *fixtureStrings) walk(v any, secret bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			fs.walk(x, secret || secretKeyPattern.MatchString(k))
		}
	case []any:
		for _, x := range v {
			fs.walk(x, secret)
		}
	case string:
		plain := true
		if secret {
			fs.keyed = append(fs.keyed, v)
			plain = false
		}
		if f := strings.Fields(v); len(f) >= 2 && strings.EqualFold(f[0], "bearer") {
			fs.bearer = append(fs.bearer, strings.Join(f[1:], " "))
			plain = false
		}
		if u, err := url.Parse(v); err == nil && u.User != nil {
			fs.userinfo = append(fs.userinfo, u.User.String())
			if p, ok := u.User.Password(); ok {
				fs.userinfo = append(fs.userinfo, p)
			}
			plain = false
		}
		if plain {
			fs.harmless = append(fs.harmless, v)
		}
	default:
		if secret && v != nil {
			fs.keyed = append(fs.keyed, fmt.Sprint(v))
		}
	}
}

// The backend failed to redact secrets.json: none of its secrets may leave
// the bot, and its harmless values ("token rotation") must still show.
func TestProjectSecretsFixture(t *testing.T) {
	t.Parallel()
	p, err := fixtures.Path("events", "secrets.json")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var ev struct {
		Data struct {
			Call struct {
				Arguments json.RawMessage `json:"arguments"`
			} `json:"call"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	args := ev.Data.Call.Arguments
	var decoded any
	if err := json.Unmarshal(args, &decoded); err != nil {
		t.Fatal(err)
	}
	var fs fixtureStrings
	fs.walk(decoded, false)
	// The fixture must exercise every rule, or this test proves less than
	// it claims.
	if len(fs.keyed) < 3 || len(fs.bearer) == 0 || len(fs.userinfo) < 2 {
		t.Fatalf("fixture holds too few secrets: keyed %d, bearer %d, user-info %d", len(fs.keyed), len(fs.bearer), len(fs.userinfo))
	}
	trap := false
	for _, h := range fs.harmless {
		trap = trap || secretKeyPattern.MatchString(h)
	}
	if !trap {
		t.Fatal("fixture holds no harmless value that names a secret word")
	}

	got, err := Project(args)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkShape(got.JSON); err != nil {
		t.Error(err)
	}
	if !got.Redacted || got.Truncated {
		t.Errorf("Redacted, Truncated = %v, %v, want true, false", got.Redacted, got.Truncated)
	}
	shownStrings := strings.Join(stringsOf(t, got.JSON), "\x00")
	for _, group := range [][]string{fs.keyed, fs.bearer, fs.userinfo} {
		for _, s := range group {
			if bytes.Contains(got.JSON, []byte(s)) || strings.Contains(shownStrings, s) {
				t.Errorf("secret %q appears in the projection %s", s, got.JSON)
			}
		}
	}
	shown := "\x00" + shownStrings + "\x00"
	for _, h := range fs.harmless {
		if !strings.Contains(shown, "\x00"+h+"\x00") {
			t.Errorf("harmless value %q is not shown as is in %s", h, got.JSON)
		}
	}
}

// Every example event's arguments project within the limits.
func TestProjectEventFixtures(t *testing.T) {
	t.Parallel()
	files, err := fixtures.EventFiles()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no event fixtures")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var ev struct {
			Data struct {
				Call *struct {
					Arguments json.RawMessage `json:"arguments"`
				} `json:"call"`
			} `json:"data"`
		}
		if err := json.Unmarshal(b, &ev); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if ev.Data.Call == nil || ev.Data.Call.Arguments == nil {
			continue
		}
		got, err := Project(ev.Data.Call.Arguments)
		if err != nil {
			t.Errorf("%s: Project: %v", f, err)
			continue
		}
		if err := checkShape(got.JSON); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		if err := checkFlagsVisible(got); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// ordered is a decoded JSON object with its key order.
type ordered []member

type member struct {
	Key   string
	Value any
}

// decodeOrdered decodes one value keeping key order: objects become
// ordered, arrays []any, numbers json.Number.
func decodeOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	switch d {
	case '{':
		o := ordered{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			o = append(o, member{k.(string), v})
		}
		_, err := dec.Token()
		return o, err
	case '[':
		a := []any{}
		for dec.More() {
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := dec.Token()
		return a, err
	}
	return nil, fmt.Errorf("unexpected %v", d)
}

func parseOrdered(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := decodeOrdered(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the value")
	}
	return v, nil
}

// stringsOf lists every key and string value of JSON.
func stringsOf(t testing.TB, b []byte) []string {
	t.Helper()
	v, err := parseOrdered(b)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case ordered:
			for _, m := range v {
				out = append(out, m.Key)
				walk(m.Value)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		case string:
			out = append(out, v)
		}
	}
	walk(v)
	return out
}

// cutSuffix matches the marker that ends a cut string.
var cutSuffix = regexp.MustCompile(`…\[cut: [1-9][0-9]* bytes\]$`)

// checkShape asserts the limits every projection keeps, whatever the input:
// valid UTF-8 JSON within ProjectionMaxBytes; collections at most
// ProjectionMaxDepth levels deep with at most ProjectionMaxMembers entries
// (marker included); every string (key or value) at most
// ProjectionMaxString bytes, or a kept part of at most ProjectionMaxString
// bytes followed by the cut marker.
func checkShape(b []byte) error {
	if len(b) > ProjectionMaxBytes {
		return fmt.Errorf("projection is %d bytes, over %d", len(b), ProjectionMaxBytes)
	}
	if !utf8.Valid(b) || !json.Valid(b) {
		return fmt.Errorf("projection is not valid UTF-8 JSON: %q", b)
	}
	v, err := parseOrdered(b)
	if err != nil {
		return err
	}
	var problems []string
	str := func(s string) {
		if loc := cutSuffix.FindStringIndex(s); loc != nil {
			s = s[:loc[0]]
		}
		if len(s) > ProjectionMaxString {
			problems = append(problems, fmt.Sprintf("string keeps %d bytes: %.40q…", len(s), s))
		}
	}
	var walk func(v any, level int)
	walk = func(v any, level int) {
		switch v.(type) {
		case ordered, []any:
			level++
			if level > ProjectionMaxDepth {
				problems = append(problems, fmt.Sprintf("collection at level %d", level))
			}
		}
		switch v := v.(type) {
		case ordered:
			if len(v) > ProjectionMaxMembers {
				problems = append(problems, fmt.Sprintf("object of %d members", len(v)))
			}
			for _, m := range v {
				str(m.Key)
				walk(m.Value, level)
			}
		case []any:
			if len(v) > ProjectionMaxMembers {
				problems = append(problems, fmt.Sprintf("array of %d members", len(v)))
			}
			for _, x := range v {
				walk(x, level)
			}
		case string:
			str(v)
		}
	}
	walk(v, 0)
	if len(problems) > 0 {
		return fmt.Errorf("projection breaks its limits: %s", strings.Join(problems, "; "))
	}
	return nil
}

// truncationVisible reports whether JSON shows one of the cut markers.
func truncationVisible(b []byte) bool {
	return bytes.Contains(b, []byte(cutMarker)) || bytes.Contains(b, []byte(moreMarker)) || bytes.Contains(b, []byte(deepMarker))
}

// checkFlagsVisible asserts that a flag set is backed by a visible marker.
func checkFlagsVisible(p Projection) error {
	if p.Redacted && !bytes.Contains(p.JSON, []byte(redactedMarker)) {
		return fmt.Errorf("Redacted but no %s in %s", redactedMarker, p.JSON)
	}
	if p.Truncated && !truncationVisible(p.JSON) {
		return fmt.Errorf("Truncated but no cut marker in %s", p.JSON)
	}
	return nil
}

// The property test plants secrets in random arguments and checks what
// Project promises. Its alphabets are chosen so that the oracle is exact:
//
//   - filler text never contains 'a', 'x', ':', '=', '[', ']', '@', '_',
//     upper case or U+2028, so it cannot spell a secret-named key, a
//     NAME=value or name: value, "bearer", "basic", a URL, a token prefix
//     (ghp_, xoxb-, sk_live_, AKIA, eyJ…), a PEM block, a marker or a
//     secret; words (keys, users, hosts) have no 'w' either, so no key is
//     "pwd";
//   - secrets are upper case from secretAlphabet, which shares no five
//     letters in a row with anything else the projection may show, so any
//     five-letter piece of a secret in the output is a leak.
const (
	fillerAlphabet = "bcdfghijklmnopqrstuvwyz0123456789 -.,/\"\\\n\t\x01"
	secretAlphabet = "DFGHJKLMNOPQTUVWXYZ"
	leakWindow     = 5
)

var fillerRunes = append([]rune(fillerAlphabet), 'é', 'ß', '€', '中', '😀', 'ž')

// gen makes random arguments (raw) with what Project must show when nothing
// is cut (want), counting the secrets it plants.
type gen struct {
	r                        *rand.Rand
	maxWidth, maxDepth, maxS int
	budget                   int // collections still allowed
	planted                  int
}

func (g *gen) filler(maxBytes int) string {
	n := g.r.IntN(maxBytes + 1)
	var b strings.Builder
	for {
		r := fillerRunes[g.r.IntN(len(fillerRunes))]
		if b.Len()+utf8.RuneLen(r) > n {
			return b.String()
		}
		b.WriteRune(r)
	}
}

// word is a short filler with no space or control: a user name, a host.
func (g *gen) word() string {
	const letters = "bcdfghijklmnopqrstuvxyz"
	b := make([]byte, 1+g.r.IntN(8))
	for i := range b {
		b[i] = letters[g.r.IntN(len(letters))]
	}
	return string(b)
}

func (g *gen) secret() string { return g.secretOf(8 + g.r.IntN(33)) }

// secretOf is a secret of n bytes.
func (g *gen) secretOf(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = secretAlphabet[g.r.IntN(len(secretAlphabet))]
	}
	return string(b)
}

func (g *gen) pick(options ...string) string { return options[g.r.IntN(len(options))] }

// secretKey spells a secret-named key the many ways tools do.
func (g *gen) secretKey() string {
	words := [][]string{{"token"}, {"password"}, {"passwd"}, {"secret"}, {"authorization"}, {"credential"}, {"api", "key"}, {"private", "key"}, {"passphrase"}, {"auth"}, {"pwd"}, {"cookie"}}[g.r.IntN(12)]
	sep := g.pick("", "-", "_", " ")
	var parts []string
	for _, w := range words {
		switch g.r.IntN(3) {
		case 0:
			w = strings.ToUpper(w)
		case 1:
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		parts = append(parts, w)
	}
	return g.pick("", "x-", "client_", "access-", "db ") + strings.Join(parts, sep) + g.pick("", "s", "_id", "-v2")
}

// secretValue is any JSON value made of secrets.
func (g *gen) secretValue() any {
	switch g.r.IntN(4) {
	case 0:
		return ordered{{g.word(), g.secret()}, {g.word(), []any{g.secret()}}}
	case 1:
		return []any{g.secret(), g.secret()}
	case 2:
		return json.Number("4" + fmt.Sprint(g.r.Uint32()))
	}
	return g.secret()
}

// planted returns a string carrying a secret and the string Project must
// show for it as a value.
func (g *gen) plantedString() (raw, want string) {
	g.planted++
	scheme := g.pick("Bearer", "bearer", "BEARER", "Basic", "basic", "BASIC")
	// in places a shape inside filler text, which the shape's own spaces
	// keep apart from it.
	in := func(raw, want string) (string, string) {
		pre, post := g.filler(g.maxS/2), g.filler(g.maxS/2)
		return pre + " " + raw + " " + post, pre + " " + want + " " + post
	}
	switch g.r.IntN(16) {
	case 0: // the whole value is a credential
		return scheme + " " + g.secret(), scheme + " " + redactedMarker
	case 1: // a Bearer credential inside text
		s := g.pick("Bearer", "bearer", "BEARER", "Bearer:", "bearer\n")
		sec := g.secret() + "9" // looks like a credential even after a line break
		return in(s+" "+sec, s+" "+redactedMarker)
	case 2: // a Basic credential inside text: base64-looking
		s := g.pick("Basic", "basic")
		return in(s+" "+g.secret()+"9=", s+" "+redactedMarker)
	case 3: // a URL with user-info as the whole value
		u := g.pick("https", "http", "postgres")
		tail := g.word() + ".example/" + g.word()
		return u + "://" + g.word() + ":" + g.secret() + "@" + tail, u + "://" + redactedMarker + "@" + tail
	case 4: // a URL with user-info inside text, its password holding '/', '?' or '#'
		tail := g.word() + ".example/" + g.word()
		pass := g.secret() + g.pick("", "/", "?", "#") + g.secret()
		return in("https://"+g.word()+":"+pass+"@"+tail, "https://"+redactedMarker+"@"+tail)
	case 5: // NAME=value in a command line
		n := g.pick("GITHUB_TOKEN", "DB_PASSWORD", "api_key", "auth", "pwd", "session_cookie", "--password")
		return in(n+"="+g.secret(), n+"="+redactedMarker)
	case 6: // a query parameter
		u := "https://" + g.word() + ".example/" + g.word() + "?" + g.word() + "=" + g.word() + "&"
		n := g.pick("token", "access_token", "api_key", "client_secret")
		rest := "&" + g.word() + "=" + g.word()
		return in(u+n+"="+g.secret()+rest, u+n+"="+redactedMarker+rest)
	case 7: // a header inside a command line
		h := [][2]string{{"X-Api-Key: ", "X-Api-Key: "}, {"Cookie: sid=", "Cookie: "}, {"Authorization: token ", "Authorization: token "}, {"Authorization: Bot ", "Authorization: Bot "}}[g.r.IntN(4)]
		return in("curl -H '"+h[0]+g.secret()+"'", "curl -H '"+h[1]+redactedMarker+"'")
	case 8: // name: value starting the value runs to the end of the line
		n := g.pick("password", "client_secret", "auth", "Cookie", "  api_key", "+ token")
		post := g.filler(g.maxS / 2)
		return n + ": " + g.secret() + " " + g.secret() + "\n" + post, n + ": " + redactedMarker + "\n" + post
	case 9: // a bare token known by its prefix
		p := g.pick("ghp_", "gho_", "github_pat_", "xoxb-", "xoxp-", "xapp-", "sk_live_", "rk_test_", "AIza")
		return in(p+g.secretOf(30+g.r.IntN(11)), p+redactedMarker)
	case 10: // an AWS access key id
		p := g.pick("AKIA", "ASIA")
		return in(p+g.secretOf(16), p+redactedMarker)
	case 11: // a JWT
		return in("eyJ"+g.secret()+"."+g.secret()+"."+g.secret(), redactedMarker)
	case 12: // a Slack webhook
		return in("https://hooks.slack.com/services/T"+g.secret()+"/B"+g.secret()+"/"+g.secret(), "https://hooks.slack.com/services/"+redactedMarker)
	case 13: // a PEM private key
		const begin, end = "-----BEGIN PRIVATE KEY-----\n", "\n-----END PRIVATE KEY-----"
		return in(begin+g.secret()+"\n"+g.secret()+end, begin+redactedMarker+end)
	case 14: // JSON inside a string
		n := g.pick("password", "token", "auth")
		return in(`{"`+n+`":"`+g.secret()+`"}`, `{"`+n+`":"`+redactedMarker+`"}`)
	}
	// a URL with user-info inside text
	tail := g.word() + ".example/" + g.word()
	return in("https://"+g.word()+":"+g.secret()+"@"+tail, "https://"+redactedMarker+"@"+tail)
}

func (g *gen) number() json.Number {
	switch g.r.IntN(6) {
	case 0:
		return json.Number(fmt.Sprint(g.r.Int64() - g.r.Int64()))
	case 1:
		return json.Number(g.pick("-0", "1.50", "1e400", "1E-7", "0.0000001"))
	case 2:
		if g.r.IntN(20) == 0 {
			return json.Number(strings.Repeat("7", 250+g.r.IntN(20))) // may cross the string bound
		}
	}
	return json.Number(fmt.Sprint(g.r.Float64() * 1000))
}

// value returns a random value and what Project must show for it if
// nothing is cut. A collection opened here is at nesting level.
func (g *gen) value(level int) (raw, want any) {
	if level <= g.maxDepth && g.budget > 0 && g.r.IntN(3) == 0 {
		return g.collection(level, g.r.IntN(2) == 0)
	}
	switch g.r.IntN(8) {
	case 0, 1:
		rs, ws := g.plantedString()
		return rs, ws
	case 2:
		n := g.number()
		return n, n
	case 3:
		b := g.r.IntN(2) == 0
		return b, b
	case 4:
		return nil, nil
	}
	s := g.filler(g.maxS)
	return s, s
}

// collection returns a random array or object at nesting level, into
// whose objects secret-named keys are planted.
func (g *gen) collection(level int, object bool) (raw, want any) {
	g.budget--
	width := g.r.IntN(g.maxWidth + 1)
	if !object {
		r, w := []any{}, []any{}
		for range width {
			rv, wv := g.value(level + 1)
			r, w = append(r, rv), append(w, wv)
		}
		return r, w
	}
	r, w := ordered{}, ordered{}
	for range width {
		if g.r.IntN(8) == 0 {
			g.planted++
			k := g.secretKey()
			r, w = append(r, member{k, g.secretValue()}), append(w, member{k, redactedMarker})
			continue
		}
		k := g.word()
		rv, wv := g.value(level + 1)
		r, w = append(r, member{k, rv}), append(w, member{k, wv})
	}
	return r, w
}

// marshal writes v as compact JSON in its order, with the same escapes as
// Project (the filler has no U+2028, which encoding/json escapes).
func marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	var write func(any)
	write = func(v any) {
		switch v := v.(type) {
		case ordered:
			buf.WriteByte('{')
			for i, m := range v {
				if i > 0 {
					buf.WriteByte(',')
				}
				write(m.Key)
				buf.WriteByte(':')
				write(m.Value)
			}
			buf.WriteByte('}')
		case []any:
			buf.WriteByte('[')
			for i, x := range v {
				if i > 0 {
					buf.WriteByte(',')
				}
				write(x)
			}
			buf.WriteByte(']')
		default:
			if err := enc.Encode(v); err != nil {
				panic(err)
			}
			buf.Truncate(buf.Len() - 1) // Encode's new line
		}
	}
	write(v)
	return buf.Bytes()
}

// overLimits reports whether showing v needs a cut other than the total
// size: a string or number over ProjectionMaxString, a collection over
// ProjectionMaxMembers, or nesting past ProjectionMaxDepth.
func overLimits(v any, level int) bool {
	switch v := v.(type) {
	case ordered:
		if level+1 > ProjectionMaxDepth || len(v) > ProjectionMaxMembers {
			return true
		}
		for _, m := range v {
			if len(m.Key) > ProjectionMaxString || overLimits(m.Value, level+1) {
				return true
			}
		}
	case []any:
		if level+1 > ProjectionMaxDepth || len(v) > ProjectionMaxMembers {
			return true
		}
		for _, x := range v {
			if overLimits(x, level+1) {
				return true
			}
		}
	case string:
		return len(v) > ProjectionMaxString
	case json.Number:
		return len(v) > ProjectionMaxString
	}
	return false
}

// leaked returns a run of leakWindow or more secretAlphabet bytes in out:
// by the choice of alphabets only a planted secret can make one.
func leaked(out []byte) string {
	run := 0
	for i, c := range out {
		if strings.IndexByte(secretAlphabet, c) < 0 {
			run = 0
			continue
		}
		if run++; run >= leakWindow {
			return string(out[i+1-run : i+1])
		}
	}
	return ""
}

func TestProjectProperties(t *testing.T) {
	t.Parallel()
	cases := 2000
	if testing.Short() {
		cases = 300
	}
	r := rand.New(rand.NewPCG(8785, 4096))
	var exact, cut, redacted int
	for i := range cases {
		g := &gen{r: r, maxWidth: 60, maxDepth: 10, maxS: []int{10, 100, 600}[r.IntN(3)], budget: 1 + r.IntN(24)}
		if i%3 == 0 { // small arguments, to exercise the exact oracle often
			g.maxWidth, g.maxDepth, g.maxS, g.budget = 5, 5, 60, 1+r.IntN(12)
		}
		var raw, want any
		if r.IntN(20) == 0 {
			raw, want = g.value(1)
		} else { // arguments are nearly always an object
			raw, want = g.collection(1, true)
		}
		in := marshal(raw)
		if r.IntN(4) == 0 {
			var ind bytes.Buffer
			if err := json.Indent(&ind, in, "", "  "); err != nil {
				t.Fatal(err)
			}
			in = ind.Bytes()
		}
		got, err := Project(in)
		if err != nil {
			t.Fatalf("case %d: Project: %v\ninput %s", i, err, in)
		}
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("case %d: %s\ninput  %.2000s\noutput %s", i, fmt.Sprintf(format, args...), in, got.JSON)
		}
		if s := leaked(got.JSON); s != "" {
			fail("secret piece %q leaked", s)
		}
		if err := checkShape(got.JSON); err != nil {
			fail("%v", err)
		}
		// Flags are exact: each is true exactly when its marker shows.
		if vis := bytes.Contains(got.JSON, []byte(redactedMarker)); got.Redacted != vis {
			fail("Redacted = %v, but [redacted] visible = %v", got.Redacted, vis)
		}
		if vis := truncationVisible(got.JSON); got.Truncated != vis {
			fail("Truncated = %v, but a cut marker visible = %v", got.Truncated, vis)
		}
		// Truncated is exactly "the input needed a cut".
		needsCut := overLimits(want, 0) || len(marshal(want)) > ProjectionMaxBytes
		if got.Truncated != needsCut {
			fail("Truncated = %v, want %v", got.Truncated, needsCut)
		}
		if g.planted == 0 && got.Redacted {
			fail("Redacted with nothing planted")
		}
		if !needsCut {
			// Nothing cut: the projection is exactly the redacted input, in
			// its key order, and Redacted is exactly "something planted".
			exact++
			gotV, err := parseOrdered(got.JSON)
			if err != nil {
				fail("%v", err)
			}
			if diff := cmp.Diff(want, gotV); diff != "" {
				fail("projection differs from the redacted input (-want +got):\n%s", diff)
			}
			if got.Redacted != (g.planted > 0) {
				fail("Redacted = %v with %d planted", got.Redacted, g.planted)
			}
		}
		if got.Truncated {
			cut++
		}
		if got.Redacted {
			redacted++
		}
	}
	t.Logf("%d cases: %d exact, %d truncated, %d redacted", cases, exact, cut, redacted)
	// A generator that drifted into only one kind of case would prove little.
	for name, n := range map[string]int{"exact": exact, "truncated": cut, "redacted": redacted} {
		if n < cases/5 {
			t.Errorf("only %d %s cases of %d", n, name, cases)
		}
	}
}

// benchArguments is 2 KB of typical arguments: headers with secrets,
// a list, free text with a URL, and some nesting.
func benchArguments() []byte {
	var b strings.Builder
	b.WriteString(`{"method":"POST","url":"https://deploy:pw@ci.acme.example/hooks/run","headers":{"Authorization":"Bearer abc.def.ghi","Content-Type":"application/json","X-Request-Id":"r-123"},"to":[`)
	for i := range 20 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"user%d@acme.example"`, i)
	}
	b.WriteString(`],"body":{"subject":"Quarterly numbers","text":"`)
	b.WriteString(strings.Repeat("Please review the attached figures before Friday. ", 14))
	b.WriteString(`","meta":{"priority":2,"labels":["finance","q3"],"retry":{"max":3,"backoff":1.5}}},"notes":[`)
	for i := range 8 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"n":%d,"text":"step %d: check the totals against the ledger"}`, i, i)
	}
	b.WriteString(`],"dry_run":false}`)
	return []byte(b.String())
}

func BenchmarkProject(b *testing.B) {
	in := benchArguments()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Project(in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkProjectLarge shows the cost stays linear for arguments near the
// 1 MiB body limit: past the size bound members are skipped, not built.
func BenchmarkProjectLarge(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"items":[`)
	for i := range 4000 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"id":%d,"name":"item %d","tags":["a","b"],"token":"t-%d","deep":[[[[[[%d]]]]]]}`, i, i, i, i)
	}
	sb.WriteString(`],"blob":"` + strings.Repeat("x", 600<<10) + `"}`)
	in := []byte(sb.String())
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Project(in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRedactText(b *testing.B) {
	s := strings.Repeat("Please review the attached figures before Friday. ", 40)
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		RedactText(s)
	}
}

// TestWidestNameMatchesNameBefore: widestName, which reads each run of
// name bytes once, finds the names nameBefore finds, at every '=' and ':'
// of a text in the order RedactText meets them.
func TestWidestNameMatchesNameBefore(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(24, 7))
	const alphabet = "a:=/ \t\"@$.x\u00e4"
	for n := 0; n < 2000; n++ {
		b := make([]byte, rng.IntN(400))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		s := string(b)
		tr := textRedactor{s: s}
		for i := 0; i < len(s); i++ {
			if s[i] != '=' && s[i] != ':' {
				continue
			}
			colon := s[i] == ':'
			got, gok := tr.widestName(i, colon)
			want, wok := nameBefore(s, i, colon, nameWidest)
			if got != want || gok != wok {
				t.Fatalf("in %q at %d: widestName = %+v, %v; nameBefore = %+v, %v", s, i, got, gok, want, wok)
			}
		}
	}
}
