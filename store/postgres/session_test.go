package postgres

import (
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestSessionSettings reads back, from a session of the pool, the
// settings Open adds to those of the DSN.
func TestSessionSettings(t *testing.T) {
	t.Parallel()
	dsn := os.Getenv("BOT_TEST_POSTGRES_URL")
	if dsn == "" {
		t.Skip("PostgreSQL tests need BOT_TEST_POSTGRES_URL, e.g. BOT_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
	}
	s, err := Open(t.Context(), Options{DSN: dsn})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	if got := s.pool.Config().MaxConns; got != DefaultMaxConns {
		t.Errorf("MaxConns = %d, want %d", got, DefaultMaxConns)
	}
	want := map[string]string{
		// Generic plans made while the tables were small would keep
		// scanning whole indexes once they are not (see Open).
		"plan_cache_mode": "force_custom_plan",
	}
	if cfg, err := pgx.ParseConfig(dsn); err == nil && cfg.RuntimeParams["application_name"] == "" {
		want["application_name"] = applicationName
	}
	for setting, want := range want {
		var got string
		if err := s.pool.QueryRow(t.Context(), "SELECT current_setting($1)", setting).Scan(&got); err != nil {
			t.Fatalf("read %s: %v", setting, err)
		}
		if got != want {
			t.Errorf("%s = %q, want %q", setting, got, want)
		}
	}
	if got := s.listenCfg.RuntimeParams["application_name"]; got != applicationName+listenSuffix {
		t.Errorf("listener's application_name = %q, want %q", got, applicationName+listenSuffix)
	}
}
