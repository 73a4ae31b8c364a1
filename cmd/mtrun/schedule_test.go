package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/mtstats"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/report"
	"github.com/mtkit/mtkit/internal/schedule"
	"github.com/mtkit/mtkit/internal/stats"
)

// runStart is the earliest intended send time of the records (offset 0
// of every schedule tested here).
func runStart(recs []record.Record) time.Time {
	start := recs[0].Scheduled
	for _, r := range recs {
		if r.Scheduled.Before(start) {
			start = r.Scheduled
		}
	}
	return start
}

// TestUserCentricSim replays against the simulator with --users and
// --user-gap: each user's turns are intended exactly on its staggered
// slots (computed, not measured), none is sent before its slot or before
// the user's previous answer ended, and the manifest names the schedule.
func TestUserCentricSim(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(in, []byte(convJSONL(5, 2, 8)), 0o644); err != nil {
		t.Fatal(err)
	}
	recsPath := filepath.Join(dir, "recs.jsonl")
	const users, gap = 3, 30 * time.Millisecond
	got := runMtrun(t, "", nil, "--sim", "--sim-config", "ttft=2ms,decode=1ms", "--tokenizer", "none", "--quiet",
		"--users", "3", "--user-gap", gap.String(), "--records", recsPath, in)
	if got.code != 0 {
		t.Fatalf("exit %d: %s", got.code, got.stderr)
	}
	recs := readFiles(t, recsPath)
	if len(recs) != 10 {
		t.Fatalf("%d records, want 10", len(recs))
	}
	start := runStart(recs)
	lanes := map[int][]record.Record{}
	for _, r := range recs {
		lanes[r.Client] = append(lanes[r.Client], r)
	}
	if len(lanes) != users {
		t.Fatalf("%d clients, want %d", len(lanes), users)
	}
	for u, rs := range lanes {
		slices.SortFunc(rs, func(a, b record.Record) int { return a.Scheduled.Compare(b.Scheduled) })
		for k, r := range rs {
			if want := start.Add(time.Duration(u)*gap/users + time.Duration(k)*gap); !r.Scheduled.Equal(want) {
				t.Errorf("user %d turn %d intended at +%v, want +%v", u, k, r.Scheduled.Sub(start), want.Sub(start))
			}
			if r.Start.Before(r.Scheduled) || k > 0 && r.Start.Before(rs[k-1].End) {
				t.Errorf("user %d turn %d sent at +%v: before its slot or its previous answer's end", u, k, r.Start.Sub(start))
			}
		}
	}
	// mtstats --user-gaps reports the configured gap as the intended one.
	var rep bytes.Buffer
	if err := mtstats.Run(context.Background(), mtstats.Options{Inputs: []string{recsPath}, Out: &rep, Err: &rep, Format: report.FormatJSON, UserGaps: true}); err != nil {
		t.Fatalf("mtstats: %v", err)
	}
	var sr struct {
		Summary struct{ Metrics map[string]map[string]float64 }
	}
	if err := json.Unmarshal(rep.Bytes(), &sr); err != nil {
		t.Fatal(err)
	}
	ms := float64(gap) / 1e6
	if g := sr.Summary.Metrics[stats.UserGapIntended]; g["count"] != 7 || g["min"] != ms || g["max"] != ms {
		t.Errorf("%s = %v, want 7 gaps of %g ms", stats.UserGapIntended, g, ms)
	}
	if g := sr.Summary.Metrics[stats.UserGap]; g["count"] != 7 || g["min"] <= 0 {
		t.Errorf("%s = %v, want 7 positive gaps", stats.UserGap, g)
	}
	if s := manifestSettings(t, recsPath); s["schedule"] != "users" || s["users"] != 3.0 || s["user_gap"] != gap.String() {
		t.Errorf("manifest settings schedule=%v users=%v user_gap=%v", s["schedule"], s["users"], s["user_gap"])
	}
}

// TestTraceClockSim replays a timed input against the simulator: each
// turn is intended at its trace time relative to the first session's,
// scaled by --time-scale.
func TestTraceClockSim(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := filepath.Join(dir, "trace.jsonl")
	var b strings.Builder
	w := conv.NewWriter(&b)
	stamps := map[string][]float64{"s0": {90000, 90200}, "s1": {90060}, "s2": {90100, 90160, 90400}}
	for _, id := range []string{"s0", "s1", "s2"} {
		c := conv.Conversation{ID: id}
		for _, ts := range stamps[id] {
			c.Messages = append(c.Messages, conv.Message{Role: conv.RoleUser, Content: "q", TimestampMs: &ts},
				conv.Message{Role: conv.RoleAssistant, Content: "a", OutputTokens: 4})
		}
		w.Write(&c)
	}
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	recsPath := filepath.Join(dir, "recs.jsonl")
	got := runMtrun(t, "", nil, "--tokenizer", "none", "--records", recsPath, "--sim", "--sim-config", "ttft=2ms,decode=1ms",
		"--quiet", "--time-scale", "0.5", in)
	if got.code != 0 {
		t.Fatalf("exit %d: %s", got.code, got.stderr)
	}
	recs := readFiles(t, recsPath)
	if len(recs) != 6 {
		t.Fatalf("%d records, want 6", len(recs))
	}
	start := runStart(recs)
	turns := map[string]int{}
	slices.SortFunc(recs, func(a, b record.Record) int { return a.Turn - b.Turn })
	for _, r := range recs {
		k := turns[r.ConversationID]
		turns[r.ConversationID]++
		ts := stamps[r.ConversationID][k]
		if want := time.Duration((ts - 90000) * 0.5 * float64(time.Millisecond)); r.Scheduled.Sub(start) != want {
			t.Errorf("%s turn %d intended at +%v, want +%v", r.ConversationID, k, r.Scheduled.Sub(start), want)
		}
		if r.Start.Before(r.Scheduled) {
			t.Errorf("%s turn %d sent early", r.ConversationID, k)
		}
	}
}

