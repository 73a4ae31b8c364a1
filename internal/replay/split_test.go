package replay

import (
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/schedule"
	"github.com/mtkit/mtkit/internal/segment"
)

// TestLanesGlobal runs some of a schedule's lanes (Options.Lanes, as a
// segment of a split run does): only those lanes send, the records'
// client is the lane's global index, and a user-centric lane keeps the
// whole run's stagger (user u at u·gap/N + k·gap with N the whole run's
// users).
func TestLanesGlobal(t *testing.T) {
	t.Parallel()
	const gap = 40 * time.Millisecond
	for _, tc := range []struct {
		name  string
		sched schedule.Schedule
		lanes []int
		want  []int
	}{
		{"users", schedule.UserGap{N: 4, Gap: gap}, []int{1, 3}, []int{1, 3}},
		{"closed", schedule.Closed{Clients: 5, Sessions: 7}, []int{0, 2, 4}, []int{0, 2, 4}},
		{"lanes beyond the schedule's", schedule.UserGap{N: 2, Gap: gap}, []int{1, 3}, []int{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fs := newFakeServer(t, func(fs *fakeServer) {
				if _, closed := tc.sched.(schedule.Closed); closed {
					fs.hook = holdFirst(len(tc.lanes))
				}
			})
			start := time.Now().Add(50 * time.Millisecond)
			res := replayT(t, Options{URL: fs.URL, Stream: true, Schedule: tc.sched, Lanes: tc.lanes, Start: start}, simpleConvs(6, 2))
			lanes := byClient(res.final())
			var got []int
			for u, rs := range lanes {
				got = append(got, u)
				ug, ok := tc.sched.(schedule.UserGap)
				for k, r := range rs {
					if !ok {
						break
					}
					if want := start.Add(time.Duration(u)*gap/time.Duration(ug.N) + time.Duration(k)*gap); !r.Scheduled.Equal(want) {
						t.Errorf("user %d turn %d scheduled at +%v, want +%v", u, k, r.Scheduled.Sub(start), want.Sub(start))
					}
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("clients %v in the records, want %v", got, tc.want)
			}
			if res.sum.Finished != 6 {
				t.Errorf("%d conversations finished, want 6", res.sum.Finished)
			}
		})
	}
}

// holdFirst returns a fake server hook that holds the first n requests
// until all n have arrived. In a closed loop of n lanes, each lane's first
// request is then in flight before any lane is answered, so no lane can
// take every session before the others start.
func holdFirst(n int) func(http.ResponseWriter, *http.Request, *seenRequest) bool {
	var arrived sync.WaitGroup
	arrived.Add(n)
	return func(_ http.ResponseWriter, _ *http.Request, req *seenRequest) bool {
		if req.N <= n {
			arrived.Done()
			arrived.Wait()
		}
		return false
	}
}

// TestPickRandomPerLane: under random sampling a lane's picks come from
// its own source, so they do not depend on what other lanes draw: lane 3
// picks the same sessions whether lane 5 draws between its picks (the
// whole run) or not (lane 3's segment alone).
func TestPickRandomPerLane(t *testing.T) {
	t.Parallel()
	ready := make([]*session, 5) // zero ready times: all ready
	for i := range ready {
		ready[i] = &session{}
	}
	picks := func(interleave bool) []int {
		a, b := segment.LaneRand(7, 3), segment.LaneRand(7, 5)
		var got []int
		for range 50 {
			var rr int
			got = append(got, pick(ready, &rr, a))
			if interleave {
				pick(ready, &rr, b)
			}
		}
		return got
	}
	alone, whole := picks(false), picks(true)
	if !slices.Equal(alone, whole) {
		t.Errorf("lane 3 picked %v alone and %v beside lane 5", alone, whole)
	}
	seen := map[int]bool{}
	for _, i := range alone {
		seen[i] = true
	}
	if len(seen) < 4 {
		t.Errorf("50 random picks among 5 sessions chose only %v", seen)
	}
	var rr int
	if got := []int{pick(ready, &rr, nil), pick(ready, &rr, nil), pick(ready, &rr, nil)}; !slices.Equal(got, []int{0, 1, 2}) {
		t.Errorf("round robin picked %v, want 0 1 2", got)
	}
}
