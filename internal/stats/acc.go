package stats

import (
	"math"

	"github.com/mtkit/mtkit/internal/record"
)

// Metric indexes the per-request sample series.
type Metric int

// The metrics of the describe table, in display order.
const (
	TTFT Metric = iota
	TPOT
	ITL
	Latency
	InputTurns
	InputTokens
	OutputTokens
	OutputChunks
	IntendedLatency
	Lateness
	ThinkPlanned
	ThinkActual
	numMetrics
)

// MetricNames are the row names of the describe table and the keys of the
// JSON "metrics" object, indexed by Metric.
var MetricNames = [numMetrics]string{
	"ttft_ms", "tpot_ms", "itl_ms", "latency_ms",
	"input_num_turns", "input_num_tokens", "output_num_tokens", "output_num_chunks",
	"intended_latency_ms", "lateness_ms", "think_planned_ms", "think_actual_ms",
}

// coreMetrics is the vLLM summary; the rest appear in the table when they
// have samples.
const coreMetrics = OutputChunks + 1

// convAcc accumulates one conversation.
type convAcc struct {
	turns, failed    int32
	missedSLO        bool
	minStart, maxEnd int64
	waitMs           float64
}

// convKey identifies a conversation: its id within a run's shard (shards
// may replay the same dataset, so ids repeat across them).
type convKey struct {
	run   string
	shard int
	id    string
}

// point is one successful request on the time axis (for the HTML report).
type point struct {
	start, end float64 // unix seconds
	latMs      float64
	ttftMs     float64 // NaN when absent
	outTokens  float64
}

// samples are the sample sets of the metrics, indexed by Metric.
type samples [numMetrics]sampleSet

// init sets the units: durations are kept in ns and reported in ms.
func (s *samples) init() {
	for _, m := range []Metric{TTFT, ITL, Latency, IntendedLatency, Lateness, ThinkPlanned, ThinkActual} {
		s[m].scale = 1e6
	}
}

// acc accumulates the requests of one group: the integer (ns, count) or
// float sample of each metric, counters and per-conversation totals.
type acc struct {
	samples          samples
	requests, ok     int
	errors           map[string]int
	retries          int
	minStart, maxEnd int64
	timed            bool
	inTok, outTok    int64
	cached, cachedOf int64
	cacheReported    int
	good             int
	// lite keeps only what the per-group table shows (ByTable): counters,
	// token sums and the TTFT, ITL and latency samples; convs only when
	// asked for (groups by conversation).
	lite bool
	// metrics are the metrics whose samples are kept; nil: all. Without
	// lite (--only), token sums, cache figures and conversations are not
	// kept either.
	metrics    []Metric
	convs      map[convKey]convAcc
	series     []point
	keepSeries bool
	gaps       clientSends // Options.UserGaps (usergap.go)
}

func newAcc(series bool) *acc {
	a := &acc{convs: map[convKey]convAcc{}, keepSeries: series}
	a.samples.init()
	return a
}

// newLiteAcc returns an accumulator for a row of the per-group table;
// convs says whether it tracks conversations.
func newLiteAcc(convs bool) *acc {
	a := &acc{lite: true, metrics: liteMetrics}
	if convs {
		a.convs = map[convKey]convAcc{}
	}
	a.samples.init()
	return a
}

// newOnlyAcc returns an accumulator of the request counts and the samples
// of metrics (--only).
func newOnlyAcc(metrics []Metric) *acc {
	a := &acc{metrics: metrics}
	a.samples.init()
	return a
}

// liteMetrics are the metrics a lite accumulator keeps.
var liteMetrics = []Metric{TTFT, ITL, Latency}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

