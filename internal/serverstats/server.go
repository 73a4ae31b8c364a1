// Package serverstats joins the series file of mtrun's scrapes of the
// server's metrics with the measured window of the records: what the
// server said (counter deltas, gauges, prefix-cache hit rate) while the
// requests ran (Join).
package serverstats

import (
	"cmp"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mtkit/mtkit/internal/iox"
	"github.com/mtkit/mtkit/internal/metrics"
	"github.com/mtkit/mtkit/internal/stats"
)

// Server is what the server's metrics said over the measured window
// (the first measured request's start to the last one's end): counters as
// deltas between the scrape at or before the window's start and the one
// at or after its end (a counter that goes down was reset: its new value
// is the increase since), gauges summarised over the scrapes in between.
type Server struct {
	File        string `json:"file"`
	WindowStart string `json:"window_start"`
	WindowEnd   string `json:"window_end"`
	// ServerSide and ClientSide are the two prefix-cache hit rates:
	// prefix_cache_hits / prefix_cache_queries deltas (SGLang: cached /
	// prompt tokens), and the records' Σ cached_tokens / Σ prompt_tokens.
	ServerSide stats.Num       `json:"server_cache_hit_rate"`
	ClientSide stats.Num       `json:"client_cache_hit_rate"`
	Total      ServerStats     `json:"total"`
	Replicas   []ReplicaReport `json:"replicas"`
	// Tiers are the prefix-cache hits of each scrape interval, local and
	// external, summed over the replicas: present when some replica
	// counts external hits (a KV connector, offloading). Not in the JSON
	// report: mtstats' cache retention analysis reads them.
	Tiers []HitInterval `json:"-"`
}

// ServerStats are the canonical quantities of one replica, or of all.
// Counter deltas are nil when no replica exposed the counter.
type ServerStats struct {
	PrefixQueries         *float64   `json:"prefix_cache_queries"`
	PrefixHits            *float64   `json:"prefix_cache_hits"`
	HitRate               stats.Num  `json:"prefix_cache_hit_rate"`
	ExternalQueries       *float64   `json:"external_prefix_cache_queries,omitempty"`
	ExternalHits          *float64   `json:"external_prefix_cache_hits,omitempty"`
	ExternalHitRate       *stats.Num `json:"external_prefix_cache_hit_rate,omitempty"`
	Preemptions           *float64   `json:"preemptions"`
	PromptTokens          *float64   `json:"prompt_tokens"`
	GenerationTokens      *float64   `json:"generation_tokens"`
	Running               Gauge      `json:"running"`
	Waiting               Gauge      `json:"waiting"`
	KVUsage               Gauge      `json:"kv_usage"`
	Scrapes, FailedScrape int        `json:"-"`
}

// Gauge summarises a gauge over the window's scrapes; null when absent.
type Gauge struct {
	Mean stats.Num `json:"mean"`
	Max  stats.Num `json:"max"`
}

// ReplicaReport is one scraped endpoint.
type ReplicaReport struct {
	Replica       int         `json:"replica"`
	URL           string      `json:"url"`
	Engine        string      `json:"engine,omitempty"`
	Scrapes       int         `json:"scrapes"`
	FailedScrapes int         `json:"failed_scrapes"`
	Stats         ServerStats `json:"stats"`
	// Timeline has one point per scrape in the window: the gauges, the
	// hit rate and preemptions since the previous scrape, and the mean
	// TTFT of the requests that started since the previous scrape.
	Timeline []TimelinePoint `json:"timeline"`
}

// TimelinePoint is one scrape of one replica. T is seconds from the
// window's start (the first point may be before it).
type TimelinePoint struct {
	T           float64   `json:"t"`
	Running     stats.Num `json:"running"`
	Waiting     stats.Num `json:"waiting"`
	KVUsage     stats.Num `json:"kv_usage"`
	HitRate     stats.Num `json:"prefix_cache_hit_rate"`
	Preemptions stats.Num `json:"preemptions"`
	Requests    int       `json:"requests_started"`
	TTFTMs      stats.Num `json:"ttft_ms_mean"`
}

