package retention

import (
	"math"
	"slices"
	"sync"

	"github.com/mtkit/mtkit/internal/stats"
)

// Bases of the cached share.
const (
	BasisCachedTokens = "cached_tokens" // the server's usage.prompt_tokens_details.cached_tokens
	BasisTTFT         = "ttft"          // estimated from TTFT (no cached_tokens reported)
)

// targetBuckets is the most buckets a profile has; a profile of n
// requests has at most n/perBucket, and at least minBuckets.
const (
	targetBuckets = 20
	perBucket     = 10
	minBuckets    = 4
)

// bucketsFor returns how many buckets a profile of n requests aims at.
func bucketsFor(n int) int { return max(minBuckets, min(targetBuckets, n/perBucket)) }

// Result is the retention analysis of a run: mtstats' cache_retention.
// Figures that the records cannot give are nil (JSON null).
type Result struct {
	// Basis is how the cached share was found: BasisCachedTokens or
	// BasisTTFT; "" when neither is possible.
	Basis string `json:"basis"`
	// CapacityTokens is the effective capacity: the LRU stack position
	// (tokens) at which the fitted cached share falls below one half.
	CapacityTokens *float64 `json:"capacity_tokens"`
	// CapacityConversations is the same in conversations.
	CapacityConversations *float64 `json:"capacity_conversations"`
	// Profile is the retention profile by reuse distance in tokens.
	Profile []TokenBucket `json:"profile"`
	// Tiers splits hits into local and external (offloaded) ones, when
	// the server's metrics do.
	Tiers *Tiers `json:"tiers,omitempty"`

	// Requests is the number of later turns profiled.
	Requests int `json:"requests"`
	// SharedPrefixTokens is the largest shared prefix detected: the
	// cached tokens of a conversation's first request.
	SharedPrefixTokens int64 `json:"shared_prefix_tokens"`
	// ProfileSeconds is the retention profile by idle seconds.
	ProfileSeconds []SecondsBucket `json:"profile_seconds"`
	// Fit is the TTFT model of the ttft basis.
	Fit *Fit `json:"ttft_fit,omitempty"`
	// Note says why a figure is missing.
	Note string `json:"note,omitempty"`
}

// Cell is the figures of one bucket of a profile.
type Cell struct {
	Requests int `json:"requests"`
	// CachedShare is the mean over the bucket's requests of the share of
	// the previous context (shared prefix left out) found cached.
	CachedShare *float64 `json:"cached_share"`
	TTFTP50Ms   *float64 `json:"ttft_p50_ms"`
	// TTFTPerUncachedTokenMs is Σ TTFT / Σ (prompt − cached tokens) over
	// the bucket's requests; nil on the ttft basis.
	TTFTPerUncachedTokenMs *float64 `json:"ttft_per_uncached_token_ms"`
	// LocalShare and ExternalShare split CachedShare by tier.
	LocalShare    *float64 `json:"local_share,omitempty"`
	ExternalShare *float64 `json:"external_share,omitempty"`
}

// TokenBucket is the requests whose reuse distance in tokens is in
// [Lo, Hi) (the last bucket: [Lo, Hi]).
type TokenBucket struct {
	Lo                   int64    `json:"reuse_tokens_lo"`
	Hi                   int64    `json:"reuse_tokens_hi"`
	SecondsP50           *float64 `json:"reuse_seconds_p50"`
	ConversationsP50     float64  `json:"reuse_conversations_p50"`
	PrevContextTokensP50 float64  `json:"previous_context_tokens_p50"`
	Cell
}

// SecondsBucket is the requests whose idle time is in [Lo, Hi) seconds
// (the last bucket: [Lo, Hi]).
type SecondsBucket struct {
	Lo        float64 `json:"reuse_seconds_lo"`
	Hi        float64 `json:"reuse_seconds_hi"`
	TokensP50 float64 `json:"reuse_tokens_p50"`
	Cell
}

