package mtstats

import (
	"fmt"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/stats"
	"github.com/mtkit/mtkit/internal/stats/statstest"
)

// TestUserGaps checks the gaps between each client's consecutive turns:
// intended from scheduled times, realised from the first attempt's start,
// per client with --by client, and absent without UserGaps.
func TestUserGaps(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	rec := func(client, turn, attempt int, retried bool, scheduled, start int) record.Record {
		return record.Record{RunID: "r", ConversationID: fmt.Sprint("c", client), Turn: turn, Attempt: attempt,
			Client: client, Phase: record.PhaseMeasure, Scheduled: at(scheduled), Start: at(start), End: at(start + 100),
			LatencyNs: int64(100 * time.Millisecond), Status: 200, Retried: retried}
	}
	// Client 0's third turn is 500 ms late; client 1's second turn is
	// retried: its first attempt is its send.
	recs := []record.Record{
		rec(1, 0, 0, false, 500, 500),
		rec(0, 0, 0, false, 0, 0),
		rec(0, 1, 0, false, 1000, 1000),
		rec(1, 1, 0, true, 1500, 1600),
		rec(1, 1, 1, false, 1500, 1900),
		rec(0, 2, 0, false, 2000, 2500),
		rec(1, 2, 0, false, 2500, 2500),
	}
	for i := range recs {
		recs[i].Seq = int64(i)
	}
	path := writeTemp(t, "recs.jsonl", statstest.JSONL(t, recs))
	for _, tc := range []struct {
		name      string
		gaps      bool
		by        string
		group     int // -1: the summary
		wantCount float64
		wantP50   float64
		wantMax   float64
	}{
		{"summary", true, "", -1, 4, 1050, 1500},
		{"client 0", true, "client", 0, 2, 1250, 1500},
		{"client 1", true, "client", 1, 2, 1000, 1100},
		{"off", false, "", -1, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := runJSON(t, Options{Inputs: []string{path}, UserGaps: tc.gaps, By: tc.by})
			metrics := get(m, "summary", "metrics")
			if tc.group >= 0 {
				metrics = get(m["groups"].([]any)[tc.group].(map[string]any), "metrics")
			}
			mm := metrics.(map[string]any)
			if !tc.gaps {
				if mm[stats.UserGap] != nil || mm[stats.UserGapIntended] != nil {
					t.Errorf("user gaps reported without UserGaps: %v", mm[stats.UserGap])
				}
				return
			}
			actual, intended := mm[stats.UserGap].(map[string]any), mm[stats.UserGapIntended].(map[string]any)
			if actual["count"] != tc.wantCount || actual["p50"] != tc.wantP50 || actual["max"] != tc.wantMax {
				t.Errorf("%s = %v, want count %g, p50 %g, max %g", stats.UserGap, actual, tc.wantCount, tc.wantP50, tc.wantMax)
			}
			if intended["count"] != tc.wantCount || intended["min"] != 1000.0 || intended["max"] != 1000.0 {
				t.Errorf("%s = %v, want %g gaps of 1000 ms", stats.UserGapIntended, intended, tc.wantCount)
			}
		})
	}
}
