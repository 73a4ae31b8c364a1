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
// totals match. (--start-at is left out: processes start seconds apart on
// a loaded test machine; segment.TestWaitStart tests the wait.)
func TestSegments(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		hook string // why the case needs the runner's segment hook, "" if it runs today
	}{
		{"closed loop", []string{"--clients", "8", "--active", "10"}, ""},
		{"open loop", []string{"--rate", "50", "--arrival", "poisson", "--seed", "7"},
			"needs the runner hook: open-loop segments fire their sessions at the global arrival times (segment.Filter in replay's arrival loop), then the merged intended send (scheduled) times must equal the single run's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.hook != "" {
				t.Skip(tc.hook)
			}
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
			users := 1
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
