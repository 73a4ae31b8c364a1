package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mtkit/mtkit/internal/clitest"
	"github.com/mtkit/mtkit/internal/manifest"
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := mtrun(t, "", nil, append([]string{"--url", "http://127.0.0.1:1"}, tc.args...)...)
			if got.code != 2 || got.stdout != "" || !strings.HasPrefix(got.stderr, "mtrun: ") || strings.Count(got.stderr, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line on stderr", got.code, got.stdout, got.stderr)
			}
			clitest.Golden(t, filepath.Join("testdata", tc.name+".stderr"), []byte(got.stderr))
		})
	}
}

// TestStagesSim runs two stages of closed lanes against the simulator:
// every record carries its stage, in order of intended send time; the
// first stage (1 client) uses lane 0 only, the second (3 clients) all
// three; only the second stage has warmup records, before its measured
// ones; the manifest names the schedule.
func TestStagesSim(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(in, []byte(convJSONL(4, 3, 8)), 0o644); err != nil {
		t.Fatal(err)
	}
	recsPath := filepath.Join(dir, "recs.jsonl")
	got := mtrun(t, "", nil, "--sim", "--sim-config", "ttft=2ms,decode=1ms", "--tokenizer", "none", "--quiet",
		"--stages", "clients=1:400ms,clients=3:400ms:100ms", "--records", recsPath, in)
	if got.code != 0 {
		t.Fatalf("exit %d: %s", got.code, got.stderr)
	}
	recs := readFiles(t, recsPath)
	start := runStart(recs)
	clients := map[int]map[int]bool{1: {}, 2: {}}
	warm := map[int]int{}
	for _, r := range recs {
		at := r.Scheduled.Sub(start)
		if r.Stage != 1 && r.Stage != 2 {
			t.Fatalf("record %d in stage %d", r.Seq, r.Stage)
		}
		// Off by the run's first milliseconds at most (more on a loaded
		// machine): the first turn's intended time is when lane 0 took
		// its session, the stage boundary counts from the run's start.
		if st := 1 + int(at*10/4/1e9); st <= 2 && (at < 350e6 || at > 450e6) && st != r.Stage {
			t.Errorf("record %d intended at +%v is in stage %d, want %d", r.Seq, at, r.Stage, st)
		}
		clients[r.Stage][r.Client] = true
		if want := fmt.Sprintf("clients=%d", 2*r.Stage-1); r.StageLoad != want {
			t.Errorf("record %d of stage %d has stage_load %q, want %q", r.Seq, r.Stage, r.StageLoad, want)
		}
		if !r.Measured() {
			warm[r.Stage]++
			if at > 550e6 {
				t.Errorf("record %d intended at +%v is warmup; stage 2's warmup ends at +500ms", r.Seq, at)
			}
		}
	}
	if len(clients[1]) != 1 || !clients[1][0] || len(clients[2]) != 3 {
		t.Errorf("clients per stage %v; want lane 0 in stage 1, lanes 0-2 in stage 2", clients)
	}
	if warm[1] != 0 || warm[2] == 0 {
		t.Errorf("warmup records per stage %v; want some in stage 2 only", warm)
	}
	if s := manifestSettings(t, recsPath); s["schedule"] != "stages" {
		t.Errorf("manifest schedule %v, want stages", s["schedule"])
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
