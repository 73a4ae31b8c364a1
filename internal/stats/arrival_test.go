package stats

import (
	"math"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/record"
)

// TestArrivalRates: the achieved session-start rate counts each
// conversation's first send (turn 0, attempt 0, choice 0) and the request
// rate the turns (retried attempts left out), both over the window from
// the first start to the last end (issue 23).
func TestArrivalRates(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	rec := func(conv string, turn, attempt, choice int, start, end float64, retried bool) *record.Record {
		return &record.Record{ConversationID: conv, Turn: turn, Attempt: attempt, Choice: choice,
			Start: at(start), End: at(end), Retried: retried}
	}
	for _, tc := range []struct {
		name                 string
		recs                 []*record.Record
		wantStarts, wantReqs float64 // NaN: no window
	}{
		{"retry counts once", []*record.Record{
			rec("a", 0, 0, 0, 0, 0.5, true), // first attempt, retried: the session started here
			rec("a", 0, 1, 0, 1, 2, false),
			rec("a", 1, 0, 0, 3, 4, false),
			rec("b", 0, 0, 0, 2, 3, false),
			rec("c", 0, 0, 0, 4, 10, false),
		}, 3.0 / 10, 4.0 / 10},
		{"second choice is no new session", []*record.Record{
			rec("b", 0, 0, 0, 0, 2, false),
			rec("b", 0, 0, 1, 0, 2, false),
		}, 1.0 / 2, 2.0 / 2},
		{"later turns only", []*record.Record{
			rec("a", 1, 0, 0, 0, 4, false),
			rec("a", 2, 0, 0, 1, 5, false),
		}, 0, 2.0 / 5},
		{"no records", nil, math.NaN(), math.NaN()},
	} {
		a := NewAcc(false)
		for _, r := range tc.recs {
			a.Add(r, true)
		}
		g := a.Group("")
		same := func(got Num, want float64) bool {
			return math.IsNaN(want) && math.IsNaN(float64(got)) || math.Abs(float64(got)-want) < 1e-12
		}
		if !same(g.SessionStartsPerSec, tc.wantStarts) || !same(g.RequestsPerSec, tc.wantReqs) {
			t.Errorf("%s: session starts/s %v, requests/s %v; want %g, %g", tc.name, g.SessionStartsPerSec, g.RequestsPerSec, tc.wantStarts, tc.wantReqs)
		}
	}
}
