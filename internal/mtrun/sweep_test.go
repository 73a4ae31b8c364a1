package mtrun

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mtkit/mtkit/internal/clitest"
	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/replay"
	"github.com/mtkit/mtkit/internal/schedule"
	"github.com/mtkit/mtkit/internal/source"
	"github.com/mtkit/mtkit/internal/sweep"
)

// TestAskedRate: the asked rate is --rate's, and none for a closed loop,
// stages or a sweep (their levels are in the stage table).
func TestAskedRate(t *testing.T) {
	t.Parallel()
	rates, err := sweep.ParseStages("rate=2:10s,rate=4:10s")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		o    Options
		want float64
	}{
		{"poisson rate", Options{sched: scheduleFlags{clients: 1, rate: 2, poisson: true, explicit: true}}, 2},
		{"constant rate", Options{sched: scheduleFlags{clients: 1, rate: 0.25, explicit: true}}, 0.25},
		{"clients", Options{sched: scheduleFlags{clients: 4, explicit: true}}, 0},
		{"stages", Options{sched: scheduleFlags{clients: 1, poisson: true}, Stage: StageSettings{Stages: rates}}, 0},
		{"sweep", Options{sched: scheduleFlags{clients: 1, poisson: true}, Stage: StageSettings{Sweep: &SweepSettings{Planner: sweep.Planner{Kind: sweep.Rate}}}}, 0},
	} {
		if err := tc.o.chooseSchedule(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := tc.o.askedRate(); got != tc.want {
			t.Errorf("%s: asked rate %g, want %g", tc.name, got, tc.want)
		}
	}
}

// TestSweepLoop runs the sweep loop with a stand-in for the replay that
// answers each stage at once with records of a server that completes 10
// requests/s per client up to 4 clients and no more: the loop runs the
// planner's stages in order, numbers them, gives every record its
// stage's load and the next sequence numbers, starts each stage where the
// previous one stopped in the input, prints a line per stage (golden
// file) and writes the capacity (knee 4).
func TestSweepLoop(t *testing.T) {
	t.Parallel()
	capPath := filepath.Join(t.TempDir(), "capacity.json")
	// As mtrun --sweep clients --stage-duration 2s --stage-warmup 1s
	// --sweep-stages 5 --capacity capPath sets them (TestSweepWiring).
	o := &Options{sched: scheduleFlags{clients: 1, poisson: true}, Stage: StageSettings{Capacity: capPath, Sweep: &SweepSettings{
		Planner: sweep.Planner{Kind: sweep.Clients, Start: 1, MaxStages: 5, Duration: 2 * time.Second, Warmup: time.Second, Criteria: sweep.Criteria{Unsteady: 0.15}}}}}
	var firstConv []string
	o.replayRun = func(_, _ context.Context, ro replay.Options, src source.Source, sink replay.Sink) (*replay.Summary, error) {
		st := ro.Schedule.(schedule.Staged)
		c, _ := src.Next()
		firstConv = append(firstConv, c.ID)
		level := st.Levels[0].Level
		n := 10 * int(min(level, 4))
		t0 := time.Unix(1000, 0)
		for i := range n {
			gap := time.Second / time.Duration(n) // back to back: n/s exactly
			start := t0.Add(st.Levels[0].Warmup + time.Duration(i)*gap)
			wait := time.Duration(i%4) * time.Millisecond // due before its client was free
			r := &record.Record{Seq: ro.FirstSeq + int64(i), Stage: st.First, ConversationID: c.ID,
				Scheduled: start.Add(-wait), Start: start, End: start.Add(gap), TTFTNs: record.Ptr(int64(5e6)),
				ClientWaitNs: record.Ptr(int64(wait))}
			if err := sink.Records.Encode(r); err != nil {
				return nil, err
			}
		}
		return &replay.Summary{RunID: "r", Requests: int64(n), Started: 3, NextSeq: ro.FirstSeq + int64(n)}, nil
	}
	var recs []*record.Record
	out := encoderFunc(func(r *record.Record) error { recs = append(recs, r); return nil })
	convs := make([]conv.Conversation, 7)
	for i := range convs {
		convs[i] = conv.Conversation{ID: fmt.Sprint("c", i), Messages: []conv.Message{{Role: conv.RoleUser, Content: "q"}}}
	}
	var errb strings.Builder
	sum, err := o.replayLoad(context.Background(), context.Background(), source.Slice(convs), replay.Sink{Records: out}, &errb)
	if err != nil {
		t.Fatal(err)
	}
	// A line per stage (with the client wait's p99: the records carry
	// it) and the capacity.
	clitest.Golden(t, filepath.Join("testdata", "sweep-loop.stderr"), []byte(errb.String()))
	c := readCapacity(t, capPath)
	var levels []float64
	for i, j := range c.Stages {
		levels = append(levels, j.Level)
		if j.Stage != i+1 {
			t.Errorf("stage %d numbered %d", i+1, j.Stage)
		}
	}
	if want := []float64{1, 2, 4, 8}; !slices.Equal(levels[:min(len(levels), 4)], want) {
		t.Errorf("levels %v, want a ramp %v first", levels, want)
	}
	if c.Knee == nil || math.Abs(*c.Knee-4) > 1e-9 {
		t.Errorf("knee %v, want 4", ptrString(c.Knee))
	}
	want := 0
	for _, l := range levels {
		want += 10 * int(min(l, 4))
	}
	if len(recs) != want || sum.Requests != int64(want) || sum.NextSeq != int64(want) {
		t.Fatalf("%d records, summary %+v; want %d", len(recs), sum, want)
	}
	for i, r := range recs {
		if r.Seq != int64(i) || r.StageLoad != fmt.Sprintf("clients=%g", levels[r.Stage-1]) {
			t.Errorf("record %d: seq %d, stage %d, load %q", i, r.Seq, r.Stage, r.StageLoad)
		}
	}
	for i, id := range firstConv {
		if want := fmt.Sprint("c", 3*i%len(convs)); id != want {
			t.Errorf("stage %d starts at %s, want %s (3 sessions started per stage)", i+1, id, want)
		}
	}
}

