// Package segment splits one benchmark run into N parts that N mtrun
// processes, on N machines, run at the same time: together they send
// exactly what one process would have sent.
//
// The split is by session, never by request, so a session's history,
// cache locality and affinity headers stay in one process. Session j
// (its global index: its position in the input, which a session recycled
// by --loop keeps) belongs to one segment:
//
//   - sessions that arrive on their own (open loop, trace timestamps):
//     segment j mod N. Round robin spreads each segment's arrivals evenly
//     over the run, so every process carries about 1/N of the load at
//     every moment, not a contiguous slice of the timeline. This is the
//     equal-parts case of k6's execution segments (k6 also allows unequal
//     fractions; mtkit does not).
//   - closed lanes (closed-loop users, user-centric --users, clients and
//     users stages): lane l belongs to segment l mod N, and session j to
//     the segment of lane j mod U (U lanes in all, the highest stage's
//     for stages), so each segment's share of sessions follows its share
//     of lanes, a stage of level L runs Share(L) lanes in each segment,
//     and a segment without lanes (N > U) has no sessions either.
//
// Every schedule keeps the global clock: the runner computes the start
// offsets of all sessions, as one process would, and fires only its own
// (see Filter). Counts that cap the whole run (users, --active,
// --max-requests, --max-concurrency) are split with Share, so the parts
// sum exactly to the total. Random draws are per session and per lane,
// from the run's seed and the global index (schedule.SessionRand,
// LaneRand), never per process.
package segment

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Segment is part Index of Count (0 <= Index < Count). The zero value is
// not valid; Whole is the unsplit run.
type Segment struct {
	Index, Count int
}

// Whole is the run not split: segment 0/1.
var Whole = Segment{Index: 0, Count: 1}

// MaxCount bounds Count: more processes than this is a typo.
const MaxCount = 100000

// IndexEnv is the variable a Kubernetes Indexed Job sets in each pod to
// the pod's completion index, 0 to completions-1.
const IndexEnv = "JOB_COMPLETION_INDEX"

// Parse reads "i/N": segment i (from 0) of N.
func Parse(s string) (Segment, error) {
	is, ns, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Segment{}, fmt.Errorf("--segment %q: want i/N, e.g. 0/4 (i from 0 to N-1)", s)
	}
	i, err := strconv.Atoi(strings.TrimSpace(is))
	if err != nil {
		return Segment{}, fmt.Errorf("--segment %q: index %q is not a whole number", s, is)
	}
	n, err := strconv.Atoi(strings.TrimSpace(ns))
	if err != nil {
		return Segment{}, fmt.Errorf("--segment %q: count %q is not a whole number", s, ns)
	}
	seg := Segment{Index: i, Count: n}
	if err := seg.Validate(); err != nil {
		return Segment{}, fmt.Errorf("--segment %q: %w", s, err)
	}
	return seg, nil
}

// FromEnv returns segment $JOB_COMPLETION_INDEX of count, as each pod of
// an Indexed Job of count completions runs it; getenv is os.Getenv.
func FromEnv(count int, getenv func(string) string) (Segment, error) {
	v := getenv(IndexEnv)
	if v == "" {
		return Segment{}, fmt.Errorf("--segments %d: %s is not set (a Kubernetes Indexed Job sets it); elsewhere give --segment i/%d", count, IndexEnv, count)
	}
	i, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return Segment{}, fmt.Errorf("%s=%q: not a whole number", IndexEnv, v)
	}
	seg := Segment{Index: i, Count: count}
	if err := seg.Validate(); err != nil {
		return Segment{}, fmt.Errorf("%s=%d with --segments %d: %w", IndexEnv, i, count, err)
	}
	return seg, nil
}

// Validate checks 0 <= Index < Count <= MaxCount.
func (s Segment) Validate() error {
	switch {
	case s.Count < 1:
		return errors.New("the count must be at least 1")
	case s.Count > MaxCount:
		return fmt.Errorf("the count %d is more than %d", s.Count, MaxCount)
	case s.Index < 0 || s.Index >= s.Count:
		return fmt.Errorf("the index %d is not between 0 and %d", s.Index, s.Count-1)
	}
	return nil
}

// String renders "i/N".
func (s Segment) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// IsWhole reports whether s is the unsplit run.
func (s Segment) IsWhole() bool { return s.Count <= 1 }

// Share returns this segment's part of total: total/N, one more for the
// first total%N segments. It is the number of lanes of Lanes(total), and
// the parts of all segments sum to total exactly. Use it for users,
// --active, --max-requests and --max-concurrency.
func (s Segment) Share(total int) int {
	if s.IsWhole() || total <= 0 {
		return max(total, 0)
	}
	q := total / s.Count
	if s.Index < total%s.Count {
		q++
	}
	return q
}

// Lanes returns the global indexes of the closed lanes of users in all
// that this segment runs: Index, Index+N, Index+2N, … below users. A
// lane's global index is what the schedule (per-lane quota of --active,
// user-centric stagger), the records' client field and LaneRand see.
func (s Segment) Lanes(users int) []int {
	if s.IsWhole() {
		s = Whole
	}
	lanes := make([]int, 0, s.Share(users))
	for l := s.Index; l < users; l += s.Count {
		lanes = append(lanes, l)
	}
	return lanes
}

// Filter says which sessions a segment runs.
type Filter struct {
	seg   Segment
	users int
}

// Filter returns the session filter of s for a schedule of users closed
// lanes (schedule.Schedule.Users(); 0 when sessions arrive on their own).
//
// How the runner uses it: it reads every session of the source, in
// order, numbering them from 0 (a session recycled by --loop keeps its
// number), and for an arrival schedule computes the start offset of
// every session, its own or not (Arrivals.Next is called for each, so
// the Poisson draws and trace times are the global ones); it fires only
// the sessions for which Runs is true, at their global offsets from the
// common start (--start-at). Closed lanes are the ones of
// Segment.Lanes, under their global indexes, and take only sessions for
// which Runs is true.
func (s Segment) Filter(users int) Filter {
	if s.IsWhole() {
		s = Whole
	}
	return Filter{seg: s, users: max(users, 0)}
}

// Owner returns the segment index that runs session (its global index).
func (f Filter) Owner(session int) int {
	if f.seg.Count <= 1 || session < 0 {
		return 0
	}
	if f.users > 0 {
		return (session % f.users) % f.seg.Count
	}
	return session % f.seg.Count
}

// Runs reports whether this segment runs session (its global index).
func (f Filter) Runs(session int) bool { return f.Owner(session) == f.seg.Index }

// laneStream separates per-lane draws from every other use of the seed.
const laneStream = 0x6c616e65

// LaneRand returns the random source of one closed lane (the lane's
// choice of which session to serve next under random sampling), seeded by
// the run's seed and the lane's global index, so a lane draws the same
// in a segment as in the whole run. Per-session draws (think times) come
// from schedule.SessionRand, keyed by the session's global index.
func LaneRand(seed uint64, lane int) *rand.Rand {
	return rand.New(rand.NewPCG(seed^laneStream, uint64(lane)*0x9e3779b97f4a7c15+1))
}
