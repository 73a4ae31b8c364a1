package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/clitest"
	"github.com/mtkit/mtkit/internal/command"
)

const quirks = "../../internal/convert/testdata/sharegpt_quirks.jsonl"

// golden runs mtconvert with args and stdin, checks the exit code and
// compares its stdout and stderr with testdata/NAME.stdout and NAME.stderr.
func golden(t *testing.T, name, stdin string, wantCode int, args ...string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), append([]string{"mtconvert"}, args...),
		command.Streams{In: strings.NewReader(stdin), Out: &out, Err: &errOut})
	if code != wantCode {
		t.Errorf("exit code %d, want %d; stderr:\n%s", code, wantCode, errOut.String())
	}
	clitest.Golden(t, filepath.Join("testdata", name+".stdout"), out.Bytes())
	clitest.Golden(t, filepath.Join("testdata", name+".stderr"), errOut.Bytes())
}

func TestGolden(t *testing.T) {
	t.Parallel()
	sg := `{"id":"b_3","conversations":[{"from":"human","value":"second part"},{"from":"gpt","value":"answer 2"}]}
{"id":"b_0","conversations":[{"from":"gpt","value":"hello!"},{"from":"human","value":"first"},{"from":"gpt","value":"answer 1"}]}
{"id":"c","conversations":[{"from":"human","value":"héllo"},{"from":"human","value":"again"},{"from":"chatgpt","value":"ok"}]}
{"id":"d","conversations":[{"from":"robot","value":"?"}]}
{"id":"e","conversations":[{"from":"bard","value":"only me"}]}
`
	for _, tc := range []struct {
		name, stdin string
		code        int
		args        []string
	}{
		{"help", "", 0, []string{"--help"}},
		{"quirks", "", 0, []string{quirks}},
		{"quirks_filtered", "", 0, []string{"--ascii-only", "--min-turns", "4", "--max-turns", "6", "--max-content-len", "3000",
			"--tokenizer", "o200k_base", "--system", "drop", "--max-items", "3", "--seed", "7", quirks}},
		{"stdin_sharegpt", sg, 0, nil},
		{"stdin_strict", sg, 1, []string{"--strict", "-"}},
		{"stdin_drop", sg, 0, []string{"--alternation", "drop", "--parts", "none", "-q"}},
		{"openai", `{"messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"q"}]},{"role":"assistant","content":"a"},{"role":"user","content":"q2"}]}` + "\n", 0, []string{"--input-format", "openai"}},
		// Old spellings: the same output as the new ones, and a note on stderr.
		{"openai_old_from", `{"messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"q"}]},{"role":"assistant","content":"a"},{"role":"user","content":"q2"}]}` + "\n", 0, []string{"--from", "openai"}},
		{"old_model", "", 0, []string{"--model", "o200k_base", "--max-items", "2", "--seed", "7", quirks}},
		{"from_twice", "", 2, []string{"--from", "openai", "--input-format", "sharegpt"}},
		{"tokenizer_short", "", 0, []string{"-t", "o200k_base", "--max-items", "2", "--seed", "7", "-q", quirks}},
		{"bad_seed", "", 2, []string{"--seed", "1.5"}},
		{"vllm", `[{"id":"v1","messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]}]`, 0, nil},
		{"bad_flag", "", 2, []string{"--nope"}},
		{"generate", "", 0, []string{"--input-format", "generate", "../../internal/source/testdata/generate.json"}},
		{"generate_detected", "", 0, []string{"../../internal/source/testdata/generate.json"}},
		{"generate_filter", "", 2, []string{"--min-turns", "2", "../../internal/source/testdata/generate.json"}},
		{"conversations", `{"id":"k","messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]}`, 0, []string{"--input-format", "conversations", "-q"}},
		{"bad_parts", "", 2, []string{"--parts", "some"}},
		{"bad_range", "", 2, []string{"--min-turns", "5", "--max-turns", "2"}},
		{"bad_tokenizer", "", 2, []string{"--tokenizer", "no/such/tokenizer.json"}},
		{"missing_file", "", 1, []string{"no-such-file.json"}},
		// Issue 24: nothing converted exited 0.
		{"not_json", "hello\n", 1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			golden(t, tc.name, tc.stdin, tc.code, tc.args...)
		})
	}
}

func TestOutputFileCompressed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"out.jsonl.gz", "out.jsonl.zst"} {
		path := filepath.Join(dir, name)
		var errOut bytes.Buffer
		code := run(context.Background(), []string{"mtconvert", "-q", "-o", path, quirks}, command.Streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &errOut})
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
		// Converting the compressed output again must give the same
		// conversations (the conversation JSONL is read as OpenAI-shaped).
		var out bytes.Buffer
		code = run(context.Background(), []string{"mtconvert", "-q", "--input-format", "openai", path}, command.Streams{In: strings.NewReader(""), Out: &out, Err: &errOut})
		if code != 0 || strings.Count(out.String(), "\n") != 10 {
			t.Errorf("%s: exit %d, %d lines: %s", name, code, strings.Count(out.String(), "\n"), errOut.String())
		}
	}
}

func TestInterrupt(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	sig := make(chan os.Signal, 1)
	var out, errOut bytes.Buffer
	done := make(chan int)
	go func() {
		done <- run(context.Background(), []string{"mtconvert"}, command.Streams{In: pr, Out: &out, Err: &errOut, Signals: sig})
	}()
	rec := `{"id":"a","conversations":[{"from":"human","value":"q"}]}` + "\n"
	io.WriteString(pw, rec)
	sig <- os.Interrupt
	// The input never ends (records until the run stops reading and the
	// pipe is closed): only the interrupt can end the run, whenever the
	// run takes it.
	go func() {
		for {
			if _, err := io.WriteString(pw, rec); err != nil {
				return
			}
		}
	}()
	var code int
	select {
	case code = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("run did not stop on the interrupt")
	}
	pr.Close()
	pw.Close()
	if code != command.ExitInterrupted {
		t.Errorf("exit %d, want %d: %s", code, command.ExitInterrupted, errOut.String())
	}
	if !strings.Contains(errOut.String(), "interrupted") || !strings.Contains(errOut.String(), "records ") {
		t.Errorf("stderr:\n%s", errOut.String())
	}
}

// TestOptionsAfterFile checks that "mtconvert FILE -o OUT" writes every
// conversation to OUT and nothing to stdout (it used to write them to
// stdout and then fail on a file named "-o").
func TestOptionsAfterFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	before, after := filepath.Join(dir, "before.jsonl"), filepath.Join(dir, "after.jsonl")
	for _, args := range [][]string{{"-q", "-o", before, quirks}, {quirks, "-o", after, "-q"}} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), append([]string{"mtconvert"}, args...), command.Streams{In: strings.NewReader(""), Out: &out, Err: &errOut})
		if code != 0 || out.Len() != 0 || errOut.Len() != 0 {
			t.Fatalf("%q: exit %d, %d bytes on stdout, stderr %q", args, code, out.Len(), errOut.String())
		}
	}
	want, err := os.ReadFile(before)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(after)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 || !bytes.Equal(got, want) {
		t.Fatalf("options after the file wrote %d bytes, options before it %d", len(got), len(want))
	}
}
