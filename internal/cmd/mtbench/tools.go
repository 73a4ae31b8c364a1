package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/gen"
	"github.com/mtkit/mtkit/internal/tokenize"
)

// tools measures the throughput of mtgen, mtconvert, mtstats and the
// tokenizer. A tool whose binary is missing is reported as n/a.
func (b *bench) tools(ctx context.Context, dir string) error {
	var errs []error
	for _, f := range []func(context.Context, string) error{b.toolTokenizer, b.toolMtgen, b.toolMtconvert, b.toolMtstats} {
		if ctx.Err() != nil {
			break
		}
		if err := f(ctx, dir); err != nil {
			errs = append(errs, err)
			b.logf("%v", err)
		}
	}
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// corpusText is mtgen's embedded public-domain corpus (Newton's Opticks
// and Doyle's Sherlock Holmes), about 1 MB of English.
func corpusText() (string, error) {
	return gen.EmbeddedCorpus(), nil
}

// toolTokenizer encodes the corpus with the Qwen tokenizer.json on one
// goroutine locked to its thread and reports tokens per second of that
// thread's CPU time (RUSAGE_THREAD), so that other load on the machine
// does not count against it, and per second of wall time.
func (b *bench) toolTokenizer(ctx context.Context, dir string) error {
	const sec, name = "tools", "tokenizer encode (Qwen3 tokenizer.json), per core"
	if b.tokenizer == "" {
		b.figs.na(sec, name, "tokens/s", atLeast(1e6), "no tokenizer.json: run scripts/fixtures.sh")
		return nil
	}
	tok, err := tokenize.Load(b.tokenizer)
	if err != nil {
		return fmt.Errorf("tokenizer: %w", err)
	}
	text, err := corpusText()
	if err != nil {
		return fmt.Errorf("tokenizer corpus: %w", err)
	}
	reps := pick(b, 1, 4)
	for range b.runs {
		cpu, wall, n, err := threadCPU(func() int {
			n := 0
			for range reps {
				n += len(tok.Encode(text))
			}
			return n
		})
		if err != nil {
			return err
		}
		b.figs.add(sec, name, "tokens/s", atLeast(1e6), float64(n)/cpu.Seconds())
		b.figs.add(sec, "tokenizer encode, per second of wall time", "tokens/s", nil, float64(n)/wall.Seconds())
	}
	b.figs.note(sec, name, "tokens per second of the encoding thread's CPU time (RUSAGE_THREAD), one goroutine, Newton's Opticks (Go's testdata)")
	return nil
}

// threadCPU runs f on a locked OS thread and returns the thread's CPU
// time and the wall time it took.
func threadCPU(f func() int) (cpu, wall time.Duration, n int, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var r0, r1 syscall.Rusage
	const rusageThread = 1 // RUSAGE_THREAD (Linux)
	if err := syscall.Getrusage(rusageThread, &r0); err != nil {
		return 0, 0, 0, fmt.Errorf("getrusage: %w", err)
	}
	t0 := time.Now()
	n = f()
	wall = time.Since(t0)
	if err := syscall.Getrusage(rusageThread, &r1); err != nil {
		return 0, 0, 0, fmt.Errorf("getrusage: %w", err)
	}
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	cpu = tv(r1.Utime) - tv(r0.Utime) + tv(r1.Stime) - tv(r0.Stime)
	return max(cpu, time.Microsecond), wall, n, nil
}

// toolMtgen generates 10,000 conversations of 10 user turns with the
// Qwen tokenizer and counts the tokens of the generated messages.
func (b *bench) toolMtgen(ctx context.Context, dir string) error {
	const sec = "tools"
	convName, tokName := "mtgen conversations/s", "mtgen generated tokens/s"
	bin := b.bin("mtgen")
	switch {
	case bin == "":
		b.figs.na(sec, convName, "conv/s", nil, "tool missing")
		b.figs.na(sec, tokName, "tokens/s", atLeast(1e6), "tool missing")
		return nil
	case b.tokenizer == "":
		b.figs.na(sec, tokName, "tokens/s", atLeast(1e6), "no tokenizer.json: run scripts/fixtures.sh")
		return nil
	}
	n := pick(b, 500, 10000)
	out := filepath.Join(dir, "mtgen.jsonl")
	for range b.runs {
		p, err := runProc(ctx, bin, []string{"--num-conversations", fmt.Sprint(n), "--turns", "constant:20", "--tokenizer", b.tokenizer, "--seed", "1", "-o", out}, runOpts{})
		if err != nil {
			return err
		}
		convs, tokens, err := countGenerated(out)
		if err != nil {
			return err
		}
		if convs != n {
			return fmt.Errorf("mtgen wrote %d conversations, want %d", convs, n)
		}
		b.logf("mtgen: %d conversations, %d tokens in %v (CPU %v)", convs, tokens, p.Wall.Round(time.Millisecond), p.CPU.Round(time.Millisecond))
		b.figs.add(sec, convName, "conv/s", nil, float64(convs)/p.Wall.Seconds())
		b.figs.add(sec, tokName, "tokens/s", atLeast(1e6), float64(tokens)/p.Wall.Seconds())
	}
	b.figs.note(sec, tokName, fmt.Sprintf("mtgen --num-conversations %d --turns constant:20 (10 user turns) --tokenizer qwen3/tokenizer.json; tokens = the messages' tokens fields; wall time of the process, all cores", n))
	return os.Remove(out)
}

// countGenerated counts the conversations of a file and the tokens of
// their messages.
func countGenerated(path string) (convs, tokens int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	r := conv.NewReader(f, path)
	for r.Scan() {
		c := r.Conversation()
		convs++
		for _, m := range c.Messages {
			tokens += m.Tokens
		}
	}
	return convs, tokens, r.Err()
}

// writeShareGPT writes a ShareGPT JSON list of about size bytes:
// conversations of 2-8 messages with the "from"/"value" shape.
func writeShareGPT(path string, size int64) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var written int64
	put := func(b []byte) {
		n, _ := w.Write(b)
		written += int64(n)
	}
	put([]byte("[\n"))
	var line []byte
	seed := uint64(0x9e3779b97f4a7c15)
	next := func() uint64 { seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17; return seed }
	for i := 0; written < size; i++ {
		line = line[:0]
		if i > 0 {
			line = append(line, ",\n"...)
		}
		line = append(line, `{"id":"sg`...)
		line = strconv.AppendInt(line, int64(i), 10)
		line = append(line, `_0","conversations":[`...)
		msgs := 2 + 2*int(next()%4)
		for m := range msgs {
			if m > 0 {
				line = append(line, ',')
			}
			from := "human"
			if m%2 == 1 {
				from = "gpt"
			}
			line = append(line, `{"from":"`...)
			line = append(line, from...)
			line = append(line, `","value":"`...)
			words := 20 + int(next()%200)
			for k := range words {
				if k > 0 {
					line = append(line, ' ')
				}
				line = append(line, benchWords[next()%uint64(len(benchWords))]...)
				if k%17 == 16 {
					line = append(line, `.\n`...)
				}
			}
			line = append(line, `"}`...)
		}
		line = append(line, "]}"...)
		put(line)
	}
	put([]byte("\n]\n"))
	if err := w.Flush(); err != nil {
		f.Close()
		return 0, err
	}
	return written, f.Close()
}

