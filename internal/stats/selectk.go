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
// Floyd and Rivest's SELECT (Communications of the ACM 18(3), 1975). On a
// range of more than 600 values it first selects within a sample around k
// of the size that makes the pivot land near k, so that one partition of
// the range leaves little to do: about 1.5 n comparisons where quickselect
// with a median-of-three pivot takes over 3 n. The partition stops on
// values equal to the pivot, so runs of equal values (TTFTs of one
// millisecond) split evenly.
func selectK(xs []float64, k int) float64 {
	floydRivest(xs, 0, len(xs)-1, k)
	return xs[k]
}

// floydRivest is selectK on xs[left:right+1].
func floydRivest(xs []float64, left, right, k int) {
	for right > left {
		if right-left > 600 {
			n := float64(right - left + 1)
			i := float64(k - left + 1)
			z := math.Log(n)
			s := 0.5 * math.Exp(2*z/3)
			sd := 0.5 * math.Sqrt(z*s*(n-s)/n)
			if i < n/2 {
				sd = -sd
			}
			newLeft := max(left, int(float64(k)-i*s/n+sd))
			newRight := min(right, int(float64(k)+(n-i)*s/n+sd))
			floydRivest(xs, newLeft, newRight, k)
		}
		t := xs[k]
		i, j := left, right
		xs[left], xs[k] = xs[k], xs[left]
		if xs[right] > t {
			xs[right], xs[left] = xs[left], xs[right]
		}
		for i < j {
			xs[i], xs[j] = xs[j], xs[i]
			i++
			j--
			for xs[i] < t {
				i++
			}
			for xs[j] > t {
				j--
			}
		}
		if xs[left] == t {
			xs[left], xs[j] = xs[j], xs[left]
		} else {
			j++
			xs[j], xs[right] = xs[right], xs[j]
		}
		if j <= k {
			left = j + 1
		}
		if k <= j {
			right = j - 1
		}
	}
}
