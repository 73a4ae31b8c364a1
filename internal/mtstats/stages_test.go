package mtstats

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/judge"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/report"
)

// stagedRecords returns n requests of stage, one every gap from at, each
// lasting gap (so the stage's requests cover n·gap end to end), with the
// given TTFT and lateness.
func stagedRecords(stage, n int, at time.Time, gap, ttft, late time.Duration) []*record.Record {
	var out []*record.Record
	for i := range n {
		start := at.Add(time.Duration(i) * gap)
		out = append(out, &record.Record{RunID: "r", Seq: int64(stage*1000 + i), ConversationID: "c", Turn: i % 2, Phase: record.PhaseMeasure,
			Stage: stage, Scheduled: start.Add(-late), Start: start, End: start.Add(gap),
			LatencyNs: int64(gap), LatenessNs: int64(late), TTFTNs: record.Ptr(int64(ttft))})
	}
	return out
}

func TestStagesRows(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var recs []*record.Record
	// Stage 1: 20 requests over 10 s, steady, TTFT 50 ms, on time.
	recs = append(recs, stagedRecords(1, 20, t0, 500*time.Millisecond, 50*time.Millisecond, time.Millisecond)...)
	// Stage 2: 30 requests in its first 3 s, then 10 in the last 3 s
	// (unsteady), TTFT 300 ms, 200 ms late; one failure; a warmup
	// request that does not count.
	t2 := t0.Add(20 * time.Second)
	recs = append(recs, stagedRecords(2, 30, t2, 100*time.Millisecond, 300*time.Millisecond, 200*time.Millisecond)...)
	recs = append(recs, stagedRecords(2, 10, t2.Add(3*time.Second), 300*time.Millisecond, 300*time.Millisecond, 200*time.Millisecond)...)
	recs[len(recs)-1].ErrorClass, recs[len(recs)-1].TTFTNs = record.ErrHTTP5xx, nil
	warm := *recs[0]
	warm.Stage, warm.Phase, warm.Seq = 2, record.PhaseWarmup, 99999
	recs = append(recs, &warm)

	objs, err := judge.ParseSLO("ttft_p95<=100ms")
	if err != nil {
		t.Fatal(err)
	}
	s := judge.NewStages(objs)
	for _, r := range recs {
		s.Add(r)
	}
	rows := s.Rows()
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2", len(rows))
	}
	for _, tc := range []struct {
		row                     judge.StageRow
		stage, requests, failed int
		throughput, p95, late   float64
		steady, limited, meets  bool
	}{
		{rows[0], 1, 20, 0, 2, 50, 1, true, false, true},
		// 39 successes over 6 s; halves 30/3 s and 9/3 s.
		{rows[1], 2, 40, 1, 6.5, 300, 200, false, true, false},
	} {
		r := tc.row
		if r.Stage != tc.stage || r.Requests != tc.requests || r.Failed != tc.failed {
			t.Errorf("stage %d: %d requests, %d failed; want stage %d, %d, %d", r.Stage, r.Requests, r.Failed, tc.stage, tc.requests, tc.failed)
		}
		if math.Abs(float64(r.Throughput)-tc.throughput) > 1e-9 || float64(r.TTFTP95) != tc.p95 || float64(r.LatenessP99) != tc.late {
			t.Errorf("stage %d: throughput %v, ttft p95 %v, lateness p99 %v; want %v, %v, %v", r.Stage, r.Throughput, r.TTFTP95, r.LatenessP99, tc.throughput, tc.p95, tc.late)
		}
		if r.Steady != tc.steady || r.ClientLimited != tc.limited || r.MeetsSLO == nil || *r.MeetsSLO != tc.meets {
			t.Errorf("stage %d: steady %v, client-limited %v, meets %v; want %v, %v, %v", r.Stage, r.Steady, r.ClientLimited, r.MeetsSLO, tc.steady, tc.limited, tc.meets)
		}
	}
	if h1, h2 := float64(rows[1].FirstHalf), float64(rows[1].SecondHalf); math.Abs(h1-10) > 1e-9 || math.Abs(h2-3) > 1e-9 {
		t.Errorf("stage 2 halves %v and %v, want 10 and 3 requests/s", h1, h2)
	}
}

