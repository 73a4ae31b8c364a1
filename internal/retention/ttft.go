package retention

import (
	"cmp"
	"slices"
)

// minFitTurns is the fewest first turns the TTFT model is fitted on.
const minFitTurns = 8

// fitTTFT fits TTFT = base + perToken × prompt tokens on the first turns
// (turn 0), which find nothing of their own conversation cached: a robust
// least-squares line through the medians of up to targetBuckets
// equal-count bins of the first turns sorted by prompt length, each bin
// weighted by its count. A shared prefix cached for every first turn
// lowers base by its prefill time, as it lowers a later turn's miss. It
// returns nil with fewer than minFitTurns first turns, when the bins'
// prompt lengths span less than a fifth of their median, or when the slope
// is not positive.
func (p *Pass) fitTTFT() *Fit {
	type obs struct{ prompt, ttft float64 }
	var first []obs
	for i := range p.reqs.len() {
		r := p.reqs.at(i)
		if r.first && r.ttft >= 0 {
			first = append(first, obs{float64(r.prompt), float64(r.ttft) / 1e6})
		}
	}
	if len(first) < minFitTurns {
		return nil
	}
	slices.SortFunc(first, func(a, b obs) int { return cmp.Compare(a.prompt, b.prompt) })
	nb := min(targetBuckets, len(first)/4)
	var xs, ys, ws []float64
	var px, py []float64
	for b := range nb {
		lo, hi := b*len(first)/nb, (b+1)*len(first)/nb
		px, py = px[:0], py[:0]
		for _, o := range first[lo:hi] {
			px = append(px, o.prompt)
			py = append(py, o.ttft)
		}
		xs = append(xs, median(px))
		ys = append(ys, median(py))
		ws = append(ws, float64(hi-lo))
	}
	if xs[len(xs)-1]-xs[0] < xs[len(xs)/2]/5 {
		return nil
	}
	var sw, sx, sy float64
	for k := range xs {
		sw += ws[k]
		sx += ws[k] * xs[k]
		sy += ws[k] * ys[k]
	}
	mx, my := sx/sw, sy/sw
	var sxx, sxy float64
	for k := range xs {
		sxx += ws[k] * (xs[k] - mx) * (xs[k] - mx)
		sxy += ws[k] * (xs[k] - mx) * (ys[k] - my)
	}
	if sxx == 0 || sxy <= 0 {
		return nil
	}
	b := sxy / sxx
	return &Fit{BaseMs: my - b*mx, PerTokenMs: b, FirstTurns: len(first)}
}
