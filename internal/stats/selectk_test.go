package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestQuantileSelect checks the selection against Quantile of the sorted
// samples, with many ties and none.
func TestQuantileSelect(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 3, 10, 101, 1000} {
		for _, distinct := range []int{1, 3, 1000} {
			xs := make([]float64, n)
			for k := range xs {
				xs[k] = float64(rng.IntN(distinct))
			}
			sorted := slices.Sorted(slices.Values(xs))
			for _, p := range []float64{0, 0.25, 0.5, 0.99, 1} {
				want := Quantile(sorted, p)
				if got := QuantileSelect(slices.Clone(xs), p); got != want {
					t.Errorf("n %d distinct %d p %v: %v, want %v", n, distinct, p, got, want)
				}
			}
		}
	}
	if !math.IsNaN(QuantileSelect(nil, 0.5)) {
		t.Error("quantile of nothing is not NaN")
	}
}
