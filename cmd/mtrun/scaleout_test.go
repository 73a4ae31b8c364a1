package main

import (
	"context"
	"fmt"
	"io"
	stdmaps "maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/clitest"
	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/mtrun"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/schedule"
	"github.com/mtkit/mtkit/internal/segment"
	"github.com/mtkit/mtkit/internal/sim"
)

// turnKey is one (session, turn) sent.
type turnKey struct {
	conv string
	turn int
}

// TestSegments is the acceptance test of docs/scale-out.md: N = 4
// segments run as separate mtrun processes against one simulator and one
// unsegmented run of the same input and seed:
// the set of (session, turn) sent is identical, each session appears in
// exactly one segment (the one segment.Filter names), and the merged
// totals match; in open loop every first turn is scheduled at its global
// arrival offset; closed lanes and users carry their global lane as the
// records' client (each in one segment, the same set as the single
// run's), and every user's turns keep the whole run's stagger. (--start-at is left out: processes start seconds apart
// on a loaded test machine, so each process's start is recovered from
// its records; segment.TestWaitStart tests the wait, TestStartAt the
// common start.)
func TestSegments(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		rate *schedule.Rate // the arrivals, for open loop
		gap  time.Duration  // --user-gap, for user-centric users
	}{
		{"closed loop", []string{"--clients", "8", "--active", "10"}, nil, 0},
		{"open loop", []string{"--rate", "50", "--arrival", "poisson", "--seed", "7"}, &schedule.Rate{PerSecond: 50, Poisson: true, Seed: 7}, 0},
		{"users", []string{"--users", "6", "--user-gap", "30ms"}, nil, 30 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			const n = 4
			whole, segs := runSplit(t, tc.args, n)
			if tc.rate != nil {
				// Each process fires its sessions at their global arrival
				// offsets: scheduled - offset is the same (the process's
				// start) for every first turn of a process.
				checkArrivals(t, *tc.rate, whole)
				for _, seg := range segs {
					checkArrivals(t, *tc.rate, seg)
				}
			}
			wantTurns, wantTokens := sent(t, whole, nil)
			owner := map[string]map[int]bool{}
			gotTurns, gotTokens := map[turnKey]int{}, int64(0)
			for _, seg := range segs {
				turns, tokens := sent(t, seg, owner)
				for k, c := range turns {
					gotTurns[k] += c
				}
				gotTokens += tokens
			}
			if len(wantTurns) == 0 {
				t.Fatal("the unsegmented run sent nothing")
			}
			if !stdmaps.Equal(gotTurns, wantTurns) {
				t.Errorf("the segments sent %d (session, turn) pairs, the single run %d; they differ", len(gotTurns), len(wantTurns))
				for k, c := range wantTurns {
					if gotTurns[k] != c {
						t.Errorf("%v: sent %d times by the segments, %d by the single run", k, gotTurns[k], c)
					}
				}
			}
			if gotTokens != wantTokens {
				t.Errorf("merged completion tokens %d, single run %d", gotTokens, wantTokens)
			}
			users := 0 // arrivals
			for i, a := range tc.args {
				if a == "--clients" || a == "--users" {
					users, _ = strconv.Atoi(tc.args[i+1])
				}
			}
			if users > 0 {
				checkClients(t, whole, segs, users)
			}
			if tc.gap > 0 {
				for _, seg := range segs {
					checkUserSlots(t, seg, schedule.UserGap{N: users, Gap: tc.gap})
				}
			}
			f := segment.Segment{Index: 0, Count: n}.Filter(users)
			for j := range 23 {
				id := fmt.Sprintf("conv-%d", j)
				shards := slices.Sorted(stdmaps.Keys(owner[id]))
				if want := []int{f.Owner(j)}; !slices.Equal(shards, want) {
					t.Errorf("%s (global index %d) ran in segments %v, want %v", id, j, shards, want)
				}
			}
		})
	}
}

