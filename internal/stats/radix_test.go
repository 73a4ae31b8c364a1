package stats

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// sameBits reports whether a and b hold bit-identical floats.
func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) && !(a[i] != a[i] && b[i] != b[i]) {
			return false
		}
	}
	return true
}

// checkSort compares sortSamples and describe with slices.Sort and the
// sort-based description on a copy of xs.
func checkSort(t *testing.T, xs []float64) {
	t.Helper()
	want := slices.Clone(xs)
	slices.Sort(want)
	got := slices.Clone(xs)
	sortSamples(got, nil)
	if !sameBits(got, want) {
		t.Fatalf("n=%d: sortSamples differs from slices.Sort", len(xs))
	}
	// The description of the radix-sorted samples is that of the
	// sort-based one, bit for bit.
	d := describe(slices.Clone(xs), 1)
	for _, p := range []float64{0, 0.001, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9999, 1} {
		if g, w := d.Quantile(p), Quantile(want, p); math.Float64bits(g) != math.Float64bits(w) && !(g != g && w != w) {
			t.Fatalf("n=%d: Q(%g) = %v, want %v", len(xs), p, g, w)
		}
	}
	var sum float64
	for _, x := range want {
		sum += float64(x)
	}
	if len(xs) > 0 && math.Float64bits(d.Sum) != math.Float64bits(sum) && !(sum != sum) {
		t.Fatalf("n=%d: sum %v, want %v (sorted order)", len(xs), d.Sum, sum)
	}
}

func TestSortFloats(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 9))
	gens := []struct {
		name string
		gen  func(i int) float64
	}{
		{"ms", func(int) float64 { return float64(5e6+rng.Int64N(20e6)) / 1e6 }},
		{"ties", func(int) float64 { return float64(rng.IntN(7)) }},
		{"signed", func(int) float64 { return rng.NormFloat64() * 1e3 }},
		{"wide", func(int) float64 { return math.Ldexp(rng.Float64()-0.5, rng.IntN(200)-100) }},
		{"inf", func(i int) float64 { return []float64{math.Inf(1), math.Inf(-1), 0, 1, -1}[i%5] }},
		{"const", func(int) float64 { return 42.5 }},
		{"sorted", func(i int) float64 { return float64(i) }},
		{"reversed", func(i int) float64 { return float64(-i) }},
		{"nan", func(i int) float64 {
			if i%97 == 3 {
				return math.NaN()
			}
			return float64(rng.IntN(100))
		}},
		{"negzero", func(i int) float64 { return []float64{0, math.Copysign(0, -1), 1}[i%3] }},
	}
	for _, g := range gens {
		for _, n := range []int{0, 1, 2, 3, RadixMin - 1, RadixMin, RadixMin + 1, 5000, 70000} {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = g.gen(i)
			}
			checkSort(t, xs)
		}
	}
}

// FuzzSortFloats compares the radix sort and the description built on it
// with slices.Sort on arbitrary samples: any bit pattern, ties, n = 0...
func FuzzSortFloats(f *testing.F) {
	f.Add([]byte{1, 2, 3}, uint8(0), uint16(600))
	f.Add([]byte{0xff, 0xf0, 0, 0, 0, 0, 0, 0}, uint8(1), uint16(1))
	f.Add([]byte{0x40, 0x31, 0, 0, 0, 0, 0, 0, 0x40, 0x31, 0, 0, 0, 0, 0, 1}, uint8(2), uint16(2000))
	f.Fuzz(func(t *testing.T, data []byte, mode uint8, n uint16) {
		// The fuzz input seeds n samples: raw bit patterns (NaN, ±0, ±Inf
		// included), few distinct values, or ms; and as integers.
		if len(data) == 0 {
			data = []byte{0}
		}
		n = n % 4096
		xs := make([]float64, n)
		for i := range xs {
			var w [8]byte
			for k := range w {
				w[k] = data[(i*8+k)%len(data)] ^ byte(i*k)
			}
			bits := binary.LittleEndian.Uint64(w[:])
			switch mode % 3 {
			case 0:
				xs[i] = math.Float64frombits(bits)
			case 1:
				xs[i] = float64(bits % 5)
			default:
				xs[i] = float64(bits%1_000_000) / 1e3
			}
		}
		checkSort(t, xs)
		ns := make([]int64, n)
		for i, x := range xs {
			ns[i] = int64(math.Float64bits(x))
			if mode%3 != 0 {
				ns[i] = int64(x * 1e6)
			}
		}
		checkInts(t, ns)
	})
}

