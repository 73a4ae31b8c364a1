package schedule

import (
	"math"
	"slices"
	"testing"
	"time"
)

var (
	_ Schedule = (*Requests)(nil)
	_ Stager   = (*Requests)(nil)
)

func TestRequestsPlan(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		stages   []RequestStage
		poisson  bool
		users    int
		requests []int // per stage
		sessions []int // per stage
		interval time.Duration
	}{
		{"constant multi-turn", []RequestStage{{20, 5 * sec}}, false, 20, []int{100}, []int{20}, 2 * sec},
		{"fewer requests than users", []RequestStage{{3, 2 * sec}}, false, 10, []int{6}, []int{6}, 2 * sec},
		{"single turn", []RequestStage{{4.5, 2 * sec}, {1, 3 * sec}}, false, 0, []int{9, 3}, []int{9, 3}, 2 * sec},
		{"poisson two stages", []RequestStage{{50, 4 * sec}, {10, 10 * sec}}, true, 7, []int{200, 100}, []int{7, 7}, 2 * sec},
		{"fractional count rounds down", []RequestStage{{0.5, 3 * sec}}, false, 2, []int{1}, []int{1}, 2 * sec},
		{"no interval", []RequestStage{{1, 2 * sec}, {4, 2 * sec}}, false, 3, []int{2, 8}, []int{2, 3}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := NewRequests(tc.stages, tc.poisson, tc.users, tc.interval, 7, 0)
			if err != nil {
				t.Fatal(err)
			}
			total, arr := 0, r.Arrivals()
			for k := range tc.stages {
				times := r.Times(k)
				if len(times) != tc.requests[k] || r.StageSessions(k) != tc.sessions[k] {
					t.Fatalf("stage %d: %d requests, %d sessions; want %d, %d", k, len(times), r.StageSessions(k), tc.requests[k], tc.sessions[k])
				}
				if !slices.IsSorted(times) || times[0] <= r.Start(k) {
					t.Errorf("stage %d: times not increasing after the stage's start %s: %v", k, r.Start(k), times[:min(5, len(times))])
				}
				if !tc.poisson && times[len(times)-1] != r.Start(k)+tc.stages[k].Duration {
					t.Errorf("stage %d: constant: last request at %s, want the stage's end %s", k, times[len(times)-1], r.Start(k)+tc.stages[k].Duration)
				}
				if k > 0 {
					prevEnd := max(r.Start(k-1)+tc.stages[k-1].Duration, r.Times(k - 1)[len(r.Times(k-1))-1])
					if r.Start(k) != prevEnd+tc.interval {
						t.Errorf("stage %d starts at %s, want the previous end %s + the %s interval", k, r.Start(k), prevEnd, tc.interval)
					}
				}
				// Every request is one round of one session, in order.
				var got []time.Duration
				rounds := 0
				for u := range r.StageSessions(k) {
					rounds += r.Rounds(k, u)
					at, ok := arr.Next(Turn{Session: total + u})
					if !ok || at != times[u] {
						t.Fatalf("stage %d session %d starts at %s (%v), want its first request %s", k, u, at, ok, times[u])
					}
					for i := range r.Rounds(k, u) {
						got = append(got, r.TurnAt(Turn{Session: total + u, Index: i}))
					}
					if st, _ := r.StageAt(times[u]); st != k+1 {
						t.Errorf("StageAt(%s) = %d, want %d", times[u], st, k+1)
					}
					if last := times[len(times)-1]; func() bool { st, _ := r.StageAt(last); return st != k+1 }() {
						t.Errorf("StageAt(%s), the stage's last request, is not stage %d", last, k+1)
					}
				}
				if rounds != len(times) {
					t.Errorf("stage %d: %d rounds in all, want %d requests", k, rounds, len(times))
				}
				slices.Sort(got)
				if !slices.Equal(got, times) {
					t.Errorf("stage %d: the sessions' rounds are not the stage's requests", k)
				}
				total += r.StageSessions(k)
			}
			if _, ok := arr.Next(Turn{Session: total}); ok || r.Sessions() != total {
				t.Errorf("a session after the last (%d) arrives, or Sessions() = %d", total, r.Sessions())
			}
			if r.End() != NoEnd {
				t.Errorf("End() = %s, want NoEnd", r.End())
			}
		})
	}
}

// TestRequestsRoundRobin: request i of a stage is round i/users of session
// i mod users (inference-perf's data index to user session).
func TestRequestsRoundRobin(t *testing.T) {
	t.Parallel()
	r, err := NewRequests([]RequestStage{{10, 2 * sec}}, false, 3, 0, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	times := r.Times(0)
	for i, want := range times {
		if got := r.TurnAt(Turn{Session: i % 3, Index: i / 3}); got != want {
			t.Errorf("request %d: session %d round %d at %s, want %s", i, i%3, i/3, got, want)
		}
	}
	if r.Rounds(0, 0) != 7 || r.Rounds(0, 2) != 6 {
		t.Errorf("rounds %d, %d; want 7 and 6 of 20 requests over 3 sessions", r.Rounds(0, 0), r.Rounds(0, 2))
	}
}

func TestRequestsSeed(t *testing.T) {
	t.Parallel()
	plan := func(seed uint64) []time.Duration {
		r, err := NewRequests([]RequestStage{{30, 3 * sec}}, true, 4, 0, seed, 0)
		if err != nil {
			t.Fatal(err)
		}
		return r.Times(0)
	}
	if a, b := plan(3), plan(3); !slices.Equal(a, b) {
		t.Error("the same seed planned different times")
	}
	if a, b := plan(3), plan(4); slices.Equal(a, b) {
		t.Error("two seeds planned the same times")
	}
}

// TestRequestsPoissonRate: over many seconds the poisson timer's counts
// per second have the rate as mean and variance.
func TestRequestsPoissonRate(t *testing.T) {
	t.Parallel()
	const rate, secs = 20.0, 400
	r, err := NewRequests([]RequestStage{{rate, secs * sec}}, true, 0, 0, 11, 0)
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]float64, secs)
	for _, at := range r.Times(0) {
		if s := int(at / sec); s < secs {
			counts[s]++
		}
	}
	var mean, v float64
	for _, c := range counts[:secs-10] { // the last seconds may be cut short
		mean += c
	}
	mean /= secs - 10
	for _, c := range counts[:secs-10] {
		v += (c - mean) * (c - mean)
	}
	v /= secs - 11
	// The mean of 390 Poisson(20) counts has a standard error of 0.23.
	if math.Abs(mean-rate) > 1 || v < rate/2 || v > rate*2 {
		t.Errorf("counts a second: mean %.2f, variance %.2f; want both near %g", mean, v, rate)
	}
}

func TestRequestsErrors(t *testing.T) {
	t.Parallel()
	for _, s := range [][]RequestStage{nil, {{0, sec}}, {{1, 0}}, {{math.Inf(1), sec}}, {{1e9, 10 * sec}}, {{1, 31 * 24 * time.Hour}}} {
		if _, err := NewRequests(s, false, 1, 0, 0, 0); err == nil {
			t.Errorf("%v: no error", s)
		}
	}
}
