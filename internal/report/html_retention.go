package report

import (
	"fmt"
	"slices"

	"github.com/mtkit/mtkit/internal/retention"
)

// retentionCharts draws the cache retention profiles: the cached share
// and the median TTFT by reuse distance in tokens, with the capacity
// marked (the step), and the cached share by idle seconds; one line per
// input under --compare.
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
	for _, r := range drawn {
		name := func(s string) string {
			if len(drawn) > 1 {
				return r.Key + " " + s
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
		share.Series = append(share.Series, newSeries(name(basis), col(func(b *retention.TokenBucket) *float64 { return b.CachedShare }, true)))
		if r.Tiers != nil {
			share.Series = append(share.Series,
				newSeries(name("local tier"), col(func(b *retention.TokenBucket) *float64 { return b.LocalShare }, true)),
				newSeries(name("external tier"), col(func(b *retention.TokenBucket) *float64 { return b.ExternalShare }, true)))
		}
		ttft.Series = append(ttft.Series, newSeries(name("TTFT p50"), col(func(b *retention.TokenBucket) *float64 { return b.TTFTP50Ms }, false)))
		ys := make([]*float64, len(sxs))
		for _, b := range r.ProfileSeconds {
			w := r.ProfileSeconds[0].Hi - r.ProfileSeconds[0].Lo
			k, _ := slices.BinarySearch(sxs, b.Lo+w/2)
			if b.CachedShare != nil {
				y := 100 * *b.CachedShare
				ys[k] = &y
			}
		}
		idle.Series = append(idle.Series, newSeries(name(basis), ys))
		var marks []chartMark
		if c := r.CapacityTokens; c != nil {
			marks = append(marks, chartMark{X: *c, Label: name(fmt.Sprintf("capacity %.0f", *c))})
		}
		if r.Tiers != nil && r.Tiers.LocalCapacityTokens != nil {
			c := *r.Tiers.LocalCapacityTokens
			marks = append(marks, chartMark{X: c, Label: name(fmt.Sprintf("local %.0f", c))})
		}
		share.Marks = append(share.Marks, marks...)
		ttft.Marks = append(ttft.Marks, marks...)
	}
	return []ChartSpec{share, ttft, idle}
}
