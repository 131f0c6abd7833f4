package config

import (
	"fmt"
	"log/slog"
	"os"
	"time"

	"go.yaml.in/yaml/v3"

	"approvalsbot/ladder"
)

// How long a stop may take.
const (
	// DefaultStopTimeout bounds a stop (SIGTERM) when the file sets none,
	// capped at half the lease; what still runs then stays in the outbox.
	DefaultStopTimeout = 10 * time.Second
	// MinStopTimeout leaves a stop time to record what it stopped.
	MinStopTimeout = time.Second
)

// Log levels the file may name, least severe first.
const (
	LogDebug = "debug"
	LogInfo  = "info"
	LogWarn  = "warn"
	LogError = "error"
)

// Log is the logging section.
type Log struct {
	// Level is the least severe level written; info by default.
	Level slog.Level
}

// ParseLogLevel reads a level as the file or `--log-level` writes it:
// debug, info, warn or error.
func ParseLogLevel(s string) (slog.Level, error) {
	switch s {
	case LogDebug:
		return slog.LevelDebug, nil
	case LogInfo:
		return slog.LevelInfo, nil
	case LogWarn:
		return slog.LevelWarn, nil
	case LogError:
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("%q is not one of %s, %s, %s, %s", s, LogDebug, LogInfo, LogWarn, LogError)
}

// logSection decodes `log: {level: …}`.
func (d *decoder) logSection(v *yaml.Node, p string) Log {
	var l Log
	d.mapping(v, p, map[string]field{
		"level": func(_, v *yaml.Node, p string) {
			if s, ok := d.oneOf(v, p, LogDebug, LogInfo, LogWarn, LogError); ok {
				l.Level, _ = ParseLogLevel(s) // one of them: cannot fail
			}
		},
	})
	return l
}

// stopTimeout decodes stop_timeout; 0 when it is absent or wrong.
func (d *decoder) stopTimeout(v *yaml.Node, p string) time.Duration {
	t, ok := d.duration(v, p)
	if !ok {
		return 0
	}
	if t < MinStopTimeout {
		d.problemf(v, p, "%s is too short: at least %s, to record what the stop left for the next start",
			ladder.FormatDuration(t), ladder.FormatDuration(MinStopTimeout))
		return 0
	}
	return t
}

// settleStopTimeout checks stop_timeout against the lease, or gives the
// default: a stop that outlasted the lease would let another replica
// take over a row this one still performs, and do it twice.
func (d *decoder) settleStopTimeout(c *Config, n *yaml.Node) {
	if isNull(n) || c.StopTimeout == 0 {
		c.StopTimeout = min(DefaultStopTimeout, c.Lease/2)
		return
	}
	if c.StopTimeout >= c.Lease {
		d.problemf(deref(n), "stop_timeout", "%s is not shorter than lease (%s): while the bot stops, another replica would take over the work it still does, and do it twice",
			ladder.FormatDuration(c.StopTimeout), ladder.FormatDuration(c.Lease))
	}
}

// LoadStore reads only the store section of the file at path, so that
// `bot migrate` and `bot backup` run without the other sections' secrets
// in their environment.
func LoadStore(path string, getenv func(string) (string, bool)) (Store, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Store{}, fmt.Errorf("read config: %w", err)
	}
	if getenv == nil {
		getenv = os.LookupEnv
	}
	d := &decoder{file: path, getenv: getenv}
	s := Store{Driver: DefaultStoreDriver, DSN: DefaultSQLiteDSN}
	if root := d.document(data); root != nil {
		if n := deref(root); n.Kind != yaml.MappingNode {
			d.problemf(n, "", "expected a mapping, got %s", kindOf(n))
		} else {
			d.pairs(n, "", func(k, v *yaml.Node, key string) {
				if key == "store" {
					s = d.store(k, v, key)
				}
			})
		}
	}
	if err := d.err(); err != nil {
		return Store{}, err
	}
	return s, nil
}
