package mtrun

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/manifest"
	"github.com/mtkit/mtkit/internal/replay"
	"github.com/mtkit/mtkit/internal/schedule"
	"github.com/mtkit/mtkit/internal/sweep"
)

// TestArgRedactions: the manifest's command line shows --metrics-url
// without its user name and password.
func TestArgRedactions(t *testing.T) {
	t.Parallel()
	args := manifest.RedactArgs([]string{"mtrun", "--metrics-url", "http://u:pw-secret@h/metrics", "--metrics-url=http://v:pw-secret@h2/m", "x.jsonl"}, argRedactions)
	if want := "mtrun --metrics-url http://h/metrics --metrics-url=http://h2/m x.jsonl"; strings.Join(args, " ") != want {
		t.Errorf("redactArgs: %q, want %q", args, want)
	}
}

// TestManifestLoadSettings: the manifest's closed-loop and rate settings
// are those that applied to the whole run: a sweep's stages each replace
// the run's schedule, so a sweep has none of them, as a --stages run
// (a rate sweep's manifest said clients 1, active 1).
func TestManifestLoadSettings(t *testing.T) {
	t.Parallel()
	load := []string{"clients", "active", "sampling", "rate", "poisson"}
	for _, tc := range []struct {
		name  string
		o     Options
		named string
		has   []string
	}{
		{"closed", Options{Replay: replay.Options{Schedule: schedule.Closed{Clients: 4, Sessions: 8}}}, "closed", []string{"clients", "active", "sampling"}},
		{"rate", Options{Replay: replay.Options{Schedule: schedule.Rate{PerSecond: 2, Poisson: true}}}, "rate", []string{"rate", "poisson"}},
		{"clients sweep", Options{Replay: replay.Options{Schedule: schedule.Closed{Clients: 1}}, Stage: StageSettings{Sweep: &SweepSettings{Planner: sweep.Planner{Kind: sweep.Clients}}}}, "sweep", nil},
		{"rate sweep", Options{Replay: replay.Options{Schedule: schedule.Closed{Clients: 1}}, Stage: StageSettings{Sweep: &SweepSettings{Planner: sweep.Planner{Kind: sweep.Rate}}}}, "sweep", nil},
		{"stages", Options{Replay: replay.Options{Schedule: schedule.Staged{Rate: true, Levels: []schedule.Level{{Level: 2, Duration: time.Second}}}}}, "stages", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := tc.o
			o.manifest = filepath.Join(t.TempDir(), "m.json")
			if err := writeManifest(&o, nil, "", time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC), io.Discard); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(o.manifest)
			if err != nil {
				t.Fatal(err)
			}
			var m struct{ Settings map[string]any }
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			if m.Settings["schedule"] != tc.named {
				t.Errorf("schedule %v, want %s", m.Settings["schedule"], tc.named)
			}
			for _, k := range load {
				if _, ok := m.Settings[k]; ok != slices.Contains(tc.has, k) {
					t.Errorf("settings have %s: %v (%v); want %v", k, ok, m.Settings[k], !ok)
				}
			}
		})
	}
}