// toolMtstats generates --stats-records realistic records (recordSpec;
// 20,000 in smoke mode) as JSONL and as a Parquet directory, measures
// mtstats' records/s on both, and runs the DuckDB side by side on the
// same files (toolDuckDB).
func (b *bench) toolMtstats(ctx context.Context, dir string) error {
	const sec = "tools"
	bin := b.bin("mtstats")
	formats := []struct {
		name, question string
		t              *target
	}{
		{"mtstats records/s from Parquet", "default summary, Parquet", atLeast(2e6)},
		{"mtstats records/s from JSONL", "default summary, JSONL", atLeast(500e3)},
	}
	if bin == "" {
		for _, f := range formats {
			b.figs.na(sec, f.name, "records/s", f.t, "tool missing")
		}
		return b.toolDuckDB(ctx, dir, recordFiles{}, 0, nil)
	}
	n := pick(b, 20_000, b.statsRecords)
	files := recordFiles{filepath.Join(dir, "records.jsonl"), filepath.Join(dir, "records.parquet"), filepath.Join(dir, "records-no-itl.parquet")}
	jsonl, parquet := files.jsonl, files.parquet
	t0 := time.Now()
	err := writeRecordFiles(files, recordSpec{n: n, seed: 1})
	defer os.RemoveAll(files.noITL)
	defer os.RemoveAll(parquet)
	defer os.Remove(jsonl)
	if err != nil {
		return err
	}
	sizes := map[string]float64{}
	for _, p := range []string{jsonl, parquet, files.noITL} {
		sz, err := diskSize(p)
		if err != nil {
			return err
		}
		sizes[p] = float64(sz) / 1e6
	}
	b.logf("wrote %d records to %s (%.0f MB), %s (%.0f MB) and %s (%.0f MB) in %v", n, jsonl, sizes[jsonl], parquet, sizes[parquet], files.noITL, sizes[files.noITL], time.Since(t0).Round(time.Millisecond))
	rate := func(question string, wall time.Duration) {
		for _, f := range formats {
			if f.question == question {
				b.figs.add(sec, f.name, "records/s", f.t, float64(n)/wall.Seconds())
			}
		}
	}
	for _, f := range formats {
		path := parquet
		if strings.HasSuffix(f.name, "JSONL") {
			path = jsonl
		}
		b.figs.note(sec, f.name, fmt.Sprintf("%s realistic records (%.0f MB; warmup, retries, ~3 %% failed attempts, one ITL gap per output token), mtstats --format json, the 2-core runs of the DuckDB side by side", thousands(int64(n)), sizes[path]))
	}
	return b.toolDuckDB(ctx, dir, files, n, rate)
}

// diskSize is the size of a file, or of the files of a directory.
func diskSize(path string) (int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	if !st.IsDir() {
		return st.Size(), nil
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, e := range ents {
		if i, err := e.Info(); err == nil && !e.IsDir() {
			n += i.Size()
		}
	}
	return n, nil
}
