package segment

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// fakeClock is a Clock whose time is fixed; After records the duration
// asked for and returns a channel the test fires.
type fakeClock struct {
	now   time.Time
	asked []time.Duration
	fire  chan time.Time
}

func (c *fakeClock) Now() time.Time { return c.now }
func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.asked = append(c.asked, d)
	return c.fire
}

func TestWaitStart(t *testing.T) {
	at := time.Date(2026, 11, 23, 23, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		now      time.Time
		fired    bool // the timer fires (else the context is canceled)
		wantWait time.Duration
		wantLate time.Duration
		wantErr  string
	}{
		{"early: waits the difference", at.Add(-90 * time.Second), true, 90 * time.Second, 0, ""},
		{"exactly on time", at, true, 0, 0, ""},
		{"late within the tolerance: starts at once", at.Add(MaxLate - time.Millisecond), true, 0, MaxLate - time.Millisecond, ""},
		{"late beyond the tolerance: refuses", at.Add(MaxLate + 2*time.Millisecond), true, 0, MaxLate + 2*time.Millisecond, "was 1.002s ago, more than the 1s allowed"},
		{"interrupted while waiting", at.Add(-time.Minute), false, time.Minute, 0, "context canceled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &fakeClock{now: tc.now, fire: make(chan time.Time, 1)}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.fired {
				c.fire <- at
			} else {
				cancel()
			}
			late, err := WaitStart(ctx, c, at)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if late != tc.wantLate {
				t.Errorf("late = %v, want %v", late, tc.wantLate)
			}
			var want []time.Duration
			if tc.wantWait > 0 {
				want = []time.Duration{tc.wantWait}
			}
			if len(c.asked) != len(want) || len(want) == 1 && c.asked[0] != want[0] {
				t.Errorf("waited %v, want %v", c.asked, want)
			}
			var le *LateError
			if errors.As(err, &le) && (le.Late != tc.wantLate || !le.At.Equal(at)) {
				t.Errorf("LateError %+v", le)
			}
		})
	}
}

func TestParseStart(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    time.Time
		wantErr bool
	}{
		{"2026-11-23T23:30:00Z", time.Date(2026, 11, 23, 23, 30, 0, 0, time.UTC), false},
		{"2026-11-24T00:30:00.5+01:00", time.Date(2026, 11, 23, 23, 30, 0, 5e8, time.UTC), false},
		{"2026-11-23 23:30", time.Time{}, true},
		{"23:30", time.Time{}, true},
		{"", time.Time{}, true},
	} {
		got, err := ParseStart(tc.in)
		if tc.wantErr {
			if err == nil || !strings.Contains(err.Error(), "RFC 3339") {
				t.Errorf("ParseStart(%q) error = %v", tc.in, err)
			}
			continue
		}
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("ParseStart(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func FuzzParseStart(f *testing.F) {
	for _, s := range []string{"2026-11-23T23:30:00Z", "2026-11-24T00:30:00.5+01:00", "x", "2026-13-01T00:00:00Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseStart(s)
		if err != nil {
			return
		}
		if back, err := ParseStart(got.Format(time.RFC3339Nano)); err != nil || !back.Equal(got) {
			t.Errorf("round trip of %q: %v, %v", s, back, err)
		}
	})
}
