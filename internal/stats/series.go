package stats

// blockMax is the largest block of a sampleSet: 64 Ki samples, 512 KiB.
const blockMax = 64 << 10

// sampleSet holds the samples of one metric in blocks that are never
// copied as the set grows, so a set of n samples takes little more than
// 8n bytes (a doubling slice would take up to 16n, 24n while growing).
type sampleSet struct {
	blocks [][]float64
	n      int
}

func (s *sampleSet) add(x float64) {
	k := len(s.blocks) - 1
	if k < 0 || len(s.blocks[k]) == cap(s.blocks[k]) {
		size := min(blockMax, max(256, s.n))
		s.blocks = append(s.blocks, make([]float64, 0, size))
		k++
	}
	s.blocks[k] = append(s.blocks[k], x)
	s.n++
}

// Len is the number of samples.
func (s *sampleSet) Len() int { return s.n }

// flat returns all samples in one slice that the caller may reorder (sort);
// the set keeps that slice as its only block, so memory is not doubled.
func (s *sampleSet) flat() []float64 {
	switch len(s.blocks) {
	case 0:
		return nil
	case 1:
		return s.blocks[0]
	}
	all := make([]float64, 0, s.n)
	for _, b := range s.blocks {
		all = append(all, b...)
	}
	// Full so that the next add starts a new block instead of appending
	// to (and reallocating) this one.
	s.blocks = [][]float64{all[:len(all):len(all)]}
	return all
}
