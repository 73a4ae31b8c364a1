package stats

import (
	"math"
	"slices"
)

// Quantile returns the p-quantile (0 ≤ p ≤ 1) of sorted by linear
// interpolation between order statistics, pandas' default (Hyndman–Fan
// type 7): h = (n−1)p, x[⌊h⌋] + (h−⌊h⌋)(x[⌊h⌋+1] − x[⌊h⌋]). It returns NaN
// for an empty slice.
func Quantile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	h := float64(n-1) * p
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return sorted[n-1]
	}
	if lo < 0 {
		return sorted[0]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

// Description is pandas' describe() of one metric plus tail percentiles.
// Fields are NaN when undefined (no samples; Std with one sample).
type Description struct {
	Count                   int
	Mean, Std, Min, Max     float64
	P25, P50, P75, P90, P99 float64
	P999, P9999             float64 // NaN below 1,000 / 10,000 samples
	HasP999, HasP9999       bool
	Sum                     float64
	quantiles               []float64 // sorted samples, kept for ad-hoc quantiles
}

// Describe sorts xs in place and describes it. The mean and standard
// deviation (ddof = 1, as pandas) use a two-pass algorithm for accuracy.
func Describe(xs []float64) Description {
	nan := math.NaN()
	d := Description{Count: len(xs), Mean: nan, Std: nan, Min: nan, Max: nan,
		P25: nan, P50: nan, P75: nan, P90: nan, P99: nan, P999: nan, P9999: nan}
	if len(xs) == 0 {
		return d
	}
	slices.Sort(xs)
	d.quantiles = xs
	var sum float64
	for _, x := range xs {
		sum += x
	}
	d.Sum = sum
	d.Mean = sum / float64(len(xs))
	if len(xs) > 1 {
		var ss, comp float64
		for _, x := range xs {
			dx := x - d.Mean
			ss += dx * dx
			comp += dx
		}
		n := float64(len(xs))
		d.Std = math.Sqrt((ss - comp*comp/n) / (n - 1))
	}
	d.Min, d.Max = xs[0], xs[len(xs)-1]
	d.P25, d.P50, d.P75 = Quantile(xs, 0.25), Quantile(xs, 0.5), Quantile(xs, 0.75)
	d.P90, d.P99 = Quantile(xs, 0.9), Quantile(xs, 0.99)
	if len(xs) >= 1000 {
		d.P999, d.HasP999 = Quantile(xs, 0.999), true
	}
	if len(xs) >= 10000 {
		d.P9999, d.HasP9999 = Quantile(xs, 0.9999), true
	}
	return d
}

// Quantile returns the p-quantile of the described samples.
func (d *Description) Quantile(p float64) float64 { return Quantile(d.quantiles, p) }
