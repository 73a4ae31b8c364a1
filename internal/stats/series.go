package stats

// blockMax is the largest block of a sampleSet: 64 Ki samples.
const blockMax = 64 << 10

// sampleSet holds the samples of one metric in blocks that are never
// copied as the set grows, so a set of n samples takes little more than
// 8n bytes (a doubling slice would take up to 16n, 24n while growing).
// A narrow set stores float32 (4n bytes) for integer-valued metrics such
// as token counts, as long as every sample is exactly representable; the
// first one that is not widens the set to float64.
type sampleSet struct {
	blocks   [][]float64
	blocks32 [][]float32
	n        int
	narrow   bool
}

func (s *sampleSet) add(x float64) {
	if s.narrow {
		if y := float32(x); float64(y) == x {
			s.blocks32 = appendBlock(s.blocks32, y, s.n)
			s.n++
			return
		}
		s.widen()
	}
	s.blocks = appendBlock(s.blocks, x, s.n)
	s.n++
}

func appendBlock[T float32 | float64](blocks [][]T, x T, n int) [][]T {
	k := len(blocks) - 1
	if k < 0 || len(blocks[k]) == cap(blocks[k]) {
		blocks = append(blocks, make([]T, 0, min(blockMax, max(256, n))))
		k++
	}
	blocks[k] = append(blocks[k], x)
	return blocks
}

// widen converts a narrow set to float64 storage.
func (s *sampleSet) widen() {
	all := make([]float64, 0, s.n)
	for _, b := range s.blocks32 {
		for _, y := range b {
			all = append(all, float64(y))
		}
	}
	s.blocks, s.blocks32, s.narrow = [][]float64{all[:len(all):len(all)]}, nil, false
}

// Len is the number of samples.
func (s *sampleSet) Len() int { return s.n }

// describe sorts the samples in place and describes them; the set keeps
// them in one block so that memory is not doubled.
func (s *sampleSet) describe() Description {
	if s.narrow {
		s.blocks32 = join(s.blocks32, s.n)
		if len(s.blocks32) == 0 {
			return describe([]float32(nil))
		}
		return describe(s.blocks32[0])
	}
	return describe(s.flat())
}

// flat returns all samples in one slice (the set's own storage, which the
// caller may reorder).
func (s *sampleSet) flat() []float64 {
	if s.narrow {
		s.widen()
	}
	s.blocks = join(s.blocks, s.n)
	if len(s.blocks) == 0 {
		return nil
	}
	return s.blocks[0]
}

// join concatenates blocks into one, full so that the next add starts a
// new block instead of reallocating this one.
func join[T float32 | float64](blocks [][]T, n int) [][]T {
	if len(blocks) <= 1 {
		return blocks
	}
	all := make([]T, 0, n)
	for _, b := range blocks {
		all = append(all, b...)
	}
	return [][]T{all[:len(all):len(all)]}
}
