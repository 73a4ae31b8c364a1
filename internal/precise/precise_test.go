package precise

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestSleeper checks that waits never end early, reuse their timer and
// end on a cancelled context, and which of them end in a nanosleep: a
// precise one does unless it is shorter than TimerOnly at its start.
func TestSleeper(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		s       Sleeper
		d       time.Duration
		threads bool
	}{
		{"timer", Sleeper{}, 3 * time.Millisecond, false},
		{"precise", Sleeper{Precise: true}, 3 * time.Millisecond, true},
		{"precise, shorter than Coarse", Sleeper{Precise: true}, Coarse / 3, true},
		{"precise with spin", Sleeper{Precise: true, Spin: 80 * time.Microsecond}, 3 * time.Millisecond, true},
		{"past deadline", Sleeper{Precise: true}, -time.Millisecond, false},
		{"TimerOnly, long", Sleeper{Precise: true, TimerOnly: Coarse}, 2 * Coarse, true},
		{"TimerOnly, exactly", Sleeper{Precise: true, TimerOnly: Coarse}, Coarse, true},
		{"TimerOnly, short", Sleeper{Precise: true, TimerOnly: Coarse}, Coarse / 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := tc.s
			if got := s.threads(tc.d); got != tc.threads {
				t.Errorf("threads(%v) = %v, want %v", tc.d, got, tc.threads)
			}
			defer s.Stop()
			for range 3 { // the timer is reused
				deadline := time.Now().Add(tc.d)
				if err := s.Until(context.Background(), deadline); err != nil {
					t.Fatal(err)
				}
				if early := time.Until(deadline); early > 0 {
					t.Fatalf("woke %v early", early)
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if err := s.Until(ctx, time.Now().Add(time.Hour)); err == nil {
				t.Fatal("Until ignored a cancelled context")
			}
			if err := s.Until(ctx, time.Now().Add(-time.Second)); err == nil {
				t.Fatal("Until of a past deadline ignored a cancelled context")
			}
		})
	}
}

// TestSleeperCancelWakes checks that a wait on the timer part ends when
// its context is cancelled (ordered by the context, not by a sleep).
func TestSleeperCancelWakes(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		s := Sleeper{Precise: true}
		done <- s.Until(ctx, time.Now().Add(time.Hour))
	}()
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("Until = %v, want context.Canceled", err)
	}
}

// BenchmarkWake reports how late a wait for a deadline 2 ms ahead wakes
// (p50 and p99 in µs), on the Go timer alone and precise without spin,
// as the open-loop dispatcher waits. Run on a quiet machine.
func BenchmarkWake(b *testing.B) {
	for _, tc := range []struct {
		name string
		s    Sleeper
	}{{"timer", Sleeper{}}, {"precise", Sleeper{Precise: true}}} {
		b.Run(tc.name, func(b *testing.B) {
			s := tc.s
			defer s.Stop()
			var late []time.Duration
			next := time.Now()
			for b.Loop() {
				next = next.Add(2 * time.Millisecond)
				if err := s.Until(context.Background(), next); err != nil {
					b.Fatal(err)
				}
				late = append(late, time.Since(next))
			}
			slices.Sort(late)
			b.ReportMetric(float64(late[len(late)/2].Microseconds()), "p50-late-us")
			b.ReportMetric(float64(late[len(late)*99/100].Microseconds()), "p99-late-us")
		})
	}
}
