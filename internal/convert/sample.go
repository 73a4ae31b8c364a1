package convert

import (
	"math/rand/v2"
	"slices"
)

// sampler keeps a uniform random sample of at most n items from a stream
// (reservoir sampling, algorithm R), seeded so that the same input, seed
// and n always give the same sample. Memory holds n items.
type sampler struct {
	n    int
	rng  *rand.Rand
	seen int
	kept []sampled
}

type sampled struct {
	seq int
	it  item
}

func newSampler(n int, seed uint64) *sampler {
	return &sampler{n: n, rng: rand.New(rand.NewPCG(seed, 0x6d74636f6e76))}
}

// add offers it; it returns false if it (or an item it replaced) is
// dropped, so the caller can count not_sampled.
func (s *sampler) add(it item) (dropped bool) {
	seq := s.seen
	s.seen++
	if len(s.kept) < s.n {
		s.kept = append(s.kept, sampled{seq, it})
		return false
	}
	j := s.rng.IntN(s.seen)
	if j < s.n {
		s.kept[j] = sampled{seq, it}
	}
	return true
}

// items returns the sample in input order.
func (s *sampler) items() []item {
	slices.SortFunc(s.kept, func(a, b sampled) int { return a.seq - b.seq })
	out := make([]item, len(s.kept))
	for i, k := range s.kept {
		out[i] = k.it
	}
	return out
}
