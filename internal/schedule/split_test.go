package schedule

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/segment"
)

// TestSplitStagedLanes checks the split of staged closed lanes (clients
// or users) over N processes: in every stage, the lanes of the segments
// below the level are exactly the lanes 0 to level-1, each in one
// segment, so the segments' levels sum to the stage's; and for users,
// the turn times of all segments together are the unsplit schedule's.
func TestSplitStagedLanes(t *testing.T) {
	levels := []Level{{Level: 3, Duration: sec}, {Level: 8, Duration: sec}, {Level: 1, Duration: sec}, {Level: 5, Duration: sec}}
	for _, s := range []Staged{{Levels: levels}, {Gap: 100 * ms, Levels: levels}} {
		users := s.Users()
		for n := 1; n <= 9; n++ {
			t.Run(fmt.Sprintf("%s/%d", s.kind(), n), func(t *testing.T) {
				for k, l := range levels {
					seen := map[int]int{}
					sum := 0
					for i := range n {
						seg := segment.Segment{Index: i, Count: n}
						part := 0
						for _, lane := range seg.Lanes(users) {
							if _, ok := s.Open(lane, time.Duration(k)*sec); ok && float64(lane) < l.Level {
								seen[lane]++
								part++
							}
						}
						if want := seg.Share(int(l.Level)); part != want {
							t.Errorf("stage %d (level %g): segment %s runs %d lanes, want %d", k+1, l.Level, seg, part, want)
						}
						sum += part
					}
					if sum != int(l.Level) || len(seen) != int(l.Level) {
						t.Errorf("stage %d (level %g): the segments run %d lanes (%d distinct), want %g", k+1, l.Level, sum, len(seen), l.Level)
					}
				}
				if s.Gap == 0 {
					return
				}
				whole := userSlots(s, segment.Whole.Lanes(users), 3)
				split := map[int][]time.Duration{}
				for i := range n {
					maps.Copy(split, userSlots(s, segment.Segment{Index: i, Count: n}.Lanes(users), 3))
				}
				if !maps.EqualFunc(split, whole, slices.Equal) {
					t.Errorf("the segments' turn times differ from the unsplit run's")
				}
			})
		}
	}
}

// TestSplitStagedArrivals checks the split of staged arrivals: each
// segment draws every arrival, as the runner does, and keeps its own;
// together they are the unsplit arrivals, each once, and in every stage
// the segments' counts sum to the stage's and differ by at most one.
func TestSplitStagedArrivals(t *testing.T) {
	for _, poisson := range []bool{false, true} {
		s := Staged{Rate: true, Poisson: poisson, Seed: 5, Levels: []Level{{Level: 20, Duration: sec}, {Level: 55, Duration: sec}, {Level: 7, Duration: 2 * sec}}}
		whole := arrivals(s.Arrivals(), make([]Turn, 1000))
		for n := 1; n <= 6; n++ {
			merged := map[int]time.Duration{}
			perStage := make([][]int, len(s.Levels))
			for i := range n {
				f := segment.Segment{Index: i, Count: n}.Filter(0)
				arr := s.Arrivals()
				counts := make([]int, len(s.Levels))
				for j := 0; ; j++ {
					at, ok := arr.Next(Turn{Session: j})
					if !ok {
						break
					}
					if !f.Runs(j) {
						continue
					}
					if _, dup := merged[j]; dup {
						t.Errorf("poisson %v, %d segments: session %d in two segments", poisson, n, j)
					}
					merged[j] = at
					stage, _ := s.StageAt(at)
					counts[stage-1]++
				}
				for k := range counts {
					perStage[k] = append(perStage[k], counts[k])
				}
			}
			if len(merged) != len(whole) {
				t.Fatalf("poisson %v, %d segments: %d arrivals, unsplit %d", poisson, n, len(merged), len(whole))
			}
			for j, at := range whole {
				if merged[j] != at {
					t.Errorf("poisson %v, %d segments: session %d at %v, unsplit at %v", poisson, n, j, merged[j], at)
				}
			}
			for k, counts := range perStage {
				want := 0
				for _, at := range whole {
					if stage, _ := s.StageAt(at); stage == k+1 {
						want++
					}
				}
				sum, lo, hi := 0, slices.Min(counts), slices.Max(counts)
				for _, c := range counts {
					sum += c
				}
				if sum != want || hi-lo > 1 {
					t.Errorf("poisson %v, %d segments: stage %d counts %v (sum %d), want a sum of %d within one of each other", poisson, n, k+1, counts, sum, want)
				}
			}
		}
	}
}
