package threads

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
