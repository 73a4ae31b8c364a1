package stats

import (
	"math"
	"slices"
)

// RadixMin is the smallest slice sortSamples sorts by radix; below it
// slices.Sort is faster than building the digit histograms.
const RadixMin = 512

// sortSamples sorts xs in ascending order with exactly the result of
// slices.Sort, in O(n): a least-significant-digit radix sort over an
// order-preserving unsigned image of the samples, one byte per pass,
// skipping the bytes that all samples share (small integers, samples of
// one magnitude: nanosecond durations below a few minutes differ only in
// their low five bytes). For floats, equal values are bit-identical
// except for ±0 and NaN, whose relative order slices.Sort leaves to its
// algorithm; a float slice that holds a NaN or a negative zero is
// therefore handed to slices.Sort, so that the order, and every figure
// computed from it, stays the same. scratch is reused as the second
// buffer when it is large enough; the buffer used is returned for the
// next call.
func sortSamples[T int32 | int64 | float64](xs, scratch []T) []T {
	if len(xs) < RadixMin {
		slices.Sort(xs)
		return scratch
	}
	switch v := any(xs).(type) {
	case []float64:
		for _, x := range v {
			if x != x || (x == 0 && math.Signbit(x)) {
				slices.Sort(v)
				return scratch
			}
		}
		s, _ := any(scratch).([]float64)
		return any(radixFloats(v, s)).([]T)
	case []int64:
		s, _ := any(scratch).([]int64)
		return any(radixInts(v, s, 8)).([]T)
	case []int32:
		s, _ := any(scratch).([]int32)
		return any(radixInts(v, s, 4)).([]T)
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

// radixFloats sorts non-NaN float64s without negative zeros by their
// order-preserving bits.
func radixFloats(xs, scratch []float64) []float64 {
	var hist [8][256]int
	for _, x := range xs {
		k := key64(x)
		for b := range 8 {
			hist[b][byte(k>>(8*b))]++
		}
	}
	if cap(scratch) < len(xs) {
		scratch = make([]float64, len(xs))
	}
	src, dst := xs, scratch[:len(xs)]
	var offs [256]int
	for b := range 8 {
		if !offsets(&hist[b], len(xs), &offs) {
			continue
		}
		shift := 8 * uint(b)
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

// radixInts sorts integers by their two's-complement bytes, the sign bit
// flipped in the top byte so that negative numbers come first.
func radixInts[T int32 | int64](xs, scratch []T, width int) []T {
	var hist [8][256]int
	top := width - 1
	for _, x := range xs {
		k := uint64(x)
		for b := range width {
			hist[b][byte(k>>(8*b))]++
		}
	}
	hist[top] = flipSign(hist[top])
	if cap(scratch) < len(xs) {
		scratch = make([]T, len(xs))
	}
	src, dst := xs, scratch[:len(xs)]
	var offs [256]int
	for b := range width {
		if !offsets(&hist[b], len(xs), &offs) {
			continue
		}
		shift := 8 * uint(b)
		var flip byte
		if b == top {
			flip = 0x80
		}
		for _, x := range src {
			d := byte(uint64(x)>>shift) ^ flip
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

// flipSign reorders the histogram of a top byte as if its sign bit were
// flipped.
func flipSign(h [256]int) [256]int {
	var out [256]int
	for d, c := range h {
		out[byte(d)^0x80] = c
	}
	return out
}
