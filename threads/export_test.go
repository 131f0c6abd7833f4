package threads

import (
	"context"
	"time"
)

// IngestQueued is how many events wait in the ingest group's queue for
// the transaction that commits them.
func IngestQueued(s *Service) int {
	s.ingests.mu.Lock()
	defer s.ingests.mu.Unlock()
	return len(s.ingests.queue)
}

// SetIngestLeaders sets how many ingest groups may run at once.
func SetIngestLeaders(s *Service, n int) {
	s.ingests.mu.Lock()
	defer s.ingests.mu.Unlock()
	s.ingests.leaders = n
}

// Decide is a decision as Click records it, for tests that make one
// without a click's read of the approval.
func (s *Service) Decide(ctx context.Context, req DecideRequest) (DecideResult, error) {
	return s.decide(ctx, req, nil)
}

// Acknowledge is I'm looking as Click records it.
func (s *Service) Acknowledge(ctx context.Context, req LadderRequest) (LadderResult, error) {
	return s.acknowledge(ctx, req)
}

// EscalateNow is Escalate now as Click records it.
func (s *Service) EscalateNow(ctx context.Context, req LadderRequest) (LadderResult, error) {
	return s.escalateNow(ctx, req)
}

// WatchContentWork has watch told, with its context, each time s works
// on an event's content (its stored form, redaction, fingerprints and
// reask). Set it before the first event.
func WatchContentWork(s *Service, watch func(context.Context)) {
	s.contentWork = watch
}

// DigestFiguresOf are tenantID's digest figures for the week before now.
func DigestFiguresOf(s *Service, tenantID string, now time.Time) (DigestFigures, error) {
	return s.digestFigures(context.Background(), tenantID, now)
}
