package schedule

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/mtkit/mtkit/internal/dist"
)

// NoEnd is the End of a schedule whose stages end when their last
// request is answered rather than at a planned time (Requests): no run
// reaches it, so the run ends with its last session.
const NoEnd = time.Duration(1 << 62)

// RequestStage is one stage of a Requests schedule: Rate requests a
// second for Duration, that is ⌊Rate·Duration⌋ requests.
type RequestStage struct {
	Rate     float64 // requests a second, > 0
	Duration time.Duration
}

// Requests is inference-perf's load (kubernetes-sigs/inference-perf,
// load types constant and poisson): the arrival times are those of
// requests, not of sessions. Each stage plans ⌊Rate·Duration⌋ requests;
// with Users > 0 (inference-perf's multi-turn user sessions) request i
// of a stage is round ⌊i/Users⌋ of the stage's session i mod Users, so a
// session sends its rounds at the times of every Users-th request, one
// at a time (a round whose time comes while the previous answer is
// still streaming goes when it ends, recorded as client wait). With Users
// == 0 every request is a session of one turn.
//
// Arrival times follow inference-perf's timers, drawn from Seed:
// constant spreads a stage's requests with exponential gaps scaled so
// that the last one falls at the stage's end; poisson draws a Poisson
// number of requests for each second of the stage (at Rate a second)
// and spreads each second's requests the same way, until the stage's
// ⌊Rate·Duration⌋ are planned. Stage k+1 starts Interval after the
// planned end of stage k (its duration, or its last request when later).
// Sessions of different stages are distinct (inference-perf starts its
// sessions afresh in every stage); the global session order is stage by
// stage, and within a stage by user, which is the order of their first
// requests.
//
// A Requests schedule is made by NewRequests; its methods read it only.
type Requests struct {
	stages   []RequestStage
	users    int
	times    [][]time.Duration // per stage: request offsets from the stage's start
	starts   []time.Duration   // per stage: offset from the run's start
	sessions []int             // per stage: first global session index
	total    int               // sessions in all
	first    int               // number of the first stage
}

// maxStage bounds a stage's duration (the poisson timer plans it second
// by second).
const maxStage = 30 * 24 * time.Hour

// requestsStream separates the request arrival draws from every other
// use of the seed.
const requestsStream = 0x69706572

// NewRequests plans the arrival times of every request of stages (see
// Requests); first numbers the first stage (1 when 0).
func NewRequests(stages []RequestStage, poisson bool, users int, interval time.Duration, seed uint64, first int) (*Requests, error) {
	if len(stages) == 0 {
		return nil, fmt.Errorf("stages: none given")
	}
	if users < 0 || interval < 0 {
		return nil, fmt.Errorf("requests: %d users, interval %s; want neither negative", users, interval)
	}
	if first == 0 {
		first = 1
	}
	r := &Requests{stages: stages, users: users, first: first}
	rng := rand.New(rand.NewPCG(seed, requestsStream))
	var start time.Duration
	for k, s := range stages {
		if !(s.Rate > 0) || math.IsInf(s.Rate, 0) || s.Duration <= 0 || s.Duration > maxStage {
			return nil, fmt.Errorf("stage %d: rate %g for %s; want a rate above 0 and a duration above 0, at most %s", k+1, s.Rate, s.Duration, maxStage)
		}
		n := math.Floor(s.Rate * s.Duration.Seconds())
		if n > 1e8 {
			return nil, fmt.Errorf("stage %d: %g requests; at most 1e8 a stage", k+1, n)
		}
		var times []time.Duration
		var err error
		if poisson {
			times, err = poissonTimes(rng, s.Rate, int(n))
		} else {
			times = spread(rng, s.Rate, int(n), s.Duration, 0)
		}
		if err != nil {
			return nil, fmt.Errorf("stage %d: %w", k+1, err)
		}
		r.times = append(r.times, times)
		r.starts = append(r.starts, start)
		r.sessions = append(r.sessions, r.total)
		r.total += r.stageSessions(k)
		span := s.Duration
		if len(times) > 0 {
			span = max(span, times[len(times)-1])
		}
		start += span + interval
	}
	return r, nil
}

// spread returns n arrival offsets from base over span: exponential gaps
// of mean 1/rate, scaled so that they add up to span (inference-perf's
// constant timer).
func spread(rng *rand.Rand, rate float64, n int, span, base time.Duration) []time.Duration {
	if n <= 0 {
		return nil
	}
	gaps := make([]float64, n)
	var sum float64
	for i := range gaps {
		gaps[i] = rng.ExpFloat64() / rate
		sum += gaps[i]
	}
	out := make([]time.Duration, n)
	scale := float64(span) / sum
	var at float64
	for i, g := range gaps {
		at += g * scale
		out[i] = base + time.Duration(at)
	}
	out[n-1] = base + span // no rounding error at the end
	return out
}