// Fit is TTFT = BaseMs + PerTokenMs × prompt tokens, fitted on the first
// turns (cache misses but for a shared prefix).
type Fit struct {
	BaseMs     float64 `json:"base_ms"`
	PerTokenMs float64 `json:"per_token_ms"`
	FirstTurns int     `json:"first_turns"`
}

// row is one profiled later turn: 48 bytes, with what the profiles read
// of its request, so that they read the rows alone, in order. The tier
// split of its share, when there is one, is kept apart (local).
type row struct {
	i        int32 // request index
	convs    int32
	prevCtx  int32 // previous context less the shared prefix
	uncached int32 // prompt less cached tokens; noCached when not reported
	tokens   int64
	secs     float64
	share    float64 // NaN when unknown
	ttft     int64   // ns; -1 when not recorded
}

// noCached is row.uncached when the server reported no cached tokens: no
// difference of two counts in [0, MaxInt32] is.
const noCached = math.MinInt32

// ttftMs is the TTFT in ms, NaN when not recorded.
func ttftMs(ns int64) float64 {
	if ns < 0 {
		return math.NaN()
	}
	return float64(ns) / 1e6
}

// Options are the inputs of Result besides the records.
type Options struct {
	// Tiers are the server's local and external prefix-cache hits per
	// scrape interval; nil when the metrics do not split them.
	Tiers []TierInterval
}

// Result computes the analysis of the requests added so far: Analyze,
// then the tier split of o.
func (p *Pass) Result(o Options) *Result { return p.Analyze().Result(o) }

// Analysis is the part of the analysis that needs no server metrics:
// everything but the tier split. Pass.Analyze computes it, so that it can
// run while the caller reads the server's metrics; Result adds the tiers.
type Analysis struct {
	p   *Pass
	res *Result
	// rows is the profiled later turns, others the reuses of the rest.
	rows   []row
	others []reuse
	// tokens and seconds are the profiles' buckets, each the rows it holds
	// (the non-empty buckets of res.Profile and res.ProfileSeconds).
	tokens, seconds [][]int32
}

// Analyze computes the analysis of the requests added so far, without
// the tier split. The Pass must not change until it returns.
func (p *Pass) Analyze() *Analysis {
	res := &Result{Profile: []TokenBucket{}, ProfileSeconds: []SecondsBucket{}}
	shared := p.sharedPrefixes()
	for _, s := range shared {
		res.SharedPrefixTokens = max(res.SharedPrefixTokens, int64(s))
	}
	// The rows, made as the sweep finds the reuses: one array a later
	// turn, with the few reuses that are not profiled apart (the tier
	// split orders them too).
	rows := make([]row, 0, p.later)
	var others []reuse
	reported := false
	for u := range distances(&p.reqs, int(p.nconv), shared) {
		r := p.reqs.at(int(u.i))
		if !r.counted {
			others = append(others, u)
			continue
		}
		pv := p.reqs.at(int(u.prev))
		w := row{i: u.i, tokens: u.tokens, convs: u.convs, secs: float64(r.start-pv.end) / 1e9,
			prevCtx: pv.ctx - shared[r.conv], share: math.NaN(), ttft: r.ttft, uncached: noCached}
		if r.cached >= 0 {
			reported = true
			w.uncached = r.prompt - r.cached
			if w.prevCtx > 0 {
				w.share = clamp01(float64(r.cached-shared[r.conv]) / float64(w.prevCtx))
			}
		}
		rows = append(rows, w)
	}
	res.Requests = len(rows)
	switch {
	case len(rows) == 0:
		res.Note = "no later turn of a conversation to profile"
	case reported:
		res.Basis = BasisCachedTokens
	default:
		res.Fit = p.fitTTFT()
		if res.Fit == nil {
			res.Note = "the server reports no cached_tokens, and the first turns do not give a TTFT model (fewer than 8 with a TTFT, or their prompt lengths too alike)"
			break
		}
		res.Basis = BasisTTFT
		for k := range rows {
			w := &rows[k]
			r := p.reqs.at(int(w.i))
			if r.ttft < 0 || w.prevCtx <= 0 {
				continue
			}
			miss := res.Fit.BaseMs + res.Fit.PerTokenMs*float64(r.prompt)
			w.share = clamp01((miss - ttftMs(r.ttft)) / (res.Fit.PerTokenMs * float64(w.prevCtx)))
		}
	}
	a := &Analysis{p: p, res: res, others: others, rows: rows}
	// The profiles and the capacity fits only read: each profile on a
	// goroutine of its own, with its own buffers (20 bytes a row), so
	// that the analysis uses both cores once mtstats' report is done.
	var wg sync.WaitGroup
	wg.Go(func() { res.Profile, a.tokens = newProfiler(rows).tokens() })
	wg.Go(func() { res.ProfileSeconds, a.seconds = newProfiler(rows).seconds() })
	defer wg.Wait()
	if res.Basis != "" {
		if c, ok := capacityAt(len(rows), func(k int) (point, bool) {
			w := &rows[k]
			return point{float64(w.tokens) + float64(w.prevCtx)/2, w.share}, !math.IsNaN(w.share)
		}); ok {
			res.CapacityTokens = &c
		}
		if c, ok := capacityAt(len(rows), func(k int) (point, bool) {
			w := &rows[k]
			return point{float64(w.convs) + 0.5, w.share}, !math.IsNaN(w.share)
		}); ok {
			res.CapacityConversations = &c
		}
		if res.CapacityTokens == nil && res.Note == "" {
			res.Note = "the cached share never falls below one half after being above it: no step"
		}
	}
	return a
}

