package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/mtkit/mtkit/internal/clitest"
	"github.com/mtkit/mtkit/internal/command"
)

// The inputs in testdata are written by the stats package's generator:
// go test ./internal/mtstats -run TestGenTestdata -gen-testdata

func TestGolden(t *testing.T) {
	t.Parallel()
	base, err := os.ReadFile("testdata/base.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	malformed := append(append([]byte("{\"run_id\": 3}\n"), base[:2000]...), []byte("\n{\"run_id\":\"x\",\"start\":\"2026")...)
	for _, tc := range []struct {
		name  string
		stdin []byte
		args  []string
	}{
		{"summary", nil, []string{"testdata/base.jsonl"}},
		{"markdown", nil, []string{"--format", "markdown", "testdata/base.jsonl"}},
		{"json", nil, []string{"-f", "json", "testdata/base.jsonl"}},
		{"csv", nil, []string{"--format", "csv", "--by", "turn", "testdata/base.jsonl"}},
		{"by-turn", nil, []string{"--by", "turn", "testdata/base.jsonl"}},
		{"by-turn-full", nil, []string{"--by", "turn", "--by-detail", "full", "testdata/base.jsonl"}},
		{"by-turn-json", nil, []string{"--by", "turn", "-f", "json", "testdata/shard1.jsonl"}},
		{"bad-by-detail", nil, []string{"--by", "turn", "--by-detail", "some", "testdata/base.jsonl"}},
		{"by-conversation", nil, []string{"--by", "conversation", "testdata/tuned.parquet"}},
		// A run split in two whose segment 1 carries client_wait_ns and segment 0 does not.
		{"segments-wait", nil, []string{"testdata/base.jsonl", "testdata/shard1-wait.jsonl"}},
		{"segments-wait-json", nil, []string{"-f", "json", "testdata/base.jsonl", "testdata/shard1-wait.jsonl"}},
		{"by-run-merge", nil, []string{"--by", "run", "testdata/base.jsonl", "testdata/shard1.jsonl", "testdata/base.jsonl", "testdata/tuned.jsonl"}},
		{"include-warmup", nil, []string{"--include-warmup", "--by", "phase", "--format", "csv", "testdata/base.jsonl"}},
		{"stdin", base, []string{"--where", "turn>=2 && client==1"}},
		{"slo-check", nil, []string{"--slo", "ttft_p95<=200ms,itl_p99<=50ms,turn0:ttft_p50<=1s", "--check", "testdata/base.jsonl"}},
		{"slo-json", nil, []string{"--slo", "ttft_p95<=1s,latency_p99<=5s", "--check", "--format", "json", "testdata/tuned.jsonl"}},
		{"compare", nil, []string{"--compare", "base=testdata/base.jsonl", "tuned=testdata/tuned.parquet"}},
		{"compare-json", nil, []string{"--compare", "--format", "json", "base=testdata/base.jsonl", "tuned=testdata/tuned.parquet"}},
		{"records", nil, []string{"--to", "-", "--where", "conversation_id==conv-003", "testdata/tuned.parquet"}},
		// --records is the old spelling of --to -: the same records, and a note on stderr.
		{"records-old", nil, []string{"--records", "--where", "conversation_id==conv-003", "testdata/tuned.parquet"}},
		{"records-and-to", nil, []string{"--records", "--to", "x.parquet", "testdata/tuned.parquet"}},
		{"bad-every", nil, []string{"--every", "-1s", "testdata/base.jsonl"}},
		{"slo-bare-number", nil, []string{"--slo", "ttft_p95<=500", "testdata/base.jsonl"}},
		// --only: the selected metrics with the request counts, in every format.
		{"only-by-turn", nil, []string{"--by", "turn", "--only", "ttft", "testdata/base.jsonl"}},
		{"only-markdown", nil, []string{"--format", "markdown", "--only", "latency_ms,ttft", "--by", "phase", "--include-warmup", "testdata/base.jsonl"}},
		{"only-json", nil, []string{"--by", "turn", "--only", "ttft,itl", "-f", "json", "testdata/shard1.jsonl"}},
		{"only-csv", nil, []string{"--format", "csv", "--by", "conversation", "--only", "tpot", "testdata/tuned.parquet"}},
		{"only-compare", nil, []string{"--compare", "--only", "ttft,output_num_tokens", "base=testdata/base.jsonl", "tuned=testdata/tuned.parquet"}},
		{"only-compare-json", nil, []string{"--compare", "--only", "latency", "-f", "json", "base=testdata/base.jsonl", "tuned=testdata/tuned.parquet"}},
		{"only-where", nil, []string{"--only", "think_actual", "--where", "error_class==\"\" && model!=x", "testdata/base.jsonl"}},
		{"bad-only", nil, []string{"--by", "turn", "--only", "ttft,ttfb", "testdata/base.jsonl"}},
		{"bad-only-html", nil, []string{"--only", "ttft", "--html", "x.html", "testdata/base.jsonl"}},
		{"help", nil, []string{"--help"}},
		{"malformed", malformed, []string{"--include-warmup", "-"}},
		{"strict", malformed, []string{"--strict", "-"}},
		{"bad-flag", nil, []string{"--nope"}},
		{"bad-format", nil, []string{"--format", "xml", "testdata/base.jsonl"}},
		{"bad-where", nil, []string{"--where", "nosuch>1", "testdata/base.jsonl"}},
		{"missing-file", nil, []string{"testdata/nope.jsonl"}},
		{"bad-where-syntax", nil, []string{"--where", "turn>>1", "testdata/base.jsonl"}},
		{"where-typed", nil, []string{"--format", "csv", "--where", "start>=2026-05-04T12:00:11+02:00 && ttft>150ms", "testdata/base.jsonl"}},
		{"where-none", nil, []string{"--where", "turn>100", "testdata/base.jsonl"}},
		{"empty", nil, []string{"-"}},
		{"empty-gz", mustRead(t, "testdata/empty.jsonl.gz"), nil},
		{"cut-gz", cutGzip(t, base), []string{"--format", "csv"}},
		{"duckdb-parquet", nil, []string{"--format", "csv", "--by", "turn", "../../internal/record/testdata/duckdb-records.parquet"}},
		{"parquet-stdin", mustRead(t, "testdata/tuned.parquet"), nil},
		// The README's quick start, run as printed (closed loop, more
		// active conversations than clients): client wait apart from
		// lateness. README.md shows this output (TestReadmeQuickStart).
		{"quickstart", nil, []string{"testdata/quickstart.jsonl.gz"}},
		// Two sweeps of the simulator, max-running=4 and 8 (docs/mtstats.md).
		{"sweep-slo", nil, []string{"--slo", "ttft_p95<=70ms", "testdata/sweep-max8.jsonl.gz"}},
		{"sweep-compare", nil, []string{"--compare", "--slo", "ttft_p95<=70ms", "max4=testdata/sweep-max4.jsonl.gz", "max8=testdata/sweep-max8.jsonl.gz"}},
		{"sweep-compare-json", nil, []string{"--compare", "--format", "json", "--slo", "ttft_p95<=70ms", "max4=testdata/sweep-max4.jsonl.gz", "max8=testdata/sweep-max8.jsonl.gz"}},
		{"sweep-compare-capacity", nil, []string{"--compare", "--capacity", "testdata/sweep-max4.capacity.json", "a=testdata/sweep-max4.jsonl.gz", "b=testdata/sweep-max8.jsonl.gz"}},
		{"sweep-min-capacity", nil, []string{"--capacity", "testdata/sweep-max4.capacity.json", "--min-capacity", "6", "testdata/sweep-max4.jsonl.gz"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			golden(t, tc.name, tc.stdin, tc.args...)
		})
	}
}

