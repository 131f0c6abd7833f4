package app

import (
	"context"

	"approvalsbot/config"
	"approvalsbot/ladder"
	"approvalsbot/threads"
)

// scheduled is the ladder tick, the retention pass and each digest, all
// scheduled from the configuration at start (a reload changes none).
func scheduled(cfg *config.Config, svc *threads.Service) []ladder.Job {
	jobs := []ladder.Job{{Name: "ladder", Spec: ladder.Every(cfg.Tick), Run: func(ctx context.Context) error {
		_, err := svc.Tick(ctx)
		return err
	}}}
	pruner := svc.Pruner(threads.Retention{Closed: cfg.Retention, Tombstones: cfg.Tombstones()})
	jobs = append(jobs, ladder.Job{Name: "retention", Spec: ladder.Every(threads.PruneEvery), Run: func(ctx context.Context) error {
		_, err := pruner.Prune(ctx)
		return err
	}})
	for id, t := range cfg.Tenants {
		if t.Digest == nil {
			continue
		}
		jobs = append(jobs, ladder.Job{Name: "digest " + id, Spec: "CRON_TZ=" + t.Digest.Zone.String() + " " + t.Digest.Cron,
			Run: func(ctx context.Context) error { return svc.Digest(ctx, id) }})
	}
	return jobs
}
