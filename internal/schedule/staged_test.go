package schedule

import (
	"math"
	"testing"
	"time"
)

var (
	_ Schedule = Staged{}
	_ Gated    = Staged{}
	_ Stager   = Staged{}
	_ Quota    = Staged{}
)

const sec = time.Second

func clientStages() Staged {
	return Staged{Levels: []Level{
		{Level: 2, Duration: 10 * sec, Warmup: 2 * sec},
		{Level: 4, Duration: 10 * sec},
		{Level: 1, Duration: 5 * sec, Warmup: sec},
	}}
}

func TestStagedLanes(t *testing.T) {
	s := clientStages()
	if s.Users() != 4 || s.Arrivals() != nil || s.Active(3) != 1 {
		t.Fatalf("Users() = %d, Arrivals() = %v, Active = %d; want 4 lanes of one session", s.Users(), s.Arrivals(), s.Active(3))
	}
	if s.End() != 25*sec {
		t.Errorf("End() = %v, want 25s", s.End())
	}
	for _, tc := range []struct {
		name     string
		user     int
		at       time.Duration
		wantFrom time.Duration
		wantOK   bool
	}{
		{"lane 0 at start", 0, 0, 0, true},
		{"lane 1 in stage 1", 1, 3 * sec, 3 * sec, true},
		{"lane 2 waits for stage 2", 2, 3 * sec, 10 * sec, true},
		{"lane 3 in stage 2", 3, 15 * sec, 15 * sec, true},
		{"lane 3 after stage 2: never again", 3, 20 * sec, 0, false},
		{"lane 0 in stage 3", 0, 21 * sec, 21 * sec, true},
		{"lane 1 in stage 3: never again", 1, 21 * sec, 0, false},
		{"after the end", 0, 25 * sec, 0, false},
	} {
		from, ok := s.Open(tc.user, tc.at)
		if from != tc.wantFrom || ok != tc.wantOK {
			t.Errorf("%s: Open(%d, %v) = %v, %v; want %v, %v", tc.name, tc.user, tc.at, from, ok, tc.wantFrom, tc.wantOK)
		}
	}
}

// TestStagedActive checks active-session stages: the clients stay, each
// lane's share of a stage's sessions follows Closed's spread, lanes are
// open for the whole run, and turns follow the think time.
func TestStagedActive(t *testing.T) {
	s := Staged{Lanes: 3, Levels: []Level{
		{Level: 3, Duration: 10 * sec, Warmup: 2 * sec},
		{Level: 8, Duration: 10 * sec},
		{Level: 4, Duration: 5 * sec},
	}}
	if s.Users() != 3 || s.Arrivals() != nil {
		t.Fatalf("Users() = %d, Arrivals() = %v; want 3 lanes", s.Users(), s.Arrivals())
	}
	for user, want := range []int{3, 3, 2} { // the highest level's shares
		if got := s.Active(user); got != want {
			t.Errorf("Active(%d) = %d, want %d", user, got, want)
		}
	}
	for _, tc := range []struct {
		at   time.Duration
		want [3]int
	}{
		{0, [3]int{1, 1, 1}},
		{9 * sec, [3]int{1, 1, 1}},
		{10 * sec, [3]int{3, 3, 2}},
		{20 * sec, [3]int{2, 1, 1}},
		{25 * sec, [3]int{0, 0, 0}},
	} {
		for user, want := range tc.want {
			if got := s.ActiveAt(user, tc.at); got != want {
				t.Errorf("ActiveAt(%d, %v) = %d, want %d", user, tc.at, got, want)
			}
		}
	}
	for _, tc := range []struct {
		user     int
		at, from time.Duration
		ok       bool
	}{{2, 0, 0, true}, {2, 24 * sec, 24 * sec, true}, {0, 25 * sec, 0, false}} {
		if from, ok := s.Open(tc.user, tc.at); from != tc.from || ok != tc.ok {
			t.Errorf("Open(%d, %v) = %v, %v; want %v, %v", tc.user, tc.at, from, ok, tc.from, tc.ok)
		}
	}
	if st, warm := s.StageAt(11 * sec); st != 2 || warm {
		t.Errorf("StageAt(11s) = %d, %v", st, warm)
	}
	turn := Turn{User: 1, Index: 2, LaneTurn: 5, PrevEnd: 12 * sec, Think: 3 * sec}
	if got := s.TurnAt(turn); got != afterThink(turn) {
		t.Errorf("TurnAt = %v, want the think time after the previous answer (%v)", got, afterThink(turn))
	}
	if got := clientStages().ActiveAt(0, 12*sec); got != 1 {
		t.Errorf("clients stages: ActiveAt = %d, want 1", got)
	}
}

