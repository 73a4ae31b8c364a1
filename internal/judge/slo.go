// Package judge gives the verdicts on measured records: service-level
// objectives (ParseSLO, Checker, Evaluate), the per-stage view of staged
// runs and sweeps (Stages, StageRow) and the capacity of a sweep judged
// again from its records (CapacityFile). mtrun judges its sweep stages
// with it; mtstats reports them.
package judge

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mtkit/mtkit/internal/duration"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/stats"
)

// Objective is one service-level objective: the P-quantile (or mean) of a
// metric over the requests of a turn (or all turns) must stay within
// Limit.
type Objective struct {
	Text   string       // as written, e.g. "turn0:ttft_p95<=5s"
	Turn   int          // -1: every turn
	Metric stats.Metric // TTFT, TPOT, ITL, Latency, IntendedLatency, Lateness or ClientWait
	P      float64      // quantile in [0,1]; NaN for the mean
	Strict bool         // "<" rather than "<="
	Limit  float64      // milliseconds
}

// ObjectiveTexts returns the objectives as written, as a capacity JSON
// lists them.
func ObjectiveTexts(objs []Objective) []string {
	texts := make([]string, len(objs))
	for i, o := range objs {
		texts[i] = o.Text
	}
	return texts
}

var sloRe = regexp.MustCompile(`^(?:turn(\d+):)?([a-z0-9_]+?)_(p(\d+(?:\.\d+)?)|mean|avg|max)\s*(<=|<)\s*(\S+)$`)

var sloMetrics = map[string]stats.Metric{
	"ttft": stats.TTFT, "tpot": stats.TPOT, "itl": stats.ITL, "latency": stats.Latency, "e2e": stats.Latency,
	"e2el": stats.Latency, "intended_latency": stats.IntendedLatency, "lateness": stats.Lateness,
	"client_wait": stats.ClientWait,
	// ttft is the first token, reasoning or content; ttft_content the
	// first content token (reasoning models).
	"ttft_content": stats.TTFTContent,
}

// ParseSLO parses a comma-separated list of objectives such as
// "ttft_p95<=2s,itl_p99<=50ms,turn0:ttft_p99<=5s". Limits are Go durations;
// a bare number is refused (it would be seconds in a flag, milliseconds in
// vLLM's --goodput).
func ParseSLO(s string) ([]Objective, error) {
	var out []Objective
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		m := sloRe.FindStringSubmatch(item)
		if m == nil {
			return nil, fmt.Errorf("slo: %q: want [turnN:]metric_pNN<=duration, e.g. ttft_p95<=2s", item)
		}
		o := Objective{Text: item, Turn: -1, Strict: m[5] == "<"}
		if m[1] != "" {
			o.Turn, _ = strconv.Atoi(m[1])
		}
		metric, ok := sloMetrics[m[2]]
		if !ok {
			return nil, fmt.Errorf("slo: %q: unknown metric %q (ttft, tpot, itl, latency, intended_latency, lateness)", item, m[2])
		}
		o.Metric = metric
		switch {
		case m[4] != "":
			p, _ := strconv.ParseFloat(m[4], 64)
			if p > 100 {
				return nil, fmt.Errorf("slo: %q: percentile above 100", item)
			}
			o.P = p / 100
		case m[3] == "max":
			o.P = 1
		default:
			o.P = math.NaN()
		}
		if duration.IsBareNumber(m[6]) {
			// Refused rather than guessed: a bare number is seconds in
			// mtkit's flags but milliseconds in vLLM's --goodput.
			return nil, fmt.Errorf("slo: %q: the limit %s needs a unit (%sms or %ss)", item, m[6], m[6], m[6])
		}
		d, err := time.ParseDuration(m[6])
		if err != nil {
			return nil, fmt.Errorf("slo: %q: bad limit %q (want a duration like 2s or 50ms)", item, m[6])
		}
		o.Limit = float64(d) / 1e6
		out = append(out, o)
	}
	return out, nil
}

func (o *Objective) within(x float64) bool {
	if o.Strict {
		return x < o.Limit
	}
	return x <= o.Limit
}

// requestValue is the request's own value of the objective's metric; for
// ITL the request's own quantile of its gaps. ok is false when the request
// has no such value (e.g. TPOT of a one-token answer).
func (o *Objective) requestValue(r *record.Record, scratch []float64) (float64, bool, []float64) {
	switch o.Metric {
	case stats.TTFT:
		if r.TTFTNs == nil {
			return 0, false, scratch
		}
		return stats.Millis(*r.TTFTNs), true, scratch
	case stats.TPOT:
		if r.TPOTNs == nil {
			return 0, false, scratch
		}
		return *r.TPOTNs / 1e6, true, scratch
	case stats.ITL:
		if len(r.ITLNs) == 0 {
			return 0, false, scratch
		}
		scratch = scratch[:0]
		for _, g := range r.ITLNs {
			scratch = append(scratch, stats.Millis(g))
		}
		slices.Sort(scratch)
		if math.IsNaN(o.P) {
			var s float64
			for _, x := range scratch {
				s += x
			}
			return s / float64(len(scratch)), true, scratch
		}
		return stats.Quantile(scratch, o.P), true, scratch
	case stats.TTFTContent:
		// Without reasoning, the first token is the first content token.
		switch {
		case r.TTFTContentNs != nil:
			return stats.Millis(*r.TTFTContentNs), true, scratch
		case r.TTFTNs != nil:
			return stats.Millis(*r.TTFTNs), true, scratch
		}
		return 0, false, scratch
	case stats.IntendedLatency:
		return stats.Millis(r.IntendedLatencyNs), !r.Scheduled.IsZero(), scratch
	case stats.Lateness:
		return stats.Millis(r.LatenessNs), !r.Scheduled.IsZero(), scratch
	case stats.ClientWait:
		if r.ClientWaitNs == nil {
			return 0, false, scratch
		}
		return stats.Millis(*r.ClientWaitNs), true, scratch
	}
	return stats.Millis(r.LatencyNs), true, scratch
}

// Checker decides per request whether it met every applicable
// objective. A failed request never meets them; a missing value is not
// held against a request.
type Checker struct {
	Objs    []Objective
	scratch []float64
}

func (c *Checker) Good(r *record.Record) bool {
	if !r.OK() {
		return false
	}
	for i := range c.Objs {
		o := &c.Objs[i]
		if o.Turn >= 0 && o.Turn != r.Turn {
			continue
		}
		var x float64
		var ok bool
		x, ok, c.scratch = o.requestValue(r, c.scratch)
		if ok && !o.within(x) {
			return false
		}
	}
	return true
}
