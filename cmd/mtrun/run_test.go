package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/sim"
)

// convJSONL renders n conversations of turns user turns, each answer
// asking for outTokens tokens.
func convJSONL(n, turns, outTokens int) string {
	var b strings.Builder
	w := conv.NewWriter(&b)
	for i := range n {
		c := conv.Conversation{ID: fmt.Sprintf("conv-%d", i)}
		for k := range turns {
			c.Messages = append(c.Messages,
				conv.Message{Role: conv.RoleUser, Content: fmt.Sprintf("question %d of conversation %d", k, i)},
				conv.Message{Role: conv.RoleAssistant, Content: "dataset answer", OutputTokens: outTokens})
		}
		w.Write(&c)
	}
	return b.String()
}

func startSim(t *testing.T, cfg sim.Config) *sim.Running {
	t.Helper()
	srv, err := sim.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// readRecords decodes JSONL records, failing on any bad line.
func readRecords(t *testing.T, data []byte, name string) []record.Record {
	t.Helper()
	d := record.NewJSONDecoder(bytes.NewReader(data), name)
	var out []record.Record
	for d.Scan() {
		if err := d.Err(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, *d.Record())
	}
	if err := d.Err(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}

// readFiles reads records the way mtstats does (a Parquet records
// "file" is a directory of parts), failing on any problem.
func readFiles(t *testing.T, path string) []record.Record {
	t.Helper()
	f := &record.Files{Paths: []string{path}}
	defer f.Close()
	var out []record.Record
	for f.Scan() {
		if err := f.Err(); err != nil {
			t.Fatal(err)
		}
		out = append(out, *f.Record())
	}
	if err := f.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// readConvs decodes a conversations file, failing on any bad line.
func readConvs(t *testing.T, path string) []conv.Conversation {
	t.Helper()
	out, err := conv.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRunOutputs replays against the simulator (which requires the API
// key) and checks every output: records on stdout or in a file, the
// manifest, the conversations with real answers, and that the key is
// written nowhere.
func TestRunOutputs(t *testing.T) {
	t.Parallel()
	const key = "sk-test-0123456789-secret"
	srv := startSim(t, sim.Config{APIKey: key})
	for _, tc := range []struct {
		name    string
		records string // file name under the temp dir; "" for stdout
		extra   []string
	}{
		{"stdout", "", []string{"--tokenizer", "none"}},
		{"jsonl zst", "recs.jsonl.zst", []string{"--tokenizer", "none", "--clients", "3"}},
		{"parquet", "recs.parquet", []string{"--no-stream", "--clients", "2", "--header", "X-Trace: 1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			convOut := filepath.Join(dir, "out.jsonl")
			args := append([]string{"--url", srv.URL, "--api-key", key, "-o", convOut, "--run-id", "run-" + tc.name}, tc.extra...)
			if tc.records != "" {
				args = append(args, "--records", filepath.Join(dir, tc.records))
			}
			got := runMtrun(t, convJSONL(3, 3, 4), nil, args...)
			if got.code != 0 {
				t.Fatalf("exit %d: %s", got.code, got.stderr)
			}
			var recs []record.Record
			var manifestPath string
			switch {
			case tc.records == "":
				recs = readRecords(t, got.stdoutBytes, "stdout")
			case strings.HasSuffix(tc.records, ".parquet"):
				if got.stdout != "" {
					t.Errorf("stdout %q with --records FILE", got.stdout)
				}
				recs = readFiles(t, filepath.Join(dir, tc.records))
				manifestPath = filepath.Join(dir, "recs.manifest.json")
			default:
				recs = readFiles(t, filepath.Join(dir, tc.records))
				manifestPath = filepath.Join(dir, "recs.manifest.json")
			}
			if len(recs) != 9 {
				t.Fatalf("%d records, want 9", len(recs))
			}
			for i, r := range recs {
				if !r.OK() || r.RunID != "run-"+tc.name || r.Seq != int64(i) || r.Model != sim.DefaultModel || r.CompletionTokens == nil || *r.CompletionTokens != 4 {
					t.Errorf("record %d: %+v", i, r)
				}
			}
			if !strings.Contains(got.stderr, "mtrun: run run-"+tc.name+" model mtkit-sim: 9 requests (0 failed, 0 retries)") {
				t.Errorf("summary missing from stderr: %q", got.stderr)
			}
			outputs := []string{got.stdout, got.stderr}
			if manifestPath != "" {
				b, err := os.ReadFile(manifestPath)
				if err != nil {
					t.Fatal(err)
				}
				var m map[string]any
				if err := json.Unmarshal(b, &m); err != nil {
					t.Fatalf("manifest: %v", err)
				}
				if m["run_id"] != "run-"+tc.name || m["input_sha256"] == "" || m["summary"] == nil {
					t.Errorf("manifest %s", b)
				}
				outputs = append(outputs, string(b))
			}
			convs := readConvs(t, convOut)
			if len(convs) != 3 {
				t.Fatalf("%d conversations written", len(convs))
			}
			for _, c := range convs {
				if len(c.Messages) != 6 || c.Messages[1].Content == "dataset answer" || c.Meta["status"] != "finished" {
					t.Errorf("conversation %+v", c)
				}
			}
			b, _ := os.ReadFile(convOut)
			outputs = append(outputs, string(b))
			for _, o := range outputs {
				if strings.Contains(o, key) {
					t.Errorf("the API key leaked: %s", o)
				}
			}
		})
	}
}

// TestRunSimAndWarmupStep uses the built-in simulator and vLLM's warmup
// step: the first turn of every conversation goes first, as warmup.
func TestRunSimAndWarmupStep(t *testing.T) {
	t.Parallel()
	got := runMtrun(t, convJSONL(3, 2, 2), nil, "--sim", "--sim-config", "ttft=1ms,decode=1ms", "--warmup-step", "--tokenizer", "none", "--quiet")
	if got.code != 0 {
		t.Fatalf("exit %d: %s", got.code, got.stderr)
	}
	if got.stderr != "" {
		t.Errorf("--quiet wrote %q", got.stderr)
	}
	recs := readRecords(t, got.stdoutBytes, "stdout")
	if len(recs) != 9 {
		t.Fatalf("%d records, want 3 warmup + 6", len(recs))
	}
	for i, r := range recs {
		wantPhase := record.PhaseMeasure
		if i < 3 {
			wantPhase = record.PhaseWarmup
		}
		if r.Phase != wantPhase || r.Seq != int64(i) || !r.OK() || (i < 3 && r.Turn != 0) {
			t.Errorf("record %d: phase %s seq %d turn %d ok %v", i, r.Phase, r.Seq, r.Turn, r.OK())
		}
	}
}

// TestRunErrors checks failures that are not usage errors: exit 1 and a
// message on stderr.
func TestRunErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		want  string
	}{
		{"bad input", "{not json}\n", []string{"--url", "http://127.0.0.1:1", "--tokenizer", "none"}, "stdin:1"},
		{"empty input", "", []string{"--url", "http://127.0.0.1:1", "--tokenizer", "none"}, "no conversations"},
		{"missing file", "", []string{"--url", "http://127.0.0.1:1", "--tokenizer", "none", "/nonexistent/x.jsonl"}, "x.jsonl"},
		{"server down", convJSONL(1, 1, 1), []string{"--url", "http://127.0.0.1:1", "--tokenizer", "none"}, "cannot reach the server at http://127.0.0.1:1/v1"},
		{"server down, model given", convJSONL(16, 4, 1), []string{"--url", "http://127.0.0.1:1", "--tokenizer", "none", "--model", "m"}, "cannot reach the server at http://127.0.0.1:1/v1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := runMtrun(t, tc.stdin, nil, tc.args...)
			code := 1
			if tc.name == "bad input" || tc.name == "empty input" {
				code = 2 // a bad input is a usage error
			}
			if got.code != code || got.stdout != "" || !strings.Contains(got.stderr, tc.want) || !strings.HasPrefix(got.stderr, "mtrun: ") {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d and %q", got.code, got.stdout, got.stderr, code, tc.want)
			}
		})
	}
}

// waitFor polls cond until it holds or fails the test after 20s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// interrupt sends s to a running mtrun and returns its result, failing
// unless it exits with 130 within the given time.
func interrupt(t *testing.T, sig chan<- os.Signal, s os.Signal, done <-chan invocation, within time.Duration) invocation {
	t.Helper()
	sig <- s
	select {
	case got := <-done:
		if got.code != command.ExitInterrupted {
			t.Fatalf("exit %d after %v, want 130; stderr %s", got.code, s, got.stderr)
		}
		return got
	case <-time.After(within):
		t.Fatalf("mtrun still running %v after %v", within, s)
	}
	return invocation{}
}

// TestInterruptOnce sends one interrupt mid-run: no new turn starts, the
// requests in flight finish and are recorded, every output is complete and
// valid, and the exit code is 130.
func TestInterruptOnce(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"jsonl", "parquet"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			srv := startSim(t, sim.Config{DecodePerToken: 15 * time.Millisecond})
			dir := t.TempDir()
			recPath := filepath.Join(dir, "recs."+format)
			convOut := filepath.Join(dir, "convs.jsonl")
			sig := make(chan os.Signal, 2)
			done := make(chan invocation, 1)
			go func() {
				done <- runMtrun(t, convJSONL(6, 4, 8), sig, "--url", srv.URL, "--tokenizer", "none", "--clients", "3",
					"--records", recPath, "-o", convOut)
			}()
			waitFor(t, "3 completed requests", func() bool {
				st := srv.Server.Stats()
				return st.Completed >= 3 && st.Running > 0
			})
			before := srv.Server.Stats().Requests
			got := interrupt(t, sig, os.Interrupt, done, 20*time.Second)
			if !strings.Contains(got.stderr, "interrupted") {
				t.Errorf("stderr %q", got.stderr)
			}
			var recs []record.Record
			if format == "parquet" {
				recs = readFiles(t, recPath)
			} else {
				b, err := os.ReadFile(recPath)
				if err != nil {
					t.Fatal(err)
				}
				recs = readRecords(t, b, recPath)
			}
			st := srv.Server.Stats()
			if uint64(len(recs)) != st.Requests || st.Completed != st.Requests {
				t.Errorf("%d records, server got %d requests and completed %d: every request must be recorded and finished", len(recs), st.Requests, st.Completed)
			}
			if uint64(len(recs)) > before+3 || len(recs) >= 24 {
				t.Errorf("%d records; %d requests before the interrupt: new turns started after it", len(recs), before)
			}
			for _, r := range recs {
				if !r.OK() {
					t.Errorf("in-flight request not finished: %+v", r)
				}
			}
			convs := readConvs(t, convOut)
			if len(convs) == 0 || len(convs) > 6 {
				t.Errorf("%d conversations written", len(convs))
			}
			if _, err := os.Stat(filepath.Join(dir, "recs.manifest.json")); err != nil {
				t.Errorf("no manifest: %v", err)
			}
		})
	}
}

