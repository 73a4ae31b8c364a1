package sweep

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestParseStages(t *testing.T) {
	t.Parallel()
	got, err := ParseStages("clients=4:60s, clients=8:1m30s:10s,rate=2.5:30s,users=16:2m,active=64:5m:30s")
	if err != nil {
		t.Fatal(err)
	}
	want := []Stage{
		{Clients, 4, time.Minute, 0},
		{Clients, 8, 90 * time.Second, 10 * time.Second},
		{Rate, 2.5, 30 * time.Second, 0},
		{Users, 16, 2 * time.Minute, 0},
		{Active, 64, 5 * time.Minute, 30 * time.Second},
	}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("stage %d: %+v, want %+v", i, got[i], want[i])
		}
		back, err := ParseStages(got[i].String())
		if err != nil || back[0] != got[i] {
			t.Errorf("String %q does not parse back: %v %v", got[i].String(), back, err)
		}
	}
	for _, bad := range []struct{ in, msg string }{
		{"clients=4", "KIND=LEVEL:DURATION"},
		{"threads=4:60s", `kind "threads"`},
		{"clients=2.5:60s", "whole number"},
		{"active=2.5:60s", "whole number"},
		{"rate=0:60s", "positive number"},
		{"rate=-1:60s", "positive number"},
		{"rate=NaN:60s", "positive number"},
		{"clients=4:soon", "positive Go duration"},
		{"clients=4:60s:60s", "nothing of the 1m0s stage"},
		{"clients=4:60s:x", "warmup"},
		{"clients=4:60s,", `stage 2 ""`},
	} {
		_, err := ParseStages(bad.in)
		if err == nil || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("ParseStages(%q) = %v, want an error with %q", bad.in, err, bad.msg)
		}
	}
}

// closedModel is a server that runs at most m requests at once, each for
// r; n closed-loop users without think time get min(n, m)/r requests/s,
// and a turn waits in the queue when n > m. The objective is a TTFT p95
// below the unloaded one plus half a request time: met up to m users.
type closedModel struct {
	m      int
	r      time.Duration
	jitter float64 // relative throughput noise between the halves
}

func (c closedModel) run(s Stage) Result {
	n := s.Level
	x := math.Min(n, float64(c.m)) / c.r.Seconds()
	wait := math.Max(0, n-float64(c.m)) / float64(c.m) * c.r.Seconds()
	return Result{Stage: s, Throughput: x, FirstHalf: x * (1 + c.jitter), SecondHalf: x * (1 - c.jitter),
		MeetsSLO: wait <= 0.5*c.r.Seconds()/float64(c.m)+1e-12}
}

// openModel is a server that completes at most c requests/s; offered a
// higher rate, its queue grows and the second half of a stage completes
// no more than the first (unsteady: the backlog's answers come late).
type openModel struct{ c float64 }

func (o openModel) run(s Stage) Result {
	if s.Level <= o.c {
		return Result{Stage: s, Throughput: s.Level, FirstHalf: s.Level, SecondHalf: s.Level, MeetsSLO: true}
	}
	return Result{Stage: s, Throughput: o.c, FirstHalf: o.c, SecondHalf: o.c * 0.6, MeetsSLO: false}
}

func sweep(t *testing.T, p Planner, run func(Stage) Result) []Result {
	t.Helper()
	var done []Result
	for {
		s, ok := p.Next(done)
		if !ok {
			return done
		}
		if len(done) > 20 {
			t.Fatalf("sweep does not end: %v", done)
		}
		done = append(done, run(s))
	}
}

func TestSweepFindsCapacity(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		p          Planner
		run        func(Stage) Result
		capacity   float64 // true value
		within     float64 // relative
		wantFailed bool
	}{
		{"closed loop, 12 slots", Planner{Kind: Clients, Objectives: true}, closedModel{m: 12, r: 100 * time.Millisecond}.run, 12, 0.1, true},
		{"closed loop, 40 slots, noisy", Planner{Kind: Clients, Objectives: true}, closedModel{m: 40, r: 50 * time.Millisecond, jitter: 0.05}.run, 40, 0.1, true},
		{"closed loop, 1 slot", Planner{Kind: Clients, Objectives: true}, closedModel{m: 1, r: 10 * time.Millisecond}.run, 1, 0, true},
		{"open loop, 37 req/s", Planner{Kind: Rate, Start: 2, Objectives: true}, openModel{37}.run, 37, 0.1, true},
		{"capped below capacity", Planner{Kind: Clients, Objectives: true, Max: 8}, closedModel{m: 12, r: 100 * time.Millisecond}.run, 8, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			done := sweep(t, tc.p, tc.run)
			capa := Criteria{}.Judge(tc.p.Kind, []string{"ttft_p95<=1s"}, done)
			if math.Abs(capa.Capacity-tc.capacity) > tc.within*tc.capacity || capa.Capacity > tc.capacity {
				t.Errorf("capacity %g, want %g within %.0f%% (stages %+v)", capa.Capacity, tc.capacity, 100*tc.within, capa.Stages)
			}
			if (capa.Failed != nil) != tc.wantFailed || (capa.Failed != nil && *capa.Failed <= capa.Capacity) {
				t.Errorf("failed level %v for capacity %g", capa.Failed, capa.Capacity)
			}
		})
	}
}

