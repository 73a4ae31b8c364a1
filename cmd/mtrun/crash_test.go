package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/clitest"
	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/sim"
)

// TestMain lets the tests run this test binary as mtrun itself (real
// process, real signals): with MTRUN_TEST_AS_MTRUN=1 it is main().
func TestMain(m *testing.M) {
	if os.Getenv("MTRUN_TEST_AS_MTRUN") == "1" {
		main()
	}
	code := m.Run()
	if mtstatsBuild.dir != "" {
		os.RemoveAll(mtstatsBuild.dir) // excel_test.go
	}
	os.Exit(code)
}

// startProcess runs mtrun as a child process.
func startProcess(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "MTRUN_TEST_AS_MTRUN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, &stderr
}

// readLenient reads what a reader can get from records left by a killed
// process: the records before the first problem (a cut last line or
// frame), which it returns.
func readLenient(path string) ([]record.Record, error) {
	f := &record.Files{Paths: []string{path}}
	defer f.Close()
	var out []record.Record
	for f.Scan() {
		if err := f.Err(); err != nil {
			return out, err
		}
		out = append(out, *f.Record())
	}
	return out, f.Err()
}

// TestSIGKILL kills mtrun (as the OOM killer would) in the middle of a
// run: every record readable before the kill must stay readable by the
// project's reader, and by DuckDB for Parquet, without a repair step.
// How soon a record becomes readable depends on the clock and is not
// judged here: the test waits for the records of the requests the server
// completed, then kills.
func TestSIGKILL(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"recs.jsonl", "recs.jsonl.gz", "recs.jsonl.zst", "recs.parquet"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := startSim(t, sim.Config{DecodePerToken: 5 * time.Millisecond})
			dir := t.TempDir()
			in := filepath.Join(dir, "convs.jsonl")
			if err := os.WriteFile(in, []byte(convJSONL(8, 20, 8)), 0o644); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, name)
			cmd, stderr := startProcess(t, "--url", srv.URL, "--tokenizer", "none", "--clients", "4", "--loop",
				"--duration", "5m", "--records", path, "-o", filepath.Join(dir, "out.jsonl.zst"), in)
			// Wait until records show up in the file.
			deadline := time.Now().Add(60 * time.Second)
			for {
				recs, _ := readLenient(path)
				if len(recs) >= 10 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no records in %s after 60 s; stderr: %s", path, stderr)
				}
				time.Sleep(50 * time.Millisecond)
			}
			// The requirement: what was measured before the kill
			// survives it. The requests the server has completed are
			// waited for in the file (mtrun flushes each record within
			// about a second), not for a fixed time.
			done := srv.Server.Stats().Completed
			for {
				recs, _ := readLenient(path)
				if uint64(len(recs)) >= done {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%d requests completed, only %d records readable after 60 s; stderr: %s", done, len(recs), stderr)
				}
				time.Sleep(50 * time.Millisecond)
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatalf("mtrun ended before the kill: %v; stderr: %s", err, stderr)
			}
			cmd.Wait()
			recs, err := readLenient(path)
			t.Logf("%d requests readable before the kill, %d records readable after it (reader stopped at: %v)", done, len(recs), err)
			if uint64(len(recs)) < done {
				t.Errorf("%d records readable, want at least the %d readable before the kill", len(recs), done)
			}
			for i, r := range recs {
				if r.Seq != int64(i) || !r.OK() {
					t.Errorf("record %d: seq %d, error %q", i, r.Seq, r.Error)
					break
				}
			}
			if strings.HasSuffix(name, ".parquet") {
				if err != nil {
					t.Errorf("Parquet parts: %v", err)
				}
				n := duckdbCount(t, filepath.Join(path, "*.parquet"))
				t.Logf("DuckDB reads %d rows", n)
				if n < int64(done) {
					t.Errorf("DuckDB reads %d rows, want at least %d", n, done)
				}
			}
		})
	}
}

// duckdbDir is the npm fixture directory holding @duckdb/node-api
// (scripts/fixtures.sh), or "" if it is not installed.
func duckdbDir() string {
	dir := clitest.FixturesDir()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@duckdb", "node-api", "package.json")); err != nil {
		return ""
	}
	return dir
}

