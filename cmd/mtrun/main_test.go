package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mtkit/mtkit/internal/clitest"
	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/mtrun"
)

// invocation is the outcome of one mtrun run.
type invocation struct {
	code        int
	stdout      string
	stderr      string
	stdoutBytes []byte
}

// runMtrun runs the command in-process with stdin, optional signals and args
// (without the program name).
func runMtrun(t *testing.T, stdin string, sig <-chan os.Signal, args ...string) invocation {
	t.Helper()
	var out, errb clitest.Buffer
	s := command.Streams{In: strings.NewReader(stdin), Out: &out, Err: &errb, Signals: sig}
	code := command.Run(context.Background(), newApp(s, mtrun.Run), append([]string{"mtrun"}, args...))
	return invocation{code: code, stdout: out.String(), stderr: errb.String(), stdoutBytes: out.Bytes()}
}

// parse returns the options mtrun parses from args (without the program
// name), failing the test on a usage error; nothing runs.
func parse(t *testing.T, args ...string) *mtrun.Options {
	t.Helper()
	o, err := parseOptions(append([]string{"mtrun"}, args...))
	if err != nil {
		t.Fatalf("mtrun %q: %v", args, err)
	}
	return o
}

// TestGolden checks help and usage-error output: help on stdout, errors
// on stderr only, exit code 2 for usage errors.
func TestGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		args  []string
		stdin string
		code  int
	}{
		{"help", []string{"--help"}, "", 0},
		{"unknown-flag", []string{"--bogus"}, "", 2},
		{"two-inputs", []string{"--url", "http://127.0.0.1:1", "a.jsonl", "b.jsonl"}, "", 2},
		{"input-twice", []string{"--url", "http://127.0.0.1:1", "--input-file", "a.jsonl", "b.jsonl"}, "", 2},
		{"bad-arrival", []string{"--url", "http://127.0.0.1:1", "--arrival", "burst"}, "", 2},
		{"bad-extra-body", []string{"--url", "http://127.0.0.1:1", "--extra-body", "[1,2]"}, "", 2},
		{"bad-header", []string{"--url", "http://127.0.0.1:1", "--header", "novalue"}, "", 2},
		{"bad-think-time", []string{"--url", "http://127.0.0.1:1", "--think-time", "gamma:2s"}, "", 2},
		{"think-and-request-rate", []string{"--url", "http://127.0.0.1:1", "--think-time", "constant:1s", "--request-rate", "2"}, "", 2},
		{"bad-int", []string{"--clients", "many"}, "", 2},
		{"bad-reasoning-in-history", []string{"--url", "http://127.0.0.1:1", "--reasoning-in-history", "summarize"}, "", 2},
		{"keep-reasoning-contradiction", []string{"--url", "http://127.0.0.1:1", "--keep-reasoning", "--reasoning-in-history", "drop"}, "", 2},
		{"users-and-rate", []string{"--url", "http://127.0.0.1:1", "--users", "4", "--user-gap", "2s", "--rate", "3"}, "", 2},
		{"users-and-think-time", []string{"--url", "http://127.0.0.1:1", "--users", "4", "--user-gap", "2s", "--think-time", "constant:1s"}, "", 2},
		{"users-without-gap", []string{"--url", "http://127.0.0.1:1", "--users", "4"}, "", 2},
		{"time-scale-and-clients", []string{"--url", "http://127.0.0.1:1", "--time-scale", "0.5", "--clients", "3"}, "", 2},
		{"time-scale-untimed", []string{"--url", "http://127.0.0.1:1", "--tokenizer", "none", "--time-scale", "0.1"},
			`{"id":"c","messages":[{"role":"user","content":"hi"}]}` + "\n", 2},
		{"segment-and-segments", []string{"--url", "http://127.0.0.1:1", "--segment", "0/2", "--segments", "2"}, "", 2},
		{"bad-segment", []string{"--url", "http://127.0.0.1:1", "--segment", "2/2", "--run-id", "r"}, "", 2},
		{"segment-no-run-id", []string{"--url", "http://127.0.0.1:1", "--segment", "1/2"}, "", 2},
		{"segment-shard", []string{"--url", "http://127.0.0.1:1", "--segment", "1/2", "--run-id", "r", "--shard", "3"}, "", 2},
		{"segment-few-users", []string{"--url", "http://127.0.0.1:1", "--tokenizer", "none", "--segment", "3/4", "--run-id", "r", "--users", "3", "--user-gap", "1s"},
			`{"id":"c","messages":[{"role":"user","content":"hi"}]}` + "\n", 2},
		{"segment-few-clients", []string{"--url", "http://127.0.0.1:1", "--tokenizer", "none", "--segment", "2/3", "--run-id", "r", "--clients", "2"},
			`{"id":"c","messages":[{"role":"user","content":"hi"}]}` + "\n", 2},
		{"bad-start-at", []string{"--url", "http://127.0.0.1:1", "--start-at", "tomorrow"}, "", 2},
		{"bad-conversation", []string{"--url", "http://127.0.0.1:1", "--tokenizer", "none", "testdata/bad-conversation.jsonl"}, "", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := runMtrun(t, tc.stdin, nil, tc.args...)
			if got.code != tc.code {
				t.Errorf("exit code %d, want %d; stderr: %s", got.code, tc.code, got.stderr)
			}
			if tc.code != 0 {
				if got.stdout != "" {
					t.Errorf("usage error wrote to stdout: %q", got.stdout)
				}
				if !strings.HasPrefix(got.stderr, "mtrun: ") || strings.Count(got.stderr, "\n") != 1 {
					t.Errorf("stderr %q, want one line starting with mtrun:", got.stderr)
				}
			} else if got.stderr != "" {
				t.Errorf("help wrote to stderr: %q", got.stderr)
			}
			clitest.Golden(t, filepath.Join("testdata", tc.name+".stdout"), got.stdoutBytes)
			clitest.Golden(t, filepath.Join("testdata", tc.name+".stderr"), []byte(got.stderr))
		})
	}
}
