package stats

import "math"

// blockMax is the largest block of a sampleSet: 64 Ki samples.
const blockMax = 64 << 10

// sampleSet holds the samples of one metric in blocks that are never
// copied as the set grows, so a set of n samples takes little more than
// its raw size (a doubling slice would take up to twice that, three times
// while growing).
//
// Integer metrics (durations in nanoseconds, counts) keep the integers
// the records hold: 4 bytes a sample while every sample fits an int32
// (an ITL gap or a token count does), 8 once one does not. They are
// sorted as integers and turned into the reported unit (ms: divided by
// scale) only for the order statistics the report shows, which gives the
// figures the float64 samples gave. Metrics that are not integers (TPOT)
// keep float64s in the reported unit.
type sampleSet struct {
	b32    [][]int32
	b64    [][]int64
	floats [][]float64
	n      int
	wide   bool // integers stored as int64
	float  bool // float64 samples (addFloat)
	// scale divides an integer sample into the reported unit: 1e6 for
	// durations reported in ms; 0 means 1.
	scale float64
	// parts, when not nil, are the sets whose union this set is: it keeps
	// no sample of its own (the summary of --by groups that partition the
	// records: each sample is kept once, by its group).
	parts []*sampleSet
}

// add adds an integer sample.
func (s *sampleSet) add(x int64) {
	if !s.wide {
		if y := int32(x); int64(y) == x {
			s.b32 = appendBlock(s.b32, y, s.n)
			s.n++
			return
		}
		s.widen()
	}
	s.b64 = appendBlock(s.b64, x, s.n)
	s.n++
}

// addAll adds integer samples: add for each, a block at a time.
func (s *sampleSet) addAll(xs []int64) {
	for len(xs) > 0 && !s.wide {
		k := len(s.b32) - 1
		if k < 0 || len(s.b32[k]) == cap(s.b32[k]) {
			s.b32 = append(s.b32, make([]int32, 0, min(blockMax, max(256, s.n))))
			k++
		}
		b := s.b32[k]
		n := min(cap(b)-len(b), len(xs))
		for i, x := range xs[:n] {
			y := int32(x)
			if int64(y) != x { // does not fit: add widens, the rest go wide
				s.b32[k], s.n = b, s.n+i
				xs = xs[i:]
				s.add(xs[0])
				xs = xs[1:]
				break
			}
			b = append(b, y)
		}
		if !s.wide {
			s.b32[k], s.n = b, s.n+n
			xs = xs[n:]
		}
	}
	for _, x := range xs {
		s.add(x)
	}
}

// addFloat adds a sample of a float metric; a set holds either kind.
func (s *sampleSet) addFloat(x float64) {
	s.float = true
	s.floats = appendBlock(s.floats, x, s.n)
	s.n++
}

func appendBlock[T int32 | int64 | float64](blocks [][]T, x T, n int) [][]T {
	k := len(blocks) - 1
	if k < 0 || len(blocks[k]) == cap(blocks[k]) {
		blocks = append(blocks, make([]T, 0, min(blockMax, max(256, n))))
		k++
	}
	blocks[k] = append(blocks[k], x)
	return blocks
}

// widen converts int32 storage to int64.
func (s *sampleSet) widen() {
	all := make([]int64, 0, s.n)
	for _, b := range s.b32 {
		for _, y := range b {
			all = append(all, int64(y))
		}
	}
	s.b64, s.b32, s.wide = [][]int64{all[:len(all):len(all)]}, nil, true
}

// Len is the number of samples.
func (s *sampleSet) Len() int {
	if s.parts != nil {
		n := 0
		for _, p := range s.parts {
			n += p.n
		}
		return n
	}
	return s.n
}

