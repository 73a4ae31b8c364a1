package main

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

// TestAskedRate: the asked rate is --rate's, and none for a closed loop,
// stages or a sweep (their levels are in the stage table).
func TestAskedRate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want float64
	}{
		{[]string{"--rate", "2"}, 2},
		{[]string{"--rate", "0.25", "--arrival", "constant"}, 0.25},
		{[]string{"--clients", "4"}, 0},
		{[]string{"--stages", "rate=2:10s,rate=4:10s"}, 0},
		{[]string{"--sweep", "rate"}, 0},
	} {
		o := parse(t, append([]string{"--url", "http://127.0.0.1:1"}, tc.args...)...)
		if err := o.chooseSchedule(); err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if got := o.askedRate(); got != tc.want {
			t.Errorf("%q: asked rate %g, want %g", tc.args, got, tc.want)
		}
	}
}