func TestKnee(t *testing.T) {
	t.Parallel()
	m := closedModel{m: 12, r: 100 * time.Millisecond}
	done := sweep(t, Planner{Kind: Clients}, m.run)
	k, ok := Criteria{}.Knee(done)
	if !ok || math.Abs(k-12) > 1e-9 {
		t.Errorf("knee %g %v, want 12 (stages %v)", k, ok, done)
	}
	// Without objectives the sweep fills levels below the knee.
	below := 0
	for _, r := range done {
		if r.Stage.Level < 12 {
			below++
		}
	}
	if below < 4 {
		t.Errorf("%d stages below the knee, want the ramp's and the fill's: %v", below, done)
	}
	// Before any stage is past the knee there is none.
	if _, ok := (Criteria{}).Knee(done[:2]); ok {
		t.Error("knee found from two linear stages")
	}
	o := openModel{c: 37}
	kr, ok := Criteria{}.Knee([]Result{o.run(Stage{Kind: Rate, Level: 10}), o.run(Stage{Kind: Rate, Level: 80})})
	if !ok || kr != 37 {
		t.Errorf("open-loop knee %g %v, want 37", kr, ok)
	}
}

// lateFrom16 runs stages on a closed model of 100 requests/s at most,
// those from level 16 on with a lateness p99 of 300 ms and changed by
// also.
func lateFrom16(also func(*Result)) func(Stage) Result {
	m := closedModel{m: 100, r: 100 * time.Millisecond}
	return func(s Stage) Result {
		r := m.run(s)
		if s.Level >= 16 {
			r.LatenessP99 = 300 * time.Millisecond
			also(&r)
		}
		return r
	}
}

// TestClientLimited: a stage the client could not send on time ends the
// sweep, is not read as the server's saturation, and marks the capacity
// as a lower bound.
func TestClientLimited(t *testing.T) {
	t.Parallel()
	done := sweep(t, Planner{Kind: Clients, Objectives: true}, lateFrom16(func(r *Result) { r.Throughput *= 0.5 }))
	if last := done[len(done)-1].Stage.Level; last != 16 {
		t.Errorf("sweep went on to %g after a client-limited stage", last)
	}
	capa := Criteria{}.Judge(Clients, nil, done)
	if !capa.ClientLimited || capa.Knee != nil || capa.Capacity != 8 {
		t.Errorf("capacity %+v, want 8, client-limited, no knee", capa)
	}
}

// TestClientLimitedUsers: a users stage is not judged client-limited
// from its lateness, which grows with the server's answer times; its
// saturation is read from throughput and the objectives, as for clients.
func TestClientLimitedUsers(t *testing.T) {
	t.Parallel()
	// Users waiting for their answers from 16 on.
	done := sweep(t, Planner{Kind: Users, Objectives: true}, lateFrom16(func(r *Result) { r.MeetsSLO = false }))
	capa := Criteria{}.Judge(Users, []string{"ttft_p95<=1s"}, done)
	if capa.ClientLimited || capa.Capacity < 8 || capa.Capacity >= 16 || capa.Failed == nil {
		t.Errorf("capacity %+v, want between 8 and 16 users, bracketed, not client-limited", capa)
	}
	if c := (Criteria{}); c.ClientLimited(Result{Stage: Stage{Kind: Users}, LatenessP99: time.Second}) ||
		!c.ClientLimited(Result{Stage: Stage{Kind: Clients}, LatenessP99: time.Second}) {
		t.Errorf("ClientLimited: users stages must not be judged from lateness, clients stages must")
	}
}

