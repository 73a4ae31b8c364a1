package main

import (
	"fmt"
	stdmaps "maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

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
// arrival offset. (--start-at is left out: processes start seconds apart
// on a loaded test machine, so each process's start is recovered from
// its records; segment.TestWaitStart tests the wait, TestStartAt the
// common start.)
func TestSegments(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		rate *schedule.Rate // the arrivals, for open loop
	}{
		{"closed loop", []string{"--clients", "8", "--active", "10"}, nil},
		{"open loop", []string{"--rate", "50", "--arrival", "poisson", "--seed", "7"}, &schedule.Rate{PerSecond: 50, Poisson: true, Seed: 7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := startSim(t, sim.Config{TTFTBase: time.Millisecond, DecodePerToken: 100 * time.Microsecond})
			dir := t.TempDir()
			in := filepath.Join(dir, "convs.jsonl")
			if err := os.WriteFile(in, []byte(convJSONL(23, 3, 4)), 0o644); err != nil {
				t.Fatal(err)
			}
			common := append([]string{"--url", srv.URL, "--tokenizer", "none", "--quiet"}, tc.args...)

			whole := filepath.Join(dir, "whole.jsonl")
			if got := mtrun(t, "", nil, append(common, "--run-id", "whole", "--records", whole, in)...); got.code != 0 {
				t.Fatalf("unsegmented run: exit %d: %s", got.code, got.stderr)
			}

			const n = 4
			segDir := filepath.Join(dir, "segments")
			if err := os.Mkdir(segDir, 0o755); err != nil {
				t.Fatal(err)
			}
			type proc struct {
				wait   func() error
				stderr fmt.Stringer
			}
			var procs []proc
			for i := range n {
				cmd, stderr := startProcess(t, append(common, "--run-id", "split", "--segment", fmt.Sprintf("%d/%d", i, n),
					"--records", filepath.Join(segDir, fmt.Sprintf("seg-%d.jsonl", i)), in)...)
				procs = append(procs, proc{cmd.Wait, stderr})
			}
			for i, p := range procs {
				if err := p.wait(); err != nil {
					t.Fatalf("segment %d: %v: %s", i, err, p.stderr)
				}
			}

			if tc.rate != nil {
				// Each process fires its sessions at their global arrival
				// offsets: scheduled - offset is the same (the process's
				// start) for every first turn of a process.
				checkArrivals(t, *tc.rate, whole)
				for i := range n {
					checkArrivals(t, *tc.rate, filepath.Join(segDir, fmt.Sprintf("seg-%d.jsonl", i)))
				}
			}
			wantTurns, wantTokens := sent(t, whole, nil)
			owner := map[string]map[int]bool{}
			gotTurns, gotTokens := map[turnKey]int{}, int64(0)
			for i := range n {
				turns, tokens := sent(t, filepath.Join(segDir, fmt.Sprintf("seg-%d.jsonl", i)), owner)
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
				if a == "--clients" {
					users, _ = strconv.Atoi(tc.args[i+1])
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
	got := mtrun(t, "", nil, "--url", srv.URL, "--tokenizer", "none", "--quiet", "--rate", "50", "--seed", "3",
		"--segment", "1/2", "--run-id", "r", "--start-at", start.Format(time.RFC3339Nano), "--records", recs, in)
	if got.code != 0 {
		t.Fatalf("exit %d: %s", got.code, got.stderr)
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
