package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/replay/openai"
	"github.com/mtkit/mtkit/internal/schedule"
)

// TestWrite writes a manifest before and after a run and reads it back:
// the settings, header names without values, the redactor applied, the
// summary and end time added by Finish.
func TestWrite(t *testing.T) {
	t.Parallel()
	r := &Options{RunID: "r1", URL: "http://h:1", Schedule: schedule.Closed{Clients: 4}, Headers: http.Header{"X-B": {"secret"}, "X-A": {"s2"}}}
	started := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	m := NewManifest(r, started, "v1", map[string]any{"sim_config": "preset=zero"})
	path := filepath.Join(t.TempDir(), "m.json")
	redact := func(b []byte) ([]byte, error) {
		return bytes.ReplaceAll(b, []byte("http://h:1"), []byte("http://REDACTED")), nil
	}
	if err := m.Write(path, nil, redact); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	read := func() {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("secret")) {
			t.Errorf("a header value was written: %s", b)
		}
		got = nil
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
	}
	read()
	s := got["settings"].(map[string]any)
	if s["clients"] != 4.0 || s["sim_config"] != "preset=zero" || got["url"] != "http://REDACTED" || got["ended"] != nil {
		t.Errorf("before the run: %v", got)
	}
	if h := s["headers"].([]any); len(h) != 2 || h[0] != "X-A" || h[1] != "X-B" {
		t.Errorf("headers %v, want [X-A X-B]", h)
	}
	FinishManifest(m, &Summary{RunID: "r1", Model: "m", Elapsed: time.Minute, Requests: 9, Started: 3, Finished: 2, Unfinished: 1,
		Verified: 9, Mismatched: 9, FirstMismatch: &TurnRef{Conversation: "c1", Turn: 0}})
	if err := m.Write(path, nil, redact); err != nil {
		t.Fatal(err)
	}
	read()
	if got["ended"] != "2026-11-23T12:01:00Z" || got["model"] != "m" || got["summary"] == nil {
		t.Errorf("after the run: ended %v, model %v, summary %v", got["ended"], got["model"], got["summary"])
	}
	// Issue 23: the summary's keys were Go's (RunID, Elapsed in ns).
	sum, _ := got["summary"].(map[string]any)
	convs, _ := sum["conversations"].(map[string]any)
	if sum["requests"] != 9.0 || sum["elapsed_s"] != 60.0 || sum["Requests"] != nil || sum["Elapsed"] != nil ||
		convs["started"] != 3.0 || convs["finished"] != 2.0 || convs["unfinished"] != 1.0 || convs["failed"] != 0.0 {
		t.Errorf("summary %v", sum)
	}
	if v, _ := sum["verify_output"].(map[string]any); v["compared"] != 9.0 || v["mismatched"] != 9.0 || v["first_mismatch"] == nil {
		t.Errorf("summary verify_output %v", sum["verify_output"])
	}
	var out bytes.Buffer
	if err := m.Write("-", &out, redact); err != nil || !bytes.Contains(out.Bytes(), []byte(`"run_id": "r1"`)) {
		t.Errorf("to stdout: %v, %q", err, out.String())
	}
	if err := m.Write(path, nil, func([]byte) ([]byte, error) { return nil, errors.New("boom") }); err == nil {
		t.Error("a redactor error was not returned")
	}
}

