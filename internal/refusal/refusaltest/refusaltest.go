// Package refusaltest reads a refused-requests counter (refusal.Counter)
// back from a registry, for the tests of the surfaces that count them.
package refusaltest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// Count is the value of name{reason=label} in reg; it fails the test when
// there is no such series.
func Count(t testing.TB, reg prometheus.Gatherer, name, label string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if len(m.GetLabel()) == 1 && m.GetLabel()[0].GetValue() == label {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no %s{reason=%q}", name, label)
	return 0
}
