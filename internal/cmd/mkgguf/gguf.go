package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// GGUF format constants (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md).
const (
	ggufMagic     = "GGUF"
	ggufVersion   = 3
	ggufAlignment = 32
)

// ggufType is the type tag of a metadata value.
type ggufType uint32

// Metadata value types of GGUF v3.
const (
	typeUint8   ggufType = 0
	typeInt8    ggufType = 1
	typeUint16  ggufType = 2
	typeInt16   ggufType = 3
	typeUint32  ggufType = 4
	typeInt32   ggufType = 5
	typeFloat32 ggufType = 6
	typeBool    ggufType = 7
	typeString  ggufType = 8
	typeArray   ggufType = 9
	typeUint64  ggufType = 10
	typeInt64   ggufType = 11
	typeFloat64 ggufType = 12
)

// ggmlType is the element type of a tensor.
type ggmlType uint32

// Tensor element types mkgguf writes.
const (
	ggmlF32 ggmlType = 0
	ggmlF16 ggmlType = 1
)

// size returns the byte size of one element.
func (t ggmlType) size() int {
	if t == ggmlF16 {
		return 2
	}
	return 4
}

// kv is one metadata key and its value. The value is one of uint32, int32,
// float32, bool, string, []string, []int32.
type kv struct {
	key   string
	value any
}

// tensor is one named tensor. Dims are in ggml order: dims[0] is the
// innermost (contiguous) dimension. Data holds the values row-major in that
// order and is converted to typ on write.
type tensor struct {
	name string
	dims []uint64
	typ  ggmlType
	data []float32
}

// elems returns the number of elements the dims describe.
func (t *tensor) elems() uint64 {
	n := uint64(1)
	for _, d := range t.dims {
		n *= d
	}
	return n
}

// bytes returns the byte size of the tensor's data.
func (t *tensor) bytes() uint64 { return t.elems() * uint64(t.typ.size()) }

// writeGGUF writes a GGUF v3 file with the metadata and tensors to w, in the
// order given, so that equal inputs give identical bytes.
func writeGGUF(w io.Writer, kvs []kv, tensors []*tensor) error {
	for _, t := range tensors {
		if uint64(len(t.data)) != t.elems() {
			return fmt.Errorf("tensor %s: %d values for dims %v", t.name, len(t.data), t.dims)
		}
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	e := &encoder{w: bw}
	e.raw([]byte(ggufMagic))
	e.u32(ggufVersion)
	e.u64(uint64(len(tensors)))
	e.u64(uint64(len(kvs)))
	for _, m := range kvs {
		e.str(m.key)
		e.value(m.key, m.value)
	}
	var off uint64
	for _, t := range tensors {
		e.str(t.name)
		e.u32(uint32(len(t.dims)))
		for _, d := range t.dims {
			e.u64(d)
		}
		e.u32(uint32(t.typ))
		e.u64(off)
		off = align(off + t.bytes())
	}
	e.pad()
	for _, t := range tensors {
		start := e.n
		switch t.typ {
		case ggmlF16:
			for _, v := range t.data {
				e.u16(float32ToHalf(v))
			}
		default:
			for _, v := range t.data {
				e.u32(math.Float32bits(v))
			}
		}
		if e.err == nil && uint64(e.n-start) != t.bytes() {
			return fmt.Errorf("tensor %s: wrote %d bytes, want %d", t.name, e.n-start, t.bytes())
		}
		e.pad()
	}
	if e.err != nil {
		return e.err
	}
	return bw.Flush()
}

// align rounds n up to the GGUF alignment.
func align(n uint64) uint64 {
	return (n + ggufAlignment - 1) / ggufAlignment * ggufAlignment
}

// encoder writes little-endian GGUF primitives and remembers the first error.
type encoder struct {
	w   io.Writer
	n   int64
	err error
	buf [8]byte
}

func (e *encoder) raw(p []byte) {
	if e.err != nil {
		return
	}
	var n int
	n, e.err = e.w.Write(p)
	e.n += int64(n)
}

func (e *encoder) u16(v uint16) { binary.LittleEndian.PutUint16(e.buf[:2], v); e.raw(e.buf[:2]) }
func (e *encoder) u32(v uint32) { binary.LittleEndian.PutUint32(e.buf[:4], v); e.raw(e.buf[:4]) }
func (e *encoder) u64(v uint64) { binary.LittleEndian.PutUint64(e.buf[:8], v); e.raw(e.buf[:8]) }

func (e *encoder) str(s string) {
	e.u64(uint64(len(s)))
	e.raw([]byte(s))
}

// pad writes zero bytes up to the next alignment boundary.
func (e *encoder) pad() {
	var zero [ggufAlignment]byte
	if r := uint64(e.n) % ggufAlignment; r != 0 {
		e.raw(zero[:ggufAlignment-r])
	}
}

func (e *encoder) value(key string, v any) {
	switch v := v.(type) {
	case uint32:
		e.u32(uint32(typeUint32))
		e.u32(v)
	case int32:
		e.u32(uint32(typeInt32))
		e.u32(uint32(v))
	case float32:
		e.u32(uint32(typeFloat32))
		e.u32(math.Float32bits(v))
	case bool:
		e.u32(uint32(typeBool))
		b := byte(0)
		if v {
			b = 1
		}
		e.raw([]byte{b})
	case string:
		e.u32(uint32(typeString))
		e.str(v)
	case []string:
		e.u32(uint32(typeArray))
		e.u32(uint32(typeString))
		e.u64(uint64(len(v)))
		for _, s := range v {
			e.str(s)
		}
	case []int32:
		e.u32(uint32(typeArray))
		e.u32(uint32(typeInt32))
		e.u64(uint64(len(v)))
		for _, x := range v {
			e.u32(uint32(x))
		}
	default:
		if e.err == nil {
			e.err = fmt.Errorf("metadata %s: unsupported value type %T", key, v)
		}
	}
}

// float32ToHalf converts f to IEEE 754 binary16 with round-to-nearest-even.
func float32ToHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	switch {
	case exp == 0xff: // Inf or NaN
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp-127+15 >= 0x1f: // overflow
		return sign | 0x7c00
	case exp-127+15 <= 0: // subnormal or zero
		e := exp - 127 + 15
		if e < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint32(14 - e)
		h := mant >> shift
		rem := mant & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(exp-127+15)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // may carry into the exponent, which is the correct rounding
	}
	return sign | uint16(h)
}

// halfToFloat32 converts an IEEE 754 binary16 value to float32.
func halfToFloat32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0:
		if mant == 0 {
			return math.Float32frombits(sign)
		}
		f := float32(mant) / (1 << 24)
		if sign != 0 {
			return -f
		}
		return f
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}
