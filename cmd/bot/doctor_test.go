package main

import (
	"approvalsbot/config"
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/google/go-cmp/cmp"

	"approvalsbot/adapters/backend/backendtest"
	"approvalsbot/adapters/backend/standin"
	"approvalsbot/adapters/discord/discordtest"
	"approvalsbot/store/sqlite"
)

// closedAddr is a loopback address nothing listens on: connecting to it
// is refused, as to a server that is down.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// migratedStore makes the SQLite store a bot would have left.
func migratedStore(t *testing.T, path string) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), sqlite.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// doctorEnv is the environment of the doctor tests' configurations.
var doctorEnv = map[string]string{
	"BOT_EVENTS_SECRET": e2eEventsSecret, "BOT_CALLS_SECRET": e2eCallsSecret,
	"SLACK_BOT_TOKEN": "xoxb-doctor", "SLACK_SIGNING_SECRET": "doctor-signing-secret",
	"DISCORD_BOT_TOKEN": "doctor-discord-token",
}

// runDoctor writes the configuration and runs `bot doctor` on it.
func runDoctor(t *testing.T, dir, cfg string) (code int, stdout, stderr string) {
	t.Helper()
	path := filepath.Join(dir, "bot.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code = run(context.Background(), []string{"doctor", "--config", path}, &out, &errOut, lookup(doctorEnv))
	return code, out.String(), errOut.String()
}

// Everything unreachable is reported as unreachable, each where it is
// configured (the Discord line names api_url's host, not discord.com), in
// one style, and counted once a line.
func TestDoctorReportsNetworkFailuresAsSuch(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	migratedStore(t, filepath.Join(dir, "bot.db"))
	fake := backendtest.New(t, standin.Options{Secrets: [][]byte{[]byte(e2eCallsSecret)}})
	down := closedAddr(t)
	cfg := `store: {dsn: "file:` + filepath.Join(dir, "bot.db") + `"}
backend:
  url: "` + fake.URL() + `"
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
slack:
  bot_token: "${SLACK_BOT_TOKEN}"
  signing_secret: "${SLACK_SIGNING_SECRET}"
  api_url: "http://` + down + `/api/"
discord:
  bot_token: "${DISCORD_BOT_TOKEN}"
  application_id: "1100000000000000000"
  api_url: "http://` + down + `/api/v10/"
smtp:
  addr: "` + down + `"
  tls: none
  from: "Approvals <approvals@acme.example>"
tenants:
  acme:
    post: [slack:C0APPROVALS, discord:channel:112233445566778899]
`
	code, out, errOut := runDoctor(t, dir, cfg)
	refused := "dial tcp " + down + ": connect: connection refused"
	want := []string{
		"config: " + filepath.Join(dir, "bot.yaml") + " is valid",
		"listen: :8080 serves everything: interactions, the decision page, health, and the job backend's events and metrics " +
			"(in production, set listen_private to keep those two off the public listener)",
		"store: sqlite " + filepath.Join(dir, "bot.db") + " answers",
		"backend: " + fake.URL() + " answers signed calls as the protocol says (a look-up of an approval it does not hold: not_found)",
		"mail: PROBLEM: cannot reach " + down + ": " + refused + " (a network failure: check smtp.addr, DNS and firewall)",
		"slack: PROBLEM: cannot reach Slack's Web API at http://" + down + "/api/: " + refused +
			" (a network failure, not a token problem: check DNS, a firewall or proxy, and slack.api_url)",
		"discord: PROBLEM: cannot reach Discord's API at http://" + down + ": " + refused +
			" (a network failure, not a token problem: check DNS, a firewall or proxy, and discord.api_url)",
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(want)+1 || !strings.HasPrefix(lines[len(want)], "discord: invite URL ") {
		t.Fatalf("doctor wrote:\n%s", out)
	}
	if diff := cmp.Diff(want, lines[:len(want)]); diff != "" {
		t.Errorf("doctor (-want +got):\n%s", diff)
	}
	if code != 1 || errOut != "bot doctor: 3 problems found\n" {
		t.Errorf("exit %d, stderr %q; want 1 and the count of PROBLEM lines", code, errOut)
	}
	if strings.Contains(out, "discord.com/…") || strings.Contains(out, "token does not work") {
		t.Errorf("an outage was blamed on a token, or on discord.com:\n%s", out)
	}
	if len(fake.Lookups()) != 1 || !fake.Lookups()[0].SignatureOK {
		t.Errorf("the backend got %+v, want one signed probe", fake.Lookups())
	}
}

// The backend's line says what is wrong with it: nothing there, the
// wrong secret, or something that does not speak the protocol.
func TestDoctorChecksTheBackend(t *testing.T) {
	t.Parallel()
	otherSecret := backendtest.New(t, standin.Options{Secrets: [][]byte{[]byte("not-the-bot-calls-secret-0123456789")}})
	notABackend := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(notABackend.Close)
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
	}))
	t.Cleanup(failing.Close)
	down := "http://" + closedAddr(t)
	for _, c := range []struct{ name, url, want string }{
		{"nothing listens", down, "backend: PROBLEM: cannot reach " + down + ": dial tcp " + strings.TrimPrefix(down, "http://") +
			": connect: connection refused (a network failure: nothing answers there unless the job backend runs; check the address, DNS and firewall)"},
		{"another calls secret", otherSecret.URL(), "backend: PROBLEM: " + otherSecret.URL() +
			" refused the bot's signature (401 bad_signature): backend.calls_secrets must hold the secret the backend checks calls with"},
		{"not the job backend", notABackend.URL, "backend: PROBLEM: " + notABackend.URL +
			" answered 404 without the protocol's error body, which the protocol does not list: is backend.url the job backend's base URL? (calls go to " +
			notABackend.URL + "/v1/approvals/…)"},
		{"a failing backend", failing.URL, "backend: PROBLEM: " + failing.URL + " is reachable but failing: answer 502"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			migratedStore(t, filepath.Join(dir, "bot.db"))
			code, out, errOut := runDoctor(t, dir, `store: {dsn: "file:`+filepath.Join(dir, "bot.db")+`"}
backend:
  url: "`+c.url+`"
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
tenants:
  acme:
    post: [slack:C0APPROVALS]
`)
			if !strings.Contains(out, c.want+"\n") {
				t.Errorf("doctor wrote:\n%s\nwant the line:\n%s", out, c.want)
			}
			if code != 1 || errOut != "bot doctor: 1 problem found\n" {
				t.Errorf("exit %d, stderr %q", code, errOut)
			}
		})
	}
}

