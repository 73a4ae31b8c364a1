package inferenceperf

import (
	"errors"
	"math"
	"slices"
	"time"
)

// ProbeDuration is how long inference-perf's sweep probe sends its
// requests: num_requests in 5 s.
const ProbeDuration = 5 * time.Second

// probeStage is the stage of the sweep probe.
func (s *Sweep) probeStage() Stage {
	return Stage{Rate: float64(s.NumRequests) / ProbeDuration.Seconds(), Duration: ProbeDuration}
}

// Span is one request of the probe: its start and end.
type Span struct{ Start, End time.Time }

// Saturation is inference-perf's saturation rate of a probe: the
// requests in flight are counted every half second from the first start
// until timeout; each half second in which the count falls gives a rate
// (the fall over the interval), and the saturation is the percentile pct
// (0-100, linear interpolation as numpy's) of those rates, in requests a
// second.
func Saturation(spans []Span, timeout time.Duration, pct float64) (float64, error) {
	if len(spans) == 0 {
		return 0, errors.New("sweep: the probe sent no request")
	}
	t0 := spans[0].Start
	for _, s := range spans {
		if s.Start.Before(t0) {
			t0 = s.Start
		}
	}
	const step = 500 * time.Millisecond
	inFlight := func(t time.Time) int {
		n := 0
		for _, s := range spans {
			if !s.Start.After(t) && s.End.After(t) {
				n++
			}
		}
		return n
	}
	var rates []float64
	prev := inFlight(t0)
	for at := step; at < timeout; at += step {
		cur := inFlight(t0.Add(at))
		if cur < prev {
			rates = append(rates, float64(prev-cur)/step.Seconds())
		}
		prev = cur
	}
	if len(rates) <= 1 {
		return 0, errors.New("sweep: the probe gave too few samples to find the saturation rate (raise load.sweep.num_requests or timeout)")
	}
	slices.Sort(rates)
	h := float64(len(rates)-1) * pct / 100
	lo := int(math.Floor(h))
	if lo+1 >= len(rates) {
		return rates[len(rates)-1], nil
	}
	return rates[lo] + (h-float64(lo))*(rates[lo+1]-rates[lo]), nil
}

// Stages returns the sweep's stages up to the saturation rate sat, as
// inference-perf generates them: linear, evenly from 1 to sat; geometric,
// 1 + sat - r for r spaced geometrically from sat down to 1 (crowded
// near sat); rates rounded to two decimals.
func (s *Sweep) Stages(sat float64) []Stage {
	n := s.NumStages
	out := make([]Stage, n)
	for i := range n {
		f := 0.0
		if n > 1 {
			f = float64(i) / float64(n-1)
		}
		var r float64
		if s.Geometric {
			// numpy.geomspace(sat, 1, n)[i] = sat * (1/sat)^f
			r = 1 + sat - sat*math.Pow(1/sat, f)
		} else {
			r = 1 + f*(sat-1)
		}
		out[i] = Stage{Rate: math.Round(r*100) / 100, Duration: s.StageDuration}
	}
	return out
}