// checkInts compares the integer path (radix sort, quantiles of ns
// reported in ms) with slices.Sort of the samples converted to ms: the
// order statistics are bit-identical, the mean and standard deviation
// equal to 1e-12 relative.
func checkInts(t *testing.T, ns []int64) {
	t.Helper()
	want := make([]float64, len(ns))
	for i, x := range ns {
		want[i] = float64(x) / 1e6
	}
	wd := Describe(want)
	got := slices.Clone(ns)
	sortSamples(got, nil)
	if !slices.IsSorted(got) {
		t.Fatalf("n=%d: int64 samples not sorted", len(ns))
	}
	for i := range got {
		if float64(got[i])/1e6 != want[i] {
			t.Fatalf("n=%d: [%d] %d, want %v ms", len(ns), i, got[i], want[i])
		}
	}
	d := describe(slices.Clone(ns), 1e6)
	for _, p := range []float64{0, 0.001, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9999, 1} {
		if g, w := d.Quantile(p), wd.Quantile(p); math.Float64bits(g) != math.Float64bits(w) && !(g != g && w != w) {
			t.Fatalf("n=%d: Q(%g) = %v, want %v", len(ns), p, g, w)
		}
	}
	// Differences of huge integers lose their low bits in float64
	// either way: compare the spread only when the samples are moderate.
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"mean", d.Mean, wd.Mean}, {"std", d.Std, wd.Std}} {
		if !closeRel(c.got, c.want, 1e-9) && wd.Max-wd.Min < 1e12 {
			t.Fatalf("n=%d: %s %v, want %v", len(ns), c.name, c.got, c.want)
		}
	}
	checkSelect(t, ns, d)
	if len(ns) > 0 {
		n32 := make([]int32, len(ns))
		for i, x := range ns {
			n32[i] = int32(x)
		}
		w32 := slices.Clone(n32)
		slices.Sort(w32)
		sortSamples(n32, nil)
		if !slices.Equal(n32, w32) {
			t.Fatalf("n=%d: int32 radix sort differs from slices.Sort", len(ns))
		}
	}
}

// checkSelect compares the selection path of int32 samples held in
// blocks with the sorted description want of the same samples: every
// order statistic bit-identical, sums to 1e-12 relative.
func checkSelect(t *testing.T, ns []int64, want Description) {
	t.Helper()
	var blocks [][]int32
	for i, x := range ns {
		if int64(int32(x)) != x {
			return
		}
		if i%777 == 0 {
			blocks = append(blocks, nil)
		}
		blocks[len(blocks)-1] = append(blocks[len(blocks)-1], int32(x))
	}
	sorts := 0
	d := describeSelect(blocks, len(ns), 1e6, func() []int32 {
		sorts++
		var all []int32
		for _, b := range blocks {
			all = append(all, b...)
		}
		slices.Sort(all)
		return all
	})
	same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) || a != a && b != b }
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"min", d.Min, want.Min}, {"max", d.Max, want.Max}, {"p25", d.P25, want.P25}, {"p50", d.P50, want.P50},
		{"p75", d.P75, want.P75}, {"p90", d.P90, want.P90}, {"p99", d.P99, want.P99},
		{"p99.9", d.P999, want.P999}, {"p99.99", d.P9999, want.P9999}} {
		if !same(c.got, c.want) {
			t.Fatalf("n=%d: select %s = %v, sort %v", len(ns), c.name, c.got, c.want)
		}
	}
	if !closeRel(d.Mean, want.Mean, 1e-12) || !closeRel(d.Std, want.Std, 1e-12) || d.Count != want.Count {
		t.Fatalf("n=%d: select mean %v std %v, sort %v %v", len(ns), d.Mean, d.Std, want.Mean, want.Std)
	}
	if sorts != 0 {
		t.Fatal("the describe table sorted the samples")
	}
	for _, p := range []float64{0.01, 0.333, 0.95} {
		if g, w := d.Quantile(p), want.Quantile(p); !same(g, w) {
			t.Fatalf("n=%d: select Q(%g) = %v, sort %v", len(ns), p, g, w)
		}
	}
	if len(ns) > 0 && sorts != 1 {
		t.Fatalf("%d sorts for other quantiles, want 1", sorts)
	}
}

// closeRel reports whether a and b agree to rel relative (both NaN agree).
func closeRel(a, b, rel float64) bool {
	if a != a || b != b {
		return a != a && b != b
	}
	return math.Abs(a-b) <= rel*max(math.Abs(a), math.Abs(b)) || a == b
}

func TestSortInts(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 5))
	gens := []struct {
		name string
		gen  func(i int) int64
	}{
		{"itl", func(int) int64 { return 5e6 + rng.Int64N(20e6) }},
		{"latency", func(int) int64 { return rng.Int64N(1e11) }},
		{"ties", func(int) int64 { return rng.Int64N(7) }},
		{"signed", func(int) int64 { return rng.Int64N(2e9) - 1e9 }},
		{"extremes", func(i int) int64 { return []int64{math.MinInt64, math.MaxInt64, 0, -1, 1}[i%5] }},
		{"sorted", func(i int) int64 { return int64(i) }},
		{"reversed", func(i int) int64 { return int64(-i) * 1e6 }},
	}
	for _, g := range gens {
		for _, n := range []int{0, 1, 2, RadixMin - 1, RadixMin, RadixMin + 1, 5000, 70000} {
			ns := make([]int64, n)
			for i := range ns {
				ns[i] = g.gen(i)
			}
			checkInts(t, ns)
		}
	}
}

func BenchmarkSortFloats(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]float64, 4_000_000)
	for i := range src {
		src[i] = float64(5e6+rng.Int64N(20e6)) / 1e6
	}
	xs := make([]float64, len(src))
	b.Run("radix", func(b *testing.B) {
		var scratch []float64
		for b.Loop() {
			copy(xs, src)
			scratch = sortSamples(xs, scratch)
		}
	})
	ns := make([]int64, len(src))
	b.Run("radix-int64-ns", func(b *testing.B) {
		var scratch []int64
		for b.Loop() {
			for i, x := range src {
				ns[i] = int64(x * 1e6)
			}
			scratch = sortSamples(ns, scratch)
		}
	})
	b.Run("slices.Sort", func(b *testing.B) {
		for b.Loop() {
			copy(xs, src)
			slices.Sort(xs)
		}
	})
}
