package approval

import (
	"encoding/json"
	"strings"
	"testing"
)

// secretShapes are real-world shapes of secrets in text, and ordinary text
// that looks close to them, with what RedactText must make of each.
var secretShapes = []struct {
	name string
	in   string
	want string
}{
	// Query and form parameters.
	{"query token", "GET https://api.example/v1/items?token=abc123&page=2", "GET https://api.example/v1/items?token=[redacted]&page=2"},
	{"query access_token", "open https://graph.example/me?access_token=EAAGm0PX4ZCpsBA now", "open https://graph.example/me?access_token=[redacted] now"},
	{"query api_key, fragment included", "https://maps.example/geo?q=x&api_key=k-9f8e7d#top", "https://maps.example/geo?q=x&api_key=[redacted]"},
	{"query auth", "https://x.example/feed?auth=s3cr3t", "https://x.example/feed?auth=[redacted]"},
	{"query in a Slack link", "<https://x.example/a?token=abc|the report>", "<https://x.example/a?token=[redacted]|the report>"},
	{"form-encoded body", "grant_type=client_credentials&client_id=app&client_secret=s3cr3t&scope=read", "grant_type=client_credentials&client_id=app&client_secret=[redacted]&scope=read"},
	{"form-encoded password", "username=ada&password=hunter2", "username=ada&password=[redacted]"},

	// Environment variables and flags, in a command line or a patch.
	{"env var before a command", "GITHUB_TOKEN=ghp_16C7e42F292c6912E7710c838347Ae178B4a gh release create v1", "GITHUB_TOKEN=[redacted] gh release create v1"},
	{"exported, double-quoted", `export DB_PASSWORD="correct horse"; make migrate`, `export DB_PASSWORD="[redacted]"; make migrate`},
	{"single-quoted", "DB_PASSWORD='p@ss w0rd' ./run", "DB_PASSWORD='[redacted]' ./run"},
	{"patch of a .env file", "+DB_PASSWORD=hunter2\n+DB_HOST=db.internal\n", "+DB_PASSWORD=[redacted]\n+DB_HOST=db.internal\n"},
	{"flag", "mysql --user=ada --password=hunter2 -h db", "mysql --user=ada --password=[redacted] -h db"},
	{"pwd flag", "mysql --pwd=hunter2", "mysql --pwd=[redacted]"},
	{"npm auth token line", "//registry.npmjs.org/:_authToken=npm_abcdef123456", "//registry.npmjs.org/:_authToken=[redacted]"},
	{"TOML with spaces and quotes", `password = "hunter2"`, `password = "[redacted]"`},
	{"INI credentials file", "[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n", "[default]\naws_access_key_id = AKIA[redacted]\naws_secret_access_key = [redacted]\n"},
	{"in a JSON string in text", `{"env":"API_KEY=k-123","n":1}`, `{"env":"API_KEY=[redacted]","n":1}`},

	// Headers and YAML: name: value.
	{"GitHub's token scheme", "Authorization: token ghp_16C7e42F292c6912E7710c838347Ae178B4a", "Authorization: token [redacted]"},
	{"token scheme in curl", `curl -H "Authorization: token gho_16C7e42F292c6912E7710c838347Ae178B4a" https://api.github.com/user`, `curl -H "Authorization: token [redacted]" https://api.github.com/user`},
	{"Discord's Bot scheme", "Authorization: Bot MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs", "Authorization: Bot [redacted]"},
	{"Digest keeps the scheme, line start", "Authorization: Digest username=\"ada\", response=\"6629fae4\"\nAccept: */*", "Authorization: Digest [redacted]\nAccept: */*"},
	{"unknown scheme: all of it", "Proxy-Authorization: hunter2 extra", "Proxy-Authorization: [redacted]"},
	{"api key header in curl", "curl -H 'X-Api-Key: k-123' https://x.example", "curl -H 'X-Api-Key: [redacted]' https://x.example"},
	{"cookie header", "Cookie: session=abc; csrftoken=def\nAccept: */*", "Cookie: [redacted]\nAccept: */*"},
	{"cookie header in curl", "curl -H 'Cookie: sid=abc; theme=dark' https://x.example", "curl -H 'Cookie: [redacted]' https://x.example"},
	{"set-cookie", "Set-Cookie: sid=abc; Path=/; HttpOnly", "Set-Cookie: [redacted]"},
	{"YAML line", "db:\n  password: correct horse battery staple\n  user: ada\n", "db:\n  password: [redacted]\n  user: ada\n"},
	{"YAML in a patch", "+  api_key: k-123\n-  api_key: k-000\n", "+  api_key: [redacted]\n-  api_key: [redacted]\n"},
	{"YAML list item", "- auth: s3cr3t", "- auth: [redacted]"},
	{"mid-line name: one word", "the config sets password: hunter2 for now", "the config sets password: [redacted] for now"},

	// JSON or Python objects inside a string.
	{"JSON-encoded object", `{"user":"ada","password":"hunter2"}`, `{"user":"ada","password":"[redacted]"}`},
	{"JSON with spaces", `{"password": "hunter 2", "user": "ada"}`, `{"password": "[redacted]", "user": "ada"}`},
	{"JSON number", `{"pin":1,"api_key":12345,"n":2}`, `{"pin":1,"api_key":[redacted],"n":2}`},
	{"JSON nested object", `{"credentials": {"user": "a", "key": "b"}, "ok": true}`, `{"credentials": [redacted], "ok": true}`},
	{"JSON escaped quote in the value", `{"token":"a\"b","n":1}`, `{"token":"[redacted]","n":1}`},
	{"JSON encoded twice", `{\"token\":\"abc\",\"n\":1}`, `{\"token\":\"[redacted]\",\"n\":1}`},
	{"Python dict", `{'password': 'hunter2', 'user': 'ada'}`, `{'password': '[redacted]', 'user': 'ada'}`},
	{"JSON key with a space", `{"db password":"x1"}`, `{"db password":"[redacted]"}`},

	// Bearer and Basic.
	{"bearer colon", "use Bearer:abc123", "use Bearer:[redacted]"},
	{"bearer colon space", "use bearer: abc123", "use bearer: [redacted]"},
	{"bearer then a new line", "Authorization: Bearer\n  abc123def456", "Authorization: Bearer\n  [redacted]"},
	{"bearer then CRLF", "use Bearer\r\nabc123def456", "use Bearer\r\n[redacted]"},
	{"sentence ending in Bearer", "the token type is Bearer\nNext we call", "the token type is Bearer\nNext we call"},
	{"value starting with a plan name", "Basic\nfeatures only", "Basic\nfeatures only"},
	{"value starting with a credential on the next line", "Bearer\nabc123def456", "Bearer\n[redacted]"},
	{"bearer before a flag", "curl Bearer -H x", "curl Bearer -H x"},
	{"bearer before a header name", "a Bearer Authorization: token abc", "a Bearer Authorization: token [redacted]"},
	{"scheme word as the whole value", "Authorization: Bearer", "Authorization: [redacted]"},

	// URL credentials.
	{"password with a slash", "clone https://deploy:pa/ss@ci.example/x.git", "clone https://[redacted]@ci.example/x.git"},
	{"password with a hash", "https://u:p#ss@h.example", "https://[redacted]@h.example"},
	{"password with a question mark", "postgres://app:p?ss@db.example:5432/app", "postgres://[redacted]@db.example:5432/app"},
	{"password with a slash and an at sign in the path", "https://u:a/b@host.example/users/@me", "https://[redacted]@host.example/users/@me"},
	{"port then an at sign in the path", "https://host.example:8443/users/@me", "https://host.example:8443/users/@me"},
	{"localhost port", "http://localhost:3000/@ada/repo", "http://localhost:3000/@ada/repo"},
	{"IPv6 host", "http://[::1]:8080/a@b", "http://[::1]:8080/a@b"},
	{"token as user-info", "https://x-access-token:ghs_16C7e42F292c6912E7710c838347Ae1@github.com/o/r", "https://[redacted]@github.com/o/r"},

	// Webhooks.
	{"Slack webhook", "curl -X POST https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX -d @m.json", "curl -X POST https://hooks.slack.com/services/[redacted] -d @m.json"},
	{"Slack webhook without a scheme", "post to hooks.slack.com/services/T0AB/B0CD/abcdef.", "post to hooks.slack.com/services/[redacted]"},
	{"Slack workflow webhook", "https://hooks.slack.com/workflows/T01/A02/345/abc", "https://hooks.slack.com/workflows/[redacted]"},
	{"Discord webhook", "https://discord.com/api/webhooks/123456789012345678/abcDEF-ghi_jkl?wait=true", "https://discord.com/api/webhooks/[redacted]?wait=true"},
	{"Discord webhook with a version", "https://discordapp.com/api/v10/webhooks/1234/abc", "https://discordapp.com/api/v10/webhooks/[redacted]"},
	{"another Slack host", "https://api.slack.com/services/T0/B0/x", "https://api.slack.com/services/T0/B0/x"},
	{"not Slack's host", "https://nothooks.slack.com/services/T0/B0/x", "https://nothooks.slack.com/services/T0/B0/x"},

	// Bare tokens by prefix, and JWTs.
	{"GitHub personal token", "use ghp_16C7e42F292c6912E7710c838347Ae178B4a here", "use ghp_[redacted] here"},
	{"GitHub server token", "ghs_16C7e42F292c6912E7710c838347Ae178B4a", "ghs_[redacted]"},
	{"GitHub user and refresh tokens", "ghu_16C7e42F292c6912E7710c838347Ae178B4a, ghr_1B4a2e77838347a7E420ce178F2E7c6912E16C", "ghu_[redacted], ghr_[redacted]"},
	{"GitHub fine-grained token", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUV", "github_pat_[redacted]"},
	{"Slack bot token", "token xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy", "token xoxb-[redacted]"},
	{"Slack user, app, refresh, legacy tokens", "xoxp-1234-5678-abcdef xoxa-2-abcdefghij xoxr-1-abcdefghij xoxs-1-abcdefghij", "xoxp-[redacted] xoxa-[redacted] xoxr-[redacted] xoxs-[redacted]"},
	{"Slack app token", "xapp-1-A0123456789-1234567890123-abcdef0123", "xapp-[redacted]"},
	{"Slack rotating token", "xoxe.xoxp-1-Mi0yLTEyMzQ1Njc4", "xoxe.xoxp-[redacted]"},
	{"Stripe keys", "sk_live_4eC39HqLyjWDarjtT1zdp7dc rk_live_51H8abcdEFGH sk_test_4eC39HqLyjWDarjtT1zdp7dc rk_test_abcdefghij", "sk_live_[redacted] rk_live_[redacted] sk_test_[redacted] rk_test_[redacted]"},
	{"Stripe publishable key is public", "pk_live_51H8abcdEFGHijkl", "pk_live_51H8abcdEFGHijkl"},
	{"AWS access key ids", "aws configure set aws_access_key_id AKIAIOSFODNN7EXAMPLE; ASIAY34FZKBOKMUTVV7A", "aws configure set aws_access_key_id AKIA[redacted]; ASIA[redacted]"},
	{"Google API key", "key=AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe", "key=AIza[redacted]"},
	{"bare JWT", "session eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U expired", "session [redacted] expired"},
	{"unsigned JWT", "eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.", "[redacted]"},
	{"JWT then a full stop", "it was eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln.", "it was [redacted]."},

	// PEM private keys.
	{"PEM RSA key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nabcd/ef+=\n-----END RSA PRIVATE KEY-----\n", "-----BEGIN RSA PRIVATE KEY-----\n[redacted]\n-----END RSA PRIVATE KEY-----\n"},
	{"PEM OpenSSH key in a patch", "+-----BEGIN OPENSSH PRIVATE KEY-----\n+b3BlbnNzaC1rZXktdjEA\n+AAAABG5vbmU=\n+-----END OPENSSH PRIVATE KEY-----\n", "+-----BEGIN OPENSSH PRIVATE KEY-----\n+[redacted]\n+-----END OPENSSH PRIVATE KEY-----\n"},
	{"PEM key escaped in JSON text", `{"key":"-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n"}`, `{"key":"-----BEGIN PRIVATE KEY-----[redacted]-----END PRIVATE KEY-----\n"}`},
	{"PEM key without its end", "-----BEGIN EC PRIVATE KEY-----MIIE", "-----BEGIN EC PRIVATE KEY-----[redacted]"},
	{"PEM certificate is public", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"},
	{"PEM public key is public", "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----", "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----"},

	// Broad on purpose, as for keys (see SensitiveKey).
	{"max_tokens", "max_tokens=1024", "max_tokens=[redacted]"},
	{"PWD in an environment dump", "PWD=/home/ada", "PWD=[redacted]"},

	// Ordinary text, shown as is.
	{"words alone", "rotate the token on Monday; the password reset flow; auth is down", "rotate the token on Monday; the password reset flow; auth is down"},
	{"token rotation", "token rotation", "token rotation"},
	{"commit SHA", "commit 3f786850e387550fdab836ed7e6dc881de23001b by author Ada", "commit 3f786850e387550fdab836ed7e6dc881de23001b by author Ada"},
	{"UUID", "request 123e4567-e89b-12d3-a456-426614174000 done", "request 123e4567-e89b-12d3-a456-426614174000 done"},
	{"author", "author: Ada Lovelace\nauthor=ada", "author: Ada Lovelace\nauthor=ada"},
	{"oauth_scope", `{"oauth_scope": "repo", "OAuth": "on"}`, `{"oauth_scope": "repo", "OAuth": "on"}`},
	{"a note about the token", "Note: the token expires at 12:30", "Note: the token expires at 12:30"},
	{"scope without a space", "scopes token:read auth:login", "scopes token:read auth:login"},
	{"assignment in code", "if ok { token = getToken() }", "if ok { token = getToken() }"},
	{"comparison in code", `if token == "" || password != want {`, `if token == "" || password != want {`},
	{"Go short declaration", `token := os.Getenv("GITHUB_TOKEN")`, `token := os.Getenv("GITHUB_TOKEN")`},
	{"empty value", "TOKEN= make", "TOKEN= make"},
	{"empty value at the end", "password:", "password:"},
	{"plain URL", "https://example.com/path?page=2&sort=asc#top", "https://example.com/path?page=2&sort=asc#top"},
	{"prefixes alone", "ghp_ xoxb- sk_live_ AKIA AIza eyJ github_pat_", "ghp_ xoxb- sk_live_ AKIA AIza eyJ github_pat_"},
	{"short after a prefix", "ghp_abc xoxb-123 sk_live_abc", "ghp_abc xoxb-123 sk_live_abc"},
	{"AWS-like but longer", "AKIAIOSFODNN7EXAMPLEX", "AKIAIOSFODNN7EXAMPLEX"},
	{"prefix inside a word", "myghp_16C7e42F292c6912E7710c838347Ae178B4a", "myghp_16C7e42F292c6912E7710c838347Ae178B4a"},
	{"ASIA in prose", "ASIAN markets opened", "ASIAN markets opened"},
	{"eyJ without dots", "eyJhbGciOiJIUzI1NiJ9", "eyJhbGciOiJIUzI1NiJ9"},
}

func TestRedactSecretShapes(t *testing.T) {
	t.Parallel()
	for _, tt := range secretShapes {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := RedactText(tt.in)
			if got != tt.want {
				t.Errorf("RedactText(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if again := RedactText(got); again != got {
				t.Errorf("RedactText is not idempotent: %q then %q", got, again)
			}
			// As a value in arguments the same rules hold (none of these
			// starts with a scheme, which would redact the whole value),
			// and Redacted says whether anything was.
			raw, err := json.Marshal(map[string]string{"note": tt.in})
			if err != nil {
				t.Fatal(err)
			}
			p, err := Project(raw)
			if err != nil {
				t.Fatal(err)
			}
			var shown map[string]string
			if err := json.Unmarshal(p.JSON, &shown); err != nil {
				t.Fatal(err)
			}
			if shown["note"] != tt.want {
				t.Errorf("Project shows %q, want %q", shown["note"], tt.want)
			}
			if p.Redacted != (tt.want != tt.in) {
				t.Errorf("Redacted = %v, want %v", p.Redacted, tt.want != tt.in)
			}
		})
	}
}

// TestProjectSecretKeys: the whole-word keys lose their values whatever
// the type, their near misses keep them, and secrets inside the values of
// harmless keys are redacted by the text rules.
func TestProjectSecretKeys(t *testing.T) {
	t.Parallel()
	in := `{"session_cookie":"s1","Cookie":"c1","pwd":"p1","auth":{"user":"u1"},"author":"ada","oauth_scope":"repo",` +
		`"body":"{\"password\":\"p2\"}","form":"a=1&client_secret=s2","cmd":"GITHUB_TOKEN=t1 make","hook":"https://hooks.slack.com/services/T1/B1/x1",` +
		`"note":"token rotation"}`
	want := `{"session_cookie":"[redacted]","Cookie":"[redacted]","pwd":"[redacted]","auth":"[redacted]","author":"ada","oauth_scope":"repo",` +
		`"body":"{\"password\":\"[redacted]\"}","form":"a=1&client_secret=[redacted]","cmd":"GITHUB_TOKEN=[redacted] make","hook":"https://hooks.slack.com/services/[redacted]",` +
		`"note":"token rotation"}`
	p, err := Project([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if string(p.JSON) != want || !p.Redacted || p.Truncated {
		t.Errorf("Project:\n got %s (redacted %v, truncated %v)\nwant %s", p.JSON, p.Redacted, p.Truncated, want)
	}
	out, redacted, err := Reveal([]byte(in))
	if err != nil || !redacted {
		t.Fatalf("Reveal: %v, redacted %v", err, redacted)
	}
	for _, secret := range []string{"s1", "c1", "p1", "u1", "p2", "s2", "t1", "x1"} {
		if strings.Contains(string(out), `"`+secret+`"`) || strings.Contains(string(out), secret+`\"`) || strings.Contains(string(out), "="+secret) || strings.Contains(string(out), "/"+secret) {
			t.Errorf("Reveal shows %q:\n%s", secret, out)
		}
	}
	for _, keep := range []string{`"author": "ada"`, `"oauth_scope": "repo"`, `"note": "token rotation"`} {
		if !strings.Contains(string(out), keep) {
			t.Errorf("Reveal lost %s:\n%s", keep, out)
		}
	}
}