// poissonTimes returns n arrival offsets: a Poisson(rate) number of
// requests in each second, spread over it (inference-perf's poisson
// timer).
func poissonTimes(rng *rand.Rand, rate float64, n int) ([]time.Duration, error) {
	d, err := dist.Build(dist.Poisson, []dist.Param{{Key: "alpha", Val: rate}})
	if err != nil {
		return nil, err
	}
	out := make([]time.Duration, 0, n)
	for sec := time.Duration(0); len(out) < n; sec += time.Second {
		c := int(d.Sample(rng))
		if c < 1 {
			continue
		}
		for _, at := range spread(rng, float64(c), c, time.Second, sec) {
			if len(out) == n {
				break
			}
			out = append(out, at)
		}
	}
	return out, nil
}

// stageSessions is the number of sessions of stage k.
func (r *Requests) stageSessions(k int) int {
	n := len(r.times[k])
	if r.users > 0 {
		return min(r.users, n)
	}
	return n
}

// Sessions returns the number of sessions in all stages.
func (r *Requests) Sessions() int { return r.total }

// StageSessions returns the number of sessions of stage k (from 0).
func (r *Requests) StageSessions(k int) int { return r.stageSessions(k) }

// Rounds returns the number of requests session u of stage k (from 0)
// sends: every Users-th request of the stage from its u-th.
func (r *Requests) Rounds(k, u int) int {
	n := len(r.times[k])
	switch {
	case u < 0 || u >= r.stageSessions(k):
		return 0
	case r.users == 0:
		return 1
	}
	return (n - u + r.users - 1) / r.users
}

// Times returns the planned request offsets of stage k (from 0), from
// the run's start. The slice must not be modified.
func (r *Requests) Times(k int) []time.Duration {
	out := make([]time.Duration, len(r.times[k]))
	for i, t := range r.times[k] {
		out[i] = r.starts[k] + t
	}
	return out
}

// Start returns the planned start of stage k (from 0).
func (r *Requests) Start(k int) time.Duration { return r.starts[k] }

// locate returns the stage and user of global session index i.
func (r *Requests) locate(i int) (k, u int) {
	for k = len(r.sessions) - 1; k > 0 && i < r.sessions[k]; k-- {
	}
	return k, i - r.sessions[k]
}

// at returns the planned time of round round of session i.
func (r *Requests) at(i, round int) time.Duration {
	k, u := r.locate(i)
	times := r.times[k]
	j := u
	if r.users > 0 {
		j += round * r.users
	}
	if len(times) == 0 {
		return r.starts[k]
	}
	return r.starts[k] + times[min(j, len(times)-1)]
}

var _ Schedule = (*Requests)(nil)

// Name implements Schedule.
func (*Requests) Name() string { return "inference-perf" }

// Validate implements Schedule: NewRequests checked the stages.
func (*Requests) Validate() error { return nil }

// Users implements Schedule: sessions arrive.
func (*Requests) Users() int { return 0 }

// Active implements Schedule: a session sends one request at a time.
func (*Requests) Active(int) int { return 1 }

// TurnAt implements Schedule: the time of the session's request of that
// round.
func (r *Requests) TurnAt(t Turn) time.Duration { return r.at(t.Session, t.Index) }

// Arrivals implements Schedule: each session starts at its first
// request's time; none after the last session.
func (r *Requests) Arrivals() Arrivals { return requestArrivals{r} }

type requestArrivals struct{ r *Requests }

// Next implements Arrivals.
func (a requestArrivals) Next(first Turn) (time.Duration, bool) {
	if first.Session < 0 || first.Session >= a.r.total {
		return 0, false
	}
	return a.r.at(first.Session, 0), true
}

// StageAt implements Stager: the stage whose planned window (after its
// start, to the next stage's start) holds at; never a warmup. A stage's
// first request comes after its start, and its last may fall at the next
// stage's start (no interval): that one is the earlier stage's.
func (r *Requests) StageAt(at time.Duration) (int, bool) {
	k := len(r.starts) - 1
	for k > 0 && at <= r.starts[k] {
		k--
	}
	return r.first + k, false
}

// End implements Stager: NoEnd, since a stage ends when its requests are
// answered (inference-perf waits for them), not at a planned time.
func (*Requests) End() time.Duration { return NoEnd }