// TestNegativeRate: a negative --rate is a usage error, not a closed
// loop.
func TestNegativeRate(t *testing.T) {
	t.Parallel()
	_, err := parseOptions([]string{"mtrun", "--rate", "-1"})
	var exit *command.ExitError
	if !errors.As(err, &exit) || exit.Code != command.ExitUsage || !strings.Contains(err.Error(), "--rate -1 is negative") {
		t.Fatalf("error %v, want a usage error with --rate -1 is negative", err)
	}
}

// TestScheduleWiring checks the schedule a command line gives once the
// input is known (timed: it carries trace timestamps), as parsed: the
// schedule (closed and open loop included) and its name in the manifest.
func TestScheduleWiring(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		args  []string
		timed bool
		want  schedule.Schedule
		named string
	}{
		{"default", nil, false, schedule.Closed{Clients: 1}, "closed"},
		{"clients", []string{"-p", "4", "-k", "8"}, false, schedule.Closed{Clients: 4, Sessions: 8}, "closed"},
		{"constant rate", []string{"--rate", "5", "--arrival", "constant"}, false, schedule.Rate{PerSecond: 5}, "rate"},
		{"poisson rate", []string{"--rate", "5", "--seed", "9"}, false, schedule.Rate{PerSecond: 5, Poisson: true, Seed: 9}, "rate"},
		{"users", []string{"--users", "3", "--user-gap", "2s"}, false, schedule.UserGap{N: 3, Gap: 2 * time.Second}, "users"},
		{"trace", nil, true, schedule.Trace{}, "trace"},
		{"trace scaled", []string{"--time-scale", "0.5"}, true, schedule.Trace{Scale: 0.5}, "trace"},
		{"trace replaced by --clients", []string{"--clients", "2"}, true, schedule.Closed{Clients: 2}, "closed"},
		{"trace replaced by --rate", []string{"--rate", "3"}, true, schedule.Rate{PerSecond: 3, Poisson: true}, "rate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := parse(t, tc.args...)
			o.Timed = tc.timed
			if err := o.Plan(); err != nil {
				t.Fatal(err)
			}
			if r := o.Replay; r.Schedule != tc.want || r.Shape().Name() != tc.named {
				t.Errorf("schedule %#v named %q; want %#v named %q", r.Schedule, r.Shape().Name(), tc.want, tc.named)
			}
		})
	}
}

// TestSegmentWiring checks a segment's settings as parsed: its shard
// and place in the split, its shares of the run's counts, and, once the
// schedule is chosen, its closed lanes under their global indexes and
// the sessions it owns.
func TestSegmentWiring(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		args     []string
		requests int   // --max-requests share
		inFlight int   // --max-concurrency share
		warmup   int   // --warmup-turns share
		lanes    []int // nil: sessions arrive on their own
	}{
		{"closed", []string{"--segment", "1/3", "--clients", "7", "--max-requests", "10", "--warmup-turns", "4"}, 3, 0, 1, []int{1, 4}},
		{"users", []string{"--segment", "1/3", "--users", "5", "--user-gap", "1s", "--max-requests", "11"}, 4, 0, 0, []int{1, 4}},
		{"users stages", []string{"--segment", "1/3", "--stages", "users=2:10s,users=6:10s", "--user-gap", "1s"}, 0, 0, 0, []int{1, 4}},
		{"open loop", []string{"--segment", "1/3", "--rate", "9", "--max-concurrency", "5"}, 0, 2, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := parse(t, append(tc.args, "--run-id", "r")...)
			if err := o.Plan(); err != nil {
				t.Fatal(err)
			}
			r := o.Replay
			if r.Shard != 1 || r.Segment != 1 || r.Segments != 3 || r.RunID != "r" {
				t.Errorf("shard %d, segment %d of %d, run %q; want 1, 1 of 3, r", r.Shard, r.Segment, r.Segments, r.RunID)
			}
			if r.MaxRequests != tc.requests || r.MaxInFlight != tc.inFlight || r.WarmupTurns != tc.warmup {
				t.Errorf("max requests %d, max in flight %d, warmup turns %d; want %d, %d, %d", r.MaxRequests, r.MaxInFlight, r.WarmupTurns, tc.requests, tc.inFlight, tc.warmup)
			}
			if !slices.Equal(r.Lanes, tc.lanes) || r.Owns == nil {
				t.Errorf("lanes %v (owns set: %v), want %v", r.Lanes, r.Owns != nil, tc.lanes)
			}
		})
	}
}