func TestStagedStageAt(t *testing.T) {
	s := clientStages()
	for _, tc := range []struct {
		at         time.Duration
		stage      int
		warmup     bool
		firstStage int
	}{
		{0, 1, true, 0},
		{2*sec - 1, 1, true, 0},
		{2 * sec, 1, false, 0},
		{10 * sec, 2, false, 0},
		{20*sec + 500*ms, 3, true, 0},
		{22 * sec, 3, false, 0},
		{time.Hour, 3, false, 0}, // after the end: the last stage
		{10 * sec, 8, false, 7},  // numbered from First
	} {
		s.First = tc.firstStage
		stage, warm := s.StageAt(tc.at)
		if stage != tc.stage || warm != tc.warmup {
			t.Errorf("StageAt(%v) with First %d = %d, %v; want %d, %v", tc.at, tc.firstStage, stage, warm, tc.stage, tc.warmup)
		}
	}
}

func TestStagedRateConstant(t *testing.T) {
	s := Staged{Rate: true, Levels: []Level{{Level: 2, Duration: 2 * sec}, {Level: 4, Duration: sec}, {Level: 0.5, Duration: 3 * sec}}}
	if s.Users() != 0 {
		t.Fatalf("Users() = %d, want 0 (arrivals)", s.Users())
	}
	got := arrivals(s.Arrivals(), make([]Turn, 100))
	want := []time.Duration{0, 500 * ms, sec, 1500 * ms, // 2/s for 2s
		2 * sec, 2250 * ms, 2500 * ms, 2750 * ms, // 4/s for 1s
		3 * sec, 5 * sec} // 0.5/s for 3s, then no more
	if len(got) != len(want) {
		t.Fatalf("%d arrivals %v, want %d %v", len(got), got, len(want), want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("session %d at %v, want %v", i, got[i], want[i])
		}
	}
}

// TestStagedRatePoisson checks that staged Poisson arrivals are a
// function of the seed, stay in order, and have each stage's rate.
func TestStagedRatePoisson(t *testing.T) {
	s := Staged{Rate: true, Poisson: true, Seed: 9, Levels: []Level{{Level: 100, Duration: 100 * sec}, {Level: 400, Duration: 100 * sec}}}
	a := arrivals(s.Arrivals(), make([]Turn, 100000))
	b := arrivals(s.Arrivals(), make([]Turn, 100000))
	s.Seed = 10
	c := arrivals(s.Arrivals(), make([]Turn, 100000))
	if len(a) != len(b) {
		t.Fatalf("same seed: %d then %d arrivals", len(a), len(b))
	}
	perStage := [2]int{}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed: session %d at %v then %v", i, a[i], b[i])
		}
		if i > 0 && a[i] < a[i-1] {
			t.Fatalf("session %d at %v before session %d at %v", i, a[i], i-1, a[i-1])
		}
		if a[i] >= 200*sec {
			t.Fatalf("session %d at %v, after the end", i, a[i])
		}
		perStage[a[i]/(100*sec)]++
	}
	if len(c) > 0 && len(c) == len(a) && c[len(c)-1] == a[len(a)-1] {
		t.Errorf("seeds 9 and 10 give the same arrivals")
	}
	for k, want := range []float64{10000, 40000} {
		if got := float64(perStage[k]); math.Abs(got-want) > 0.03*want {
			t.Errorf("stage %d: %v arrivals, want %v ± 3%%", k+1, got, want)
		}
	}
}

