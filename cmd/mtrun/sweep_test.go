package main

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mtkit/mtkit/internal/schedule"
	"github.com/mtkit/mtkit/internal/sweep"
)

// TestSweepUsage checks the usage errors of --sweep and its flags.
func TestSweepUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"bad kind", []string{"--sweep", "sessions"}, `--sweep "sessions": want clients, users, rate or active`},
		{"active without clients", []string{"--sweep", "active"}, "--sweep active: give --clients"},
		{"active below the clients", []string{"--sweep", "active", "--clients", "4", "--sweep-start", "2"}, `stage 1 "active=2:0s": 2 active conversations for 4 clients`},
		{"active with --active", []string{"--sweep", "active", "--clients", "4", "--active", "8"}, "it excludes --active"},
		{"active with an SLO", []string{"--sweep", "active", "--clients", "4", "--slo", "ttft_p95<=2s"}, "--sweep active is judged on how much"},
		{"active with stages", []string{"--sweep", "active", "--clients", "4", "--stages", "active=4:1s"}, "it excludes --stages"},
		{"users without gap", []string{"--sweep", "users"}, "--sweep users: give --user-gap"},
		{"gap without users", []string{"--sweep", "clients", "--user-gap", "1s"}, "--user-gap is for users stages"},
		{"with clients", []string{"--sweep", "clients", "--clients", "3"}, "--sweep sets the load and the run's length; it excludes --clients"},
		{"slo without sweep", []string{"--slo", "ttft_p95<=2s"}, "--slo needs --sweep"},
		{"bad slo", []string{"--sweep", "rate", "--slo", "ttft<=2s"}, "--slo: "},
		{"bad duration", []string{"--sweep", "rate", "--stage-duration", "1s", "--stage-warmup", "2s"}, "warmup 2s leaves nothing"},
		{"with segment", []string{"--sweep", "clients", "--segment", "1/2", "--run-id", "r"}, "which a process split with --segment/--segments cannot see"},
		{"max below start", []string{"--sweep", "clients", "--sweep-start", "4", "--sweep-max", "2"}, "--sweep-max 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := runMtrun(t, "", nil, append([]string{"--url", "http://127.0.0.1:1"}, tc.args...)...)
			if got.code != 2 || got.stdout != "" || !strings.HasPrefix(got.stderr, "mtrun: ") || !strings.Contains(got.stderr, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %q", got.code, got.stdout, got.stderr, tc.want)
			}
		})
	}
}

// TestSweepWiring checks the sweep's settings as parsed from the
// command line: the planner (kind, levels, stage length, criteria,
// objectives) and the run's schedule, which each stage replaces (the
// stages' schedules: internal/mtrun's TestStaged). Whether a sweep finds a
// server's capacity is a timing judgement: mtbench's sweep section.
func TestSweepWiring(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want sweep.Planner
		objs int
	}{
		{"clients with an SLO", []string{"--sweep", "clients", "--slo", "ttft_p95<=70ms", "--stage-duration", "3s", "--stage-warmup", "500ms", "--sweep-unsteady", "0.3"},
			sweep.Planner{Kind: sweep.Clients, Start: 1, MaxStages: 12, Duration: 3 * time.Second, Warmup: 500 * time.Millisecond, Criteria: sweep.Criteria{Unsteady: 0.3}, Objectives: true}, 1},
		{"users", []string{"--sweep", "users", "--user-gap", "100ms", "--sweep-start", "2", "--sweep-max", "4", "--stage-duration", "1s", "--stage-warmup", "200ms", "--sweep-unsteady", "0.5", "--sweep-stages", "3"},
			sweep.Planner{Kind: sweep.Users, Start: 2, Max: 4, MaxStages: 3, Duration: time.Second, Warmup: 200 * time.Millisecond, Criteria: sweep.Criteria{Unsteady: 0.5}}, 0},
		{"active", []string{"--sweep", "active", "--clients", "4", "--stage-duration", "20s", "--stage-warmup", "2s", "--sweep-max", "64"},
			sweep.Planner{Kind: sweep.Active, Clients: 4, Start: 4, Max: 64, MaxStages: 12, Duration: 20 * time.Second, Warmup: 2 * time.Second, Criteria: sweep.Criteria{Unsteady: 0.15}}, 0},
		{"active from 16", []string{"--sweep", "active", "--clients", "2", "--sweep-start", "16"},
			sweep.Planner{Kind: sweep.Active, Clients: 2, Start: 16, MaxStages: 12, Duration: 30 * time.Second, Warmup: 5 * time.Second, Criteria: sweep.Criteria{Unsteady: 0.15}}, 0},
		{"constant rate", []string{"--sweep", "rate", "--arrival", "constant", "--seed", "7", "--sweep-start", "0.5"},
			sweep.Planner{Kind: sweep.Rate, Start: 0.5, MaxStages: 12, Duration: 30 * time.Second, Warmup: 5 * time.Second, Criteria: sweep.Criteria{Unsteady: 0.15}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := parse(t, tc.args...)
			if err := o.Plan(); err != nil {
				t.Fatal(err)
			}
			sw := o.Stage.Sweep
			if sw == nil {
				t.Fatal("no sweep")
			}
			if diff := cmp.Diff(tc.want, sw.Planner); diff != "" {
				t.Errorf("planner (-want +got):\n%s", diff)
			}
			if len(sw.Objectives) != tc.objs {
				t.Errorf("%d objectives, want %d", len(sw.Objectives), tc.objs)
			}
			// The manifest names it "sweep" (internal/mtrun's
			// TestManifestLoadSettings).
			if _, closed := o.Replay.Schedule.(schedule.Closed); !closed {
				t.Errorf("run schedule %#v; want the closed loop of --clients (each stage replaces it)", o.Replay.Schedule)
			}
		})
	}
}