// TestStagesClientWait: the stage table keeps the wait for a free client
// (client_wait_p99) apart from the generator's lateness, and only the
// lateness judges a stage client-limited: an active stage whose turns
// waited 900 ms for their client but were sent 1 ms late is not; one the
// generator sent 300 ms late is. Records without client_wait_ns (older
// versions) keep the old rule: an active stage is never judged so.
func TestStagesClientWait(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	stage := func(n int, load string, late time.Duration, wait *int64) []*record.Record {
		recs := stagedRecords(n, 20, t0.Add(time.Duration(n)*20*time.Second), 500*time.Millisecond, 50*time.Millisecond, late)
		for _, r := range recs {
			r.StageLoad, r.ClientWaitNs = load, wait
			if wait != nil {
				r.Scheduled = r.Scheduled.Add(-time.Duration(*wait))
			}
		}
		return recs
	}
	var recs []*record.Record
	recs = append(recs, stage(1, "active=4", time.Millisecond, record.Ptr(int64(900*time.Millisecond)))...)
	recs = append(recs, stage(2, "active=8", 300*time.Millisecond, record.Ptr(int64(0)))...)
	recs = append(recs, stage(3, "active=16", 900*time.Millisecond, nil)...)
	s := judge.NewStages(nil)
	for _, r := range recs {
		s.Add(r)
	}
	rows := s.Rows()
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	for i, want := range []struct {
		late, wait float64 // ms; NaN: unknown
		limited    bool
	}{{1, 900, false}, {300, 0, true}, {900, math.NaN(), false}} {
		r := rows[i]
		wait := float64(r.ClientWaitP99)
		if float64(r.LatenessP99) != want.late || wait != want.wait && !(math.IsNaN(wait) && math.IsNaN(want.wait)) || r.ClientLimited != want.limited {
			t.Errorf("stage %s: lateness p99 %v, client wait p99 %v, client-limited %v; want %v, %v, %v",
				r.Load, r.LatenessP99, r.ClientWaitP99, r.ClientLimited, want.late, want.wait, want.limited)
		}
	}
}

// TestReportStages checks that mtstats reports per stage (JSON and
// table) when the records have more than one stage, and not otherwise.
func TestReportStages(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	write := func(recs []*record.Record) string {
		var b bytes.Buffer
		for _, r := range recs {
			line, _ := json.Marshal(r)
			b.Write(append(line, '\n'))
		}
		p := filepath.Join(t.TempDir(), "recs.jsonl")
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	two := write(append(stagedRecords(1, 4, t0, time.Second, time.Millisecond, 0), stagedRecords(2, 4, t0.Add(5*time.Second), time.Second, time.Millisecond, 0)...))
	one := write(stagedRecords(1, 4, t0, time.Second, time.Millisecond, 0))
	for _, tc := range []struct {
		path   string
		stages int
	}{{two, 2}, {one, 0}} {
		var out bytes.Buffer
		if err := Run(context.Background(), Options{Inputs: []string{tc.path}, Out: &out, Err: &out, Format: report.FormatJSON}); err != nil {
			t.Fatal(err)
		}
		var rep struct{ Stages []judge.StageRow }
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatal(err)
		}
		if len(rep.Stages) != tc.stages {
			t.Errorf("%d stages in the JSON report, want %d", len(rep.Stages), tc.stages)
		}
		out.Reset()
		if err := Run(context.Background(), Options{Inputs: []string{tc.path}, Out: &out, Err: &out}); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(out.String(), "by stage:"); got != (tc.stages > 0) {
			t.Errorf("table has a by stage section: %v, want %v", got, tc.stages > 0)
		}
	}
}

