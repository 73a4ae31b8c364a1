// Package stats is the numeric core of mtstats: exact quantiles (radix
// sort, selection) with pandas' default interpolation, and the
// accumulators that turn request records into described groups (Acc,
// Group), plus the per-record aggregations mtstats reports beside them:
// --where filters, --only metrics, affinity, segments and user gaps.
//
// Quantiles are exact (all samples are kept, one float64 per sample per
// metric).
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
	// Lateness is how late the generator sent a request once it was due
	// and its client free; ClientWait is how long a due turn waited for
	// its client (closed loop's shape, issue 23: a quick start's 699 ms
	// "lateness" was conversations waiting for one of 8 clients).
	Lateness
	ClientWait
	ThinkPlanned
	ThinkActual
	// TTFTContent is the time to the first content token of requests
	// that streamed reasoning first (TTFT is the first token of either);
	// ReasoningTokens and ReasoningChunks are those requests' reasoning
	// (issue 23: a reasoning model's headline TTFT was its first
	// reasoning token, 28 ms, and the 237 ms to visible text was not
	// shown).
	TTFTContent
	ReasoningTokens
	ReasoningChunks
	numMetrics
)

// MetricNames are the row names of the describe table and the keys of the
// JSON "metrics" object, indexed by Metric.
var MetricNames = [numMetrics]string{
	"ttft_ms", "tpot_ms", "itl_ms", "latency_ms",
	"input_num_turns", "input_num_tokens", "output_num_tokens", "output_num_chunks",
	"intended_latency_ms", "lateness_ms", "client_wait_ms", "think_planned_ms", "think_actual_ms",
	"ttft_content_ms", "reasoning_num_tokens", "reasoning_num_chunks",
}

// coreMetrics is the vLLM summary; the rest appear in the table when they
// have samples.
const coreMetrics = OutputChunks + 1

// convAcc accumulates one conversation.
type convAcc struct {
	turns, failed    int32
	missedSLO        bool
	end              string // record.ConversationEnd, once seen
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

// Point is one successful request on the time axis (for the HTML report).
type Point struct {
	Start, End float64 // unix seconds
	LatMs      float64
	TTFTMs     float64 // NaN when absent
	OutTokens  float64
}

// samples are the sample sets of the metrics, indexed by Metric.
type samples [numMetrics]sampleSet

// init sets the units: durations are kept in ns and reported in ms.
func (s *samples) init() {
	for _, m := range []Metric{TTFT, ITL, Latency, IntendedLatency, Lateness, ClientWait, ThinkPlanned, ThinkActual, TTFTContent} {
		s[m].scale = 1e6
	}
}

// Acc accumulates the requests of one group: the integer (ns, count) or
// float sample of each metric, counters and per-conversation totals.
type Acc struct {
	samples          samples
	requests, ok     int
	sessions         int // first sends of conversations: turn 0, attempt 0, choice 0
	errors           map[string]int
	retries          int
	minStart, maxEnd int64
	timed            bool
	inTok, outTok    int64
	cached, cachedOf int64
	cacheReported    int
	good             int
	verify           verifyAcc
	// lite keeps only what the per-group table shows (ByTable): counters,
	// token sums and the TTFT, ITL and latency samples; convs only when
	// asked for (groups by conversation).
	lite bool
	// metrics are the metrics whose samples are kept; nil: all. Without
	// lite (--only), token sums, cache figures and conversations are not
	// kept either.
	metrics    []Metric
	convs      map[convKey]convAcc
	series     []Point
	keepSeries bool
	gaps       clientSends // Options.UserGaps (usergap.go)
}

func NewAcc(series bool) *Acc {
	a := &Acc{convs: map[convKey]convAcc{}, keepSeries: series}
	a.samples.init()
	return a
}

// NewLiteAcc returns an accumulator for a row of the per-group table;
// convs says whether it tracks conversations.
func NewLiteAcc(convs bool) *Acc {
	a := &Acc{lite: true, metrics: LiteMetrics}
	if convs {
		a.convs = map[convKey]convAcc{}
	}
	a.samples.init()
	return a
}

// NewOnlyAcc returns an accumulator of the request counts and the samples
// of metrics (--only).
func NewOnlyAcc(metrics []Metric) *Acc {
	a := &Acc{metrics: metrics}
	a.samples.init()
	return a
}

// LiteMetrics are the metrics a lite accumulator keeps.
var LiteMetrics = []Metric{TTFT, ITL, Latency}

func Millis(ns int64) float64 { return float64(ns) / 1e6 }

// Add accounts one measured record; good says whether it met the
// per-request SLO thresholds.
func (a *Acc) Add(r *record.Record, good bool) {
	start, end := r.Start.UnixNano(), r.End.UnixNano()
	if !a.timed || start < a.minStart {
		a.minStart = start
	}
	if !a.timed || end > a.maxEnd {
		a.maxEnd = end
	}
	a.timed = true
	if r.Turn == 0 && r.Attempt == 0 && r.Choice == 0 {
		a.sessions++
	}
	if a.gaps != nil {
		a.gaps.add(r)
	}
	if r.Retried {
		a.retries++
		return
	}
	a.requests++
	if r.VerifyMismatch != nil {
		a.verify.add(r, start)
	}
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
		a.inTok += InputTokensOf(r)
		a.outTok += OutputTokensOf(r)
		a.addCache(r)
		return
	}
	for m := range numMetrics {
		addSample(&s[m], m, r)
	}
	in, out := InputTokensOf(r), OutputTokensOf(r)
	a.inTok += in
	a.outTok += out
	a.addCache(r)
	if a.keepSeries {
		ttft := math.NaN()
		if r.TTFTNs != nil {
			ttft = Millis(*r.TTFTNs)
		}
		a.series = append(a.series, Point{
			Start: float64(start) / 1e9, End: float64(end) / 1e9,
			LatMs: Millis(r.LatencyNs), TTFTMs: ttft, OutTokens: float64(out),
		})
	}
}