// TestInterruptTwice sends a second interrupt: the requests in flight are
// cancelled and recorded with error class "canceled".
func TestInterruptTwice(t *testing.T) {
	t.Parallel()
	srv := startSim(t, sim.Config{DecodePerToken: 100 * time.Millisecond})
	dir := t.TempDir()
	recPath := filepath.Join(dir, "recs.parquet")
	sig := make(chan os.Signal, 2)
	done := make(chan invocation, 1)
	go func() {
		done <- runMtrun(t, convJSONL(4, 3, 200), sig, "--url", srv.URL, "--tokenizer", "none", "--clients", "3", "--records", recPath)
	}()
	waitFor(t, "3 requests running", func() bool { return srv.Server.Stats().Running == 3 })
	// The signals are taken in order; the requests in flight stream for
	// 20 s, so canceled records show that the second one cancelled them.
	sig <- os.Interrupt
	sig <- syscall.SIGTERM
	var got invocation
	select {
	case got = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("mtrun did not return after a second interrupt")
	}
	if got.code != command.ExitInterrupted {
		t.Fatalf("exit %d, want 130; stderr %s", got.code, got.stderr)
	}
	recs := readFiles(t, recPath)
	if len(recs) != 3 {
		t.Fatalf("%d records, want the 3 in flight", len(recs))
	}
	for _, r := range recs {
		// Whether a chunk arrived before the cancel depends on the
		// machine; the record is a canceled first turn either way.
		if r.ErrorClass != record.ErrCanceled || r.Retried || r.Turn != 0 {
			t.Errorf("record %+v, want a canceled first turn", r)
		}
	}
}