// union returns a set of the samples of s's parts: their blocks, not a
// copy, while every part holds int32s or floats; a copy when some part
// holds int64s (the union is then int64, as one set of them all would be).
func (s *sampleSet) union() *sampleSet {
	u := &sampleSet{scale: s.scale}
	for _, p := range s.parts {
		u.n += p.n
		u.float = u.float || p.float
		u.wide = u.wide || p.wide
	}
	for _, p := range s.parts {
		switch {
		case u.float:
			u.floats = append(u.floats, p.floats...)
		case u.wide:
			if u.b64 == nil {
				u.b64 = [][]int64{make([]int64, 0, u.n)}
			}
			for _, b := range p.b32 {
				for _, x := range b {
					u.b64[0] = append(u.b64[0], int64(x))
				}
			}
			for _, b := range p.b64 {
				u.b64[0] = append(u.b64[0], b...)
			}
		default:
			u.b32 = append(u.b32, p.b32...)
		}
	}
	return u
}

func (s *sampleSet) unit() float64 {
	if s.scale == 0 {
		return 1
	}
	return s.scale
}

// selectMin is the smallest int32 sample set described by selection:
// its histograms (a few MB, whatever the count) cost more than sorting
// fewer samples, which matters with many small groups (--by conversation).
const selectMin = 1 << 16

// describe sorts the samples in place and describes them; the set keeps
// them in one block so that memory is not doubled.
func (s *sampleSet) describe() Description {
	if s.parts != nil {
		return s.union().describe()
	}
	switch {
	case s.float:
		return describe(s.flatFloats(), 1)
	case s.wide:
		s.b64 = join(s.b64, s.n)
		return describe(first(s.b64), s.unit())
	}
	if s.n < selectMin {
		s.b32 = join(s.b32, s.n)
		return describe(first(s.b32), s.unit())
	}
	return describeSelect(s.b32, s.n, s.unit(), func() []int32 {
		s.b32 = join(s.b32, s.n)
		xs := first(s.b32)
		sortSamples(xs, nil)
		return xs
	})
}

// sorted sorts the samples in place and returns their p-quantile function
// and their mean, in the reported unit, without describing the rest.
func (s *sampleSet) sorted() (q func(p float64) float64, mean float64) {
	if s.parts != nil {
		return s.union().sorted()
	}
	switch {
	case s.float:
		xs := s.flatFloats()
		sortSamples(xs, nil)
		return func(p float64) float64 { return quantile(xs, p, 1) }, meanOf(xs, 1)
	case s.wide:
		s.b64 = join(s.b64, s.n)
		xs, u := first(s.b64), s.unit()
		sortSamples(xs, nil)
		return func(p float64) float64 { return quantile(xs, p, u) }, meanOf(xs, u)
	}
	s.b32 = join(s.b32, s.n)
	xs, u := first(s.b32), s.unit()
	sortSamples(xs, nil)
	return func(p float64) float64 { return quantile(xs, p, u) }, meanOf(xs, u)
}

// flatFloats returns the samples of a float set in one slice (the set's
// own storage, which the caller may reorder).
func (s *sampleSet) flatFloats() []float64 {
	s.floats = join(s.floats, s.n)
	return first(s.floats)
}

// values returns a copy of the samples in the reported unit, in the order
// they were added (tests, and callers that need float64s).
func (s *sampleSet) values() []float64 {
	out := make([]float64, 0, s.n)
	u := s.unit()
	for _, b := range s.floats {
		out = append(out, b...)
	}
	for _, b := range s.b32 {
		for _, x := range b {
			out = append(out, float64(x)/u)
		}
	}
	for _, b := range s.b64 {
		for _, x := range b {
			out = append(out, float64(x)/u)
		}
	}
	return out
}

func first[T any](blocks [][]T) []T {
	if len(blocks) == 0 {
		return nil
	}
	return blocks[0]
}

// join concatenates blocks into one, full so that the next add starts a
// new block instead of reallocating this one.
func join[T int32 | int64 | float64](blocks [][]T, n int) [][]T {
	if len(blocks) <= 1 {
		return blocks
	}
	all := make([]T, 0, n)
	for _, b := range blocks {
		all = append(all, b...)
	}
	return [][]T{all[:len(all):len(all)]}
}

// meanOf is the mean of xs in the reported unit (integers divided by
// unit); integer sums are exact (128 bits).
func meanOf[T int32 | int64 | float64](xs []T, unit float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return sumOf(xs) / unit / float64(len(xs))
}
