package stats

import (
	"math"
	"slices"
)

// radixMin is the smallest slice sortFloats sorts by radix; below it
// slices.Sort is faster than building the digit histograms.
const radixMin = 512

// sortFloats sorts xs in ascending order with exactly the result of
// slices.Sort, in O(n): a least-significant-digit radix sort over the
// order-preserving integer image of the floats, one byte per pass,
// skipping the bytes that all samples share (integer counts, samples of
// one magnitude). Equal floats are bit-identical except for ±0 and NaN,
// whose relative order slices.Sort leaves to its algorithm; a slice that
// holds a NaN or a negative zero is therefore handed to slices.Sort, so
// that the order, and every figure computed from it, stays the same.
// scratch is reused as the second buffer when it is large enough; the
// buffer used is returned for the next call.
func sortFloats[T float32 | float64](xs, scratch []T) []T {
	if len(xs) < radixMin {
		slices.Sort(xs)
		return scratch
	}
	switch v := any(xs).(type) {
	case []float64:
		s, _ := any(scratch).([]float64)
		return any(radix64(v, s)).([]T)
	case []float32:
		s, _ := any(scratch).([]float32)
		return any(radix32(v, s)).([]T)
	}
	panic("unreachable")
}

// key64 maps a non-NaN float64 to a uint64 of the same order: the sign bit
// is flipped for positive numbers, every bit for negative ones.
func key64(x float64) uint64 {
	k := math.Float64bits(x)
	if k>>63 != 0 {
		return ^k
	}
	return k | 1<<63
}

// key32 is key64 for float32.
func key32(x float32) uint32 {
	k := math.Float32bits(x)
	if k>>31 != 0 {
		return ^k
	}
	return k | 1<<31
}

// offsets turns a digit histogram into the first index of each digit; it
// returns false when one digit holds all n samples (the pass would not
// move anything).
func offsets(h *[256]int, n int, offs *[256]int) bool {
	sum := 0
	for d, c := range h {
		if c == n {
			return false
		}
		offs[d] = sum
		sum += c
	}
	return true
}

func radix64(xs, scratch []float64) []float64 {
	var hist [8][256]int
	for _, x := range xs {
		if x != x || (x == 0 && math.Signbit(x)) {
			slices.Sort(xs)
			return scratch
		}
		k := key64(x)
		hist[0][byte(k)]++
		hist[1][byte(k>>8)]++
		hist[2][byte(k>>16)]++
		hist[3][byte(k>>24)]++
		hist[4][byte(k>>32)]++
		hist[5][byte(k>>40)]++
		hist[6][byte(k>>48)]++
		hist[7][byte(k>>56)]++
	}
	if cap(scratch) < len(xs) {
		scratch = make([]float64, len(xs))
	}
	src, dst := xs, scratch[:len(xs)]
	var offs [256]int
	for b := range uint(8) {
		if !offsets(&hist[b], len(xs), &offs) {
			continue
		}
		shift := 8 * b
		for _, x := range src {
			d := byte(key64(x) >> shift)
			dst[offs[d]] = x
			offs[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &xs[0] {
		copy(xs, src)
	}
	return scratch
}

func radix32(xs, scratch []float32) []float32 {
	var hist [4][256]int
	for _, x := range xs {
		if x != x || (x == 0 && math.Signbit(float64(x))) {
			slices.Sort(xs)
			return scratch
		}
		k := key32(x)
		hist[0][byte(k)]++
		hist[1][byte(k>>8)]++
		hist[2][byte(k>>16)]++
		hist[3][byte(k>>24)]++
	}
	if cap(scratch) < len(xs) {
		scratch = make([]float32, len(xs))
	}
	src, dst := xs, scratch[:len(xs)]
	var offs [256]int
	for b := range uint(4) {
		if !offsets(&hist[b], len(xs), &offs) {
			continue
		}
		shift := 8 * b
		for _, x := range src {
			d := byte(key32(x) >> shift)
			dst[offs[d]] = x
			offs[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &xs[0] {
		copy(xs, src)
	}
	return scratch
}