// checkArrivals checks that the first turn of every session of the
// records at path was scheduled at the session's global arrival offset
// of r from one common start.
func checkArrivals(t *testing.T, r schedule.Rate, path string) {
	t.Helper()
	recs, err := readLenient(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	arr := r.Arrivals()
	var offsets []time.Duration
	for range 23 {
		at, _ := arr.Next(schedule.Turn{})
		offsets = append(offsets, at)
	}
	var start time.Time
	for _, rec := range recs {
		if rec.Turn != 0 || rec.Attempt != 0 || rec.Choice != 0 {
			continue
		}
		var j int
		if _, err := fmt.Sscanf(rec.ConversationID, "conv-%d", &j); err != nil {
			t.Fatal(err)
		}
		s := rec.Scheduled.Add(-offsets[j])
		if start.IsZero() {
			start = s
		} else if !s.Equal(start) {
			t.Errorf("%s: %s scheduled at %s, %s from the start of the others: not its global arrival offset %s",
				filepath.Base(path), rec.ConversationID, rec.Scheduled.Format(time.RFC3339Nano), s.Sub(start), offsets[j])
		}
	}
	if start.IsZero() {
		t.Errorf("%s: no first turns", path)
	}
}

// sent reads a records file and returns the (session, turn) pairs sent
// (first attempts, choice 0) and the total completion tokens; owner, when
// not nil, receives each session's shard.
func sent(t *testing.T, path string, owner map[string]map[int]bool) (map[turnKey]int, int64) {
	t.Helper()
	recs, err := readLenient(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	turns := map[turnKey]int{}
	var tokens int64
	for _, r := range recs {
		if r.Attempt != 0 || r.Choice != 0 {
			continue
		}
		turns[turnKey{r.ConversationID, r.Turn}]++
		if r.CompletionTokens != nil {
			tokens += *r.CompletionTokens
		}
		if owner != nil {
			if owner[r.ConversationID] == nil {
				owner[r.ConversationID] = map[int]bool{}
			}
			owner[r.ConversationID][r.Shard] = true
		}
	}
	return turns, tokens
}

// TestStartAt checks that --start-at is the run's start: the first
// session of an open-loop run is scheduled exactly at it, and the rest at
// their arrival offsets from it.
func TestStartAt(t *testing.T) {
	t.Parallel()
	srv := startSim(t, sim.Config{TTFTBase: time.Millisecond})
	dir := t.TempDir()
	in := filepath.Join(dir, "convs.jsonl")
	if err := os.WriteFile(in, []byte(convJSONL(23, 1, 2)), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(500 * time.Millisecond).UTC().Truncate(time.Millisecond)
	recs := filepath.Join(dir, "recs.jsonl")
	o := parse(t, "--url", srv.URL, "--tokenizer", "none", "--quiet", "--rate", "50", "--seed", "3",
		"--segment", "1/2", "--run-id", "r", "--start-at", start.Format(time.RFC3339Nano), "--records", recs, in)
	// The wait for --start-at reads a clock that is at the start: a
	// loaded machine may reach it more than the 1 s allowed after the
	// start (segment.TestWaitStart tests the wait and the refusal).
	o.Scale.Start.Clock = atClock{start}
	var errb clitest.Buffer
	if err := mtrun.Run(context.Background(), o, command.Streams{In: strings.NewReader(""), Out: io.Discard, Err: &errb}); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	rs, err := readLenient(recs)
	if err != nil {
		t.Fatal(err)
	}
	arr := schedule.Rate{PerSecond: 50, Poisson: true, Seed: 3}.Arrivals()
	var offsets []time.Duration
	for range 23 {
		at, _ := arr.Next(schedule.Turn{})
		offsets = append(offsets, at)
	}
	if len(rs) != 11 {
		t.Errorf("%d records, want 11 (the odd sessions of 23)", len(rs))
	}
	for _, r := range rs {
		var j int
		fmt.Sscanf(r.ConversationID, "conv-%d", &j)
		if want := start.Add(offsets[j]); !r.Scheduled.Equal(want) || j%2 != 1 {
			t.Errorf("%s scheduled at %s, want %s (--start-at + its offset)", r.ConversationID, r.Scheduled.Format(time.RFC3339Nano), want.Format(time.RFC3339Nano))
		}
	}
}

// atClock is a segment.Clock that stays at one time.
type atClock struct{ t time.Time }

func (c atClock) Now() time.Time                       { return c.t }
func (c atClock) After(time.Duration) <-chan time.Time { return make(chan time.Time) }

// runSplit runs mtrun with args on 23 conversations of 3 turns against
// a simulator, once whole (run id "whole") and as n segments in separate
// processes at the same time (run id "split"); it returns the records
// files.
func runSplit(t *testing.T, args []string, n int) (whole string, segs []string) {
	t.Helper()
	srv := startSim(t, sim.Config{TTFTBase: time.Millisecond, DecodePerToken: 100 * time.Microsecond})
	dir := t.TempDir()
	in := filepath.Join(dir, "convs.jsonl")
	if err := os.WriteFile(in, []byte(convJSONL(23, 3, 4)), 0o644); err != nil {
		t.Fatal(err)
	}
	args = append([]string{"--url", srv.URL, "--tokenizer", "none", "--quiet"}, args...)
	whole = filepath.Join(dir, "whole.jsonl")
	if got := runMtrun(t, "", nil, append(args, "--run-id", "whole", "--records", whole, in)...); got.code != 0 {
		t.Fatalf("unsegmented run: exit %d: %s", got.code, got.stderr)
	}
	type proc struct {
		wait   func() error
		stderr fmt.Stringer
	}
	var procs []proc
	for i := range n {
		segs = append(segs, filepath.Join(dir, fmt.Sprintf("seg-%d.jsonl", i)))
		cmd, stderr := startProcess(t, append(args, "--run-id", "split", "--segment", fmt.Sprintf("%d/%d", i, n), "--records", segs[i], in)...)
		procs = append(procs, proc{cmd.Wait, stderr})
	}
	for i, p := range procs {
		if err := p.wait(); err != nil {
			t.Fatalf("segment %d: %v: %s", i, err, p.stderr)
		}
	}
	return whole, segs
}

// checkClients checks the records' client of a split run of closed
// lanes: segment i's are the global lanes i, i+N, … below users, and the
// segments together used the lanes the single run used.
func checkClients(t *testing.T, whole string, segs []string, users int) {
	t.Helper()
	clients := func(path string) map[int]bool {
		recs, err := readLenient(path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out := map[int]bool{}
		for _, r := range recs {
			out[r.Client] = true
		}
		return out
	}
	merged := map[int]bool{}
	for i, seg := range segs {
		for c := range clients(seg) {
			if c%len(segs) != i || c >= users {
				t.Errorf("segment %d: client %d; want its global lanes %d, %d, … below %d", i, c, i, i+len(segs), users)
			}
			merged[c] = true
		}
	}
	if want := clients(whole); !stdmaps.Equal(merged, want) {
		t.Errorf("the segments used clients %v, the single run %v", slices.Sorted(stdmaps.Keys(merged)), slices.Sorted(stdmaps.Keys(want)))
	}
}

// checkUserSlots checks that the records at path, of some users of
// sched, are each at the user's slot of the whole run (u·Gap/N + k·Gap
// for the user's k-th turn), from one start for all of them.
func checkUserSlots(t *testing.T, path string, sched schedule.UserGap) {
	t.Helper()
	recs, err := readLenient(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	byLane := map[int][]time.Time{}
	for _, r := range recs {
		if r.Attempt == 0 && r.Choice == 0 {
			byLane[r.Client] = append(byLane[r.Client], r.Scheduled)
		}
	}
	var start time.Time
	for u, times := range byLane {
		slices.SortFunc(times, time.Time.Compare)
		for k, at := range times {
			s := at.Add(-sched.TurnAt(schedule.Turn{User: u, LaneTurn: k}))
			if start.IsZero() {
				start = s
			} else if !s.Equal(start) {
				t.Errorf("%s: user %d turn %d scheduled %v off the others' slots", filepath.Base(path), u, k, s.Sub(start))
			}
		}
	}
}

// TestSegmentStages runs staged runs split over 3 processes and whole
// (users stages, Poisson rate stages): each process switches stage on
// the whole run's clock (every turn is at its global slot or arrival
// from one start, stamped with the stage that time falls in), each lane
// or session is in one segment, and no slot or arrival is sent by two
// segments. Whether the segments together send all that the single run
// sends depends on how late a loaded machine runs them near the stage
// ends: scripts/scaleout-bench.sh measures the split against the whole.
func TestSegmentStages(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		args  []string
		sched schedule.Staged
	}{
		{"users", []string{"--stages", "users=2:600ms,users=5:600ms", "--user-gap", "100ms"},
			schedule.Staged{Gap: 100 * time.Millisecond, Levels: []schedule.Level{{Level: 2, Duration: 600 * time.Millisecond}, {Level: 5, Duration: 600 * time.Millisecond}}}},
		{"rate", []string{"--stages", "rate=20:600ms,rate=40:600ms", "--arrival", "poisson", "--seed", "3"},
			schedule.Staged{Rate: true, Poisson: true, Seed: 3, Levels: []schedule.Level{{Level: 20, Duration: 600 * time.Millisecond}, {Level: 40, Duration: 600 * time.Millisecond}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			whole, segs := runSplit(t, tc.args, 3)
			if len(stagedSends(t, whole, tc.sched, -1, 3)) == 0 {
				t.Fatal("the single run sent nothing")
			}
			got := map[stagedSend]int{}
			for i, seg := range segs {
				for k, c := range stagedSends(t, seg, tc.sched, i, 3) {
					got[k] += c
				}
			}
			for k, c := range got {
				if c != 1 {
					t.Errorf("%+v: sent %d times by the segments, want once", k, c)
				}
			}
		})
	}
}

// stagedSend is a turn of a staged run as the schedule fixes it: a
// user's slot (lane, offset) or a session's arrival (id, offset).
type stagedSend struct {
	stage int
	lane  int    // users; -1 for arrivals
	conv  string // arrivals: the session's id
	at    time.Duration
}

// stagedSends reads the records of one process of a staged run of sched
// (segment seg of n, or -1 whole) and returns its turns fixed by the
// schedule (every turn for users, first turns for arrivals) with their
// offsets from the process's start, recovered from the schedule; it
// checks each is stamped with its stage and belongs to the segment.
func stagedSends(t *testing.T, path string, sched schedule.Staged, seg, n int) map[stagedSend]int {
	t.Helper()
	recs, err := readLenient(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	// A session's arrival: its global index counts the passes of the
	// 23 input sessions (conv-j#pass once recycled).
	arrival := func(id string) (index int, at time.Duration) {
		var j, pass int
		base, p, _ := strings.Cut(id, "#")
		fmt.Sscanf(base, "conv-%d", &j)
		fmt.Sscanf(p, "%d", &pass)
		arr := sched.Arrivals()
		for range pass*23 + j + 1 {
			at, _ = arr.Next(schedule.Turn{})
		}
		return pass*23 + j, at
	}
	byLane := map[int][]*record.Record{}
	out := map[stagedSend]int{}
	var start time.Time
	note := func(r *record.Record, at time.Duration, key stagedSend) {
		s := r.Scheduled.Add(-at)
		if start.IsZero() {
			start = s
		} else if !s.Equal(start) {
			t.Errorf("%s: %+v scheduled %v off the process's start", filepath.Base(path), key, s.Sub(start))
		}
		if st, _ := sched.StageAt(at); r.Stage != st {
			t.Errorf("%s: %+v stamped stage %d, want %d", filepath.Base(path), key, r.Stage, st)
		}
		out[key]++
	}
	for i := range recs {
		r := &recs[i]
		if r.Attempt != 0 || r.Choice != 0 {
			continue
		}
		if !sched.Rate {
			byLane[r.Client] = append(byLane[r.Client], r)
			continue
		}
		if r.Turn == 0 {
			j, at := arrival(r.ConversationID)
			// A recycled session stays with the segment of its first pass.
			if seg >= 0 && j%23%n != seg {
				t.Errorf("%s: session %s (global index %d), not one of segment %d's", filepath.Base(path), r.ConversationID, j, seg)
			}
			note(r, at, stagedSend{lane: -1, conv: r.ConversationID, at: at, stage: r.Stage})
		}
	}
	for u, rs := range byLane {
		if seg >= 0 && u%n != seg {
			t.Errorf("%s: lane %d, not one of segment %d's", filepath.Base(path), u, seg)
		}
		slices.SortFunc(rs, func(a, b *record.Record) int { return a.Scheduled.Compare(b.Scheduled) })
		var prev time.Duration
		for k, r := range rs {
			at := sched.TurnAt(schedule.Turn{User: u, LaneTurn: k, Index: r.Turn, Prev: prev})
			prev = at
			note(r, at, stagedSend{lane: u, at: at, stage: r.Stage})
		}
	}
	return out
}
