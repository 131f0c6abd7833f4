// Package costtest tells a pass over call data that is linear in its
// input's size from one that is not, in a test CI runs on a loaded
// machine: it times the pass on a small and a large input in the same run
// and compares their costs per byte, which stay flat when the pass is
// linear and grow with the ratio of the sizes when it is quadratic.
package costtest

import (
	"fmt"
	"runtime"
	"time"
)

// Input is one side of a comparison: its size and the pass over it.
type Input struct {
	Bytes int
	Do    func() error
}

// Growth is what a comparison measured: the best cost per byte of each
// input, in nanoseconds.
type Growth struct {
	Small, Large float64
}

// Ratio is how many times a byte of the large input cost a byte of the
// small one.
func (g Growth) Ratio() float64 { return g.Large / g.Small }

func (g Growth) String() string {
	return fmt.Sprintf("%.2f ns/byte small, %.2f large: ×%.2f", g.Small, g.Large, g.Ratio())
}

// budget bounds the rounds past the third that Compare spends looking for
// a quiet moment.
const budget = 5 * time.Second

// Compare times small's pass and large's in turn, so that a burst of load
// falls on both, each round over at least large's bytes (small's pass run
// as many times as that takes). It returns the best of three rounds of
// each, or of up to nine while large costs more than maxRatio times
// small per byte and the comparison has run less than budget: a linear
// pass settles within three, while a quadratic one costs seconds a round
// and fails after three.
func Compare(small, large Input, maxRatio float64) (Growth, error) {
	var best [2]float64
	began := time.Now()
	for round := 1; round <= 9; round++ {
		for i, in := range []Input{small, large} {
			runs := max(1, large.Bytes/in.Bytes)
			runtime.GC() // the previous round's garbage is not this one's cost
			start := time.Now()
			for range runs {
				if err := in.Do(); err != nil {
					return Growth{}, fmt.Errorf("pass over %d bytes: %w", in.Bytes, err)
				}
			}
			ns := float64(time.Since(start).Nanoseconds()) / float64(runs*in.Bytes)
			if best[i] == 0 || ns < best[i] {
				best[i] = ns
			}
		}
		if round >= 3 && (best[1] <= maxRatio*best[0] || time.Since(began) > budget) {
			break
		}
	}
	return Growth{Small: best[0], Large: best[1]}, nil
}
