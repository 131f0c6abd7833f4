package ladder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/robfig/cron/v3"
)

// Job is one scheduled piece of work: a ladder tick or a tenant's digest.
type Job struct {
	Name string
	// Spec is a robfig/cron spec: "@every 10s", or a 5-field spec with a
	// "CRON_TZ=Europe/Berlin " prefix for a tenant's zone.
	Spec string
	Run  func(ctx context.Context) error
}

// RunnerOptions configure the Runner.
type RunnerOptions struct {
	Jobs   []Job
	Logger *slog.Logger
	// Location is the zone of specs without CRON_TZ (default UTC, the
	// same on every machine).
	Location *time.Location
}

// Runner runs jobs on cron schedules, skipping a job while its last run
// goes on and logging a panic. SkipIfStillRunning wraps Recover: the other
// way round, one panic would leave its lock held and skip every later run.
type Runner struct {
	cron *cron.Cron
	jobs []Job
	log  *slog.Logger
}

// NewRunner checks every spec and builds the runner.
func NewRunner(o RunnerOptions) (*Runner, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Location == nil {
		o.Location = time.UTC
	}
	cl := cronLogger{o.Logger}
	c := cron.New(cron.WithLocation(o.Location), cron.WithLogger(cl),
		cron.WithChain(cron.SkipIfStillRunning(cl), cron.Recover(cl)))
	r := &Runner{cron: c, jobs: o.Jobs, log: o.Logger}
	var errs []error
	for _, j := range o.Jobs {
		if j.Run == nil {
			errs = append(errs, fmt.Errorf("job %s: no function", j.Name))
			continue
		}
		if _, err := cron.ParseStandard(j.Spec); err != nil {
			errs = append(errs, fmt.Errorf("job %s: schedule %q: %w", j.Name, j.Spec, err))
		}
	}
	return r, errors.Join(errs...)
}

// Every is the cron spec of a fixed interval.
func Every(d time.Duration) string { return "@every " + d.String() }

// Run schedules the jobs and blocks until ctx ends; then it stops the
// scheduler and waits for running jobs, which see ctx cancelled.
func (r *Runner) Run(ctx context.Context) error {
	for _, j := range r.jobs {
		_, err := r.cron.AddFunc(j.Spec, func() {
			start := time.Now()
			if err := j.Run(ctx); err != nil && ctx.Err() == nil {
				r.log.Error("scheduled job failed", "job", j.Name, "err", err)
				return
			}
			if d := time.Since(start); d > time.Second {
				r.log.Info("scheduled job ran long", "job", j.Name, "took", d.String())
			}
		})
		if err != nil {
			return fmt.Errorf("schedule %s: %w", j.Name, err)
		}
	}
	r.cron.Start()
	<-ctx.Done()
	<-r.cron.Stop().Done()
	return nil
}

// cronLogger puts robfig/cron's own logs (skips, recovered panics) on slog.
type cronLogger struct{ l *slog.Logger }

func (c cronLogger) Info(msg string, kv ...any) {
	if msg == "skip" {
		c.l.Warn("a scheduled job is still running; this run is skipped")
	}
}

func (c cronLogger) Error(err error, msg string, kv ...any) {
	c.l.Error("scheduler: "+msg, append([]any{"err", err}, kv...)...)
}
