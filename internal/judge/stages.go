package judge

import (
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/stats"
	"github.com/mtkit/mtkit/internal/sweep"
)

// StageRow is one load stage of a staged run or sweep (records' stage
// field), measured over its records after warmup, with the sweep
// package's verdicts.
type StageRow struct {
	Stage int `json:"stage"`
	// Load is the stage's level as its records' stage_load carries it,
	// KIND=LEVEL (e.g. clients=8); "" for records written without it.
	Load     string         `json:"load,omitempty"`
	Requests int            `json:"requests"`
	Failed   int            `json:"failed"`
	Errors   map[string]int `json:"errors"`
	// RuntimeSec is from the first start to the last end of the stage's
	// requests; Throughput is successful requests a second over it, and
	// FirstHalf and SecondHalf the same over its two halves (by each
	// request's midpoint).
	RuntimeSec stats.Num `json:"runtime_sec"`
	Throughput stats.Num `json:"throughput"`
	FirstHalf  stats.Num `json:"throughput_first_half"`
	SecondHalf stats.Num `json:"throughput_second_half"`
	// AskedRate is the session-start rate a rate stage asked for (load
	// rate=N), nil for other kinds; SessionStartsPerSec and
	// RequestsPerSec are what the stage achieved: first sends of
	// conversations and turns started a second over RuntimeSec (issue
	// 23).
	AskedRate           *float64  `json:"asked_rate,omitempty"`
	SessionStartsPerSec stats.Num `json:"session_starts_per_sec"`
	RequestsPerSec      stats.Num `json:"requests_per_sec"`
	TTFTP50             stats.Num `json:"ttft_p50_ms"`
	TTFTP95             stats.Num `json:"ttft_p95_ms"`
	TTFTP99             stats.Num `json:"ttft_p99_ms"`
	ITLP50              stats.Num `json:"itl_p50_ms"`
	ITLP99              stats.Num `json:"itl_p99_ms"`
	LatencyP50          stats.Num `json:"latency_p50_ms"`
	LatencyP99          stats.Num `json:"latency_p99_ms"`
	// LatenessP99 is how late the generator sent (client wait apart);
	// ClientWaitP99 how long due turns waited for their client (NaN for
	// records without client_wait_ns).
	LatenessP99   stats.Num `json:"lateness_p99_ms"`
	ClientWaitP99 stats.Num `json:"client_wait_p99_ms"`
	CacheHitRate  stats.Num `json:"cache_hit_rate"`
	// Steady: the halves' throughputs agree (sweep.Criteria.Steady);
	// ClientLimited: the generator sent late (lateness p99 above 100 ms,
	// client wait apart), so the stage says nothing about the server.
	Steady        bool `json:"steady"`
	ClientLimited bool `json:"client_limited"`
	// MeetsSLO is set with objectives: every one held over the stage.
	MeetsSLO   *bool             `json:"meets_slo,omitempty"`
	Objectives []ObjectiveResult `json:"objectives,omitempty"`
	// Retention is what an active stage (load active=N) measured of the
	// server's prefix cache over its later turns.
	Retention *StageRetention `json:"retention,omitempty"`
	// Turns is the stage by turn, for the HTML report.
	Turns []*stats.Group `json:"-"`
	later *laterAcc
}

// StageRetention is a stage's later turns (every answered turn after a
// conversation's first) as an active sweep judges them.
type StageRetention struct {
	LaterTurns int `json:"later_turns"`
	// MeanContextTokens is the mean context of the stage's answered
	// turns, first turns included: prompt + completion tokens (the
	// server's counts, else the client's). With conversations at every
	// stage of their lives, it is the mean context an active
	// conversation holds.
	MeanContextTokens stats.Num `json:"mean_context_tokens"`
	// WorkingSetTokens is the level (active conversations) times
	// MeanContextTokens: the tokens the stage's conversations hold.
	WorkingSetTokens stats.Num `json:"working_set_tokens"`
	// HitShare is the share of their previous context (the
	// conversation's previous turn's prompt + completion tokens) that
	// the server reported as cached: the sum of min(cached_tokens,
	// previous context) over the sum of previous contexts (a later turn
	// whose previous turn is not in the stage counts its prompt as its
	// previous context); null when some later turn has no cached_tokens.
	HitShare stats.Num `json:"hit_share"`
	// TTFTP50 is their median TTFT in milliseconds.
	TTFTP50 stats.Num `json:"ttft_p50_ms"`
}

