package stats

import (
	"math"
	"slices"
	"sync"
)

// The describe table of an int32 sample set needs a handful of order
// statistics, not the order of all samples: describeSelect finds them
// with two counting passes over the samples where they lie (no copy, no
// scratch buffer), a radix selection on the top and then the bottom 16
// bits of each sample. The full sort happens only if something asks for
// another quantile (the HTML report's CDFs), once.

// describePs are the quantiles of the describe table.
var describePs = [...]float64{0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9999}

// describeSelect describes the int32 samples held in blocks (n in all),
// in the reported unit (samples divided by unit). sorted is called, at
// most once, when a quantile other than the table's is asked for; it
// returns the samples in order.
func describeSelect(blocks [][]int32, n int, unit float64, sorted func() []int32) Description {
	nan := math.NaN()
	d := Description{Count: n, Mean: nan, Std: nan, Min: nan, Max: nan,
		P25: nan, P50: nan, P75: nan, P90: nan, P99: nan, P999: nan, P9999: nan}
	var once sync.Once
	var all []int32
	d.quantile = func(p float64) float64 {
		once.Do(func() { all = sorted() })
		return quantile(all, p, unit)
	}
	if n == 0 {
		return d
	}
	// Pass 1: the sums, and how many samples share each top 16 bits.
	hist := make([]int64, 1<<16)
	var s1 int64
	var s2 uint128
	for _, b := range blocks {
		for _, x := range b {
			s1 += int64(x)
			s2.add(uint64(int64(x) * int64(x)))
			hist[uint32(x)>>16^0x8000]++
		}
	}
	// The ranks wanted: both neighbours of each quantile, min and max.
	ps := describePs[:5]
	if n >= 10000 {
		ps = describePs[:]
	} else if n >= 1000 {
		ps = describePs[:6]
	}
	ranks := []int{0, n - 1}
	for _, p := range ps {
		lo := int(math.Floor(float64(n-1) * p))
		ranks = append(ranks, lo, min(lo+1, n-1))
	}
	// The top 16 bits of each wanted rank, and its rank within them.
	cum := make([]int64, len(hist)+1)
	for i, c := range hist {
		cum[i+1] = cum[i] + c
	}
	slot := make(map[uint32]int) // top 16 bits (flipped) -> histogram of the bottom 16
	top := make([]uint32, len(ranks))
	for i, r := range ranks {
		t, _ := slices.BinarySearch(cum, int64(r)+1) // first prefix above r
		top[i] = uint32(t - 1)
		if _, ok := slot[top[i]]; !ok {
			slot[top[i]] = len(slot)
		}
	}
	// Pass 2: the bottom 16 bits of the samples in the wanted buckets.
	var lut [1 << 16]int8
	for i := range lut {
		lut[i] = -1
	}
	for t, k := range slot {
		lut[t] = int8(k)
	}
	low := make([][]int64, len(slot))
	for k := range low {
		low[k] = make([]int64, 1<<16)
	}
	for _, b := range blocks {
		for _, x := range b {
			if k := lut[uint32(x)>>16^0x8000]; k >= 0 {
				low[k][uint16(x)]++
			}
		}
	}
	value := func(i int) int32 {
		t := top[i]
		r := int64(ranks[i]) - cum[t]
		h := low[slot[t]]
		for l, c := range h {
			if r < c {
				return int32((t^0x8000)<<16 | uint32(l))
			}
			r -= c
		}
		panic("unreachable")
	}
	at := func(r int) float64 {
		return float64(value(slices.Index(ranks, r))) / unit
	}
	q := func(p float64) float64 {
		h := float64(n-1) * p
		lo := int(math.Floor(h))
		if lo >= n-1 {
			return at(n - 1)
		}
		x0, x1 := at(lo), at(lo+1)
		return x0 + (h-float64(lo))*(x1-x0)
	}
	d.Min, d.Max = at(0), at(n-1)
	d.P25, d.P50, d.P75, d.P90, d.P99 = q(0.25), q(0.5), q(0.75), q(0.9), q(0.99)
	if n >= 1000 {
		d.P999, d.HasP999 = q(0.999), true
	}
	if n >= 10000 {
		d.P9999, d.HasP9999 = q(0.9999), true
	}
	d.Sum = float64(s1) / unit
	d.Mean = float64(s1) / float64(n) / unit
	if n > 1 {
		d.Std = stdOf(n, s1, s2) / unit
	}
	return d
}

// uint128 is an unsigned 128-bit accumulator.
type uint128 struct{ hi, lo uint64 }