// TestClientLimitedWaitApart: records that keep the wait for a free
// client apart (client_wait_ns) leave only the generator's own delay in
// the lateness, so a stage of any kind is client-limited when that is
// over the limit; records that do not (older versions) have the wait in
// their lateness, so their users and active stages are not judged.
func TestClientLimitedWaitApart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kind  Kind
		late  time.Duration
		known bool
		want  bool
	}{
		{Active, time.Second, true, true},
		{Users, time.Second, true, true},
		{Active, time.Millisecond, true, false},
		{Users, time.Millisecond, true, false},
		{Clients, time.Second, true, true},
		{Rate, time.Millisecond, true, false},
		{Active, time.Second, false, false},
		{Users, time.Second, false, false},
		{Clients, time.Second, false, true},
		{Rate, time.Second, false, true},
	} {
		r := Result{Stage: Stage{Kind: tc.kind, Level: 4}, LatenessP99: tc.late, ClientWaitKnown: tc.known}
		if got := (Criteria{}).ClientLimited(r); got != tc.want {
			t.Errorf("%s stage, lateness p99 %v, client wait known %v: client-limited %v, want %v", tc.kind, tc.late, tc.known, got, tc.want)
		}
	}
}

func TestSteady(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		first, second float64
		want          bool
	}{{10, 10, true}, {10, 9, true}, {10, 8, false}, {0, 0, false}, {5, 10, false}} {
		if got := (Criteria{}).Steady(Result{FirstHalf: tc.first, SecondHalf: tc.second}); got != tc.want {
			t.Errorf("Steady(%g, %g) = %v", tc.first, tc.second, got)
		}
	}
}

func TestCapacityLine(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	for _, tc := range []struct {
		c    Capacity
		want string
	}{
		{Capacity{Kind: Clients, Capacity: 8, Failed: f(9), Knee: f(7.86), Objectives: []string{"ttft_p95<=2s"}},
			"capacity 8 clients (9 did not hold); knee at 7.86"},
		{Capacity{Kind: Rate, Capacity: 4, Objectives: []string{"ttft_p95<=2s"}, ClientLimited: true},
			"capacity 4 rate (a lower bound: every level tried held); knee not reached; the client could not hold a level: the server's capacity may be higher"},
		{Capacity{Kind: Rate, Capacity: 0, Failed: f(2), Knee: f(3.38)},
			"no objectives: largest level that held (steady, no failure) 0 rate (2 did not hold); knee at 3.38"},
	} {
		if got := tc.c.Line(); got != tc.want {
			t.Errorf("Line() = %q, want %q", got, tc.want)
		}
	}
}

// TestCapacityJSONPlain: the capacity JSON writes objectives as typed
// (issue 23: "ttft_p95\u003c=2s").
func TestCapacityJSONPlain(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	c := Capacity{Schema: "mtkit.capacity/1", Kind: Rate, Capacity: 4, Objectives: []string{"ttft_p95<=2s", "e2e_p99<5s&x>1"}}
	if err := c.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, `"ttft_p95<=2s"`) || !strings.Contains(out, `"e2e_p99<5s&x>1"`) || strings.Contains(out, `\u00`) {
		t.Errorf("capacity JSON:\n%s", out)
	}
	if !strings.HasSuffix(out, "}\n") || !strings.Contains(out, "\n  \"kind\": ") {
		t.Errorf("not indented JSON ending in a newline:\n%s", out)
	}
}

// TestNoSteadyStage: a sweep none of whose stages was steady has no
// capacity, says what to change, and is an error (issue 23: "capacity 0
// rate", exit 0).
func TestNoSteadyStage(t *testing.T) {
	t.Parallel()
	c := Capacity{Kind: Rate, Unsteady: 0.2, Objectives: []string{"ttft_p95<=2s"},
		Stages: []Judged{{Stage: 1, Kind: Rate, Level: 1}, {Stage: 2, Kind: Rate, Level: 2}}}
	if line := c.Line(); !strings.Contains(line, "none of the 2 stages was steady") || !strings.Contains(line, "--stage-duration") || strings.Contains(line, "capacity 0") {
		t.Errorf("Line() = %q", line)
	}
	if err := c.Err(); err == nil || !strings.Contains(err.Error(), "--stage-duration") {
		t.Errorf("Err() = %v", err)
	}
	c.Stages[1].Steady = true
	if err := c.Err(); err != nil || strings.Contains(c.Line(), "steady") {
		t.Errorf("one steady stage: Err() = %v, Line() = %q", err, c.Line())
	}
}
