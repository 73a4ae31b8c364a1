package main

import (
	"testing"
)

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
		if err := o.ChooseSchedule(); err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if got := o.AskedRate(); got != tc.want {
			t.Errorf("%q: asked rate %g, want %g", tc.args, got, tc.want)
		}
	}
}