// Result completes the analysis with the tier split of o's intervals,
// when they are given and the basis is cached_tokens. Call it once.
func (a *Analysis) Result(o Options) *Result {
	res := a.res
	if res.Basis != BasisCachedTokens || o.Tiers == nil {
		return res
	}
	var local []float64 // the local tier's part of each row's share
	res.Tiers, local = a.p.tiers(o.Tiers, a.rows, a.others)
	for b, idx := range a.tokens {
		res.Profile[b].LocalShare, res.Profile[b].ExternalShare = tierShares(a.rows, local, idx)
	}
	for b, idx := range a.seconds {
		res.ProfileSeconds[b].LocalShare, res.ProfileSeconds[b].ExternalShare = tierShares(a.rows, local, idx)
	}
	return res
}

// sharedPrefixes numbers the conversations (number) and returns per
// conversation the tokens it shares with others: the cached tokens of its
// first request, when that request is turn 0 (nothing of the conversation
// itself can be cached then).
func (p *Pass) sharedPrefixes() []int32 {
	p.number()
	shared := make([]int32, int(p.nconv))
	first := make([]int64, int(p.nconv))
	for c := range first {
		first[c] = math.MaxInt64
	}
	for i := range p.reqs.len() {
		r := p.reqs.at(i)
		if r.start >= first[r.conv] {
			continue
		}
		first[r.conv] = r.start
		shared[r.conv] = 0
		if r.first && r.cached > 0 {
			shared[r.conv] = r.cached
		}
	}
	return shared
}

func clamp01(x float64) float64 { return max(0, min(1, x)) }

// median is the median of xs (reordered).
func median(xs []float64) float64 { return stats.QuantileSelect(xs, 0.5) }

// ptr is stats.Finite: the figure, or nil (JSON null) when undefined.
func ptr(x float64) *float64 { return stats.Finite(x) }

// grid is a bucket width of m × 10^e.
type grid struct {
	m float64
	e int
}

// nice returns the smallest width of 1, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 ×
// 10^e at least x (1 when x ≤ 0).
func nice(x float64) grid {
	if x <= 0 {
		return grid{1, 0}
	}
	e := int(math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 1.5, 2, 2.5, 3, 4, 5, 6, 8} {
		if (grid{m, e}).edge(1) >= x*(1-1e-12) {
			return grid{m, e}
		}
	}
	return grid{1, e + 1}
}