func TestCheckStaged(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    Staged
		ok   bool
	}{
		{"clients", clientStages(), true},
		{"rate fraction", Staged{Rate: true, Levels: []Level{{Level: 0.5, Duration: sec}}}, true},
		{"none", Staged{}, false},
		{"fractional clients", Staged{Levels: []Level{{Level: 1.5, Duration: sec}}}, false},
		{"zero level", Staged{Rate: true, Levels: []Level{{Level: 0, Duration: sec}}}, false},
		{"no duration", Staged{Levels: []Level{{Level: 1}}}, false},
		{"warmup is the whole stage", Staged{Levels: []Level{{Level: 1, Duration: sec, Warmup: sec}}}, false},
		{"negative warmup", Staged{Levels: []Level{{Level: 1, Duration: sec, Warmup: -1}}}, false},
		{"users", Staged{Gap: sec, Levels: []Level{{Level: 2, Duration: sec}}}, true},
		{"fractional users", Staged{Gap: sec, Levels: []Level{{Level: 2.5, Duration: sec}}}, false},
		{"rate with a gap", Staged{Rate: true, Gap: sec, Levels: []Level{{Level: 2, Duration: sec}}}, false},
		{"negative gap", Staged{Gap: -1, Levels: []Level{{Level: 2, Duration: sec}}}, false},
		{"active", Staged{Lanes: 2, Levels: []Level{{Level: 2, Duration: sec}, {Level: 9, Duration: sec}}}, true},
		{"active below the clients", Staged{Lanes: 4, Levels: []Level{{Level: 3, Duration: sec}}}, false},
		{"active with a rate", Staged{Rate: true, Lanes: 2, Levels: []Level{{Level: 4, Duration: sec}}}, false},
		{"active with a gap", Staged{Gap: sec, Lanes: 2, Levels: []Level{{Level: 4, Duration: sec}}}, false},
		{"negative lanes", Staged{Lanes: -1, Levels: []Level{{Level: 4, Duration: sec}}}, false},
	} {
		if err := tc.s.Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: Validate = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

// TestStagedUsersTurnAt checks the slots of user-centric stages: a
// stage of N users starting at T gives user u the slots T + u·Gap/N +
// k·Gap; a later turn takes the first slot at least Gap after the
// user's previous one; a user above the level goes on with its session
// at its own pace and starts no new session until a stage needs it.
func TestStagedUsersTurnAt(t *testing.T) {
	ramp := Staged{Gap: 200 * ms, Levels: []Level{{Level: 2, Duration: sec}, {Level: 4, Duration: sec}, {Level: 1, Duration: sec}}}
	dip := Staged{Gap: 200 * ms, Levels: []Level{{Level: 2, Duration: sec}, {Level: 1, Duration: sec}, {Level: 2, Duration: sec}}}
	for _, tc := range []struct {
		name string
		s    Staged
		turn Turn
		want time.Duration
	}{
		{"user 0's first turn", ramp, Turn{User: 0}, 0},
		{"user 1's first turn: staggered", ramp, Turn{User: 1}, 100 * ms},
		{"user 1 within a stage: every gap", ramp, Turn{User: 1, LaneTurn: 3, Index: 1, Prev: 500 * ms}, 700 * ms},
		{"user 1 after a new session: still every gap", ramp, Turn{User: 1, LaneTurn: 3, Index: 0, Prev: 500 * ms}, 700 * ms},
		{"user 0 at the boundary: the new stagger", ramp, Turn{User: 0, LaneTurn: 5, Index: 2, Prev: 800 * ms}, sec},
		{"user 1 at the boundary: never faster than the gap", ramp, Turn{User: 1, LaneTurn: 5, Index: 1, Prev: 900 * ms}, 1250 * ms},
		{"user 2 starts with stage 2", ramp, Turn{User: 2}, 1100 * ms},
		{"user 3 starts with stage 2", ramp, Turn{User: 3}, 1150 * ms},
		{"user 1 above the level: its session carries over", ramp, Turn{User: 1, LaneTurn: 9, Index: 2, Prev: 1850 * ms}, 2050 * ms},
		{"user 1 above the level: no new session", ramp, Turn{User: 1, LaneTurn: 9, Index: 0, Prev: 1850 * ms}, 3 * sec},
		{"user 0 in the last stage", ramp, Turn{User: 0, LaneTurn: 9, Index: 1, Prev: 2 * sec}, 2200 * ms},
		{"user 1 back in stage 3", dip, Turn{User: 1, LaneTurn: 5, Index: 0, Prev: 900 * ms}, 2100 * ms},
		{"user 1 carries over into stage 2", dip, Turn{User: 1, LaneTurn: 5, Index: 3, Prev: 900 * ms}, 1100 * ms},
		{"user 1 carries over into stage 3", dip, Turn{User: 1, LaneTurn: 6, Index: 4, Prev: 1900 * ms}, 2100 * ms},
	} {
		if got := tc.s.TurnAt(tc.turn); got != tc.want {
			t.Errorf("%s: TurnAt(%+v) = %v, want %v", tc.name, tc.turn, got, tc.want)
		}
	}
}

// userSlots plays the lanes of a users stage schedule with instant
// answers and sessions of turns turns each: lane u takes a new session
// only when Open says so, as the runner does. It returns every turn's
// intended time, by lane.
func userSlots(s Staged, lanes []int, turns int) map[int][]time.Duration {
	out := map[int][]time.Duration{}
	for _, u := range lanes {
		var prev time.Duration
		sent, index := 0, 0
		for {
			if index == 0 {
				at := time.Duration(0)
				if sent > 0 {
					at = prev
				}
				if _, ok := s.Open(u, at); !ok {
					break
				}
			}
			at := s.TurnAt(Turn{User: u, Index: index, LaneTurn: sent, Prev: prev})
			if at >= s.End() {
				break
			}
			out[u] = append(out[u], at)
			prev, sent, index = at, sent+1, (index+1)%turns
		}
	}
	return out
}

// TestStagedUsersLoad checks the load of users stages: after the first
// three gaps of a stage (the move to its stagger takes at most two; the
// sessions of users above a lower level end within their three turns
// left), every gap of it holds exactly one turn per user of the level,
// and no user sends two turns less than a gap apart.
func TestStagedUsersLoad(t *testing.T) {
	s := Staged{Gap: 100 * ms, Levels: []Level{{Level: 3, Duration: sec}, {Level: 8, Duration: 2 * sec}, {Level: 2, Duration: sec}}}
	lanes := make([]int, s.Users())
	for i := range lanes {
		lanes[i] = i
	}
	const turns = 4
	slots := userSlots(s, lanes, turns)
	var all []time.Duration
	for u, at := range slots {
		for i := 1; i < len(at); i++ {
			if at[i]-at[i-1] < s.Gap {
				t.Errorf("user %d: turns at %v and %v, less than the gap apart", u, at[i-1], at[i])
			}
		}
		all = append(all, at...)
	}
	var start time.Duration
	for k, l := range s.Levels {
		for w := start + (turns-1)*s.Gap; w+s.Gap <= start+l.Duration; w += s.Gap {
			n := 0
			for _, at := range all {
				if at >= w && at < w+s.Gap {
					n++
				}
			}
			if n != int(l.Level) {
				t.Errorf("stage %d: %d turns in [%v, %v), want %g", k+1, n, w, w+s.Gap, l.Level)
			}
		}
		start += l.Duration
	}
}
