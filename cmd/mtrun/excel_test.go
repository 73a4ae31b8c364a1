package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mtkit/mtkit/internal/clitest"
	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/mtrun"
	"github.com/mtkit/mtkit/internal/sim"
	"github.com/mtkit/mtkit/internal/vllmbook"
	"github.com/mtkit/mtkit/internal/vllmcompat"
)

// packageDir is this package's directory, where the tests start (some
// change the working directory).
var packageDir, _ = os.Getwd()

// TestNoExcelize: mtrun does not link the Excel library; --excel-output's
// workbook is written by the mtstats program (issue 21).
func TestNoExcelize(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command, to list mtrun's packages: %v", err)
	}
	list := exec.Command(goTool, "list", "-deps", ".")
	list.Dir = packageDir
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	if !strings.Contains(string(out), "github.com/mtkit/mtkit/internal/vllmcompat\n") {
		t.Fatalf("go list -deps lacks vllmcompat, so it listed something else:\n%s", out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "excelize") || line == "github.com/mtkit/mtkit/internal/vllmbook" || line == "github.com/mtkit/mtkit/internal/workbook" {
			t.Errorf("mtrun links %s", line)
		}
	}
}

// mtstatsBuild is the mtstats program buildMtstats built once for all
// tests; TestMain removes its directory.
var mtstatsBuild struct {
	once sync.Once
	dir  string
	err  error
}

// buildMtstats builds the mtstats program (once) and returns the path of
// an mtrun executable beside it (which need not exist):
// vllmcompat.Outputs.Exe finds mtstats there.
func buildMtstats(t *testing.T) string {
	t.Helper()
	b := &mtstatsBuild
	b.once.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			b.err = fmt.Errorf("the go command, to build mtstats: %w", err)
			return
		}
		if b.dir, b.err = os.MkdirTemp("", "mtrun-test-mtstats-"); b.err != nil {
			return
		}
		cmd := exec.Command(goTool, "build", "-o", filepath.Join(b.dir, "mtstats"), "../mtstats")
		cmd.Dir = packageDir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build mtstats: %w\n%s", err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return filepath.Join(b.dir, "mtrun")
}

// mtrunBeside runs mtrun in-process as mtrun's helper does, with mtstats
// looked for beside exe first.
func mtrunBeside(t *testing.T, exe string, args ...string) invocation {
	t.Helper()
	var out, errb clitest.Buffer
	s := command.Streams{In: strings.NewReader(""), Out: &out, Err: &errb}
	runF := func(ctx context.Context, o *mtrun.Options, s command.Streams) error {
		if o.VLLM != nil {
			o.VLLM.Exe = exe
		}
		return mtrun.Run(ctx, o, s)
	}
	code := command.Run(context.Background(), newApp(s, runF), append([]string{"mtrun"}, args...))
	return invocation{code: code, stdout: out.String(), stderr: errb.String(), stdoutBytes: out.Bytes()}
}

// sameWorkbook fails unless the workbooks at got and want hold the same
// sheets, cells and styles: every part of the two files is the same but
// the document properties (their creation time).
func sameWorkbook(t *testing.T, got, want string) {
	t.Helper()
	parts := func(path string) map[string][]byte {
		z, err := zip.OpenReader(path)
		if err != nil {
			t.Fatal(err)
		}
		defer z.Close()
		m := map[string][]byte{}
		for _, f := range z.File {
			if strings.HasPrefix(f.Name, "docProps/") {
				continue
			}
			r, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(r)
			r.Close()
			if err != nil {
				t.Fatal(err)
			}
			m[f.Name] = b
		}
		return m
	}
	g, w := parts(got), parts(want)
	if len(g) != len(w) {
		t.Errorf("%s has %d parts, %s %d", got, len(g), want, len(w))
	}
	for name, b := range w {
		if !bytes.Equal(g[name], b) {
			t.Errorf("%s: part %s differs from the in-process workbook's:\n got %.2000s\nwant %.2000s", got, name, g[name], b)
		}
	}
}