// add accounts one measured record; good says whether it met the
// per-request SLO thresholds.
func (a *acc) add(r *record.Record, good bool) {
	start, end := r.Start.UnixNano(), r.End.UnixNano()
	if !a.timed || start < a.minStart {
		a.minStart = start
	}
	if !a.timed || end > a.maxEnd {
		a.maxEnd = end
	}
	a.timed = true
	if a.gaps != nil {
		a.gaps.add(r)
	}
	if r.Retried {
		a.retries++
		return
	}
	a.requests++
	if a.convs != nil {
		a.addConv(r, good, start, end)
	}
	if !r.OK() {
		if a.errors == nil {
			a.errors = map[string]int{}
		}
		a.errors[r.ErrorClass]++
		return
	}
	a.ok++
	if good {
		a.good++
	}
	s := &a.samples
	if a.metrics != nil {
		for _, m := range a.metrics {
			addSample(&s[m], m, r)
		}
		if !a.lite {
			return // --only: no token sums
		}
		a.inTok += inputTokens(r)
		a.outTok += outputTokens(r)
		a.addCache(r)
		return
	}
	for m := range numMetrics {
		addSample(&s[m], m, r)
	}
	in, out := inputTokens(r), outputTokens(r)
	a.inTok += in
	a.outTok += out
	a.addCache(r)
	if a.keepSeries {
		ttft := math.NaN()
		if r.TTFTNs != nil {
			ttft = ms(*r.TTFTNs)
		}
		a.series = append(a.series, point{
			start: float64(start) / 1e9, end: float64(end) / 1e9,
			latMs: ms(r.LatencyNs), ttftMs: ttft, outTokens: float64(out),
		})
	}
}

// addConv accounts a request of the conversation of r.
func (a *acc) addConv(r *record.Record, good bool, start, end int64) {
	ck := convKey{r.RunID, r.Shard, r.ConversationID}
	c, seen := a.convs[ck]
	if !seen {
		c = convAcc{minStart: start, maxEnd: end}
	}
	c.turns++
	c.minStart, c.maxEnd = min(c.minStart, start), max(c.maxEnd, end)
	c.waitMs += ms(r.LatencyNs)
	if !good {
		c.missedSLO = true
	}
	if !r.OK() {
		c.failed++
	}
	a.convs[ck] = c
}

// addCache accounts the prefix-cache figures of a successful request.
func (a *acc) addCache(r *record.Record) {
	if r.CachedTokens != nil && r.PromptTokens != nil {
		a.cacheReported++
		a.cached += *r.CachedTokens
		a.cachedOf += *r.PromptTokens
	}
}

// inputTokens is the server's prompt token count, else the client's.
func inputTokens(r *record.Record) int64 {
	if r.PromptTokens != nil {
		return *r.PromptTokens
	}
	return r.ClientPromptTokens
}

// outputTokens is the server's completion token count, else the client's.
func outputTokens(r *record.Record) int64 {
	if r.CompletionTokens != nil {
		return *r.CompletionTokens
	}
	return r.ClientCompletionTokens
}

// dedup remembers record keys: a bitset of sequence numbers per (run,
// shard), since sequence numbers are dense, and a map for outliers.
type dedup struct {
	sets  map[shardKey]*[]uint64
	other map[record.Key]struct{}
	// last is the (run, shard) of the last key and lastSet its bitset:
	// records come in runs of one shard.
	last    shardKey
	lastSet *[]uint64
}

type shardKey struct {
	run   string
	shard int
}

const maxBitsetSeq = 1 << 31

// seen reports whether k was seen before, and remembers it.
func (d *dedup) seen(k record.Key) bool {
	if k.Seq < 0 || k.Seq >= maxBitsetSeq {
		if d.other == nil {
			d.other = map[record.Key]struct{}{}
		}
		_, ok := d.other[k]
		d.other[k] = struct{}{}
		return ok
	}
	sk := shardKey{k.RunID, k.Shard}
	bits := d.lastSet
	if bits == nil || sk != d.last {
		if d.sets == nil {
			d.sets = map[shardKey]*[]uint64{}
		}
		if bits = d.sets[sk]; bits == nil {
			bits = new([]uint64)
			d.sets[sk] = bits
		}
		d.last, d.lastSet = sk, bits
	}
	w, b := int(k.Seq/64), uint64(1)<<(k.Seq%64)
	if w >= len(*bits) {
		*bits = append(*bits, make([]uint64, w+1-len(*bits))...)
		*bits = (*bits)[:cap(*bits)]
	}
	ok := (*bits)[w]&b != 0
	(*bits)[w] |= b
	return ok
}
