package threads

// IngestQueued is how many events wait in the ingest group's queue for
// the transaction that commits them.
func IngestQueued(s *Service) int {
	s.ingests.mu.Lock()
	defer s.ingests.mu.Unlock()
	return len(s.ingests.queue)
}