// TestExcelOutputWorkbook: mtrun -e has mtstats write the workbook that
// vllmbook writes in-process from the same requests (the rows of
// --stats-json-output), part for part, with vLLM's parameters and their
// types (mtrun -e wrote it in-process before issue 21).
// Not parallel: it changes the working directory.
func TestExcelOutputWorkbook(t *testing.T) {
	exe := buildMtstats(t)
	t.Chdir(t.TempDir())
	tmp := t.TempDir() // where the records' copy goes
	t.Setenv("TMPDIR", tmp)
	cfg, err := sim.ParseConfig("preset=zero")
	if err != nil {
		t.Fatal(err)
	}
	srv := startSim(t, cfg)
	input := vllmList(t, 5, 3)
	for _, tc := range []struct {
		name string
		args []string
		wb   func(reqs []vllmcompat.Request) *vllmbook.Workbook
	}{
		{"verbose", []string{"-v", "--warmup-percentages", "0%,50%", "--seed", "3"}, func(reqs []vllmcompat.Request) *vllmbook.Workbook {
			return &vllmbook.Workbook{Params: []vllmcompat.Param{{Name: "model", Value: ""}, {Name: "num_clients", Value: 2},
				{Name: "num_conversations", Value: 5}, {Name: "active_conversations", Value: nil}, {Name: "seed", Value: uint64(3)}},
				Warmup: []float64{0, 0.5}, Verbose: true, Requests: reqs}
		}},
		{"limits", []string{"--limit-min-tokens", "4", "--limit-max-tokens", "8", "--max-active-conversations", "3", "--seed", "18446744073709551615", "--model", "some/model"},
			func(reqs []vllmcompat.Request) *vllmbook.Workbook {
				return &vllmbook.Workbook{Params: []vllmcompat.Param{{Name: "model", Value: "some/model"}, {Name: "num_clients", Value: 2},
					{Name: "num_conversations", Value: 5}, {Name: "active_conversations", Value: 3}, {Name: "seed", Value: uint64(18446744073709551615)},
					{Name: "min_tokens", Value: 4}, {Name: "max_tokens", Value: 8}},
					Warmup: []float64{0}, Requests: reqs}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.Mkdir(tc.name, 0o755); err != nil {
				t.Fatal(err)
			}
			t.Chdir(tc.name)
			server := []string{"--url", srv.URL}
			if tc.name == "limits" {
				server = []string{"--sim", "--sim-config", "preset=zero"} // it serves --model's name
			}
			args := append(server, "-i", input, "-p", "2", "-e", "--stats-json-output", "stats.json", "--records", "r.jsonl")
			args = append(args, tc.args...)
			got := mtrunBeside(t, exe, args...)
			if got.code != 0 {
				t.Fatalf("exit %d: %s", got.code, got.stderr)
			}
			books, _ := filepath.Glob("statistics_2_clients__*.xlsx")
			if len(books) != 1 || !strings.Contains(got.stderr, "mtrun: client metrics exported to file: "+books[0]+"\n") {
				t.Fatalf("workbooks %q, stderr %q; want one statistics_2_clients__<time>.xlsx, named", books, got.stderr)
			}
			b, err := os.ReadFile("stats.json")
			if err != nil {
				t.Fatal(err)
			}
			var reqs []vllmcompat.Request
			if err := json.Unmarshal(b, &reqs); err != nil || len(reqs) != 15 {
				t.Fatalf("stats JSON: %d requests, %v", len(reqs), err)
			}
			if err := vllmbook.WriteXLSX("want.xlsx", tc.wb(reqs)); err != nil {
				t.Fatal(err)
			}
			sameWorkbook(t, books[0], "want.xlsx")
			if left, _ := filepath.Glob(filepath.Join(tmp, "mtrun-excel-*")); len(left) > 0 {
				t.Errorf("the records' copy is left: %q", left)
			}
		})
	}
}

// TestExcelOutputNoMtstats: without an mtstats program, -e fails naming
// where it looked, after the run, and the records are complete.
// Not parallel: it sets PATH and the working directory.
func TestExcelOutputNoMtstats(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("PATH", dir)
	t.Setenv("TMPDIR", dir)
	cfg, err := sim.ParseConfig("preset=zero")
	if err != nil {
		t.Fatal(err)
	}
	srv := startSim(t, cfg)
	got := mtrunBeside(t, filepath.Join(dir, "mtrun"), "--url", srv.URL, "-i", vllmList(t, 4, 3), "-p", "2", "-e", "--records", "r.jsonl")
	want := "--excel-output: no mtstats program found at " + filepath.Join(dir, "mtstats") + " (beside mtrun) nor on PATH"
	if got.code != 1 || !strings.Contains(got.stderr, want) {
		t.Errorf("exit %d, stderr %q; want 1 and %q", got.code, got.stderr, want)
	}
	recs, err := readLenient("r.jsonl")
	if err != nil || len(recs) != 12 {
		t.Errorf("records: %d, %v; want all 12", len(recs), err)
	}
	for _, r := range recs {
		if !r.OK() {
			t.Errorf("record %s/%d: %s", r.ConversationID, r.Turn, r.Error)
		}
	}
	if left, _ := filepath.Glob("*.xlsx"); len(left) > 0 {
		t.Errorf("workbooks %q without mtstats", left)
	}
	if left, _ := filepath.Glob("mtrun-excel-*"); len(left) > 0 {
		t.Errorf("the records' copy is left: %q", left)
	}
}
