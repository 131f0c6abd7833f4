package costtest_test

import (
	"testing"

	"approvalsbot/internal/costtest"
)

// sink keeps the passes' results alive.
var sink int

// linear reads each byte of b once.
func linear(b []byte) error {
	n := 0
	for _, c := range b {
		n += int(c)
	}
	sink += n
	return nil
}

// quadratic reads, from each byte of b, the rest of b.
func quadratic(b []byte) error {
	n := 0
	for i := range b {
		for _, c := range b[i:] {
			n += int(c)
		}
	}
	sink += n
	return nil
}

// TestCompareTellsLinearFromQuadratic: a linear pass stays within the
// ratio a cost test allows, and a quadratic one, whose cost per byte grows
// with the input (16× here), exceeds it.
func TestCompareTellsLinearFromQuadratic(t *testing.T) {
	if costtest.Race {
		t.Skip("-race: the comparison is timed without the race detector")
	}
	const maxRatio = 4
	for _, tt := range []struct {
		name         string
		pass         func([]byte) error
		small, large int
		linear       bool
	}{
		{"linear", linear, 64 << 10, 1 << 20, true},
		// Small enough that the quadratic pass's nine rounds take
		// a fraction of a second.
		{"quadratic", quadratic, 512, 8 << 10, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			small, large := make([]byte, tt.small), make([]byte, tt.large)
			g, err := costtest.Compare(
				costtest.Input{Bytes: len(small), Do: func() error { return tt.pass(small) }},
				costtest.Input{Bytes: len(large), Do: func() error { return tt.pass(large) }},
				maxRatio)
			if err != nil {
				t.Fatal(err)
			}
			if got := g.Ratio() <= maxRatio; got != tt.linear {
				t.Errorf("%s pass: %v; within ×%d: %v, want %v", tt.name, g, maxRatio, got, tt.linear)
			}
		})
	}
}
