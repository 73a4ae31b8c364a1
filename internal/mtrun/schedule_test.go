package mtrun

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/schedule"
)

// TestChooseSchedule covers which schedule a run gets from its flags and
// input.
func TestChooseSchedule(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		timed   bool
		loop    bool
		flags   scheduleFlags
		want    schedule.Schedule
		wantErr string
	}{
		{"default", false, false, scheduleFlags{clients: 1}, schedule.Closed{Clients: 1}, ""},
		{"clients", false, false, scheduleFlags{clients: 2, active: 6}, schedule.Closed{Clients: 2, Sessions: 6}, ""},
		{"rate", false, false, scheduleFlags{clients: 1, rate: 4, poisson: true}, schedule.Rate{PerSecond: 4, Poisson: true}, ""},
		{"users", false, false, scheduleFlags{users: 4, userGap: time.Second, explicit: true}, schedule.UserGap{N: 4, Gap: time.Second}, ""},
		{"users on a timed input", true, false, scheduleFlags{users: 2, userGap: time.Second, explicit: true}, schedule.UserGap{N: 2, Gap: time.Second}, ""},
		{"timed input", true, false, scheduleFlags{}, schedule.Trace{}, ""},
		{"timed input scaled", true, false, scheduleFlags{timeScale: 0.1}, schedule.Trace{Scale: 0.1}, ""},
		{"timed input with --clients", true, false, scheduleFlags{clients: 3, explicit: true}, schedule.Closed{Clients: 3}, ""},
		{"timed input with --rate", true, false, scheduleFlags{rate: 2, explicit: true}, schedule.Rate{PerSecond: 2}, ""},
		{"timed input looped", true, true, scheduleFlags{}, nil, "--loop: the trace clock replays the trace once"},
		{"time scale without timestamps", false, false, scheduleFlags{timeScale: 0.5}, nil, "has no trace timestamps"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &Options{input: "in.jsonl", Timed: tc.timed, sched: tc.flags}
			o.Replay.Loop = tc.loop
			err := o.chooseSchedule()
			if tc.wantErr != "" {
				var exit *command.ExitError
				if !errors.As(err, &exit) || exit.Code != command.ExitUsage || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want a usage error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.Replay.Schedule != tc.want {
				t.Errorf("schedule %#v, want %#v", o.Replay.Schedule, tc.want)
			}
		})
	}
}