// TestSettingsApplied: the manifest shows the settings that applied to
// the run and no others (issue 23: poisson: true in a closed-loop run,
// time_scale 0 when the trace clock was not scaled).
func TestSettingsApplied(t *testing.T) {
	t.Parallel()
	started := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	extra := map[string]any{"time_scale": 0.0, "users": 0, "user_gap": "0s", "schedule": "closed"}
	for _, tc := range []struct {
		name     string
		r        Options
		has, not []string
	}{
		{"closed", Options{Schedule: schedule.Closed{Clients: 8, Sessions: 16}},
			[]string{"clients", "active", "sampling", "schedule"}, []string{"rate", "poisson", "max_concurrency", "time_scale", "users", "user_gap", "duration", "max_requests", "loop"}},
		{"open", Options{Schedule: schedule.Rate{PerSecond: 2, Poisson: true}, MaxRequests: 90},
			[]string{"rate", "poisson", "max_requests"}, []string{"clients", "active", "sampling", "max_concurrency"}},
	} {
		m := NewManifest(&tc.r, started, "v1", extra)
		for _, k := range tc.has {
			if _, ok := m.Settings[k]; !ok {
				t.Errorf("%s: settings lack %s: %v", tc.name, k, m.Settings)
			}
		}
		for _, k := range tc.not {
			if v, ok := m.Settings[k]; ok {
				t.Errorf("%s: settings hold %s = %v, which did not apply", tc.name, k, v)
			}
		}
	}
}

// TestSettingsUserTurns: the manifest's limit on user turns is
// max_user_turns; max_turns, its old name, stays equal to it, though
// mtrun --max-turns counts messages (issue 23: the manifest said
// max_turns 3 for --max-turns 6).
func TestSettingsUserTurns(t *testing.T) {
	t.Parallel()
	m := NewManifest(&Options{MaxTurns: 3}, time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC), "v1", nil)
	if m.Settings["max_user_turns"] != 3 || m.Settings["max_turns"] != 3 {
		t.Errorf("settings %v: want max_user_turns 3 and its old name max_turns 3", m.Settings)
	}
}

// TestSettingsAsRun: the manifest's settings are those the run applies,
// defaults included: the closed loop's lanes and sessions as the
// schedule counts them (one piece of code, schedule.Closed, decides
// both), the API, failure policy, request timeout and sampling the
// replay fills in when the options leave them out, and a staged run's
// end at its last stage.
func TestSettingsAsRun(t *testing.T) {
	t.Parallel()
	staged := schedule.Staged{Levels: []schedule.Level{{Level: 1, Duration: 10 * time.Second}, {Level: 3, Duration: 20 * time.Second}}}
	for _, tc := range []struct {
		name string
		r    Options
		want map[string]any
	}{
		{"no options", Options{},
			map[string]any{"clients": 1, "active": 1, "sampling": SampleRoundRobin, "api": openai.APIChat, "n": 1,
				"on_failure": ContinueConversation, "request_timeout": "10m0s"}},
		{"clients 0", Options{Schedule: schedule.Closed{Sessions: 5}}, map[string]any{"clients": 1, "active": 5}},
		{"clients 1", Options{Schedule: schedule.Closed{Clients: 1}}, map[string]any{"clients": 1, "active": 1}},
		{"active below clients", Options{Schedule: schedule.Closed{Clients: 4, Sessions: 2}}, map[string]any{"clients": 4, "active": 4}},
		{"given", Options{Schedule: schedule.Closed{Clients: 3, Sessions: 7}, Sampling: SampleRandom, API: openai.APICompletions, N: 2,
			OnFailure: AbandonConversation, RequestTimeout: time.Minute},
			map[string]any{"clients": 3, "active": 7, "sampling": SampleRandom, "api": openai.APICompletions, "n": 2,
				"on_failure": AbandonConversation, "request_timeout": "1m0s"}},
		{"stages end the run", Options{Schedule: staged, Loop: true}, map[string]any{"loop": true, "duration": "30s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := NewManifest(&tc.r, time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC), "v1", nil)
			for k, want := range tc.want {
				if got := m.Settings[k]; got != want {
					t.Errorf("%s = %#v, want %#v", k, got, want)
				}
			}
			c, ok := tc.r.Shape().(schedule.Closed)
			if !ok {
				return
			}
			sessions := 0
			for u := range c.Users() {
				sessions += c.Active(u)
			}
			if m.Settings["clients"] != c.Users() || m.Settings["active"] != sessions {
				t.Errorf("clients %v, active %v; the run has %d lanes keeping %d sessions in progress",
					m.Settings["clients"], m.Settings["active"], c.Users(), sessions)
			}
		})
	}
}