// laterAcc sums a stage's measured later turns.
type laterAcc struct {
	n, all                int
	prev, cached, context float64 // context: of every answered turn
	uncached              bool    // some later turn had no cached_tokens
	ttftMs                []float64
	last                  map[string]float64 // context of each conversation's last answered turn
}

func (l *laterAcc) add(r *record.Record) {
	if !r.OK() {
		return
	}
	prompt, completion := float64(r.ClientPromptTokens), float64(r.ClientCompletionTokens)
	if r.PromptTokens != nil {
		prompt = float64(*r.PromptTokens)
	}
	if r.CompletionTokens != nil {
		completion = float64(*r.CompletionTokens)
	}
	if l.last == nil {
		l.last = map[string]float64{}
	}
	prev, ok := l.last[r.ConversationID]
	l.last[r.ConversationID] = prompt + completion
	l.all++
	l.context += prompt + completion
	if r.Turn == 0 {
		return
	}
	if !ok {
		prev = prompt
	}
	l.n++
	l.prev += prev
	if r.CachedTokens != nil {
		l.cached += min(float64(*r.CachedTokens), prev)
	} else {
		l.uncached = true
	}
	if r.TTFTNs != nil {
		l.ttftMs = append(l.ttftMs, float64(*r.TTFTNs)/1e6)
	}
}

// retention returns the later turns' figures at level active
// conversations. It sorts the TTFTs in place.
func (l *laterAcc) retention(level float64) *StageRetention {
	nan := stats.Num(math.NaN())
	out := &StageRetention{LaterTurns: l.n, MeanContextTokens: nan, WorkingSetTokens: nan, HitShare: nan, TTFTP50: nan}
	if l.all > 0 {
		out.MeanContextTokens = stats.Num(l.context / float64(l.all))
		out.WorkingSetTokens = stats.Num(level * l.context / float64(l.all))
	}
	if l.n == 0 {
		return out
	}
	if !l.uncached && l.prev > 0 {
		out.HitShare = stats.Num(l.cached / l.prev)
	}
	if len(l.ttftMs) > 0 {
		slices.Sort(l.ttftMs)
		out.TTFTP50 = stats.Num(stats.Quantile(l.ttftMs, 0.5))
	}
	return out
}

// Result is the row as the sweep package judges it, at level of kind.
func (r *StageRow) Result(st sweep.Stage) sweep.Result {
	res := sweep.Result{Stage: st, Throughput: nz(r.Throughput), FirstHalf: nz(r.FirstHalf), SecondHalf: nz(r.SecondHalf),
		LatenessP99: msDuration(r.LatenessP99), ClientWaitKnown: !math.IsNaN(float64(r.ClientWaitP99)), ClientWaitP99: msDuration(r.ClientWaitP99),
		MeetsSLO: r.MeetsSLO == nil || *r.MeetsSLO}
	if r.Requests > 0 {
		res.Failed = float64(r.Failed) / float64(r.Requests)
	}
	if st.Kind == sweep.Active && r.later != nil {
		ret := r.later.retention(st.Level)
		res.Retention = sweep.Retention{LaterTurns: ret.LaterTurns, WorkingSetTokens: nz(ret.WorkingSetTokens),
			HitShare: float64(ret.HitShare), TTFTP50: msDuration(ret.TTFTP50)}
	}
	return res
}

// Stages accumulates the measured records of each stage (warmup records
// are left out). It is what mtstats reports per stage and what mtrun
// judges a sweep's stages with.
type Stages struct {
	objs   []Objective
	slo    *Checker
	stages map[int]*stageAcc
}

type stageAcc struct {
	load  string
	all   *stats.Acc
	turns map[int]*stats.Acc
	later laterAcc
}

// NewStages returns an empty accumulator judging objs.
func NewStages(objs []Objective) *Stages {
	s := &Stages{objs: objs, stages: map[int]*stageAcc{}}
	if len(objs) > 0 {
		s.slo = &Checker{Objs: objs}
	}
	return s
}

// Add accounts one record.
func (s *Stages) Add(r *record.Record) {
	if !r.Measured() {
		return
	}
	a := s.stages[r.Stage]
	if a == nil {
		a = &stageAcc{all: stats.NewAcc(true), turns: map[int]*stats.Acc{}}
		s.stages[r.Stage] = a
	}
	if a.load == "" {
		a.load = r.StageLoad
	}
	good := r.OK()
	if s.slo != nil && !r.Retried {
		good = s.slo.Good(r)
	}
	a.all.Add(r, good)
	a.later.add(r)
	t := a.turns[r.Turn]
	if t == nil {
		t = stats.NewAcc(false)
		a.turns[r.Turn] = t
	}
	t.Add(r, good)
}