// cutGzip compresses data as mtrun writes records (a flush per line) and
// cuts the result in the middle of a line, as a kill leaves it.
func cutGzip(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	for line := range bytes.Lines(data) {
		w.Write(line)
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()[:b.Len()*3/5]
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// golden runs mtstats and compares exit code, stdout and stderr with
// testdata/NAME.golden.
func golden(t *testing.T, name string, stdin []byte, args ...string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(command.Streams{In: bytes.NewReader(stdin), Out: &out, Err: &errb}, append([]string{"mtstats"}, args...))
	got := fmt.Sprintf("$ mtstats %s\n== exit %d ==\n== stdout ==\n%s== stderr ==\n%s", strings.Join(args, " "), code, out.String(), errb.String())
	clitest.Golden(t, filepath.Join("testdata", name+".golden"), []byte(got))
}

// TestFiles checks the side outputs: Parquet conversion, HTML, XLSX.
func TestFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pq := filepath.Join(dir, "b.parquet")
	var out, errb bytes.Buffer
	if code := run(command.Streams{Out: &out, Err: &errb}, []string{"mtstats", "--to", pq, "testdata/base.jsonl"}); code != 0 {
		t.Fatalf("--to: exit %d: %s", code, errb.String())
	}
	var fromJSON, fromParquet bytes.Buffer
	run(command.Streams{Out: &fromJSON, Err: &errb}, []string{"mtstats", "-f", "json", "testdata/base.jsonl"})
	run(command.Streams{Out: &fromParquet, Err: &errb}, []string{"mtstats", "-f", "json", pq})
	if strings.Replace(fromParquet.String(), pq, "testdata/base.jsonl", -1) != fromJSON.String() {
		t.Error("the Parquet copy summarises differently from its source")
	}
	html, xlsx := filepath.Join(dir, "r.html"), filepath.Join(dir, "r.xlsx")
	if code := run(command.Streams{Out: &out, Err: &errb}, []string{"mtstats", "--html", html, "--xlsx", xlsx, "testdata/base.jsonl"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, p := range []string{html, xlsx} {
		if st, err := os.Stat(p); err != nil || st.Size() < 1000 {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// TestDocExample runs the example of docs/mtstats.md and compares its
// output with the one shown there.
func TestDocExample(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/mtstats.md")
	if err != nil {
		t.Fatal(err)
	}
	const cmd = "$ mtstats cmd/mtstats/testdata/base.jsonl\n"
	i := bytes.Index(doc, []byte(cmd))
	if i < 0 {
		t.Fatalf("docs/mtstats.md: %q not found", cmd)
	}
	rest := doc[i+len(cmd):]
	want := string(rest[:bytes.Index(rest, []byte("```"))])
	var out, errb bytes.Buffer
	if code := run(command.Streams{Out: &out, Err: &errb}, []string{"mtstats", "testdata/base.jsonl"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if out.String() != want {
		t.Errorf("docs/mtstats.md example is stale; mtstats prints:\n%s", out.String())
	}
}