// edge returns b widths, b × m × 10^e, as the nearest float64 to the
// decimal (b × m is exact, and so is the power of ten it is scaled by).
func (g grid) edge(b int) float64 {
	x := float64(b) * g.m
	if g.e >= 0 {
		return x * math.Pow10(g.e)
	}
	return x / math.Pow10(-g.e)
}

// cut returns the bucket grid and count for values in [0, ∞) whose 99th
// percentile is q99: at most target buckets of a round width up to q99,
// the last one open-ended; whole numbers when integer.
func cut(q99 float64, target int, integer bool) (g grid, n int) {
	g = nice(q99 / float64(target))
	if integer && g.edge(1) < 1 {
		g = grid{1, 0}
	}
	return g, int(q99/g.edge(1)) + 1
}

// profiler builds the profiles of rows in buffers of a value per row
// that the profiles share.
type profiler struct {
	rows []row
	// buf is the values of a figure in order of bucket, bucket each
	// row's bucket.
	buf    []float64
	bucket []int32
}

func newProfiler(rows []row) *profiler {
	n := len(rows)
	return &profiler{rows: rows, buf: make([]float64, n), bucket: make([]int32, n)}
}

// q99 returns the 99th percentile of x over the rows.
func (pr *profiler) q99(x func(*row) float64) float64 {
	for k := range pr.rows {
		pr.buf[k] = x(&pr.rows[k])
	}
	return stats.QuantileSelect(pr.buf, 0.99)
}

// rowTokens and rowSeconds are the values that cut the two profiles'
// buckets.
func rowTokens(w *row) float64  { return float64(w.tokens) }
func rowSeconds(w *row) float64 { return max(0, w.secs) }

// tokens buckets the rows by reuse distance in tokens; it returns the
// buckets and the rows of each.
func (pr *profiler) tokens() ([]TokenBucket, [][]int32) {
	rows := pr.rows
	if len(rows) == 0 {
		return []TokenBucket{}, nil
	}
	g, n := cut(pr.q99(rowTokens), bucketsFor(len(rows)), true)
	groups := pr.group(rowTokens, g.edge(1), n)
	secs := pr.medians(groups, func(w *row) float64 { return w.secs })
	convs := pr.medians(groups, func(w *row) float64 { return float64(w.convs) })
	prevCtx := pr.medians(groups, func(w *row) float64 { return float64(w.prevCtx) })
	cells := pr.cells(groups)
	out := make([]TokenBucket, 0, n)
	kept := make([][]int32, 0, n)
	for b, idx := range groups {
		if len(idx) == 0 {
			continue
		}
		kept = append(kept, idx)
		hi := int64(g.edge(b + 1))
		if b == n-1 {
			for _, k := range idx {
				hi = max(hi, rows[k].tokens)
			}
		}
		out = append(out, TokenBucket{
			Lo: int64(g.edge(b)), Hi: hi,
			SecondsP50:           ptr(secs[b]),
			ConversationsP50:     convs[b],
			PrevContextTokensP50: prevCtx[b],
			Cell:                 cells[b],
		})
	}
	return out, kept
}

// seconds buckets the rows by idle seconds; it returns the buckets and
// the rows of each.
func (pr *profiler) seconds() ([]SecondsBucket, [][]int32) {
	rows := pr.rows
	if len(rows) == 0 {
		return []SecondsBucket{}, nil
	}
	g, n := cut(pr.q99(rowSeconds), bucketsFor(len(rows)), false)
	groups := pr.group(rowSeconds, g.edge(1), n)
	tokens := pr.medians(groups, func(w *row) float64 { return float64(w.tokens) })
	cells := pr.cells(groups)
	out := make([]SecondsBucket, 0, n)
	kept := make([][]int32, 0, n)
	for b, idx := range groups {
		if len(idx) == 0 {
			continue
		}
		kept = append(kept, idx)
		hi := g.edge(b + 1)
		if b == n-1 {
			for _, k := range idx {
				hi = max(hi, rowSeconds(&rows[k]))
			}
		}
		out = append(out, SecondsBucket{Lo: g.edge(b), Hi: hi, TokensP50: tokens[b], Cell: cells[b]})
	}
	return out, kept
}