// Objectives are the objectives s judges with.
func (s *Stages) Objectives() []Objective { return s.objs }

// Len is the number of stages seen.
func (s *Stages) Len() int { return len(s.stages) }

// Rows returns the stages in order of their numbers. It sorts samples in
// place.
func (s *Stages) Rows() []StageRow {
	keys := make([]int, 0, len(s.stages))
	for k := range s.stages {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	crit := sweep.Criteria{}
	out := make([]StageRow, 0, len(keys))
	for _, k := range keys {
		a := s.stages[k]
		g := a.all.Group(strconv.Itoa(k))
		row := StageRow{Stage: k, Load: a.load, Requests: g.Requests, Failed: g.Failed, Errors: g.Errors, RuntimeSec: g.RuntimeSec,
			CacheHitRate: g.CacheHitRate, Turns: stats.TurnGroups(a.turns), later: &a.later,
			SessionStartsPerSec: g.SessionStartsPerSec, RequestsPerSec: g.RequestsPerSec}
		row.Throughput, row.FirstHalf, row.SecondHalf = stats.Throughputs(a.all)
		q := func(m stats.Metric, p float64) stats.Num {
			d, ok := g.Metrics.Get(stats.MetricNames[m])
			if !ok || d.Count == 0 {
				return stats.Num(math.NaN())
			}
			return stats.Num(d.Quantile(p))
		}
		row.TTFTP50, row.TTFTP95, row.TTFTP99 = q(stats.TTFT, 0.5), q(stats.TTFT, 0.95), q(stats.TTFT, 0.99)
		row.ITLP50, row.ITLP99 = q(stats.ITL, 0.5), q(stats.ITL, 0.99)
		row.LatencyP50, row.LatencyP99 = q(stats.Latency, 0.5), q(stats.Latency, 0.99)
		row.LatenessP99, row.ClientWaitP99 = q(stats.Lateness, 0.99), q(stats.ClientWait, 0.99)
		if len(s.objs) > 0 {
			met := true
			for _, o := range s.objs {
				res := Evaluate(o, a.all, a.turns)
				met = met && res.Met
				row.Objectives = append(row.Objectives, res)
			}
			row.MeetsSLO = &met
		}
		// The kind matters: without client_wait_ns, a users or active
		// stage is not judged client-limited.
		st := sweep.Stage{}
		if k, level, err := sweep.ParseLoad(row.Load); err == nil {
			st = sweep.Stage{Kind: k, Level: level}
		}
		if st.Kind == sweep.Rate {
			row.AskedRate = &st.Level
		}
		if st.Kind == sweep.Active {
			row.Retention = a.later.retention(st.Level)
		}
		res := row.Result(st)
		row.Steady, row.ClientLimited = crit.Steady(res), crit.ClientLimited(res)
		out = append(out, row)
	}
	return out
}

// JudgeLoads judges the stages as a sweep's, at their loads: nil unless
// every stage has one, all of one kind.
func JudgeLoads(rows []StageRow, objs []Objective, crit sweep.Criteria) *sweep.Capacity {
	var (
		kind sweep.Kind
		rs   []sweep.Result
	)
	for _, row := range rows {
		k, level, err := sweep.ParseLoad(row.Load)
		if err != nil || kind != "" && k != kind {
			return nil
		}
		kind = k
		rs = append(rs, row.Result(sweep.Stage{Kind: k, Level: level}))
	}
	if len(rs) < 2 {
		return nil
	}
	c := crit.Judge(kind, ObjectiveTexts(objs), rs)
	return &c
}

// StagedRun is one --compare input's stages, and their capacity judged
// from their loads.
type StagedRun struct {
	Label    string          `json:"label"`
	Stages   []StageRow      `json:"stages"`
	Capacity *sweep.Capacity `json:"capacity,omitempty"`
}

func nz(x stats.Num) float64 {
	if math.IsNaN(float64(x)) {
		return 0
	}
	return float64(x)
}

// msDuration converts milliseconds to a duration (NaN: 0).
func msDuration(x stats.Num) time.Duration {
	if math.IsNaN(float64(x)) {
		return 0
	}
	return time.Duration(float64(x) * 1e6)
}