// ptrString is *p, or nil.
func ptrString(p *float64) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}

// encoderFunc is a record.Encoder that calls itself.
type encoderFunc func(*record.Record) error

func (f encoderFunc) Encode(r *record.Record) error { return f(r) }
func (f encoderFunc) Flush() error                  { return nil }
func (f encoderFunc) Close() error                  { return nil }

// readCapacity reads a capacity JSON file.
func readCapacity(t *testing.T, path string) sweep.Capacity {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c sweep.Capacity
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSweepActiveLoop runs an active sweep's loop with a stand-in for the
// replay: a server whose LRU prefix cache holds 40,000 tokens, answering
// conversations of 1,000 tokens in rotation, so a stage's later turns all
// hit while level × 1,000 tokens fit and all miss beyond. The loop gives
// each stage its active schedule over the fixed clients, judges its later
// turns, prints its working set and hit share, and the capacity JSON
// carries the knee at 40 conversations (40,000 tokens).
func TestSweepActiveLoop(t *testing.T) {
	t.Parallel()
	const ctx, cacheTokens = 1000, 40000
	capPath := filepath.Join(t.TempDir(), "capacity.json")
	// As mtrun --sweep active --clients 4 --stage-duration 2s
	// --stage-warmup 1s --capacity capPath --no-metrics sets them.
	o := &Options{sched: scheduleFlags{clients: 4, poisson: true}, metrics: metricsOptions{off: true}, Stage: StageSettings{Capacity: capPath, Sweep: &SweepSettings{
		Planner: sweep.Planner{Kind: sweep.Active, Clients: 4, Start: 4, MaxStages: 12, Duration: 2 * time.Second, Warmup: time.Second, Criteria: sweep.Criteria{Unsteady: 0.15}}}}}
	o.replayRun = func(_, _ context.Context, ro replay.Options, src source.Source, sink replay.Sink) (*replay.Summary, error) {
		st := ro.Schedule.(schedule.Staged)
		if st.Lanes != 4 || len(st.Levels) != 1 {
			t.Errorf("stage schedule %+v, want 4 lanes and one level", st)
		}
		level := st.Levels[0].Level
		cached := int64(ctx - 100) // a later turn's prompt: its history and 100 new tokens
		if level*ctx > cacheTokens {
			cached = 0
		}
		t0 := time.Unix(1000, 0)
		n := 100
		for i := range n {
			start := t0.Add(st.Levels[0].Warmup + time.Duration(i)*10*time.Millisecond)
			ttft := 20*time.Millisecond + time.Duration(ctx-cached)*50*time.Microsecond
			r := &record.Record{Seq: ro.FirstSeq + int64(i), Stage: st.First, ConversationID: fmt.Sprint("c", i%int(level)), Turn: 1 + i/int(level),
				Scheduled: start, Start: start, End: start.Add(10 * time.Millisecond), TTFTNs: record.Ptr(int64(ttft)),
				PromptTokens: record.Ptr(int64(ctx - 50)), CompletionTokens: record.Ptr(int64(50)), CachedTokens: record.Ptr(cached)}
			if err := sink.Records.Encode(r); err != nil {
				return nil, err
			}
		}
		return &replay.Summary{RunID: "r", Requests: int64(n), Started: 3, NextSeq: ro.FirstSeq + int64(n)}, nil
	}
	out := encoderFunc(func(*record.Record) error { return nil })
	convs := []conv.Conversation{{ID: "c", Messages: []conv.Message{{Role: conv.RoleUser, Content: "q"}}}}
	var errb strings.Builder
	if _, err := o.replayLoad(context.Background(), context.Background(), source.Slice(convs), replay.Sink{Records: out}, &errb); err != nil {
		t.Fatal(err)
	}
	c := readCapacity(t, capPath)
	t.Logf("%s\n%s", c.Line(), errb.String())
	if c.Kind != sweep.Active || c.Basis != sweep.BasisCached || c.Knee == nil || c.KneeWorkingSetTokens == nil || c.Retention == nil {
		t.Fatalf("capacity %+v", c)
	}
	if math.Abs(*c.KneeWorkingSetTokens-cacheTokens) > 0.1*cacheTokens || c.Capacity > 40 || c.Capacity < 36 || c.Failed == nil || *c.Failed <= 40 {
		t.Errorf("knee %g tokens, capacity %g (failed at %s); want the knee within 10%% of %d tokens and 40 conversations bracketed", *c.KneeWorkingSetTokens, c.Capacity, ptrString(c.Failed), cacheTokens)
	}
	if !strings.Contains(errb.String(), "mtrun: sweep stage 1 active=4:2s:1s: working set 4000 tokens, 100 later turns, hit share 0.902, later TTFT p50 25ms") {
		t.Errorf("stage lines:\n%s", errb.String())
	}
	// Of the previous context: 1,000 tokens, or the prompt (950) for a
	// conversation's first record in the stage.
	if got, want := c.Stages[0].HitShare, 100*900.0/(4*950+96*1000); got == nil || math.Abs(*got-want) > 1e-9 {
		t.Errorf("stage 1 hit share %v, want %g", got, want)
	}
}

// TestStaged: the schedule of stages numbered from first takes the
// run's arrival process and seed for rates, --user-gap for users and
// --clients as the lanes of active stages (the stages of the sweeps
// TestSweepWiring parses, and a --stages list).
func TestStaged(t *testing.T) {
	t.Parallel()
	stage := func(kind sweep.Kind, level float64, d, warmup time.Duration) sweep.Stage {
		return sweep.Stage{Kind: kind, Level: level, Duration: d, Warmup: warmup}
	}
	for _, tc := range []struct {
		name   string
		sched  scheduleFlags
		seed   uint64
		stages []sweep.Stage
		first  int
		want   schedule.Staged
	}{
		{"clients", scheduleFlags{clients: 1, poisson: true}, 0, []sweep.Stage{stage(sweep.Clients, 1, 3*time.Second, 500*time.Millisecond)}, 1,
			schedule.Staged{Levels: []schedule.Level{{Level: 1, Duration: 3 * time.Second, Warmup: 500 * time.Millisecond}}, Poisson: true, First: 1}},
		{"users", scheduleFlags{clients: 1, poisson: true, userGap: 100 * time.Millisecond}, 0, []sweep.Stage{stage(sweep.Users, 2, time.Second, 200*time.Millisecond)}, 1,
			schedule.Staged{Gap: 100 * time.Millisecond, Levels: []schedule.Level{{Level: 2, Duration: time.Second, Warmup: 200 * time.Millisecond}}, Poisson: true, First: 1}},
		{"active", scheduleFlags{clients: 4, poisson: true}, 0, []sweep.Stage{stage(sweep.Active, 4, 20*time.Second, 2*time.Second)}, 1,
			schedule.Staged{Lanes: 4, Levels: []schedule.Level{{Level: 4, Duration: 20 * time.Second, Warmup: 2 * time.Second}}, Poisson: true, First: 1}},
		{"active from 16", scheduleFlags{clients: 2, poisson: true}, 0, []sweep.Stage{stage(sweep.Active, 16, 30*time.Second, 5*time.Second)}, 1,
			schedule.Staged{Lanes: 2, Levels: []schedule.Level{{Level: 16, Duration: 30 * time.Second, Warmup: 5 * time.Second}}, Poisson: true, First: 1}},
		{"constant rate", scheduleFlags{clients: 1}, 7, []sweep.Stage{stage(sweep.Rate, 0.5, 30*time.Second, 5*time.Second)}, 1,
			schedule.Staged{Rate: true, Levels: []schedule.Level{{Level: 0.5, Duration: 30 * time.Second, Warmup: 5 * time.Second}}, Seed: 7, First: 1}},
		{"stages from 3", scheduleFlags{clients: 1, poisson: true}, 9, []sweep.Stage{stage(sweep.Rate, 2, 10*time.Second, 0), stage(sweep.Rate, 4, 10*time.Second, 2*time.Second)}, 3,
			schedule.Staged{Rate: true, Levels: []schedule.Level{{Level: 2, Duration: 10 * time.Second}, {Level: 4, Duration: 10 * time.Second, Warmup: 2 * time.Second}}, Poisson: true, Seed: 9, First: 3}},
	} {
		o := &Options{sched: tc.sched}
		o.Replay.RandSeed = tc.seed
		if diff := cmp.Diff(tc.want, o.staged(tc.stages, tc.first)); diff != "" {
			t.Errorf("%s: schedule (-want +got):\n%s", tc.name, diff)
		}
	}
}
