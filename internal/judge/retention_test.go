package judge

import (
	"math"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/sweep"
)

// TestStageRetention: an active stage's turns give its retention
// (working set = level × mean context of every turn; hit share and TTFT
// p50 of the later turns); failures and warmup are left out; a clients stage has none; a later
// turn without cached_tokens makes the hit share null. The hit share is
// of each later turn's previous context (the conversation's previous
// prompt + completion).
func TestStageRetention(t *testing.T) {
	t.Parallel()
	i64 := func(v int64) *int64 { return &v }
	t0 := time.Unix(1000, 0)
	rec := func(stage int, load string, turn int, prompt, completion int64, cached *int64, ttft time.Duration) *record.Record {
		end := t0.Add(time.Second)
		return &record.Record{Stage: stage, StageLoad: load, Turn: turn, Start: t0, End: end,
			PromptTokens: i64(prompt), CompletionTokens: i64(completion), CachedTokens: cached, TTFTNs: i64(int64(ttft))}
	}
	s := NewStages(nil)
	for _, r := range []*record.Record{
		rec(1, "active=4", 0, 500, 100, i64(0), 90*time.Millisecond), // first turn: not a later one
		rec(1, "active=4", 1, 700, 100, i64(560), 20*time.Millisecond),
		rec(1, "active=4", 2, 900, 100, i64(720), 30*time.Millisecond),
		rec(1, "active=4", 3, 1100, 100, i64(0), 80*time.Millisecond),
		rec(2, "clients=4", 1, 700, 100, i64(700), 20*time.Millisecond),
		rec(3, "active=8", 1, 1000, 200, nil, 50*time.Millisecond),
		rec(3, "active=8", 2, 1000, 200, i64(100), 70*time.Millisecond),
	} {
		s.Add(r)
	}
	failed := rec(1, "active=4", 2, 5000, 0, i64(0), time.Second)
	failed.ErrorClass = "http"
	warm := rec(1, "active=4", 2, 5000, 0, i64(0), time.Second)
	warm.Phase = record.PhaseWarmup
	s.Add(failed)
	s.Add(warm)
	rows := s.Rows()
	if len(rows) != 3 {
		t.Fatalf("%d rows", len(rows))
	}
	r1 := rows[0].Retention
	if r1 == nil || r1.LaterTurns != 3 || r1.MeanContextTokens != 900 || r1.WorkingSetTokens != 3600 ||
		math.Abs(float64(r1.HitShare)-(560+720.0)/(600+800+1000)) > 1e-12 || r1.TTFTP50 != 30 {
		t.Errorf("stage 1 retention %+v", r1)
	}
	if rows[1].Retention != nil {
		t.Errorf("clients stage has a retention: %+v", rows[1].Retention)
	}
	r3 := rows[2].Retention
	if r3 == nil || r3.LaterTurns != 2 || r3.WorkingSetTokens != 9600 || !math.IsNaN(float64(r3.HitShare)) || r3.TTFTP50 != 60 {
		t.Errorf("stage 3 retention %+v", r3)
	}
	// mtrun judges a sweep stage from records without stage_load, at the
	// stage it ran.
	res := rows[0].Result(sweep.Stage{Kind: sweep.Active, Level: 2})
	if ret := res.Retention; ret.LaterTurns != 3 || ret.WorkingSetTokens != 1800 || ret.TTFTP50 != 30*time.Millisecond {
		t.Errorf("Result at active=2: %+v", ret)
	}
	if res := rows[1].Result(sweep.Stage{Kind: sweep.Clients, Level: 4}); res.Retention.LaterTurns != 0 {
		t.Errorf("clients Result has a retention: %+v", res.Retention)
	}
}
