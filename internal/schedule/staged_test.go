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
	} {
		if err := Check(tc.s); (err == nil) != tc.ok {
			t.Errorf("%s: Check = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}
