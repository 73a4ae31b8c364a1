package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mtkit/mtkit/internal/clitest"
	"github.com/mtkit/mtkit/internal/manifest"
	"github.com/mtkit/mtkit/internal/schedule"
)

// TestStagesUsage checks the usage errors of --stages: one line on
// stderr naming the stage and the problem, exit 2.
func TestStagesUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"stages-bad-level", []string{"--stages", "clients=1.5:10s"}},
		{"stages-two-kinds", []string{"--stages", "clients=2:10s,rate=3:10s"}},
		{"stages-users-no-gap", []string{"--stages", "users=2:10s"}},
		{"stages-gap-for-clients", []string{"--stages", "clients=2:10s", "--user-gap", "1s"}},
		{"stages-and-clients", []string{"--stages", "clients=2:10s", "--clients", "4"}},
		{"stages-active-no-clients", []string{"--stages", "active=2:10s"}},
		{"stages-active-below-clients", []string{"--stages", "active=8:10s,active=2:10s", "--clients", "4"}},
		{"stages-active-and-active", []string{"--stages", "active=8:10s", "--clients", "4", "--active", "8"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := runMtrun(t, "", nil, append([]string{"--url", "http://127.0.0.1:1"}, tc.args...)...)
			if got.code != 2 || got.stdout != "" || !strings.HasPrefix(got.stderr, "mtrun: ") || strings.Count(got.stderr, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line on stderr", got.code, got.stdout, got.stderr)
			}
			clitest.Golden(t, filepath.Join("testdata", tc.name+".stderr"), []byte(got.stderr))
		})
	}
}

// TestStagesWiring checks --stages as parsed from the command line: the
// staged schedule (kind, levels, warmups, arrivals, seed, gap), looping
// until the last stage ends, and the manifest's schedule name. Which
// records a stage gets on a real clock is a timing judgement: mtbench's
// sweep section runs a staged replay.
func TestStagesWiring(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want schedule.Staged
	}{
		{"clients", []string{"--stages", "clients=1:400ms,clients=3:400ms:100ms"},
			schedule.Staged{Levels: []schedule.Level{{Level: 1, Duration: 400 * time.Millisecond}, {Level: 3, Duration: 400 * time.Millisecond, Warmup: 100 * time.Millisecond}}, Poisson: true, First: 1}},
		{"constant rate", []string{"--stages", "rate=2:10s,rate=4:10s:2s", "--arrival", "constant", "--seed", "9"},
			schedule.Staged{Rate: true, Levels: []schedule.Level{{Level: 2, Duration: 10 * time.Second}, {Level: 4, Duration: 10 * time.Second, Warmup: 2 * time.Second}}, Seed: 9, First: 1}},
		{"active", []string{"--stages", "active=2:10s,active=8:1m:5s", "--clients", "2"},
			schedule.Staged{Lanes: 2, Levels: []schedule.Level{{Level: 2, Duration: 10 * time.Second}, {Level: 8, Duration: time.Minute, Warmup: 5 * time.Second}}, Poisson: true, First: 1}},
		{"users", []string{"--stages", "users=2:10s,users=5:1m", "--user-gap", "2s"},
			schedule.Staged{Gap: 2 * time.Second, Levels: []schedule.Level{{Level: 2, Duration: 10 * time.Second}, {Level: 5, Duration: time.Minute}}, Poisson: true, First: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := parse(t, tc.args...)
			if err := o.Plan(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(schedule.Schedule(tc.want), o.Replay.Schedule); diff != "" {
				t.Errorf("schedule (-want +got):\n%s", diff)
			}
			if !o.Replay.Loop || o.Replay.Shape().Name() != "stages" {
				t.Errorf("loop %v, schedule name %q; want a loop named stages", o.Replay.Loop, o.Replay.Shape().Name())
			}
		})
	}
}

// manifestSettings reads the settings of the manifest next to the
// records file recsPath.
func manifestSettings(t *testing.T, recsPath string) map[string]any {
	t.Helper()
	var m struct{ Settings map[string]any }
	data, err := os.ReadFile(manifest.Path("", recsPath))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m.Settings
}
