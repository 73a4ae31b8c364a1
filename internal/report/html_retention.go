package report

import (
	"fmt"
	"slices"

	"github.com/mtkit/mtkit/internal/retention"
)

// retentionCharts draws the cache retention profiles: the cached share
// and the median TTFT by reuse distance in tokens, with the capacity
// marked (the step), and the cached share by idle seconds; one line per
// input under --compare, each input's lines and marks in its colour (the
// local tier dashed, the external tier dotted).
func retentionCharts(rets []LabeledRetention) []ChartSpec {
	var drawn []LabeledRetention
	for _, r := range rets {
		if r.Result != nil && len(r.Profile) > 0 {
			drawn = append(drawn, r)
		}
	}
	if len(drawn) == 0 {
		return nil
	}
	mid := func(p []retention.TokenBucket, i int) float64 {
		w := float64(p[0].Hi - p[0].Lo)
		return float64(p[i].Lo) + w/2
	}
	var xs, sxs []float64
	for _, r := range drawn {
		for i := range r.Profile {
			xs = append(xs, mid(r.Profile, i))
		}
		for _, b := range r.ProfileSeconds {
			w := r.ProfileSeconds[0].Hi - r.ProfileSeconds[0].Lo
			sxs = append(sxs, b.Lo+w/2)
		}
	}
	slices.Sort(xs)
	xs = slices.Compact(xs)
	slices.Sort(sxs)
	sxs = slices.Compact(sxs)
	share := ChartSpec{Title: "Cache retention: cached share by reuse distance", Note: "the share of each later user turn's (request's) previous context the server had cached, against the tokens of other conversations touched since (LRU stack distance); the step is the cache's effective capacity",
		XLabel: "reuse distance (tokens of other conversations)", YLabel: "cached share (%)", Percent: true, Points: true, X: xs}
	ttft := ChartSpec{Title: "TTFT by reuse distance", Note: "median TTFT of the later user turns (requests) in each reuse-distance bucket: what a miss costs",
		XLabel: "reuse distance (tokens of other conversations)", YLabel: "TTFT p50 (ms)", Points: true, X: xs}
	idle := ChartSpec{Title: "Cache retention by idle time", Note: "the cached share against the seconds since the conversation's previous request ended",
		XLabel: "idle seconds", YLabel: "cached share (%)", Percent: true, Points: true, X: sxs}
	compare := len(drawn) > 1
	for i, r := range drawn {
		name := func(s string) string {
			if compare {
				return r.Key + " " + s
			}
			return s
		}
		// series is a line of r: under --compare in r's colour, so that
		// an input keeps one colour in every chart.
		series := func(label string, ys []*float64) chartSeries {
			s := newSeries(name(label), ys)
			if compare {
				s.Colour = &i
			}
			return s
		}
		col := func(get func(b *retention.TokenBucket) *float64, pct bool) []*float64 {
			ys := make([]*float64, len(xs))
			for i := range r.Profile {
				k, _ := slices.BinarySearch(xs, mid(r.Profile, i))
				if v := get(&r.Profile[i]); v != nil {
					y := *v
					if pct {
						y *= 100
					}
					ys[k] = &y
				}
			}
			return ys
		}
		basis := "cached"
		if r.Basis == retention.BasisTTFT {
			basis = "cached (from TTFT)"
		}
		share.Series = append(share.Series, series(basis, col(func(b *retention.TokenBucket) *float64 { return b.CachedShare }, true)))
		if r.Tiers != nil {
			local := series("local tier", col(func(b *retention.TokenBucket) *float64 { return b.LocalShare }, true))
			external := series("external tier", col(func(b *retention.TokenBucket) *float64 { return b.ExternalShare }, true))
			local.Dash, external.Dot = compare, compare // one colour: told apart by the line
			share.Series = append(share.Series, local, external)
		}
		ttft.Series = append(ttft.Series, series("TTFT p50", col(func(b *retention.TokenBucket) *float64 { return b.TTFTP50Ms }, false)))
		ys := make([]*float64, len(sxs))
		for _, b := range r.ProfileSeconds {
			w := r.ProfileSeconds[0].Hi - r.ProfileSeconds[0].Lo
			k, _ := slices.BinarySearch(sxs, b.Lo+w/2)
			if b.CachedShare != nil {
				y := 100 * *b.CachedShare
				ys[k] = &y
			}
		}
		idle.Series = append(idle.Series, series(basis, ys))
		var marks []chartMark
		mark := func(x float64, label string) {
			m := chartMark{X: x, Label: name(label)}
			if compare {
				m.Colour = &i
			}
			marks = append(marks, m)
		}
		if c := r.CapacityTokens; c != nil {
			mark(*c, fmt.Sprintf("capacity %.0f", *c))
		}
		if r.Tiers != nil && r.Tiers.LocalCapacityTokens != nil {
			c := *r.Tiers.LocalCapacityTokens
			mark(c, fmt.Sprintf("local %.0f", c))
		}
		share.Marks = append(share.Marks, marks...)
		ttft.Marks = append(ttft.Marks, marks...)
	}
	return []ChartSpec{share, ttft, idle}
}
