package segment

import (
	"slices"
	"strings"
	"testing"
	"testing/quick"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Segment
		wantErr string
	}{
		{"0/1", Whole, ""},
		{"0/4", Segment{0, 4}, ""},
		{"3/4", Segment{3, 4}, ""},
		{" 2 / 8 ", Segment{2, 8}, ""},
		{"4/4", Segment{}, "index 4 is not between 0 and 3"},
		{"-1/4", Segment{}, "index -1 is not between 0 and 3"},
		{"0/0", Segment{}, "count must be at least 1"},
		{"1/200000", Segment{}, "more than 100000"},
		{"1", Segment{}, "want i/N"},
		{"a/4", Segment{}, `index "a" is not a whole number`},
		{"1/x", Segment{}, `count "x" is not a whole number`},
		{"", Segment{}, "want i/N"},
	} {
		got, err := Parse(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Parse(%q) error = %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if back, err := Parse(got.String()); err != nil || back != got {
			t.Errorf("Parse(String()) of %v = %v, %v", got, back, err)
		}
	}
}

func TestFromEnv(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == IndexEnv {
				return v
			}
			return ""
		}
	}
	for _, tc := range []struct {
		count   int
		env     string
		want    Segment
		wantErr string
	}{
		{4, "0", Segment{0, 4}, ""},
		{4, "3", Segment{3, 4}, ""},
		{4, "4", Segment{}, "JOB_COMPLETION_INDEX=4 with --segments 4: the index 4 is not between 0 and 3"},
		{4, "", Segment{}, "JOB_COMPLETION_INDEX is not set"},
		{4, "x", Segment{}, `JOB_COMPLETION_INDEX="x": not a whole number`},
		{0, "0", Segment{}, "count must be at least 1"},
	} {
		got, err := FromEnv(tc.count, env(tc.env))
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("FromEnv(%d, %q) error = %v, want %q", tc.count, tc.env, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("FromEnv(%d, %q) = %v, %v; want %v", tc.count, tc.env, got, err, tc.want)
		}
	}
}

// TestShare checks that the parts sum exactly to the total, differ by at
// most one, and equal the lane counts, including N > total.
func TestShare(t *testing.T) {
	for _, tc := range []struct {
		total, n int
		want     []int
	}{
		{10, 1, []int{10}},
		{10, 4, []int{3, 3, 2, 2}},
		{8, 4, []int{2, 2, 2, 2}},
		{3, 4, []int{1, 1, 1, 0}},
		{1, 4, []int{1, 0, 0, 0}},
		{0, 4, []int{0, 0, 0, 0}},
		{10000, 3, []int{3334, 3333, 3333}},
	} {
		var got []int
		for i := range tc.n {
			s := Segment{i, tc.n}
			got = append(got, s.Share(tc.total))
			if l := s.Lanes(tc.total); len(l) != s.Share(tc.total) {
				t.Errorf("%v: %d lanes of %d, share %d", s, len(l), tc.total, s.Share(tc.total))
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Share(%d) over %d = %v, want %v", tc.total, tc.n, got, tc.want)
		}
	}
}

func TestLanes(t *testing.T) {
	for _, tc := range []struct {
		seg   Segment
		users int
		want  []int
	}{
		{Whole, 3, []int{0, 1, 2}},
		{Segment{0, 1}, 0, []int{}},
		{Segment{1, 4}, 10, []int{1, 5, 9}},
		{Segment{3, 4}, 10, []int{3, 7}},
		{Segment{3, 4}, 3, []int{}},
	} {
		if got := tc.seg.Lanes(tc.users); !slices.Equal(got, tc.want) {
			t.Errorf("%v.Lanes(%d) = %v, want %v", tc.seg, tc.users, got, tc.want)
		}
	}
}

func TestOwner(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n     int
		users int
		want  []int // owners of sessions 0, 1, ...
	}{
		{"whole", 1, 0, []int{0, 0, 0}},
		{"arrivals round robin", 4, 0, []int{0, 1, 2, 3, 0, 1, 2, 3, 0}},
		{"lanes: session j to the segment of lane j mod U", 2, 3, []int{0, 1, 0, 0, 1, 0, 0}},
		{"more segments than lanes: the extra ones run nothing", 4, 2, []int{0, 1, 0, 1, 0}},
	} {
		f := Segment{0, tc.n}.Filter(tc.users)
		var got []int
		for j := range tc.want {
			got = append(got, f.Owner(j))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: owners %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestPartition is the property: for any number of segments, lanes and
// sessions, every session runs in exactly one segment, on a lane that
// segment owns, and every lane belongs to exactly one segment.
func TestPartition(t *testing.T) {
	prop := func(n8, users8 uint8, sessions16 uint16) bool {
		n, users, sessions := int(n8%64)+1, int(users8%40), int(sessions16%2000)
		runs := make([]int, sessions)
		laneOwner := map[int]int{}
		for i := range n {
			seg := Segment{i, n}
			f := seg.Filter(users)
			mine := map[int]bool{}
			for _, l := range seg.Lanes(users) {
				if _, dup := laneOwner[l]; dup {
					return false
				}
				laneOwner[l], mine[l] = i, true
			}
			for j := range sessions {
				if !f.Runs(j) {
					continue
				}
				runs[j]++
				if users > 0 && !mine[j%users] {
					return false // the session's lane is another segment's
				}
			}
		}
		if len(laneOwner) != users {
			return false
		}
		for _, c := range runs {
			if c != 1 {
				return false
			}
		}
		return true
	}
	if err := quick.Check(prop, &quick.Config{MaxCount: 300}); err != nil {
		t.Error(err)
	}
}

// TestSpread checks that round robin spreads each segment's arrivals over
// the whole run: in any window of N consecutive sessions every segment
// has exactly one.
func TestSpread(t *testing.T) {
	const n = 5
	for start := 0; start < 100; start += 7 {
		seen := make([]int, n)
		for j := start; j < start+n; j++ {
			seen[Segment{0, n}.Filter(0).Owner(j)]++
		}
		for i, c := range seen {
			if c != 1 {
				t.Fatalf("window at %d: segment %d has %d sessions", start, i, c)
			}
		}
	}
}

func TestLaneRand(t *testing.T) {
	a, b := LaneRand(7, 3), LaneRand(7, 3)
	for range 10 {
		if a.Uint64() != b.Uint64() {
			t.Fatal("same seed and lane draw differently")
		}
	}
	if LaneRand(7, 3).Uint64() == LaneRand(7, 4).Uint64() {
		t.Error("lanes 3 and 4 draw the same")
	}
	if LaneRand(7, 3).Uint64() == LaneRand(8, 3).Uint64() {
		t.Error("seeds 7 and 8 draw the same")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"0/4", "3/4", "4/4", "-1/2", "1/0", "x", " 1 / 2 ", "1/99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		seg, err := Parse(s)
		if err != nil {
			if !strings.Contains(err.Error(), "segment ") {
				t.Errorf("error %q does not name the flag value", err)
			}
			return
		}
		if seg.Validate() != nil {
			t.Errorf("Parse(%q) = %v, not valid", s, seg)
		}
		if back, err := Parse(seg.String()); err != nil || back != seg {
			t.Errorf("round trip of %v: %v, %v", seg, back, err)
		}
	})
}
