//go:build race

package backend_test

// raceEnabled: the race detector slows every goroutine many times over, so
// ratios of speed mean nothing under it.
const raceEnabled = true
