package retention

import "math"

// capacityBins is the resolution of the capacity fit: the range of the
// stack positions is cut into this many bins before the monotone fit, so
// the fit costs O(n) and resolves the step to 1/4096 of the range.
const capacityBins = 4096

// point is one later turn for the capacity fit: its position in the LRU
// stack and the share of its previous context found cached.
type point struct {
	x     float64
	share float64
}

// capacity returns where a non-increasing least-squares fit of share
// against x (isotonic regression, pool-adjacent-violators, over the points
// binned by x) falls below one half: the midpoint between the largest x
// whose fitted share is at least one half and the smallest x whose fitted
// share is below it. ok is false when the fit never crosses one half from
// above (no step).
func capacity(pts []point) (float64, bool) {
	return capacityAt(len(pts), func(k int) (point, bool) { return pts[k], true })
}

// capacityAt is capacity over the points at(0..n-1) that exist, so that
// callers need not build a slice of them.
func capacityAt(n int, at func(k int) (point, bool)) (float64, bool) {
	hi, any := 0.0, false
	for k := range n {
		if p, ok := at(k); ok {
			hi, any = max(hi, p.x), true
		}
	}
	if !any {
		return 0, false
	}
	type bin struct {
		sum, n   float64
		min, max float64
	}
	bins := make([]bin, capacityBins)
	for i := range bins {
		bins[i].min, bins[i].max = math.Inf(1), math.Inf(-1)
	}
	scale := 0.0
	if hi > 0 {
		scale = (capacityBins - 1) / hi
	}
	for k := range n {
		p, ok := at(k)
		if !ok {
			continue
		}
		b := &bins[int(p.x*scale)]
		b.sum += p.share
		b.n++
		b.min = min(b.min, p.x)
		b.max = max(b.max, p.x)
	}
	// Pool adjacent violators of a non-increasing fit.
	type block struct {
		sum, n   float64
		min, max float64
	}
	var st []block
	for _, b := range bins {
		if b.n == 0 {
			continue
		}
		cur := block(b)
		for len(st) > 0 && st[len(st)-1].sum/st[len(st)-1].n < cur.sum/cur.n {
			top := st[len(st)-1]
			st = st[:len(st)-1]
			cur = block{top.sum + cur.sum, top.n + cur.n, top.min, cur.max}
		}
		st = append(st, cur)
	}
	for k := 0; k+1 < len(st); k++ {
		if st[k].sum/st[k].n >= 0.5 && st[k+1].sum/st[k+1].n < 0.5 {
			return (st[k].max + st[k+1].min) / 2, true
		}
	}
	return 0, false
}
