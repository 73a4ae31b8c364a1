package judge

import (
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/record"
)

// TestStageArrival: a rate stage carries its asked rate beside the
// achieved session-start and request rates over its measured records
// (warmup left out); other kinds carry none (issue 23).
func TestStageArrival(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	rec := func(stage int, load, conv string, turn int, start, end time.Duration, phase string) *record.Record {
		return &record.Record{Stage: stage, StageLoad: load, ConversationID: conv, Turn: turn,
			Start: t0.Add(start), End: t0.Add(end), Phase: phase}
	}
	s := NewStages(nil)
	for _, r := range []*record.Record{
		rec(1, "rate=2", "w", 0, 0, time.Second, record.PhaseWarmup), // warmup: not in the window
		rec(1, "rate=2", "a", 0, 2*time.Second, 3*time.Second, ""),
		rec(1, "rate=2", "b", 0, 2500*time.Millisecond, 3*time.Second, ""),
		rec(1, "rate=2", "a", 1, 3*time.Second, 4*time.Second, ""),
		rec(1, "rate=2", "c", 0, 3*time.Second, 6*time.Second, ""),
		rec(2, "clients=4", "d", 0, 0, 2*time.Second, ""),
		rec(2, "clients=4", "d", 1, 2*time.Second, 4*time.Second, ""),
	} {
		s.Add(r)
	}
	rows := s.Rows()
	if len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	// Stage 1: 3 first turns and 4 turns over 2 s to 6 s.
	if r := rows[0]; r.AskedRate == nil || *r.AskedRate != 2 || r.SessionStartsPerSec != 0.75 || r.RequestsPerSec != 1 {
		t.Errorf("stage 1: asked %v, achieved %v starts/s, %v requests/s; want 2, 0.75, 1", r.AskedRate, r.SessionStartsPerSec, r.RequestsPerSec)
	}
	if r := rows[1]; r.AskedRate != nil || r.SessionStartsPerSec != 0.25 || r.RequestsPerSec != 0.5 {
		t.Errorf("stage 2: asked %v, achieved %v starts/s, %v requests/s; want none, 0.25, 0.5", r.AskedRate, r.SessionStartsPerSec, r.RequestsPerSec)
	}
}
