//go:build race

package costtest

// Race reports whether the binary runs under the race detector, which
// slows every pass about tenfold: a cost test may skip then.
const Race = true
