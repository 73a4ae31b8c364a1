package schedule

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// Every implementation is a Schedule.
var (
	_ Schedule = Closed{}
	_ Schedule = Rate{}
	_ Schedule = Trace{}
	_ Schedule = UserGap{}
)

const ms = time.Millisecond

// TestClosedLanes: the lanes of a closed loop, the sessions each keeps
// in progress, and their total.
func TestClosedLanes(t *testing.T) {
	for _, tc := range []struct {
		name            string
		clients, active int
		wantUsers       int
		wantActive      []int
	}{
		{"default", 0, 0, 1, []int{1}},
		{"one each", 3, 0, 3, []int{1, 1, 1}},
		{"spread", 3, 7, 3, []int{3, 2, 2}},
		{"even", 2, 6, 2, []int{3, 3}},
		{"active below clients", 4, 2, 4, []int{1, 1, 1, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Closed{Clients: tc.clients, Sessions: tc.active}
			if got := s.Users(); got != tc.wantUsers {
				t.Fatalf("Users() = %d, want %d", got, tc.wantUsers)
			}
			if s.Arrivals() != nil {
				t.Errorf("Arrivals() != nil for closed lanes")
			}
			sum := 0
			for u, want := range tc.wantActive {
				if got := s.Active(u); got != want {
					t.Errorf("Active(%d) = %d, want %d", u, got, want)
				}
				sum += s.Active(u)
			}
			if s.Total() != sum {
				t.Errorf("Total() = %d, the lanes' sessions add up to %d", s.Total(), sum)
			}
		})
	}
}

// TestAfterThink covers the turn times of the schedules whose later
// turns follow the previous answer by the think time.
func TestAfterThink(t *testing.T) {
	for _, s := range []Schedule{Closed{Clients: 2}, Rate{PerSecond: 3}, Trace{Scale: 0.5}} {
		for _, tc := range []struct {
			name string
			turn Turn
			want time.Duration
		}{
			{"first turn at start", Turn{Start: 7 * ms, PrevEnd: 99 * ms, Think: 5 * ms}, 7 * ms},
			{"later turn after think", Turn{Index: 2, Start: 7 * ms, PrevEnd: 40 * ms, Think: 5 * ms}, 45 * ms},
			{"no think", Turn{Index: 1, PrevEnd: 40 * ms}, 40 * ms},
		} {
			if got := s.TurnAt(tc.turn); got != tc.want {
				t.Errorf("%T %s: TurnAt = %v, want %v", s, tc.name, got, tc.want)
			}
		}
	}
}

func arrivals(a Arrivals, firsts []Turn) []time.Duration {
	var out []time.Duration
	for i, f := range firsts {
		f.Session = i
		at, ok := a.Next(f)
		if !ok {
			break
		}
		out = append(out, at)
	}
	return out
}

func TestRateConstant(t *testing.T) {
	for _, tc := range []struct {
		rate float64
		want []time.Duration
	}{
		{4, []time.Duration{0, 250 * ms, 500 * ms, 750 * ms, time.Second}},
		{0.5, []time.Duration{0, 2 * time.Second, 4 * time.Second}},
		{3, []time.Duration{0, 333333333, 666666666, time.Second}},
	} {
		s := Rate{PerSecond: tc.rate}
		if s.Users() != 0 {
			t.Fatalf("Users() = %d, want 0 (arrivals)", s.Users())
		}
		got := arrivals(s.Arrivals(), make([]Turn, len(tc.want)))
		for i := range tc.want {
			if got[i] != tc.want[i] {
				t.Errorf("rate %g: session %d at %v, want %v", tc.rate, i, got[i], tc.want[i])
			}
		}
	}
}

// TestRatePoisson checks that Poisson arrivals are a function of the
// seed and the session index alone: the same seed gives the same
// sequence (from a fresh iterator too), another seed another one, the
// sessions' own content does not matter, and the gaps have the mean
// the rate implies.
func TestRatePoisson(t *testing.T) {
	const n = 20000
	firsts := make([]Turn, n)
	a := arrivals(Rate{PerSecond: 10, Poisson: true, Seed: 42}.Arrivals(), firsts)
	for i := range firsts {
		firsts[i] = Turn{HasTrace: true, Trace: time.Duration(n-i) * time.Second, User: 5}
	}
	b := arrivals(Rate{PerSecond: 10, Poisson: true, Seed: 42}.Arrivals(), firsts)
	c := arrivals(Rate{PerSecond: 10, Poisson: true, Seed: 43}.Arrivals(), firsts)
	same := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("seed 42: session %d at %v, then at %v", i, a[i], b[i])
		}
		if a[i] == c[i] {
			same++
		}
		if i > 0 && a[i] < a[i-1] {
			t.Fatalf("session %d at %v, before session %d at %v", i, a[i], i-1, a[i-1])
		}
	}
	if a[0] != 0 {
		t.Errorf("first session at %v, want 0", a[0])
	}
	if same > 1 {
		t.Errorf("seeds 42 and 43 agree on %d of %d sessions", same, n)
	}
	mean := a[n-1].Seconds() / (n - 1)
	if math.Abs(mean-0.1) > 0.005 {
		t.Errorf("mean gap %.4fs, want 0.1s ± 5%%", mean)
	}
}

