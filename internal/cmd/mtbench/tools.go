package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
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
	"github.com/mtkit/mtkit/internal/record"
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

// toolMtconvert converts a generated ShareGPT file (~650 MB; 6.5 MB in
// smoke mode) to conversation JSONL.
func (b *bench) toolMtconvert(ctx context.Context, dir string) error {
	const sec, name = "tools", "mtconvert ShareGPT → JSONL"
	bin := b.bin("mtconvert")
	if bin == "" {
		b.figs.na(sec, name, "MB/s", atLeast(100), "tool missing")
		return nil
	}
	in := filepath.Join(dir, "sharegpt.json")
	size, err := writeShareGPT(in, pick[int64](b, 6500e3, 650e6))
	if err != nil {
		return err
	}
	defer os.Remove(in)
	for range b.runs {
		p, err := runProc(ctx, bin, []string{"-q", "-o", os.DevNull, in}, runOpts{})
		if err != nil {
			return err
		}
		b.logf("mtconvert: %.0f MB in %v (CPU %v, max RSS %.0f MB)", float64(size)/1e6, p.Wall.Round(time.Millisecond), p.CPU.Round(time.Millisecond), float64(p.MaxRSS)/1e6)
		b.figs.add(sec, name, "MB/s", atLeast(100), float64(size)/1e6/p.Wall.Seconds())
	}
	b.figs.note(sec, name, fmt.Sprintf("a generated ShareGPT JSON list of %.0f MB, default filters, output discarded", float64(size)/1e6))
	return nil
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

// toolMtstats summarizes --stats-records records (100,000 in smoke
// mode), from JSONL and from Parquet.
func (b *bench) toolMtstats(ctx context.Context, dir string) error {
	const sec = "tools"
	bin := b.bin("mtstats")
	type format struct {
		name, file string
		t          *target
	}
	formats := []format{
		{"mtstats records/s from Parquet", "records.parquet", atLeast(2e6)},
		{"mtstats records/s from JSONL", "records.jsonl", atLeast(500e3)},
	}
	if bin == "" {
		for _, f := range formats {
			b.figs.na(sec, f.name, "records/s", f.t, "tool missing")
		}
		return nil
	}
	n := pick(b, 100_000, b.statsRecords)
	for _, f := range formats {
		path := filepath.Join(dir, f.file)
		t0 := time.Now()
		if err := writeRecords(path, n); err != nil {
			return err
		}
		st, err := os.Stat(path)
		if err != nil {
			return err
		}
		b.logf("wrote %d records to %s (%.0f MB) in %v", n, f.file, float64(st.Size())/1e6, time.Since(t0).Round(time.Millisecond))
		for range b.runs {
			p, err := runProc(ctx, bin, []string{"--format", "json", path}, runOpts{stdout: os.DevNull})
			if err != nil {
				os.Remove(path)
				return err
			}
			b.logf("mtstats %s: %v (CPU %v, max RSS %.0f MB)", f.file, p.Wall.Round(time.Millisecond), p.CPU.Round(time.Millisecond), float64(p.MaxRSS)/1e6)
			b.figs.add(sec, f.name, "records/s", f.t, float64(n)/p.Wall.Seconds())
		}
		os.Remove(path)
		b.figs.note(sec, f.name, fmt.Sprintf("%s records (%.0f MB), 8 ITL gaps each, mtstats --format json", thousands(int64(n)), float64(st.Size())/1e6))
	}
	return nil
}

// writeRecords writes n synthetic records to path (.parquet or JSONL):
// 1,000 conversations of many turns, varied timings. JSONL is rendered
// from a template of one encoded record, which is much faster than
// encoding each; Parquet goes through the record package's encoder.
func writeRecords(path string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	seed := uint64(0x243f6a8885a308d3)
	next := func() uint64 { seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17; return seed }
	mk := func(i int) *record.Record {
		ttft := int64(20e6 + next()%80e6)
		itl := make([]int64, 8)
		for k := range itl {
			itl[k] = int64(5e6 + next()%20e6)
		}
		start := base.Add(time.Duration(i) * 100 * time.Microsecond)
		lat := ttft + 8*15e6
		ft := start.Add(time.Duration(ttft))
		pt, ct, cached := int64(100+next()%4000), int64(9), int64(next()%100)
		return &record.Record{RunID: "bench", Seq: int64(i), ConversationID: "conv" + strconv.Itoa(i%1000), Turn: i / 1000 % 50,
			Client: i % 64, Phase: record.PhaseMeasure, Model: "mtkit-sim", Scheduled: start, Start: start, FirstToken: &ft,
			End: start.Add(time.Duration(lat)), TTFTNs: &ttft, TPOTNs: record.Ptr(15e6), ITLNs: itl, LatencyNs: lat,
			IntendedLatencyNs: lat, PromptTokens: &pt, CompletionTokens: &ct, CachedTokens: &cached, MaxTokens: 9, Chunks: 9,
			FinishReason: "length", Status: 200}
	}
	var enc record.Encoder
	if strings.HasSuffix(path, ".parquet") {
		enc = record.NewParquetEncoder(w)
		for i := range n {
			if err := enc.Encode(mk(i)); err != nil {
				f.Close()
				return err
			}
		}
		if err := enc.Close(); err != nil {
			f.Close()
			return err
		}
	} else {
		var line []byte
		for i := range n {
			r := mk(i)
			if i%1000 == 0 || line == nil {
				// Re-encode every 1,000 records so that timestamps move on.
				var buf bytes.Buffer
				je := json.NewEncoder(&buf)
				if err := je.Encode(r); err != nil {
					f.Close()
					return err
				}
				line = buf.Bytes()
			} else {
				line = retemplate(line, r)
			}
			w.Write(line)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// retemplate rewrites the seq, conversation_id, turn and ttft_ns of an
// encoded record line for r (same field order as encoding/json emits).
func retemplate(line []byte, r *record.Record) []byte {
	out := make([]byte, 0, len(line)+16)
	rest := line
	for _, kv := range []struct {
		key string
		val []byte
	}{
		{`"seq":`, strconv.AppendInt(nil, r.Seq, 10)},
		{`"conversation_id":`, strconv.AppendQuote(nil, r.ConversationID)},
		{`"turn":`, strconv.AppendInt(nil, int64(r.Turn), 10)},
		{`"ttft_ns":`, strconv.AppendInt(nil, *r.TTFTNs, 10)},
	} {
		i := bytes.Index(rest, []byte(kv.key))
		if i < 0 {
			continue
		}
		i += len(kv.key)
		j := i + bytes.IndexAny(rest[i:], ",}")
		out = append(out, rest[:i]...)
		out = append(out, kv.val...)
		rest = rest[j:]
	}
	return append(out, rest...)
}