// addConv accounts a request of the conversation of r.
func (a *Acc) addConv(r *record.Record, good bool, start, end int64) {
	ck := convKey{r.RunID, r.Shard, r.ConversationID}
	c, seen := a.convs[ck]
	if !seen {
		c = convAcc{minStart: start, maxEnd: end}
	}
	c.minStart, c.maxEnd = min(c.minStart, start), max(c.maxEnd, end)
	if r.Choice == 0 {
		// One turn, one wait, however many choices (--choices N writes
		// a record per choice of the same request).
		c.turns++
		c.waitMs += Millis(r.LatencyNs)
	}
	if !good {
		c.missedSLO = true
	}
	if r.ConversationEnd != "" {
		c.end = r.ConversationEnd
	}
	if !r.OK() {
		c.failed++
	}
	a.convs[ck] = c
}

// addCache accounts the prefix-cache figures of a successful request.
func (a *Acc) addCache(r *record.Record) {
	if r.CachedTokens != nil && r.PromptTokens != nil {
		a.cacheReported++
		a.cached += *r.CachedTokens
		a.cachedOf += *r.PromptTokens
	}
}

// InputTokensOf is the server's prompt token count, else the client's.
func InputTokensOf(r *record.Record) int64 {
	if r.PromptTokens != nil {
		return *r.PromptTokens
	}
	return r.ClientPromptTokens
}

// OutputTokensOf is the server's completion token count, else the client's.
func OutputTokensOf(r *record.Record) int64 {
	if r.CompletionTokens != nil {
		return *r.CompletionTokens
	}
	return r.ClientCompletionTokens
}

