package stats

import "math"

// Quantile returns the p-quantile (0 ≤ p ≤ 1) of sorted by linear
// interpolation between order statistics, pandas' default (Hyndman–Fan
// type 7): h = (n−1)p, x[⌊h⌋] + (h−⌊h⌋)(x[⌊h⌋+1] − x[⌊h⌋]). It returns NaN
// for an empty slice.
func Quantile(sorted []float64, p float64) float64 { return quantile(sorted, p) }

func quantile[T float32 | float64](sorted []T, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	h := float64(n-1) * p
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return float64(sorted[n-1])
	}
	if lo < 0 {
		return float64(sorted[0])
	}
	x0, x1 := float64(sorted[lo]), float64(sorted[lo+1])
	return x0 + (h-float64(lo))*(x1-x0)
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
	quantile                func(p float64) float64 // over the sorted samples
	at                      func(i int) float64     // i-th smallest sample
}

// Describe sorts xs in place (as slices.Sort would) and describes it. The mean and standard
// deviation (ddof = 1, as pandas) use a two-pass algorithm for accuracy.
func Describe(xs []float64) Description { return describe(xs) }

func describe[T float32 | float64](xs []T) Description {
	nan := math.NaN()
	d := Description{Count: len(xs), Mean: nan, Std: nan, Min: nan, Max: nan,
		P25: nan, P50: nan, P75: nan, P90: nan, P99: nan, P999: nan, P9999: nan}
	d.quantile = func(p float64) float64 { return quantile(xs, p) }
	d.at = func(i int) float64 { return float64(xs[i]) }
	if len(xs) == 0 {
		return d
	}
	sortFloats(xs, nil)
	var sum float64
	for _, x := range xs {
		sum += float64(x)
	}
	d.Sum = sum
	d.Mean = sum / float64(len(xs))
	if len(xs) > 1 {
		var ss, comp float64
		for _, x := range xs {
			dx := float64(x) - d.Mean
			ss += dx * dx
			comp += dx
		}
		n := float64(len(xs))
		d.Std = math.Sqrt((ss - comp*comp/n) / (n - 1))
	}
	d.Min, d.Max = float64(xs[0]), float64(xs[len(xs)-1])
	d.P25, d.P50, d.P75 = quantile(xs, 0.25), quantile(xs, 0.5), quantile(xs, 0.75)
	d.P90, d.P99 = quantile(xs, 0.9), quantile(xs, 0.99)
	if len(xs) >= 1000 {
		d.P999, d.HasP999 = quantile(xs, 0.999), true
	}
	if len(xs) >= 10000 {
		d.P9999, d.HasP9999 = quantile(xs, 0.9999), true
	}
	return d
}

// Quantile returns the p-quantile of the described samples.
func (d *Description) Quantile(p float64) float64 {
	if d.quantile == nil {
		return math.NaN()
	}
	return d.quantile(p)
}