func TestTraceArrivals(t *testing.T) {
	tr := func(ms float64) Turn {
		return Turn{Trace: time.Duration(ms * float64(time.Millisecond)), HasTrace: true}
	}
	for _, tc := range []struct {
		name   string
		scale  float64
		firsts []Turn
		want   []time.Duration
	}{
		{"relative to the first session", 1, []Turn{tr(5000), tr(5000), tr(6500), tr(9000)},
			[]time.Duration{0, 0, 1500 * ms, 4000 * ms}},
		{"ten times faster", 0.1, []Turn{tr(1000), tr(2000), tr(11000)},
			[]time.Duration{0, 100 * ms, time.Second}},
		{"twice slower", 2, []Turn{tr(0), tr(250)}, []time.Duration{0, 500 * ms}},
		{"no scale is 1", 0, []Turn{tr(0), tr(250)}, []time.Duration{0, 250 * ms}},
		{"earlier than the first starts at once", 1, []Turn{tr(1000), tr(400), tr(1200)},
			[]time.Duration{0, 0, 200 * ms}},
		{"no timestamp starts with the one before", 1, []Turn{tr(0), tr(300), {}, tr(900)},
			[]time.Duration{0, 300 * ms, 300 * ms, 900 * ms}},
		{"origin is the first timestamped session", 1, []Turn{{}, tr(2000), tr(2100)},
			[]time.Duration{0, 0, 100 * ms}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := arrivals(Trace{Scale: tc.scale}.Arrivals(), tc.firsts)
			for i := range tc.want {
				if got[i] != tc.want[i] {
					t.Errorf("session %d at %v, want %v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestTraceTurns(t *testing.T) {
	for _, tc := range []struct {
		name  string
		scale float64
		turn  Turn
		want  time.Duration
	}{
		{"own trace time", 1, Turn{Index: 1, Start: 2 * time.Second, PrevEnd: 2100 * ms, Think: time.Hour,
			Trace: 9 * time.Second, HasTrace: true, FirstTrace: 4 * time.Second, HasFirstTrace: true}, 7 * time.Second},
		{"scaled", 0.1, Turn{Index: 3, Start: 2 * time.Second,
			Trace: 9 * time.Second, HasTrace: true, FirstTrace: 4 * time.Second, HasFirstTrace: true}, 2500 * ms},
		// The runner sends it when the previous answer ends; the
		// intended time stays the trace's, so the wait is lateness.
		{"before the previous end stays the trace time", 1, Turn{Index: 1, Start: 0, PrevEnd: 3 * time.Second,
			Trace: 1 * time.Second, HasTrace: true, FirstTrace: 0, HasFirstTrace: true}, 1 * time.Second},
		{"tool turn without timestamp", 1, Turn{Index: 2, Start: 0, PrevEnd: 3 * time.Second, Think: 10 * ms,
			FirstTrace: 0, HasFirstTrace: true}, 3010 * ms},
		{"session without a first timestamp", 1, Turn{Index: 2, Start: 0, PrevEnd: 3 * time.Second,
			Trace: 9 * time.Second, HasTrace: true}, 3 * time.Second},
	} {
		if got := (Trace{Scale: tc.scale}).TurnAt(tc.turn); got != tc.want {
			t.Errorf("%s: TurnAt = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestUserGap(t *testing.T) {
	s := UserGap{N: 4, Gap: 2 * time.Second}
	if s.Users() != 4 || s.Arrivals() != nil {
		t.Fatalf("Users() = %d, Arrivals() = %v; want 4 lanes", s.Users(), s.Arrivals())
	}
	for u := range 4 {
		if s.Active(u) != 1 {
			t.Errorf("Active(%d) = %d, want 1", u, s.Active(u))
		}
	}
	for _, tc := range []struct {
		turn Turn
		want time.Duration
	}{
		{Turn{User: 0, LaneTurn: 0}, 0},
		{Turn{User: 1, LaneTurn: 0}, 500 * ms},
		{Turn{User: 3, LaneTurn: 0}, 1500 * ms},
		{Turn{User: 0, LaneTurn: 1}, 2 * time.Second},
		{Turn{User: 2, LaneTurn: 5}, 11 * time.Second},
		// Neither the session, its turn index, its previous end nor a
		// think time move a slot: a late answer does not shift the user.
		{Turn{User: 1, LaneTurn: 3, Session: 9, Index: 2, PrevEnd: time.Minute, Think: time.Hour}, 6500 * ms},
	} {
		if got := s.TurnAt(tc.turn); got != tc.want {
			t.Errorf("TurnAt(user %d, lane turn %d) = %v, want %v", tc.turn.User, tc.turn.LaneTurn, got, tc.want)
		}
	}
	// Steady state from the start: the sends of all users in the first
	// two gaps are evenly spaced by Gap/N.
	var sends []time.Duration
	for k := range 2 {
		for u := range 4 {
			sends = append(sends, s.TurnAt(Turn{User: u, LaneTurn: k}))
		}
	}
	for i := 1; i < len(sends); i++ {
		if d := sends[i] - sends[i-1]; d != 500*ms {
			t.Errorf("send %d is %v after send %d, want 500ms", i, d, i-1)
		}
	}
}

// TestSessionRand checks that a session's draws depend on the seed and
// its index only.
func TestSessionRand(t *testing.T) {
	draw := func(seed uint64, session int) [4]uint64 {
		r := SessionRand(seed, session)
		return [4]uint64{r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64()}
	}
	// Drawing for other sessions first changes nothing.
	a := draw(1, 7)
	for s := range 7 {
		draw(1, s)
	}
	if b := draw(1, 7); a != b {
		t.Errorf("session 7 drew %v, then %v", a, b)
	}
	seen := map[[4]uint64]string{}
	for _, tc := range []struct {
		seed    uint64
		session int
	}{{1, 0}, {1, 1}, {1, 7}, {2, 7}, {0, 0}, {2, 1}} {
		d := draw(tc.seed, tc.session)
		key := string(rune('0'+tc.seed)) + "/" + string(rune('0'+tc.session))
		if prev, dup := seen[d]; dup {
			t.Errorf("seed/session %s draws the same as %s", key, prev)
		}
		seen[d] = key
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		s       Schedule
		wantErr bool
	}{
		{Closed{}, false},
		{Rate{PerSecond: 2}, false},
		{Rate{}, true},
		{Rate{PerSecond: -1}, true},
		{Rate{PerSecond: math.Inf(1)}, true},
		{UserGap{N: 2, Gap: time.Second}, false},
		{UserGap{N: 0, Gap: time.Second}, true},
		{UserGap{N: 2}, true},
		{Trace{}, false},
		{Trace{Scale: 0.1}, false},
		{Trace{Scale: -1}, true},
		{Trace{Scale: math.NaN()}, true},
	} {
		if err := tc.s.Validate(); (err != nil) != tc.wantErr {
			t.Errorf("%#v.Validate() = %v, want error: %v", tc.s, err, tc.wantErr)
		}
	}
}

// BenchmarkTurnAt measures what a schedule adds to every turn the runner
// sends (one TurnAt) and to every session of an open loop (one Next).
func BenchmarkTurnAt(b *testing.B) {
	turn := Turn{Index: 3, Start: time.Second, PrevEnd: 2 * time.Second, Think: ms, Trace: 5 * time.Second,
		HasTrace: true, FirstTrace: time.Second, HasFirstTrace: true, LaneTurn: 9, User: 2}
	for _, s := range []Schedule{Closed{Clients: 4}, Rate{PerSecond: 10, Poisson: true}, Trace{Scale: 0.5}, UserGap{N: 4, Gap: time.Second}} {
		b.Run(fmt.Sprintf("%T", s)[len("schedule."):], func(b *testing.B) {
			var sum time.Duration
			for b.Loop() {
				sum += s.TurnAt(turn)
			}
			if sum == 0 {
				b.Fatal("no time")
			}
		})
	}
	b.Run("PoissonNext", func(b *testing.B) {
		a := Rate{PerSecond: 10, Poisson: true}.Arrivals()
		for b.Loop() {
			a.Next(Turn{})
		}
	})
}

// TestName: each schedule's name in the run manifest.
func TestName(t *testing.T) {
	t.Parallel()
	reqs, err := NewRequests([]RequestStage{{Rate: 1, Duration: time.Second}}, false, 1, 0, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		s    Schedule
		want string
	}{
		{Closed{}, "closed"}, {Rate{PerSecond: 1}, "rate"}, {Trace{}, "trace"},
		{UserGap{N: 1, Gap: time.Second}, "users"}, {Staged{}, "stages"}, {reqs, "inference-perf"},
	} {
		if got := tc.s.Name(); got != tc.want {
			t.Errorf("%T.Name() = %q, want %q", tc.s, got, tc.want)
		}
	}
}
