package convert

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCountsMatchSorted checks Counts against the sorted values it stands
// for: count, mean, max and R-7 quantiles, on small and large values.
func TestCountsMatchSorted(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name string
		vals []int
	}{
		{"one", []int{7}},
		{"two", []int{3, 10}},
		{"zeros", []int{0, 0, 0}},
		{"negative counts as zero", []int{-4, 2}},
		{"large values", []int{countsSmall, countsSmall + 5, 1 << 30, 3, countsSmall - 1}},
		{"random", func() []int {
			v := make([]int, 5000)
			for i := range v {
				v[i] = int(rng.ExpFloat64() * 3000)
			}
			return v
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var c Counts
			for _, v := range tc.vals {
				c.Add(v)
			}
			x := make([]int, len(tc.vals))
			for i, v := range tc.vals {
				x[i] = max(v, 0)
			}
			slices.Sort(x)
			sum := 0.0
			for _, v := range x {
				sum += float64(v)
			}
			if c.Len() != len(x) || c.Max() != x[len(x)-1] || c.Mean() != sum/float64(len(x)) {
				t.Errorf("len %d max %d mean %v, want %d %d %v", c.Len(), c.Max(), c.Mean(), len(x), x[len(x)-1], sum/float64(len(x)))
			}
			for _, p := range []float64{0, 0.1, 0.5, 0.9, 0.99, 1} {
				h := float64(len(x)-1) * p
				lo := math.Floor(h)
				i := int(lo)
				want := float64(x[len(x)-1])
				if i+1 < len(x) {
					want = float64(x[i]) + (h-lo)*float64(x[i+1]-x[i])
				}
				if got := c.Quantile(p); got != want {
					t.Errorf("Quantile(%v) = %v, want %v", p, got, want)
				}
			}
		})
	}
	var empty Counts
	if empty.Len() != 0 || !math.IsNaN(empty.Quantile(0.5)) {
		t.Errorf("empty Counts: len %d, p50 %v", empty.Len(), empty.Quantile(0.5))
	}
}
