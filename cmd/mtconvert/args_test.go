package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mtkit/mtkit/internal/command"
)

// convertArgs runs mtconvert with args and returns the exit code, stdout
// and stderr.
func convertArgs(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(context.Background(), append([]string{"mtconvert"}, args...),
		command.Streams{In: strings.NewReader(""), Out: &out, Err: &errb})
	return code, out.String(), errb.String()
}

// TestOptionsAfterFiles: options after the files work as before them;
// a usage error anywhere fails with exit 2 before any output is written
// (it once exited 1 after writing all but the last conversation to
// stdout), and never takes an input as -o's value. Not parallel: it
// changes directory to name a file like a flag.
func TestOptionsAfterFiles(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	in := `{"id":"a","conversations":[{"from":"human","value":"hi"},{"from":"gpt","value":"yo"}]}` + "\n" +
		`{"id":"b","conversations":[{"from":"human","value":"hello there"}]}` + "\n"
	dash := `{"id":"z","conversations":[{"from":"human","value":"from -z.jsonl"}]}` + "\n"
	for name, data := range map[string]string{"in.jsonl": in, "-z.jsonl": dash} {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, want, _ := convertArgs("-q", "in.jsonl")
	_, wantBoth, _ := convertArgs("-q", "in.jsonl", "--", "-z.jsonl")
	if strings.Count(want, "\n") != 2 || !strings.Contains(wantBoth, "from -z.jsonl") {
		t.Fatalf("reference runs wrote %q and %q", want, wantBoth)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string // written to stdout
		file   string // written to out.jsonl ("": must not exist)
	}{
		{"value and bool after the file", []string{"in.jsonl", "-o", "out.jsonl", "-q"}, 0, "", want},
		{"joined short options after the file", []string{"in.jsonl", "-qo", "out.jsonl"}, 0, "", want},
		{"name=value after the file", []string{"in.jsonl", "--output=out.jsonl", "--quiet"}, 0, "", want},
		{"filter after the file", []string{"in.jsonl", "--min-turns", "2", "-q"}, 0, want[:strings.Index(want, "\n")+1], ""},
		{"-- before a file named like a flag", []string{"-q", "in.jsonl", "--", "-z.jsonl"}, 0, wantBoth, ""},
		{"options, then -- and a file named like a flag", []string{"in.jsonl", "-q", "--", "-z.jsonl"}, 0, wantBoth, ""},
		{"unknown option after the file", []string{"in.jsonl", "-o", "out.jsonl", "--bogus"}, 2, "", ""},
		{"bad value after the file", []string{"in.jsonl", "--min-turns", "many", "-o", "out.jsonl"}, 2, "", ""},
		{"invalid mode after the file", []string{"in.jsonl", "-o", "out.jsonl", "--parts", "sideways"}, 2, "", ""},
		{"contradiction after the file", []string{"in.jsonl", "-o", "out.jsonl", "--min-turns", "4", "--max-turns", "2"}, 2, "", ""},
		{"-o without a value after the file", []string{"in.jsonl", "-o"}, 2, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove("out.jsonl")
			code, stdout, stderr := convertArgs(tc.args...)
			if code != tc.code || stdout != tc.stdout {
				t.Errorf("exit %d, stdout %q; want %d, %q\nstderr: %s", code, stdout, tc.code, tc.stdout, stderr)
			}
			if tc.code == command.ExitUsage && !strings.Contains(stderr, "mtconvert: ") {
				t.Errorf("stderr %q does not say what is wrong", stderr)
			}
			got, err := os.ReadFile(filepath.Join(dir, "out.jsonl"))
			switch {
			case tc.file == "" && err == nil:
				t.Errorf("out.jsonl written: %q", got)
			case tc.file != "" && string(got) != tc.file:
				t.Errorf("out.jsonl = %q, %v; want %q", got, err, tc.file)
			}
			if data, _ := os.ReadFile("in.jsonl"); string(data) != in {
				t.Fatalf("in.jsonl changed to %q", data)
			}
		})
	}
}
