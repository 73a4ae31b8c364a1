package mtrun

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/replay"
)

// TestPrintSummaryArrival: the summary gives the achieved session-start
// and request rates over the run's elapsed time, with the asked rate
// beside them when there is one (issue 23), and no rates without an
// elapsed time.
func TestPrintSummaryArrival(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		elapsed time.Duration
		asked   float64
		want    string
	}{
		{"asked", 20 * time.Second, 2, "mtrun: achieved 1.95 session starts/s (asked 2) and 5.00 requests/s over the 20s run\n"},
		{"fractional asked", 20 * time.Second, 0.5, "mtrun: achieved 1.95 session starts/s (asked 0.5) and 5.00 requests/s over the 20s run\n"},
		{"closed loop", 20 * time.Second, 0, "mtrun: achieved 1.95 session starts/s and 5.00 requests/s over the 20s run\n"},
		{"no time", 0, 2, ""},
	} {
		var b bytes.Buffer
		printSummary(&b, &replay.Summary{RunID: "r", Model: "m", Requests: 100, Started: 39, Elapsed: tc.elapsed}, tc.asked)
		_, rest, _ := strings.Cut(b.String(), "\n")
		if rest != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, rest, tc.want)
		}
	}
}

// TestPrintSummaryWriteBlocked: time the sessions waited for the record
// writer is reported, and only when there was some.
func TestPrintSummaryWriteBlocked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		blocked time.Duration
		want    string
	}{
		{0, ""},
		{1500 * time.Millisecond, "mtrun: the outputs were slower than the replay: sessions waited 1.5s for the record writer (lateness and think times include it)\n"},
	} {
		var b bytes.Buffer
		printSummary(&b, &replay.Summary{RunID: "r", Model: "m", Requests: 3, WriteBlocked: tc.blocked}, 0)
		_, rest, _ := strings.Cut(b.String(), "\n")
		if rest != tc.want {
			t.Errorf("blocked %v: %q, want %q", tc.blocked, rest, tc.want)
		}
	}
}
