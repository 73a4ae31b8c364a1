package judge

import (
	"math"
	"strconv"

	"github.com/mtkit/mtkit/internal/stats"
)

// SLOReport is the outcome of --slo.
type SLOReport struct {
	Met                   bool              `json:"met"`
	Objectives            []ObjectiveResult `json:"objectives"`
	Requests              int               `json:"requests"`
	GoodRequests          int               `json:"good_requests"`
	GoodRequestShare      stats.Num         `json:"good_request_share"`
	Goodput               stats.Num         `json:"goodput"`
	Conversations         int               `json:"conversations"`
	GoodConversations     int               `json:"good_conversations"`
	GoodConversationShare stats.Num         `json:"good_conversation_share"`
}

// SLOMet implements stats.Verdict.
func (s *SLOReport) SLOMet() bool { return s.Met }

var _ stats.Verdict = (*SLOReport)(nil)

// ObjectiveResult is one objective, its measured value and verdict.
type ObjectiveResult struct {
	Objective string    `json:"objective"`
	Turn      *int      `json:"turn,omitempty"`
	Metric    string    `json:"metric"`
	Stat      string    `json:"stat"`
	LimitMs   stats.Num `json:"limit_ms"`
	ValueMs   stats.Num `json:"value_ms"`
	Samples   int       `json:"samples"`
	Met       bool      `json:"met"`
}

// Evaluate measures objective o over the requests of all (or of
// its turn, from turns).
func Evaluate(o Objective, all *stats.Acc, turns map[int]*stats.Acc) ObjectiveResult {
	res := ObjectiveResult{Objective: o.Text, Metric: stats.MetricNames[o.Metric], LimitMs: stats.Num(o.Limit)}
	if o.Turn >= 0 {
		t := o.Turn
		res.Turn = &t
		all = turns[o.Turn] // nil: no samples
	}
	q, mean, n := all.SortedSamples(o.Metric)
	res.Samples = n
	switch {
	case math.IsNaN(o.P):
		res.Stat = "mean"
		res.ValueMs = stats.Num(mean)
	default:
		res.Stat = "p" + strconv.FormatFloat(o.P*100, 'f', -1, 64)
		res.ValueMs = stats.Num(q(o.P))
	}
	// No samples: nothing violated the objective, but nothing showed
	// it was met either; it counts as not met.
	res.Met = res.Samples > 0 && o.within(float64(res.ValueMs))
	return res
}