// Before the first start the SQLite store is not there yet: that is no
// problem, doctor does not create it, and goes on to check the backend
// and the chat surfaces. A store whose folder is missing could not be
// created at start: that is one.
func TestDoctorBeforeTheFirstStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "bot.db")
	fake := backendtest.New(t, standin.Options{Secrets: [][]byte{[]byte(e2eCallsSecret)}})
	dc := discordtest.New(t, discordtest.Options{Token: "doctor-discord-token", ApplicationID: "1100000000000000000"})
	dc.AddGuild("1200000000000000000", "acme", discordgo.PermissionViewChannel|discordgo.PermissionSendMessages|
		discordgo.PermissionEmbedLinks|discordgo.PermissionCreatePublicThreads|discordgo.PermissionSendMessagesInThreads|
		discordgo.PermissionReadMessageHistory)
	dc.AddChannel("1200000000000000000", "112233445566778899", "approvals")
	config := func(db string) string {
		return `store: {dsn: "file:` + db + `"}
backend:
  url: "` + fake.URL() + `"
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
discord:
  bot_token: "${DISCORD_BOT_TOKEN}"
  application_id: "1100000000000000000"
  api_url: "` + strings.TrimSuffix(dc.URL(), "/") + `/api/v10/"
tenants:
  acme:
    post: [discord:channel:112233445566778899]
`
	}
	code, out, errOut := runDoctor(t, dir, config(db))
	for _, want := range []string{
		"store: sqlite " + db + " does not exist yet: it will be created at start (or by bot migrate)\n",
		"backend: " + fake.URL() + " answers signed calls as the protocol says",
		"discord: the bot token works: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor wrote:\n%s\nwant:\n%s", out, want)
		}
	}
	if strings.Contains(out, "PROBLEM") || strings.Contains(out, "not checked") {
		t.Errorf("doctor before the first start:\n%s", out)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("doctor created the store: %v", err)
	}

	missing := filepath.Join(dir, "no-such-folder", "bot.db")
	code2, out, errOut2 := runDoctor(t, dir, config(missing))
	want := "store: PROBLEM: sqlite " + missing + " cannot be created: its folder " + filepath.Dir(missing) + " does not exist\n"
	if !strings.Contains(out, want) || !strings.Contains(out, "discord: not checked: the adapter needs the store, which did not answer\n") {
		t.Errorf("doctor wrote:\n%s\nwant:\n%s", out, want)
	}
	if code != 0 || errOut != "" || code2 != 1 || errOut2 != "bot doctor: 1 problem found\n" {
		t.Errorf("exit %d, stderr %q before the first start; exit %d, stderr %q without the store's folder", code, errOut, code2, errOut2)
	}
}

// With everything in order, doctor says so and succeeds.
func TestDoctorAllWell(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	migratedStore(t, filepath.Join(dir, "bot.db"))
	fake := backendtest.New(t, standin.Options{Secrets: [][]byte{[]byte(e2eCallsSecret)}})
	code, out, errOut := runDoctor(t, dir, `store: {dsn: "file:`+filepath.Join(dir, "bot.db")+`"}
backend:
  url: "`+fake.URL()+`"
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
tenants:
  acme:
    post: [slack:C0APPROVALS]
`)
	if code != 0 || errOut != "" || !strings.HasSuffix(out, "chat: none configured: cards go to the log surface (stdout)\ndoctor: no problems found\n") {
		t.Errorf("exit %d, stderr %q, stdout:\n%s", code, errOut, out)
	}
}

