package replay

import (
	"context"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/schedule"
	"github.com/mtkit/mtkit/internal/source"
)

// TestWarmupStep: the warmup sends turn 0 of every conversation as
// phase=warmup, also when the measured run loops or stops after a few
// requests, and the measured run's records are numbered after it.
func TestWarmupStep(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"plain", Options{}},
		{"loop and limits", Options{Loop: true, MaxRequests: 2, Duration: time.Hour, MaxTurns: 3}},
		// Open loop would give each conversation its own client.
		{"schedule", Options{Schedule: schedule.Rate{PerSecond: 1000}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fs := newFakeServer(t, nil)
			o := tc.opts
			o.URL, o.Model, o.RequestTimeout = fs.URL, "fake-model", 20*time.Second
			convs := simpleConvs(3, 4)
			var warm memRecords
			measured, sum, err := WarmupStep(context.Background(), context.Background(), o, schedule.Closed{Clients: 2}, source.Slice(convs), Sink{Records: &warm})
			if err != nil {
				t.Fatal(err)
			}
			recs := warm.all()
			if len(recs) != 3 || sum.Requests != 3 {
				t.Fatalf("%d warmup records (%d requests), want 3", len(recs), sum.Requests)
			}
			for _, r := range recs {
				if r.Phase != record.PhaseWarmup || r.Turn != 0 || r.Client > 1 {
					t.Errorf("warmup record: phase %q turn %d client %d, want warmup, 0, 0 or 1 (closed loop, 2 clients)", r.Phase, r.Turn, r.Client)
				}
			}
			checkSeq(t, recs, 0)
			if measured.FirstSeq != 3 || measured.Loop != o.Loop || measured.MaxRequests != o.MaxRequests ||
				measured.MaxTurns != o.MaxTurns || measured.Duration != o.Duration || measured.Phase != o.Phase || measured.Schedule != o.Schedule {
				t.Errorf("measured options %+v, want the given ones with FirstSeq 3", measured)
			}
			var rest memRecords
			if _, err := Run(context.Background(), context.Background(), measured, source.Slice(convs), Sink{Records: &rest}); err != nil {
				t.Fatal(err)
			}
			after := rest.all()
			if len(after) == 0 || after[0].Phase == record.PhaseWarmup {
				t.Fatalf("measured run: %d records", len(after))
			}
			checkSeq(t, after, 3)
		})
	}
}
