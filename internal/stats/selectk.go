package stats

import "math"

// QuantileSelect returns Quantile(xs sorted, p) without sorting: it
// reorders xs by a selection in expected linear time, for when a few
// order statistics of many small sets are wanted (the medians of a
// profile's buckets).
func QuantileSelect(xs []float64, p float64) float64 {
	n := len(xs)
	if n == 0 {
		return math.NaN()
	}
	h := float64(n-1) * p
	lo := int(h)
	x0 := selectK(xs, lo)
	if lo >= n-1 || h == float64(lo) {
		return x0
	}
	// The next order statistic is the least of what lies above lo.
	x1 := math.Inf(1)
	for _, x := range xs[lo+1:] {
		x1 = min(x1, x)
	}
	return x0 + (h-float64(lo))*(x1-x0)
}

// selectK reorders xs so that xs[k] is the k-th smallest, everything
// before it no larger and everything after it no smaller, and returns it:
// quickselect with a median-of-three pivot and a three-way partition, so
// that runs of equal values (TTFTs of one millisecond) cost nothing.
func selectK(xs []float64, k int) float64 {
	lo, hi := 0, len(xs)-1
	for lo < hi {
		a, b, c := xs[lo], xs[lo+(hi-lo)/2], xs[hi]
		pivot := max(min(a, b), min(max(a, b), c))
		// xs[lo:lt] < pivot, xs[lt:i] == pivot, xs[gt+1:hi+1] > pivot
		lt, i, gt := lo, lo, hi
		for i <= gt {
			switch x := xs[i]; {
			case x < pivot:
				xs[lt], xs[i] = xs[i], xs[lt]
				lt++
				i++
			case x > pivot:
				xs[i], xs[gt] = xs[gt], xs[i]
				gt--
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt - 1
		case k > gt:
			lo = gt + 1
		default:
			return pivot
		}
	}
	return xs[k]
}