// Dedup remembers record keys: a bitset of sequence numbers per (run,
// shard), since sequence numbers are dense, and a map for outliers.
type Dedup struct {
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

// Seen reports whether k was seen before, and remembers it.
func (d *Dedup) Seen(k record.Key) bool {
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

// Window returns the first start and the last end (unix ns) of the
// requests accounted, and whether there was one.
func (a *Acc) Window() (start, end int64, ok bool) { return a.minStart, a.maxEnd, a.timed }

// Series returns the successful requests on the time axis (kept
// when the accumulator was made with series).
func (a *Acc) Series() []Point { return a.series }

// WithGaps makes a keep the clients' sends (usergap.go).
func (a *Acc) WithGaps() *Acc {
	a.gaps = clientSends{}
	return a
}

// SLOCounts returns the requests accounted, the good ones, the
// conversations and those that met the SLO.
func (a *Acc) SLOCounts() (requests, good, convs, goodConvs int) {
	for _, cv := range a.convs {
		convs++
		if !cv.missedSLO {
			goodConvs++
		}
	}
	return a.requests, a.good, convs, goodConvs
}

// KeepInParts makes the samples of metrics the union of the parts added
// by addPart: each sample is kept once, by its part.
func (a *Acc) KeepInParts(metrics []Metric) {
	for _, m := range metrics {
		a.samples[m].parts = []*sampleSet{}
	}
}

// AddPart adds the samples of metrics of p to the union a keeps.
func (a *Acc) AddPart(p *Acc, metrics []Metric) {
	for _, m := range metrics {
		a.samples[m].parts = append(a.samples[m].parts, &p.samples[m])
	}
}

// SortedSamples sorts the samples of m (a nil a has none) and returns
// their quantile function, mean and count.
func (a *Acc) SortedSamples(m Metric) (q func(p float64) float64, mean float64, n int) {
	set := &sampleSet{}
	if a != nil {
		set = &a.samples[m]
	}
	q, mean = set.sorted()
	return q, mean, set.Len()
}

// Throughputs returns the successful requests a second of a over its
// whole runtime and over each half of it (a request is in the half its
// midpoint falls in: by end time, the first half would lack the requests
// still running when the stage's window opens).
func Throughputs(a *Acc) (all, first, second Num) {
	nan := Num(math.NaN())
	if !a.timed || a.maxEnd <= a.minStart {
		return nan, nan, nan
	}
	from, to := float64(a.minStart)/1e9, float64(a.maxEnd)/1e9
	mid := (from + to) / 2
	var n1, n2 int
	for _, p := range a.series {
		if (p.Start+p.End)/2 < mid {
			n1++
		} else {
			n2++
		}
	}
	half := (to - from) / 2
	return Num(float64(n1+n2) / (to - from)), Num(float64(n1) / half), Num(float64(n2) / half)
}

// SampleCounts returns how many samples of m a keeps itself, in how many
// parts (keepInParts), and in all.
func (a *Acc) SampleCounts(m Metric) (own, parts, all int) {
	s := &a.samples[m]
	return s.n, len(s.parts), s.Len()
}

// verifyAcc counts the answers mtrun --verify-output compared with the
// dataset's (issue 23: all 90 mismatched and the report did not say so).
type verifyAcc struct {
	compared, mismatched int
	first                *VerifyTurn
	firstStart           int64
}

func (v *verifyAcc) add(r *record.Record, start int64) {
	v.compared++
	if !*r.VerifyMismatch {
		return
	}
	v.mismatched++
	if v.first == nil || start < v.firstStart {
		v.first, v.firstStart = &VerifyTurn{Conversation: r.ConversationID, Turn: r.Turn}, start
	}
}

// report is the group's figures; nil when nothing was compared.
func (v *verifyAcc) report() *VerifyOutput {
	if v.compared == 0 {
		return nil
	}
	return &VerifyOutput{Compared: v.compared, Mismatched: v.mismatched, FirstMismatch: v.first}
}

// VerifyOutput counts the answers compared with the dataset's
// (mtrun --verify-output).
type VerifyOutput struct {
	Compared   int `json:"compared"`
	Mismatched int `json:"mismatched"`
	// FirstMismatch is the earliest mismatching request (by start).
	FirstMismatch *VerifyTurn `json:"first_mismatch,omitempty"`
}

// VerifyTurn names a request: its conversation and turn.
type VerifyTurn struct {
	Conversation string `json:"conversation_id"`
	Turn         int    `json:"turn"`
}
