package stats

import (
	"math"
	"math/big"
	"math/bits"
)

// Quantile returns the p-quantile (0 ≤ p ≤ 1) of sorted by linear
// interpolation between order statistics, pandas' default (Hyndman–Fan
// type 7): h = (n−1)p, x[⌊h⌋] + (h−⌊h⌋)(x[⌊h⌋+1] − x[⌊h⌋]). It returns NaN
// for an empty slice.
func Quantile(sorted []float64, p float64) float64 { return quantile(sorted, p, 1) }

// quantile is Quantile over samples in any unit: the two order statistics
// are divided by unit (1e6: ns to ms) before they are interpolated, so the
// result is the one the samples in the reported unit give, bit for bit.
func quantile[T int32 | int64 | float64](sorted []T, p, unit float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	h := float64(n-1) * p
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return float64(sorted[n-1]) / unit
	}
	if lo < 0 {
		return float64(sorted[0]) / unit
	}
	x0, x1 := float64(sorted[lo])/unit, float64(sorted[lo+1])/unit
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
}

// Describe sorts xs in place (as slices.Sort would) and describes it. The mean and standard
// deviation (ddof = 1, as pandas) use a two-pass algorithm for accuracy.
func Describe(xs []float64) Description { return describe(xs, 1) }

// describe is Describe of samples in any unit: integers are divided by
// unit into the reported unit. The sum of integers is exact (128 bits);
// the standard deviation is computed in the samples' unit, then scaled.
func describe[T int32 | int64 | float64](xs []T, unit float64) Description {
	nan := math.NaN()
	d := Description{Count: len(xs), Mean: nan, Std: nan, Min: nan, Max: nan,
		P25: nan, P50: nan, P75: nan, P90: nan, P99: nan, P999: nan, P9999: nan}
	d.quantile = func(p float64) float64 { return quantile(xs, p, unit) }
	if len(xs) == 0 {
		return d
	}
	sortSamples(xs, nil)
	sum := sumOf(xs)
	d.Sum = sum / unit
	mean := sum / float64(len(xs)) // in the samples' unit
	d.Mean = mean / unit
	if unit == 1 {
		d.Mean = d.Sum / float64(len(xs))
	}
	if len(xs) > 1 {
		if v, ok := any(xs).([]int32); ok {
			d.Std = stdInt32(v) / unit
		} else {
			var ss, comp float64
			for _, x := range xs {
				dx := float64(x) - mean
				ss += dx * dx
				comp += dx
			}
			n := float64(len(xs))
			d.Std = math.Sqrt((ss-comp*comp/n)/(n-1)) / unit
		}
	}
	d.Min, d.Max = float64(xs[0])/unit, float64(xs[len(xs)-1])/unit
	d.P25, d.P50, d.P75 = quantile(xs, 0.25, unit), quantile(xs, 0.5, unit), quantile(xs, 0.75, unit)
	d.P90, d.P99 = quantile(xs, 0.9, unit), quantile(xs, 0.99, unit)
	if len(xs) >= 1000 {
		d.P999, d.HasP999 = quantile(xs, 0.999, unit), true
	}
	if len(xs) >= 10000 {
		d.P9999, d.HasP9999 = quantile(xs, 0.9999, unit), true
	}
	return d
}

// sumOf is the sum of xs: in float64 for floats (in order), exact in 128
// bits for integers, rounded once to float64.
func sumOf[T int32 | int64 | float64](xs []T) float64 {
	switch v := any(xs).(type) {
	case []float64:
		var s float64
		for _, x := range v {
			s += x
		}
		return s
	case []int32:
		var s int64 // 2^31 samples of 2^31 fit
		for _, x := range v {
			s += int64(x)
		}
		return float64(s)
	case []int64:
		var hi int64
		var lo uint64
		for _, x := range v {
			var c uint64
			lo, c = bits.Add64(lo, uint64(x), 0)
			hi += int64(c) + x>>63 // x>>63: the sign extension of x
		}
		if hi == int64(lo)>>63 { // fits in int64
			return float64(int64(lo))
		}
		return float64(hi)*0x1p64 + float64(lo)
	}
	panic("unreachable")
}

// stdInt32 is the sample standard deviation (ddof = 1) of xs (at least
// two samples), exact but for the final rounding.
func stdInt32(xs []int32) float64 {
	var s1 int64
	var s2 uint128
	for _, x := range xs {
		s1 += int64(x)
		s2.add(uint64(int64(x) * int64(x)))
	}
	return stdOf(len(xs), s1, s2)
}

// add adds x.
func (u *uint128) add(x uint64) {
	var c uint64
	u.lo, c = bits.Add64(u.lo, x, 0)
	u.hi += c
}

// stdOf is the sample standard deviation (ddof = 1) of n ≥ 2 integers
// whose sum is s1 and sum of squares s2: n·s2 − s1² is computed exactly
// in a big.Int, so only the final division and square root round.
func stdOf(n int, s1 int64, s2 uint128) float64 {
	bn := big.NewInt(int64(n))
	sq := new(big.Int).Lsh(new(big.Int).SetUint64(s2.hi), 64)
	sq.Or(sq, new(big.Int).SetUint64(s2.lo))
	num := new(big.Int).Mul(bn, sq)
	m := big.NewInt(s1)
	num.Sub(num, m.Mul(m, m))
	den := new(big.Int).Mul(bn, big.NewInt(int64(n-1)))
	v, _ := new(big.Float).SetPrec(128).Quo(new(big.Float).SetPrec(128).SetInt(num), new(big.Float).SetInt(den)).Float64()
	return math.Sqrt(v)
}

// HasQuantile reports whether Quantile is defined: the samples were kept.
func (d *Description) HasQuantile() bool { return d.quantile != nil }

// Quantile returns the p-quantile of the described samples.
func (d *Description) Quantile(p float64) float64 {
	if d.quantile == nil {
		return math.NaN()
	}
	return d.quantile(p)
}
