package retention

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"sort"
)

// TierInterval is what the server's metrics counted between two scrapes,
// summed over its replicas: prefix-cache hit tokens found in the local
// (GPU) cache and in the external one (a KV connector, offloading).
type TierInterval struct {
	Start, End      int64 // unix ns
	Local, External float64
}

// Tiers is the split of prefix-cache hits between the local and the
// external tier.
type Tiers struct {
	// LocalCapacityTokens and TotalCapacityTokens are where the fitted
	// local share and the fitted total cached share fall below one half.
	LocalCapacityTokens *float64 `json:"local_capacity_tokens"`
	TotalCapacityTokens *float64 `json:"total_capacity_tokens"`
	// LocalHitTokens and ExternalHitTokens are the server's counts over
	// all intervals.
	LocalHitTokens    float64 `json:"local_hit_tokens"`
	ExternalHitTokens float64 `json:"external_hit_tokens"`
	// Stages is the split per load stage, when the run had stages.
	Stages []StageTiers `json:"stages,omitempty"`
}

// StageTiers is the hit split over one stage's window (its first
// profiled request's start to its last one's end), intervals that overlap
// the window counted in proportion to the overlap.
type StageTiers struct {
	Stage             int      `json:"stage"`
	LocalHitTokens    float64  `json:"local_hit_tokens"`
	ExternalHitTokens float64  `json:"external_hit_tokens"`
	ExternalShare     *float64 `json:"external_share"`
}

// tiers attributes every request's cached tokens to the two tiers and
// returns, with the Tiers, the local tier's part of each row's share (NaN
// when the row's hits could not be attributed; the rest is external). The metrics only say how many
// hits of each tier an interval had, so within an interval the requests
// that started in it are taken in order of reuse distance, and the local
// tier's part of their cached tokens goes to the nearest ones: an LRU
// hierarchy keeps the most recently used blocks in the first tier.
func (p *Pass) tiers(ivs []TierInterval, rows []row, others []reuse) (*Tiers, []float64) {
	t := &Tiers{}
	ivs = slices.Clone(ivs)
	slices.SortFunc(ivs, func(a, b TierInterval) int { return cmp.Compare(a.End, b.End) })
	for _, iv := range ivs {
		t.LocalHitTokens += iv.Local
		t.ExternalHitTokens += iv.External
	}
	dist := make([]int64, p.reqs.len())
	for k := range rows {
		dist[rows[k].i] = rows[k].tokens
	}
	for _, u := range others {
		dist[u.i] = u.tokens
	}
	per := make([][]int32, len(ivs))
	for i := range p.reqs.len() {
		r := p.reqs.at(i)
		if r.cached <= 0 {
			continue
		}
		k := sort.Search(len(ivs), func(k int) bool { return ivs[k].End >= r.start })
		if k < len(ivs) && ivs[k].Start < r.start {
			per[k] = append(per[k], int32(i))
		}
	}
	local := make([]float64, p.reqs.len())
	for i := range local {
		local[i] = math.NaN()
	}
	for k, idx := range per {
		hits := ivs[k].Local + ivs[k].External
		if hits <= 0 {
			continue
		}
		slices.SortFunc(idx, func(a, b int32) int { return cmp.Or(cmp.Compare(dist[a], dist[b]), cmp.Compare(a, b)) })
		var sum float64
		for _, i := range idx {
			sum += float64(p.reqs.at(int(i)).cached)
		}
		budget := sum * ivs[k].Local / hits
		for _, i := range idx {
			l := min(float64(p.reqs.at(int(i)).cached), budget)
			local[i] = l
			budget -= l
		}
	}
	shares := make([]float64, len(rows)) // the local tier's part of each row's share
	var lpts, tpts []point
	for k := range rows {
		w := &rows[k]
		c := p.reqs.at(int(w.i)).cached
		shares[k] = math.NaN()
		if math.IsNaN(w.share) {
			continue
		}
		switch {
		case c == 0:
			shares[k] = 0
		case !math.IsNaN(local[w.i]):
			shares[k] = w.share * local[w.i] / float64(c)
		default:
			continue
		}
		x := float64(w.tokens) + float64(w.prevCtx)/2
		lpts = append(lpts, point{x, shares[k]})
		tpts = append(tpts, point{x, w.share})
	}
	if c, ok := capacity(lpts); ok {
		t.LocalCapacityTokens = &c
	}
	if c, ok := capacity(tpts); ok {
		t.TotalCapacityTokens = &c
	}
	t.Stages = p.stageTiers(ivs)
	return t, shares
}

// stageTiers splits the intervals' hits over the stages' windows.
func (p *Pass) stageTiers(ivs []TierInterval) []StageTiers {
	type window struct{ lo, hi int64 }
	wins := map[int32]*window{}
	for i := range p.reqs.len() {
		r := p.reqs.at(i)
		if !r.counted || r.stage <= 0 {
			continue
		}
		w := wins[r.stage]
		if w == nil {
			w = &window{r.start, r.end}
			wins[r.stage] = w
		}
		w.lo, w.hi = min(w.lo, r.start), max(w.hi, r.end)
	}
	var out []StageTiers
	for _, s := range slices.Sorted(maps.Keys(wins)) {
		w := wins[s]
		st := StageTiers{Stage: int(s)}
		for _, iv := range ivs {
			if iv.End <= iv.Start {
				continue
			}
			ov := min(iv.End, w.hi) - max(iv.Start, w.lo)
			if ov <= 0 {
				continue
			}
			f := float64(ov) / float64(iv.End-iv.Start)
			st.LocalHitTokens += f * iv.Local
			st.ExternalHitTokens += f * iv.External
		}
		if h := st.LocalHitTokens + st.ExternalHitTokens; h > 0 {
			st.ExternalShare = ptr(st.ExternalHitTokens / h)
		}
		out = append(out, st)
	}
	return out
}