// Doctor says what each listener serves, and a private listener on an
// address the internet reaches is a problem.
func TestDoctorChecksBothListeners(t *testing.T) {
	t.Parallel()
	fake := backendtest.New(t, standin.Options{Secrets: [][]byte{[]byte(e2eCallsSecret)}})
	public := "listen: :8080 serves interactions, the decision page and health\n"
	for _, c := range []struct{ name, private, want string }{
		{"loopback", "127.0.0.1:9090", "listen_private: 127.0.0.1:9090 serves the job backend's events, metrics and health\n"},
		{"a private network", "10.1.2.3:9090", "listen_private: 10.1.2.3:9090 serves the job backend's events, metrics and health\n"},
		{"every address", ":9090", "listen_private: :9090 serves the job backend's events, metrics and health on every address of this machine: " +
			"keep its port closed to the internet (a firewall, or a container port left unpublished)\n"},
		{"a public address", "203.0.113.7:9090", "listen_private: PROBLEM: 203.0.113.7:9090 is a public address: the job backend's events and " +
			"the metrics would face the internet; bind a private network's address or loopback\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			migratedStore(t, filepath.Join(dir, "bot.db"))
			code, out, errOut := runDoctor(t, dir, `listen_private: "`+c.private+`"
store: {dsn: "file:`+filepath.Join(dir, "bot.db")+`"}
backend:
  url: "`+fake.URL()+`"
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
tenants:
  acme:
    post: [slack:C0APPROVALS]
`)
			if !strings.Contains(out, public+c.want) {
				t.Errorf("doctor wrote:\n%s\nwant the lines:\n%s%s", out, public, c.want)
			}
			problem := strings.Contains(c.want, "PROBLEM")
			if problem && (code != 1 || errOut != "bot doctor: 1 problem found\n") || !problem && (code != 0 || errOut != "") {
				t.Errorf("exit %d, stderr %q", code, errOut)
			}
		})
	}
}

// `bot doctor --register` registers Discord's /approvals as `bot serve`
// does at start, against a fake Discord that refuses any body its API
// does not take, and then finds it registered.
func TestDoctorRegistersDiscordsCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	migratedStore(t, filepath.Join(dir, "bot.db"))
	back := backendtest.New(t, standin.Options{Secrets: [][]byte{[]byte(e2eCallsSecret)}})
	dc := discordtest.New(t, discordtest.Options{Token: "doctor-discord-token", ApplicationID: "1100000000000000000"})
	dc.AddGuild("1200000000000000000", "acme", discordgo.PermissionViewChannel|discordgo.PermissionSendMessages|
		discordgo.PermissionEmbedLinks|discordgo.PermissionCreatePublicThreads|discordgo.PermissionSendMessagesInThreads|
		discordgo.PermissionReadMessageHistory)
	dc.AddChannel("1200000000000000000", "112233445566778899", "approvals")
	cfg := `store: {dsn: "file:` + filepath.Join(dir, "bot.db") + `"}
backend:
  url: "` + back.URL() + `"
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
discord:
  bot_token: "${DISCORD_BOT_TOKEN}"
  application_id: "1100000000000000000"
  api_url: "` + strings.TrimSuffix(dc.URL(), "/") + `/api/v10/"
tenants:
  acme:
    post: [discord:channel:112233445566778899]
`
	path := filepath.Join(dir, "bot.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"doctor", "--config", path, "--register"}, &out, &errOut, lookup(doctorEnv))
	if n := len(dc.Commands()); n != 1 {
		t.Fatalf("%d commands registered; doctor exited %d, said:\n%s%s", n, code, out.String(), errOut.String())
	}
	if code != 0 {
		t.Errorf("doctor exited %d:\n%s%s", code, out.String(), errOut.String())
	}
	for _, want := range []string{"discord: commands: /approvals registered\n", "commands: /approvals list, /approvals ladder and /approvals passkey are registered"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("doctor did not say %q; exit %d:\n%s%s", want, code, out.String(), errOut.String())
		}
	}
}

// A store whose folder takes no file is a problem before the first
// start, not "will be created".
func TestDoctorStoreFolderTakesNoFile(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	r := doctorReport{w: &out}
	if _, ok := doctorStore(context.Background(), config.Store{Driver: config.DriverSQLite, DSN: "file:/proc/bot.db"}, &r); ok ||
		!strings.Contains(out.String(), "PROBLEM") || !strings.Contains(out.String(), "takes no file") {
		t.Fatalf("a store in /proc was taken as one that will be created:\n%s", out.String())
	}
}