// group returns the indices of the rows per bucket of x of width, the last
// bucket taking everything beyond, and leaves each row's bucket in
// pr.bucket: a counting sort, the groups slices of one new array.
func (pr *profiler) group(x func(*row) float64, width float64, n int) [][]int32 {
	bucket := pr.bucket
	count := make([]int, n+1)
	for k := range pr.rows {
		b := min(n-1, int(x(&pr.rows[k])/width))
		bucket[k] = int32(b)
		count[b+1]++
	}
	for b := range n {
		count[b+1] += count[b]
	}
	idx := make([]int32, len(pr.rows))
	fill := slices.Clone(count[:n])
	for k, b := range bucket {
		idx[fill[b]] = int32(k)
		fill[b]++
	}
	groups := make([][]int32, n)
	for b := range n {
		groups[b] = idx[count[b]:count[b+1]:count[b+1]]
	}
	return groups
}

// medians returns per bucket of groups the median of f over its rows, NaN
// values left out (NaN for none): one pass over the rows in order puts the
// values into pr.buf bucket by bucket, then one select per bucket.
func (pr *profiler) medians(groups [][]int32, f func(*row) float64) []float64 {
	fill := make([]int, len(groups))
	from := 0
	for b, idx := range groups {
		fill[b] = from
		from += len(idx)
	}
	buf := pr.buf
	for k := range pr.rows {
		if x := f(&pr.rows[k]); !math.IsNaN(x) {
			b := pr.bucket[k]
			buf[fill[b]] = x
			fill[b]++
		}
	}
	out := make([]float64, len(groups))
	from = 0
	for b, idx := range groups {
		out[b] = math.NaN()
		if fill[b] > from {
			out[b] = median(buf[from:fill[b]])
		}
		from += len(idx)
	}
	return out
}

// cells returns the figures of each bucket of groups but the tier split,
// summing over its rows in order as a pass over the rows meets them.
func (pr *profiler) cells(groups [][]int32) []Cell {
	type sums struct{ shareSum, shareN, ttftSum, uncachedSum float64 }
	acc := make([]sums, len(groups))
	for k := range pr.rows {
		w, a := &pr.rows[k], &acc[pr.bucket[k]]
		if !math.IsNaN(w.share) {
			a.shareSum += w.share
			a.shareN++
		}
		if w.ttft >= 0 && w.uncached != noCached {
			a.ttftSum += ttftMs(w.ttft)
			a.uncachedSum += float64(w.uncached)
		}
	}
	ttft := pr.medians(groups, func(w *row) float64 { return ttftMs(w.ttft) })
	out := make([]Cell, len(groups))
	for b, idx := range groups {
		a, c := &acc[b], &out[b]
		c.Requests = len(idx)
		if a.shareN > 0 {
			c.CachedShare = ptr(a.shareSum / a.shareN)
		}
		c.TTFTP50Ms = ptr(ttft[b])
		if a.uncachedSum > 0 {
			c.TTFTPerUncachedTokenMs = ptr(a.ttftSum / a.uncachedSum)
		}
	}
	return out
}

// tierShares splits the cached share of the rows idx by tier: the mean
// over the rows whose hits were attributed of the local part of the share
// (local, per row) and of the rest; nil when none was.
func tierShares(rows []row, local []float64, idx []int32) (localShare, externalShare *float64) {
	var localSum, extSum, n float64
	for _, k := range idx {
		if !math.IsNaN(local[k]) {
			localSum += local[k]
			extSum += rows[k].share - local[k]
			n++
		}
	}
	if n == 0 {
		return nil, nil
	}
	return ptr(localSum / n), ptr(extSum / n)
}