// SeriesPath returns the series file that mtrun writes next to the
// records file path (records.jsonl → records.metrics.jsonl, with .gz or
// .zst, records.parquet → records.metrics.jsonl.zst), or "" when none of
// the names exists.
func SeriesPath(records string) string {
	if records == "" || records == "-" || strings.Contains(records, "=") {
		return ""
	}
	base := records
	for _, ext := range []string{".gz", ".zst", ".parquet", ".jsonl", ".json"} {
		base = strings.TrimSuffix(base, ext)
	}
	for _, suffix := range []string{"", ".zst", ".gz"} {
		p := base + ".metrics.jsonl" + suffix
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// seriesKey is one series of one replica.
type seriesKey struct {
	replica   int
	canonical string
	name      string
	labels    string
}

type obs struct {
	t int64 // unix ns
	v float64
}

type replicaSeries struct {
	url, engine     string
	scrapes, failed int
	firstOK         int64 // time of the first successful scrape
	times           []int64
	counterByCanon  map[string][]seriesKey
	gaugeAt         map[string]map[int64][]float64 // canonical → time → values
	hasFirstOK      bool
}

// readSeries loads the canonical and up rows of a series, read from in
// (decompressed) and called name in errors.
func readSeries(in io.Reader, name string) (map[int]*replicaSeries, map[seriesKey][]obs, error) {
	reps := map[int]*replicaSeries{}
	series := map[seriesKey][]obs{}
	r := metrics.NewReader(in, name)
	for r.Scan() {
		s := r.Sample()
		rs := reps[s.Replica]
		if rs == nil {
			rs = &replicaSeries{url: s.URL, counterByCanon: map[string][]seriesKey{}, gaugeAt: map[string]map[int64][]float64{}}
			reps[s.Replica] = rs
		}
		t := s.Time.UnixNano()
		switch {
		case s.Name == metrics.Up:
			rs.scrapes++
			if s.Value == nil || *s.Value == 0 {
				rs.failed++
				continue
			}
			rs.times = append(rs.times, t)
			if !rs.hasFirstOK || t < rs.firstOK {
				rs.firstOK, rs.hasFirstOK = t, true
			}
		case s.Canonical == "" || s.Value == nil:
		case s.Type == "gauge":
			if rs.engine == "" {
				rs.engine = s.Engine
			}
			m := rs.gaugeAt[s.Canonical]
			if m == nil {
				m = map[int64][]float64{}
				rs.gaugeAt[s.Canonical] = m
			}
			m[t] = append(m[t], *s.Value)
		default: // counters, and TGI's histogram sums
			k := seriesKey{s.Replica, s.Canonical, s.Name, metrics.LabelKey(s.Labels)}
			if _, ok := series[k]; !ok {
				rs.counterByCanon[s.Canonical] = append(rs.counterByCanon[s.Canonical], k)
			}
			series[k] = append(series[k], obs{t, *s.Value})
		}
	}
	if err := r.Err(); err != nil {
		return nil, nil, err
	}
	return reps, series, nil
}

// span returns the indexes of the first and last of the sorted times ts
// that bound the window: the last at or before ws (else the first) and the
// first at or after we (else the last).
func span(ts []int64, ws, we int64) (int, int) {
	i := sort.Search(len(ts), func(i int) bool { return ts[i] > ws }) - 1
	i = max(i, 0)
	j := sort.Search(len(ts), func(i int) bool { return ts[i] >= we })
	j = min(j, len(ts)-1)
	return i, max(i, j)
}

// cumulative returns, at each of the replica's successful scrape times,
// the increase of a canonical counter since the first one, summed over its
// series; nil when the replica has none. A value lower than the previous
// one is a reset: the new value is the increase since. A series first
// seen after the replica's first successful scrape was created during the
// run, from 0.
func (rs *replicaSeries) cumulative(series map[seriesKey][]obs, canon string) []float64 {
	keys := rs.counterByCanon[canon]
	if len(keys) == 0 {
		return nil
	}
	out := make([]float64, len(rs.times))
	for _, k := range keys {
		o := series[k]
		prev, have, acc := 0.0, o[0].t > rs.firstOK, 0.0
		j := 0
		for i, t := range rs.times {
			for ; j < len(o) && o[j].t <= t; j++ {
				v := o[j].v
				switch {
				case !have:
				case v >= prev:
					acc += v - prev
				default:
					acc += v
				}
				prev, have = v, true
			}
			out[i] += acc
		}
	}
	return out
}

// delta is c[j] - c[i], or nil for an absent counter.
func delta(c []float64, i, j int) *float64 {
	if c == nil {
		return nil
	}
	d := c[j] - c[i]
	return &d
}

// gauge returns the per-scrape values of a gauge (summed over label sets,
// or averaged for kv_usage) at the scrape times ts.
func (rs *replicaSeries) gauge(canon string, ts []int64) []float64 {
	m := rs.gaugeAt[canon]
	if m == nil {
		return nil
	}
	out := make([]float64, len(ts))
	for i, t := range ts {
		vs := m[t]
		if len(vs) == 0 {
			out[i] = math.NaN()
			continue
		}
		s := 0.0
		for _, v := range vs {
			s += v
		}
		if canon == metrics.KVUsage {
			s /= float64(len(vs))
		}
		out[i] = s
	}
	return out
}

func summarize(vs []float64) Gauge {
	g := Gauge{Mean: stats.Num(math.NaN()), Max: stats.Num(math.NaN())}
	n, sum, mx := 0, 0.0, math.Inf(-1)
	for _, v := range vs {
		if !math.IsNaN(v) {
			n, sum, mx = n+1, sum+v, max(mx, v)
		}
	}
	if n > 0 {
		g.Mean, g.Max = stats.Num(sum/float64(n)), stats.Num(mx)
	}
	return g
}

func addPtr(a, b *float64) *float64 {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	s := *a + *b
	return &s
}

func rate(hits, queries *float64) stats.Num {
	if hits == nil || queries == nil || *queries == 0 {
		return stats.Num(math.NaN())
	}
	return stats.Num(*hits / *queries)
}

// Join computes the Server of the series file path over the
// window [ws, we] (unix ns); client is the records' cache hit rate and pts
// the requests on the time axis (may be empty).
func Join(path string, ws, we int64, client stats.Num, pts []stats.Point) (*Server, error) {
	in, err := iox.Open(path, nil)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	return JoinReader(in, path, ws, we, client, pts)
}

// JoinReader is Join over a series read from in, already decompressed
// (a series piped on mtstats' stdin), called name in the report and in
// errors.
func JoinReader(in io.Reader, name string, ws, we int64, client stats.Num, pts []stats.Point) (*Server, error) {
	path := name
	reps, series, err := readSeries(in, name)
	if err != nil {
		return nil, err
	}
	for k := range series {
		slices.SortStableFunc(series[k], func(a, b obs) int { return cmp.Compare(a.t, b.t) })
	}
	rep := &Server{File: path, WindowStart: fmtTime(ws), WindowEnd: fmtTime(we), ClientSide: client}
	ids := make([]int, 0, len(reps))
	for id := range reps {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var running, waiting, kv []Gauge
	var hits []replicaHits
	for _, id := range ids {
		rs := reps[id]
		slices.Sort(rs.times)
		rs.times = slices.Compact(rs.times)
		rr := ReplicaReport{Replica: id, URL: rs.url, Engine: rs.engine, Scrapes: rs.scrapes, FailedScrapes: rs.failed}
		st := &rr.Stats
		if len(rs.times) > 0 {
			i, j := span(rs.times, ws, we)
			ts := rs.times[i : j+1]
			cum := map[string][]float64{}
			for _, c := range []string{metrics.PrefixQueries, metrics.PrefixHits, metrics.ExternalPrefixQuery, metrics.ExternalPrefixHits,
				metrics.Preemptions, metrics.PromptTokens, metrics.GenerationTokens} {
				cum[c] = rs.cumulative(series, c)
			}
			if cum[metrics.PrefixQueries] == nil { // SGLang: cached over prompt tokens
				cum[metrics.PrefixQueries] = cum[metrics.PromptTokens]
			}
			st.PrefixQueries, st.PrefixHits = delta(cum[metrics.PrefixQueries], i, j), delta(cum[metrics.PrefixHits], i, j)
			st.ExternalQueries, st.ExternalHits = delta(cum[metrics.ExternalPrefixQuery], i, j), delta(cum[metrics.ExternalPrefixHits], i, j)
			st.Preemptions = delta(cum[metrics.Preemptions], i, j)
			st.PromptTokens, st.GenerationTokens = delta(cum[metrics.PromptTokens], i, j), delta(cum[metrics.GenerationTokens], i, j)
			run, wait, use := rs.gauge(metrics.Running, ts), rs.gauge(metrics.Waiting, ts), rs.gauge(metrics.KVUsage, ts)
			st.Running, st.Waiting, st.KVUsage = summarize(run), summarize(wait), summarize(use)
			rr.Timeline = timeline(ts, ws, i, cum, run, wait, use, pts)
			if ext := cum[metrics.ExternalPrefixHits]; ext != nil {
				hits = append(hits, replicaHits{rs.times, cum[metrics.PrefixHits], ext})
			}
		} else {
			st.Running, st.Waiting, st.KVUsage = summarize(nil), summarize(nil), summarize(nil)
		}
		st.HitRate = rate(st.PrefixHits, st.PrefixQueries)
		if st.ExternalQueries != nil {
			r := rate(st.ExternalHits, st.ExternalQueries)
			st.ExternalHitRate = &r
		}
		t := &rep.Total
		t.PrefixQueries, t.PrefixHits = addPtr(t.PrefixQueries, st.PrefixQueries), addPtr(t.PrefixHits, st.PrefixHits)
		t.ExternalQueries, t.ExternalHits = addPtr(t.ExternalQueries, st.ExternalQueries), addPtr(t.ExternalHits, st.ExternalHits)
		t.Preemptions = addPtr(t.Preemptions, st.Preemptions)
		t.PromptTokens, t.GenerationTokens = addPtr(t.PromptTokens, st.PromptTokens), addPtr(t.GenerationTokens, st.GenerationTokens)
		t.Scrapes, t.FailedScrape = t.Scrapes+rr.Scrapes, t.FailedScrape+rr.FailedScrapes
		running, waiting, kv = append(running, st.Running), append(waiting, st.Waiting), append(kv, st.KVUsage)
		rep.Replicas = append(rep.Replicas, rr)
	}
	t := &rep.Total
	t.HitRate = rate(t.PrefixHits, t.PrefixQueries)
	if t.ExternalQueries != nil {
		r := rate(t.ExternalHits, t.ExternalQueries)
		t.ExternalHitRate = &r
	}
	// Running and waiting add up over replicas; KV usage is their mean.
	t.Running, t.Waiting, t.KVUsage = combine(running, true), combine(waiting, true), combine(kv, false)
	rep.ServerSide = t.HitRate
	rep.Tiers = hitIntervals(hits)
	return rep, nil
}

// HitInterval is what the server counted between two scrapes: prefix-cache
// hit tokens found in the local tier (vLLM's prefix_cache_hits) and in the
// external one (external_prefix_cache_hits).
type HitInterval struct {
	Start, End      int64 // unix ns
	Local, External float64
}

// replicaHits is one replica's cumulative hit counters at its scrape times
// (local may be nil: no local counter).
type replicaHits struct {
	times           []int64
	local, external []float64
}

// hitIntervals puts the replicas' cumulative hit counters on the union of
// their scrape times (a replica's count at a time is that of its last
// scrape at or before it, 0 before its first) and returns the increase
// between each two consecutive times; nil without replicas.
func hitIntervals(reps []replicaHits) []HitInterval {
	var grid []int64
	for _, r := range reps {
		grid = append(grid, r.times...)
	}
	slices.Sort(grid)
	grid = slices.Compact(grid)
	at := func(r replicaHits, c []float64, t int64) float64 {
		k := sort.Search(len(r.times), func(k int) bool { return r.times[k] > t }) - 1
		if c == nil || k < 0 {
			return 0
		}
		return c[k]
	}
	var out []HitInterval
	var prevL, prevE float64
	for k, t := range grid {
		var l, e float64
		for _, r := range reps {
			l += at(r, r.local, t)
			e += at(r, r.external, t)
		}
		if k > 0 {
			out = append(out, HitInterval{Start: grid[k-1], End: t, Local: l - prevL, External: e - prevE})
		}
		prevL, prevE = l, e
	}
	return out
}

// combine adds (or averages) the replicas' means; the max is the largest
// replica's max, or the sum of the maxima when adding (an upper bound).
func combine(gs []Gauge, add bool) Gauge {
	var means, maxes []float64
	for _, g := range gs {
		if !math.IsNaN(float64(g.Mean)) {
			means, maxes = append(means, float64(g.Mean)), append(maxes, float64(g.Max))
		}
	}
	if len(means) == 0 {
		return summarize(nil)
	}
	var m, x float64
	for i := range means {
		m += means[i]
		if add {
			x += maxes[i]
		} else {
			x = max(x, maxes[i])
		}
	}
	if !add {
		m /= float64(len(means))
	}
	return Gauge{Mean: stats.Num(m), Max: stats.Num(x)}
}

// timeline builds one point per scrape time in ts (which start at index
// first of the replica's scrape times, as the cumulative counters do).
func timeline(ts []int64, ws int64, first int, cum map[string][]float64, run, wait, use []float64, pts []stats.Point) []TimelinePoint {
	at := func(vs []float64, i int) stats.Num {
		if vs == nil {
			return stats.Num(math.NaN())
		}
		return stats.Num(vs[i])
	}
	starts := make([]stats.Point, len(pts))
	copy(starts, pts)
	slices.SortFunc(starts, func(a, b stats.Point) int { return cmp.Compare(a.Start, b.Start) })
	k := sort.Search(len(starts), func(k int) bool { return int64(starts[k].Start*1e9) > ts[0] })
	out := make([]TimelinePoint, len(ts))
	for i, t := range ts {
		p := TimelinePoint{T: float64(t-ws) / 1e9, Running: at(run, i), Waiting: at(wait, i), KVUsage: at(use, i),
			HitRate: stats.Num(math.NaN()), Preemptions: stats.Num(math.NaN()), TTFTMs: stats.Num(math.NaN())}
		if i > 0 {
			p.HitRate = rate(delta(cum[metrics.PrefixHits], first+i-1, first+i), delta(cum[metrics.PrefixQueries], first+i-1, first+i))
			if pre := delta(cum[metrics.Preemptions], first+i-1, first+i); pre != nil {
				p.Preemptions = stats.Num(*pre)
			}
			sum, n := 0.0, 0
			for ; k < len(starts) && int64(starts[k].Start*1e9) <= t; k++ {
				p.Requests++
				if !math.IsNaN(starts[k].TTFTMs) {
					sum, n = sum+starts[k].TTFTMs, n+1
				}
			}
			if n > 0 {
				p.TTFTMs = stats.Num(sum / float64(n))
			}
		}
		out[i] = p
	}
	return out
}

func fmtTime(ns int64) string { return time.Unix(0, ns).UTC().Format(time.RFC3339Nano) }
