package config_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgconn"

	"approvalsbot/config"
)

// withDSN is base with a postgres store whose DSN is written as dsn; the
// DSN is on line 13.
func withDSN(dsn string) string {
	return base + "store:\n  driver: postgres\n  dsn: " + strconv.Quote(dsn) + "\n"
}

const literalDSNProblem = "bot.yaml:13: store.dsn: holds a password written in the file: write it as one ${NAME} (postgres://bot:${PGPASSWORD}@db/bot or password=${PGPASSWORD}) and set NAME in the bot's environment"

func TestDSNLiteralPassword(t *testing.T) {
	t.Parallel()
	for _, dsn := range []string{
		// URL user info and query.
		"postgres://bot:hunter2@db/bot",
		"postgresql://bot:hunter2@db:5432/bot?sslmode=require",
		"postgres://bot:hunter2@db1:5432,db2:5432/bot",
		"postgres://bot@db/bot?sslmode=require&password=hunter2",
		"postgres://bot@db/bot?sslpassword=hunter2",
		"postgres://bot:${PGPASSWORD}@db/bot?password=hunter2",
		"postgres://bot:hunter2${PGPASSWORD}@db/bot",
		"postgres://bot:p%40hunter2@db/bot",
		// libpq's user info ends at the first @ before any /, query or not.
		"postgres://db?application_name=a:hunter2@b",
		// A password in a URL of another scheme is in the file all the same.
		"mysql://bot:hunter2@db/bot",
		// key=value pairs, as pgx reads them.
		"host=db user=bot password=hunter2",
		"host=db user=bot password='hun ter2' dbname=bot",
		"host=db user=bot password='${PGPASSWORD} hunter2'",
		"host=db password = hunter2 user=bot",
		"host=db\tpassword=\thunter2",
		"host=db PASSWORD=hunter2",
		"host=db password=hun\\ ter2",
		"host=db sslpassword=hunter2 password=${PGPASSWORD}",
		"host=db password=${PGPASSWORD} password=hunter2",
		"host=db password='hunter2",
	} {
		t.Run(dsn, func(t *testing.T) {
			t.Parallel()
			_, got := parse(t, withDSN(dsn))
			if diff := cmp.Diff([]string{literalDSNProblem}, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if msg := strings.Join(got, "\n"); strings.Contains(msg, "hunter2") || strings.Contains(msg, "ter2") {
				t.Errorf("a problem echoes the password:\n%s", msg)
			}
		})
	}
}

// TestDSNPasswordFromEnvironment checks a DSN written with ${NAME} for its
// password reaches pgx with the password as it is, however it is spelt,
// and that neither problems nor the summary show it.
func TestDSNPasswordFromEnvironment(t *testing.T) {
	t.Parallel()
	const password = `p@ss:w/rd?#% 'q\&=x`
	env := map[string]string{
		"PGPASSWORD": password,
		"PGUSER":     "bot",
		"PGHOST":     "db",
		"DSN":        "postgres://bot:from-the-environment@db/bot",
	}
	tests := []struct {
		written, password string
	}{
		{"postgres://bot:${PGPASSWORD}@db/bot", password},
		{"postgresql://bot:${PGPASSWORD}@db:5432/bot?sslmode=disable", password},
		{"postgres://${PGUSER}:${PGPASSWORD}@${PGHOST}/bot", password},
		{"postgres://bot@db/bot?sslmode=disable&password=${PGPASSWORD}", password},
		{"host=db user=bot password=${PGPASSWORD} dbname=bot", password},
		{"host=db user=bot password='${PGPASSWORD}' dbname=bot", password},
		{"host=db user=bot password = ${PGPASSWORD} dbname=bot", password},
		{"host=${PGHOST} user=bot dbname=bot password=${PGPASSWORD}", password},
		// A whole DSN from the environment is taken as it is.
		{"${DSN}", "from-the-environment"},
	}
	for _, tt := range tests {
		t.Run(tt.written, func(t *testing.T) {
			t.Parallel()
			text := withDSN(tt.written)
			c, err := config.Parse("bot.yaml", []byte(text), baseEnv(env))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			pc, err := pgconn.ParseConfig(c.Store.DSN.Reveal())
			if err != nil {
				t.Fatalf("pgx cannot read the DSN: %v", err)
			}
			if pc.Password != tt.password || pc.Host != "db" || pc.User != "bot" || pc.Database != "bot" {
				t.Errorf("pgx reads password %q, host %q, user %q, database %q; want %q, db, bot, bot",
					pc.Password, pc.Host, pc.User, pc.Database, tt.password)
			}
			s := c.Summary()
			if strings.Contains(s, "w/rd") || strings.Contains(s, "w%2Frd") || strings.Contains(s, tt.password) {
				t.Errorf("Summary shows the password:\n%s", s)
			}
			name := "PGPASSWORD"
			if tt.written == "${DSN}" {
				name = "DSN"
			}
			if want := "secret store.dsn: <secret> from ${" + name + "}\n"; !strings.Contains(s, want) {
				t.Errorf("Summary lacks %q:\n%s", want, s)
			}

			// A problem elsewhere in the file (a foreign scheme) shows
			// neither the password nor its escaped form.
			foreign := strings.Replace(text, "driver: postgres", "driver: sqlite", 1)
			if _, err := config.Parse("bot.yaml", []byte(foreign), baseEnv(env)); err != nil &&
				(strings.Contains(err.Error(), "w/rd") || strings.Contains(err.Error(), "w%2Frd")) {
				t.Errorf("a problem shows the password:\n%v", err)
			}
		})
	}
}

func TestDSNWithoutPassword(t *testing.T) {
	t.Parallel()
	for _, dsn := range []string{
		"postgres://bot@db/bot?sslmode=require",
		"postgres://bot:@db/bot",
		"postgres://db/bot?application_name=a@b:c",
		"host=/var/run/postgresql user=bot dbname=bot",
		"host=db user=bot password=''",
	} {
		c, problems := parse(t, withDSN(dsn))
		if problems != nil {
			t.Errorf("%s: %s", dsn, strings.Join(problems, "\n"))
			continue
		}
		if c.Store.DSN.Reveal() != dsn {
			t.Errorf("%s became %s", dsn, c.Store.DSN.Reveal())
		}
	}
	// SQLite's DSN names a file, held as written.
	c, problems := parse(t, base+"store:\n  dsn: \"file:/data/bot.db?_pragma=busy_timeout(5000)\"\n")
	if problems != nil || c.Store.DSN.Reveal() != "file:/data/bot.db?_pragma=busy_timeout(5000)" {
		t.Errorf("sqlite DSN: %v, %v", c, problems)
	}
}

// TestDSNUnreadable checks a URL DSN whose password pgx would not find
// (its user info ends at the /) is refused without being echoed.
func TestDSNUnreadable(t *testing.T) {
	t.Parallel()
	_, got := parse(t, withDSN("postgres://bot:hun/ter2@db/bot"))
	want := []string{"bot.yaml:13: store.dsn: is not a PostgreSQL DSN (postgres://… or key=value pairs)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

func TestDSNPasswordUnset(t *testing.T) {
	t.Parallel()
	_, got := parse(t, withDSN("postgres://bot:${NOPE}@db/bot"))
	want := []string{"bot.yaml:13: store.dsn: environment variable NOPE is not set"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}
