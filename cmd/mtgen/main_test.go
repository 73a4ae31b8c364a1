package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mtkit/mtkit/internal/clitest"
	"github.com/mtkit/mtkit/internal/command"
)

// runCLI runs mtgen with injected streams and returns the exit code.
func runCLI(s command.Streams, args ...string) int {
	return run(s, append([]string{"mtgen"}, args...))
}

// TestGolden runs mtgen with injected streams and compares stdout, stderr
// and the exit code with testdata/NAME.stdout and NAME.stderr.
func TestGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args string
		code int
	}{
		{"small", "--num-conversations 3 --turns 4 --input-tokens uniform:5:30 --output-tokens constant:7 --seed 7", 0},
		{"prefixes", "--num-conversations 2 --turns 2 --input-tokens 40 --output-tokens 3 --system-prefix-tokens 12 --prefix-tokens 9 --think-time exponential:mean=2s", 0},
		{"groups", "--num-conversations 4 --turns 4 --input-tokens 10 --output-tokens 3 --system-prefix-tokens 6 --prefix-groups 2 --think-time uniform:500ms:1.5s --seed 3", 0},
		{"stats", "--num-conversations 5 --turns uniform:2:8 --input-tokens lognormal:avg=30,median_ratio=0.8,max=60 --output-tokens poisson:20 --stats --seed 11", 0},
		{"vllm_config", "--config testdata/vllm_example.json --num-conversations 2 --turns 4 --stats", 0},
		{"text_files", "--num-conversations 2 --turns 2 --input-tokens 15 --output-tokens 2 --text-files testdata/pg1184.txt", 0},
		{"bad_dist", "--turns uniform:10:4", command.ExitUsage},
		{"bad_dist_name", "--input-tokens gaussian:3", command.ExitUsage},
		{"bad_think", "--think-time exponential:mean=2parsecs", command.ExitUsage},
		{"bad_config_field", "--config testdata/bad_field.json", command.ExitFailure},
		{"missing_config", "--config testdata/nope.json", command.ExitFailure},
		{"bad_tokenizer", "--tokenizer nonexistent-tokenizer", command.ExitUsage},
		{"bad_flag", "--bogus", command.ExitUsage},
		{"extra_arg", "--num-conversations 1 stray", command.ExitUsage},
		{"help", "--help", 0},
		// -n is the old spelling of --num-conversations: same output, a note on stderr.
		{"small_old_n", "-n 3 --turns 4 --input-tokens uniform:5:30 --output-tokens constant:7 --seed 7", 0},
		{"n_twice", "-n 3 --num-conversations 4", command.ExitUsage},
		{"bad_n", "-n many", command.ExitUsage},
		{"bad_seed", "--seed -1", command.ExitUsage},
		{"think_none", "--num-conversations 1 --turns 2 --input-tokens 5 --output-tokens 2 --think-time none --seed 1", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out, errb bytes.Buffer
			code := runCLI(command.Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, strings.Fields(tt.args)...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tt.code, errb.String())
			}
			clitest.Golden(t, filepath.Join("testdata", tt.name+".stdout"), out.Bytes())
			clitest.Golden(t, filepath.Join("testdata", tt.name+".stderr"), errb.Bytes())
		})
	}
}

// TestOutputFileCompressed writes -o x.jsonl.zst and x.jsonl and checks
// that the decompressed bytes equal the plain ones, and that two runs give
// the same bytes (determinism through the CLI).
func TestOutputFileCompressed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	args := "-n 20 --turns uniform:2:6 --input-tokens uniform:10:200 --system-prefix-tokens 50 --prefix-tokens 20 --seed 5"
	var outs [][]byte
	for _, name := range []string{"a.jsonl", "b.jsonl", "c.jsonl.zst"} {
		var errb bytes.Buffer
		path := filepath.Join(dir, name)
		code := runCLI(command.Streams{Out: &bytes.Buffer{}, Err: &errb}, append([]string{"-o", path}, strings.Fields(args)...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errb.String())
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, data)
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Error("two runs with the same seed differ")
	}
	if bytes.Equal(outs[0], outs[2]) || !bytes.HasPrefix(outs[2], []byte{0x28, 0xb5, 0x2f, 0xfd}) {
		t.Error(".zst output is not zstd")
	}
	if n := bytes.Count(outs[0], []byte("\n")); n != 20 {
		t.Errorf("%d lines, want 20", n)
	}
}
