package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// TestQuantileSelect checks the selection against Quantile of the sorted
// samples, with many ties and none.
func TestQuantileSelect(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 3, 10, 101, 601, 602, 1000, 25_000} {
		for _, distinct := range []int{1, 3, 1000, -1, -2} {
			xs := make([]float64, n)
			for k := range xs {
				switch distinct {
				case -1: // ascending
					xs[k] = float64(k)
				case -2: // descending, negative
					xs[k] = -float64(k) / 3
				default:
					xs[k] = float64(rng.IntN(distinct))
				}
			}
			sorted := slices.Sorted(slices.Values(xs))
			for _, p := range []float64{0, 0.001, 0.25, 0.5, 0.99, 0.9999, 1} {
				want := Quantile(sorted, p)
				if got := QuantileSelect(slices.Clone(xs), p); got != want {
					t.Errorf("n %d distinct %d p %v: %v, want %v", n, distinct, p, got, want)
				}
			}
		}
	}
	// The contract selectK leaves behind (QuantileSelect reads the next
	// order statistic from it): nothing before k is larger, nothing
	// after it smaller.
	xs := make([]float64, 20_000)
	for k := range xs {
		xs[k] = float64(rng.IntN(500))
	}
	for _, k := range []int{0, 1, 7_000, 10_000, 19_998, 19_999} {
		x := selectK(xs, k)
		if slices.Max(xs[:k+1]) != x || slices.Min(xs[k:]) != x {
			t.Errorf("k %d: not partitioned around %v", k, x)
		}
	}
	if !math.IsNaN(QuantileSelect(nil, 0.5)) {
		t.Error("quantile of nothing is not NaN")
	}
}

// BenchmarkQuantileSelect is the median and the 99th percentile of a
// million values with ties, as a retention profile's buckets have.
func BenchmarkQuantileSelect(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, 1_000_000)
	for k := range xs {
		xs[k] = float64(rng.IntN(100_000))
	}
	buf := make([]float64, len(xs))
	for _, p := range []float64{0.5, 0.99} {
		b.Run(strconv.FormatFloat(p, 'g', -1, 64), func(b *testing.B) {
			for b.Loop() {
				QuantileSelect(append(buf[:0], xs...), p)
			}
		})
	}
}