// TestCapacityCheck judges a two-stage sweep again from its records at
// the levels of its capacity JSON: stage 1 (2 clients) meets
// ttft_p95<=100ms, stage 2 (4 clients) does not, so the capacity is 2;
// --min-capacity above it fails the check.
func TestCapacityCheck(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	var b bytes.Buffer
	for _, r := range append(stagedRecords(1, 20, t0, 100*time.Millisecond, 50*time.Millisecond, 0),
		stagedRecords(2, 20, t0.Add(5*time.Second), 100*time.Millisecond, 300*time.Millisecond, 0)...) {
		line, _ := json.Marshal(r)
		b.Write(append(line, '\n'))
	}
	recs := filepath.Join(dir, "recs.jsonl")
	capFile := filepath.Join(dir, "capacity.json")
	badFile := filepath.Join(dir, "bad.json")
	capJSON := `{"schema":"mtkit.capacity/v1","kind":"clients","capacity":4,"objectives":["ttft_p95<=100ms"],"stages":[` +
		`{"stage":1,"kind":"clients","level":2},{"stage":2,"kind":"clients","level":4}]}`
	for p, data := range map[string]string{recs: b.String(), capFile: capJSON, badFile: `{"schema":"other"}`} {
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name    string
		o       Options
		wantErr string // "" for none
		usage   bool
	}{
		{"reached", Options{Capacity: capFile, MinCapacity: 2}, "", false},
		{"not reached", Options{Capacity: capFile, MinCapacity: 3}, "capacity not reached: 2 clients, want at least 3", false},
		// --slo replaces the file's objectives: every stage meets this one.
		{"own objectives", Options{Capacity: capFile, MinCapacity: 4, SLO: "ttft_p95<=1s"}, "", false},
		{"without file", Options{MinCapacity: 3}, "--min-capacity needs --capacity", true},
		{"bad file", Options{Capacity: badFile}, "bad.json: schema", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			o := tc.o
			o.Inputs, o.Out, o.Err, o.Format = []string{recs}, &out, &out, report.FormatJSON
			err := Run(context.Background(), o)
			var usage *UsageError
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Run: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Run: %v, want %q", err, tc.wantErr)
			case tc.usage != errors.As(err, &usage):
				t.Fatalf("Run: %v; usage error %v, want %v", err, !tc.usage, tc.usage)
			case strings.Contains(tc.wantErr, "not reached") && !errors.Is(err, ErrCheckFailed):
				t.Fatalf("Run: %v; want ErrCheckFailed (exit 3)", err)
			}
			if tc.name == "reached" {
				var rep struct {
					Capacity struct{ Capacity, Failed float64 }
				}
				if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
					t.Fatal(err)
				}
				if rep.Capacity.Capacity != 2 || rep.Capacity.Failed != 4 {
					t.Errorf("capacity %+v, want 2 held and 4 failed", rep.Capacity)
				}
			}
		})
	}
}

// TestStagesRowsClientLimitedByKind: a stage 200 ms late is
// client-limited, unless it is a users stage (stage_load users=…), whose
// lateness includes waiting for the users' previous answers.
func TestStagesRowsClientLimitedByKind(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		load    string
		limited bool
	}{{"", true}, {"clients=8", true}, {"rate=4", true}, {"users=8", false}} {
		s := judge.NewStages(nil)
		for _, r := range stagedRecords(1, 20, t0, 500*time.Millisecond, 50*time.Millisecond, 200*time.Millisecond) {
			r.StageLoad = tc.load
			s.Add(r)
		}
		if rows := s.Rows(); len(rows) != 1 || rows[0].ClientLimited != tc.limited {
			t.Errorf("load %q: rows %+v, want one, client-limited %v", tc.load, rows, tc.limited)
		}
	}
}