// duckdbScript runs one SQL statement with @duckdb/node-api and prints
// its rows as JSON.
const duckdbScript = `
const { createRequire } = require('module');
const { DuckDBInstance } = createRequire(process.argv[1] + '/package.json')('@duckdb/node-api');
(async () => {
  const db = await DuckDBInstance.create(':memory:');
  const rows = (await (await db.connect()).runAndReadAll(process.argv[2])).getRows();
  console.log(JSON.stringify(rows, (k, v) => typeof v === 'bigint' ? Number(v) : v));
})().catch(e => { console.error(e.message); process.exit(1); });
`

// duckdbCount counts the rows of a Parquet glob with DuckDB. Without the
// DuckDB fixture it skips the rest of the test (fails it with
// MTKIT_REQUIRE_FIXTURES=1), so call it last.
func duckdbCount(t *testing.T, glob string) int64 {
	t.Helper()
	dir := duckdbDir()
	if dir == "" {
		if os.Getenv("MTKIT_REQUIRE_FIXTURES") == "1" {
			t.Fatal("DuckDB fixture missing: run scripts/fixtures.sh (@duckdb/node-api under $MTKIT_CACHE/fixtures)")
		}
		t.Skip("DuckDB check skipped: @duckdb/node-api not installed under $MTKIT_CACHE/fixtures (scripts/fixtures.sh)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("MTKIT_REQUIRE_FIXTURES") == "1" {
			t.Fatal("node not found for the DuckDB fixture")
		}
		t.Skip("DuckDB check skipped: node not found")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	q := fmt.Sprintf("SELECT count(*) FROM read_parquet('%s')", strings.ReplaceAll(glob, "'", "''"))
	out, err := exec.CommandContext(ctx, node, "-e", duckdbScript, dir, q).CombinedOutput()
	if err != nil {
		t.Fatalf("DuckDB: %v: %s", err, out)
	}
	var rows [][]int64
	if err := json.Unmarshal(out, &rows); err != nil || len(rows) != 1 || len(rows[0]) != 1 {
		t.Fatalf("DuckDB output %q: %v", out, err)
	}
	return rows[0][0]
}

// TestSIGTERM: SIGTERM (docker stop, Kubernetes) with a request stalled
// in the server: mtrun cancels it after --term-grace, not after
// --request-timeout, records it as canceled, closes every output and
// exits 130.
func TestSIGTERM(t *testing.T) {
	t.Parallel()
	srv := startSim(t, sim.Config{Faults: sim.Faults{StallRate: 1, Stall: 5 * time.Minute}})
	dir := t.TempDir()
	recPath, convOut := filepath.Join(dir, "recs.parquet"), filepath.Join(dir, "out.jsonl")
	sig := make(chan os.Signal, 1)
	done := make(chan invocation, 1)
	go func() {
		done <- runMtrun(t, convJSONL(4, 3, 50), sig, "--url", srv.URL, "--tokenizer", "none", "--clients", "2",
			"--request-timeout", "300", "--term-grace", "100ms", "--records", recPath, "-o", convOut)
	}()
	waitFor(t, "2 stalled requests", func() bool { st := srv.Server.Stats(); return st.Stalls >= 2 && st.Running == 2 })
	interrupt(t, sig, syscall.SIGTERM, done, 30*time.Second)
	recs := readFiles(t, recPath)
	if len(recs) != 2 {
		t.Fatalf("%d records, want the 2 in flight", len(recs))
	}
	for _, r := range recs {
		if r.ErrorClass != record.ErrCanceled {
			t.Errorf("record %+v, want canceled", r)
		}
	}
	if convs := readConvs(t, convOut); len(convs) != 2 {
		t.Errorf("%d conversations in -o, want the 2 started", len(convs))
	}
}

// manifestSummary reads the summary of a manifest.
func manifestSummary(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ Summary map[string]any }
	if err := json.Unmarshal(b, &m); err != nil || m.Summary == nil {
		t.Fatalf("manifest %s: %v: %s", path, err, b)
	}
	return m.Summary
}

// TestDiskFull writes one output to /dev/full (a real ENOSPC device): the
// run stops with that error, and the output on the healthy disk has
// everything: every request measured (records), every turn sent
// (conversations). A manifest that cannot be written stops mtrun before
// the run.
func TestDiskFull(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full on this system")
	}
	for _, full := range []string{"records", "conversations", "manifest"} {
		t.Run(full, func(t *testing.T) {
			t.Parallel()
			srv := startSim(t, sim.Config{DecodePerToken: time.Millisecond})
			dir := t.TempDir()
			recPath, convOut, man := filepath.Join(dir, "recs.jsonl"), filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "m.json")
			switch full {
			case "records":
				recPath = "/dev/full"
			case "conversations":
				convOut = "/dev/full"
			case "manifest":
				man = "/dev/full"
			}
			got := runMtrun(t, convJSONL(30, 4, 8), nil, "--url", srv.URL, "--tokenizer", "none", "--clients", "4",
				"--records", recPath, "-o", convOut, "--manifest", man)
			if got.code != command.ExitFailure || !strings.Contains(got.stderr, "no space left on device") {
				t.Fatalf("exit %d, stderr %q; want 1 and the ENOSPC error", got.code, got.stderr)
			}
			first, _, _ := strings.Cut(got.stderr, "\n")
			switch full {
			case "manifest":
				if n := srv.Server.Stats().Requests; n != 0 || !strings.Contains(first, "manifest") {
					t.Errorf("%d requests sent; stderr %q: the manifest must be checked before the run", n, got.stderr)
				}
			case "records":
				if !strings.Contains(got.stderr, "mtrun: writing records: ") {
					t.Errorf("stderr %q: want the records error", got.stderr)
				}
				sum := manifestSummary(t, man)
				turns := 0
				for _, c := range readConvs(t, convOut) {
					for _, m := range c.Messages {
						if m.Role == "user" {
							turns++
						}
					}
				}
				if float64(turns) != sum["requests"].(float64) || turns == 0 || turns >= 120 {
					t.Errorf("-o holds %d sent turns, the run sent %v (of 120): conversations lost on the healthy disk", turns, sum["requests"])
				}
			case "conversations":
				if !strings.Contains(got.stderr, "mtrun: writing conversations: ") {
					t.Errorf("stderr %q: want the conversations error", got.stderr)
				}
				sum := manifestSummary(t, man)
				recs := readFiles(t, recPath)
				if float64(len(recs)) != sum["attempts"].(float64) || uint64(len(recs)) != srv.Server.Stats().Requests {
					t.Errorf("%d records, %v attempts, server got %d: records lost on the healthy disk", len(recs), sum["attempts"], srv.Server.Stats().Requests)
				}
			}
		})
	}
}

// TestOutputErrorsNamed: an output in a directory that does not exist is
// named with its flag (issue 24: the error named the manifest's
// temporary file), and the later errors of a failing run follow the
// first as "also:" lines (they came before it).
func TestOutputErrorsNamed(t *testing.T) {
	t.Parallel()
	srv := startSim(t, sim.Config{DecodePerToken: time.Millisecond})
	got := runMtrun(t, convJSONL(2, 2, 4), nil, "--url", srv.URL, "--tokenizer", "none", "--records", "/nonexistent/x.jsonl")
	if got.code != command.ExitFailure || !strings.HasPrefix(got.stderr, "mtrun: --records /nonexistent/x.jsonl: ") || strings.Contains(got.stderr, ".manifest.json.") {
		t.Errorf("exit %d, stderr %q; want 1 and the records path named", got.code, got.stderr)
	}
	if n := srv.Server.Stats().Requests; n != 0 {
		t.Errorf("%d requests sent before the output error", n)
	}
	if _, err := os.Stat("/dev/full"); err != nil {
		return
	}
	got = runMtrun(t, convJSONL(8, 2, 4), nil, "--url", srv.URL, "--tokenizer", "none", "--records", "/dev/full", "--quiet")
	main, also := strings.Index(got.stderr, "mtrun: writing records: "), strings.Index(got.stderr, "mtrun: also: ")
	if got.code != command.ExitFailure || main < 0 || also < 0 || also < main {
		t.Errorf("exit %d, stderr %q; want the records error, then the also: lines", got.code, got.stderr)
	}
}
