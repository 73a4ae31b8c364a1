// Package vllmcompat writes what vLLM's benchmark_serving_multi_turn.py
// writes besides mtkit's records, from the run's records: the workbook of
// --excel-output (through the mtstats program, see vllmbook), the
// per-request list of --stats-json-output, the per-request lines of
// --verbose, and --output-file's JSON list of conversations.
package vllmcompat

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/record"
)

// Outputs writes what vLLM's --excel-output, --stats-json-output and
// --verbose write, from the run's records. A nil *Outputs writes nothing.
// The workbook is written by the mtstats program (mtstats --xlsx-layout
// vllm, package vllmbook), so that its Excel library is not part of mtrun,
// from the records file (see Collect).
type Outputs struct {
	Excel     bool   // statistics_<clients>_clients__<time>.xlsx in the working directory
	StatsJSON string // the per-request list's file
	Verbose   bool   // a line per request on the log
	// Warmup is the workbook's --warmup-percentages, as given (see
	// ParsePercentages).
	Warmup string
	// The test parameters of vLLM's summary; Active < 0 is vLLM's None.
	Model                string
	Clients, Active      int
	Seed                 uint64
	MinTokens, MaxTokens int
	// Redact removes the run's secrets from the workbook's parameters and
	// from mtstats' error text, as the manifest's (nil: none).
	Redact func(string) string
	// Exe is where mtstats is looked for first: beside this executable
	// (empty: the running one), then on PATH; see command.Sibling.
	Exe string

	mu       sync.Mutex
	requests []Request // for StatsJSON
	log      io.Writer
	// input is the records file mtstats reads: the run's --records, or
	// copyPath.
	input string
	// copies writes the records' copy for mtstats to the file copyPath;
	// nil unless Excel with the records on stdout, and after copyErr.
	copies   record.Encoder
	copyPath string
	// copyErr is the copy's first write error: the copy stops, the run
	// and its records go on, and Write reports it instead of the workbook.
	copyErr error
}

// Collect returns enc, also keeping vLLM's row of every record (after the
// run's redaction, which happens before enc); log receives the --verbose
// lines and the workbook's name. records is the run's --records: the
// workbook is made from that file, which Write reads after the outputs are
// closed; when records go to stdout ("-" or ""), Collect keeps a
// compressed copy of the records the workbook uses in a temporary file
// (Remove removes it).
func (v *Outputs) Collect(enc record.Encoder, records string, log io.Writer) (record.Encoder, error) {
	if v == nil {
		return enc, nil
	}
	v.log = log
	v.input = records
	if v.Excel && (records == "" || records == "-") {
		f, err := os.CreateTemp("", "mtrun-excel-*.jsonl.zst")
		if err != nil {
			return nil, fmt.Errorf("--excel-output: %w", err)
		}
		v.copyPath = f.Name()
		f.Close()
		if v.copies, err = record.Create(v.copyPath, nil); err != nil {
			return nil, fmt.Errorf("--excel-output: %w", err)
		}
		v.input = v.copyPath
	}
	return &tee{v: v, enc: enc}, nil
}

// Remove removes the records' copy for the workbook, if any.
func (v *Outputs) Remove() {
	if v == nil || v.copyPath == "" {
		return
	}
	if v.copies != nil {
		v.copies.Close()
		v.copies = nil
	}
	os.Remove(v.copyPath)
	v.copyPath = ""
}

type tee struct {
	v   *Outputs
	enc record.Encoder
}

func (t *tee) Encode(r *record.Record) error {
	// The run's records first: the copy is only for the workbook, and
	// its failure (a full $TMPDIR) must neither lose a record nor stop
	// the run.
	if err := t.enc.Encode(r); err != nil {
		return err
	}
	q, ok := RequestFrom(r)
	t.v.mu.Lock()
	if ok && t.v.StatsJSON != "" {
		t.v.requests = append(t.v.requests, q)
	}
	if c := t.v.copies; c != nil && ok {
		if err := c.Encode(r); err != nil {
			t.v.copyErr = fmt.Errorf("the records' copy %s: %w", t.v.copyPath, err)
			c.Close()
			t.v.copies = nil
		}
	}
	t.v.mu.Unlock()
	if ok && t.v.Verbose {
		fmt.Fprintf(t.v.log, "mtrun: client %d conversation %s user turn %d: ttft_ms %.2f, tpot_ms %.2f, latency_ms %.2f, input_num_tokens %d, output_num_tokens %d\n",
			q.ClientID, q.ConversationID, r.Turn, q.TTFTMs, q.TPOTMs, q.LatencyMs, q.InputNumTokens, q.OutputNumTokens)
	}
	return nil
}

func (t *tee) Flush() error { return t.enc.Flush() }

func (t *tee) Close() error { return t.enc.Close() }

// Write writes the statistics JSON and has mtstats write the workbook.
// now names the workbook as vLLM does
// (statistics_<clients>_clients__<dd-mm-YYYY_HH-MM-SS>.xlsx, in the
// working directory).
func (v *Outputs) Write(ctx context.Context, conversations int, warmupSec *float64, now time.Time) error {
	if v == nil {
		return nil
	}
	if v.StatsJSON != "" {
		b, err := json.MarshalIndent(v.requests, "", "  ")
		if err != nil {
			return err
		}
		if dir := filepath.Dir(v.StatsJSON); dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("--stats-json-output: %w", err)
			}
		}
		if err := os.WriteFile(v.StatsJSON, append(b, '\n'), 0o644); err != nil {
			return fmt.Errorf("--stats-json-output: %w", err)
		}
	}
	if !v.Excel {
		return nil
	}
	if v.copyErr != nil {
		v.Remove()
		return fmt.Errorf("--excel-output: no workbook: %w", v.copyErr)
	}
	name := fmt.Sprintf("statistics_%d_clients__%s.xlsx", v.Clients, now.Format("02-01-2006_15-04-05"))
	if err := v.runMtstats(ctx, v.mtstatsArgs(name, conversations, warmupSec)); err != nil {
		return fmt.Errorf("--excel-output: %w", err)
	}
	fmt.Fprintf(v.log, "mtrun: client metrics exported to file: %s\n", name)
	return nil
}

// mtstatsArgs are the arguments of mtstats writing the workbook name.
func (v *Outputs) mtstatsArgs(name string, conversations int, warmupSec *float64) []string {
	var active any = v.Active
	if v.Active < 0 {
		active = nil
	}
	params := []Param{{Name: "model", Value: v.Model}, {Name: "num_clients", Value: v.Clients},
		{Name: "num_conversations", Value: conversations}, {Name: "active_conversations", Value: active}, {Name: "seed", Value: v.Seed}}
	if v.MinTokens > 0 {
		params = append(params, Param{Name: "min_tokens", Value: v.MinTokens})
	}
	if v.MaxTokens > 0 {
		params = append(params, Param{Name: "max_tokens", Value: v.MaxTokens})
	}
	if warmupSec != nil {
		params = append(params, Param{Name: WarmupRuntimeParam, Value: *warmupSec})
	}
	layout := "vllm"
	if v.Verbose {
		layout = "vllm-verbose"
	}
	// The report mtstats prints is discarded: --no-retention skips the
	// cache retention analysis, which only that report shows.
	args := []string{"--no-metrics", "--no-retention", "--xlsx", name, "--xlsx-layout", layout, "--warmup-percentages", v.Warmup}
	for _, p := range params {
		args = append(args, "--xlsx-param", v.redact(p.String()))
	}
	return append(args, "--", v.input)
}

func (v *Outputs) redact(s string) string {
	if v.Redact == nil {
		return s
	}
	return v.Redact(s)
}

// runMtstats runs mtstats with args on the records (removing their copy
// afterwards, if any); the report mtstats prints is not wanted, its
// diagnostics go to the error. With no record, mtstats writes the
// workbook (parameters only) and succeeds. Ending ctx kills mtstats.
func (v *Outputs) runMtstats(ctx context.Context, args []string) error {
	defer v.Remove()
	if v.copies != nil {
		if err := v.copies.Close(); err != nil {
			return fmt.Errorf("the records' copy %s: %w", v.copyPath, err)
		}
		v.copies = nil
	}
	exe, err := command.Sibling("mtstats", v.Exe)
	if err != nil {
		return err
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", exe, strings.Join(args, " "), err, v.redact(strings.TrimSpace(stderr.String())))
	}
	return nil
}

// jsonList turns the JSON lines written to it (one conversation per
// Write, as conv.Writer writes them) into one JSON list, as vLLM's
// --output-file holds; Close ends the list and closes out.
type jsonList struct {
	out io.WriteCloser
	n   int
}

func (l *jsonList) Write(p []byte) (int, error) {
	sep := ",\n"
	if l.n == 0 {
		sep = "[\n"
	}
	l.n++
	if _, err := io.WriteString(l.out, sep); err != nil {
		return 0, err
	}
	line := p
	if len(line) > 0 && line[len(line)-1] == '\n' {
		line = line[:len(line)-1]
	}
	if _, err := l.out.Write(line); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush flushes out when it can.
func (l *jsonList) Flush() error {
	if f, ok := l.out.(interface{ Flush() error }); ok {
		return f.Flush()
	}
	return nil
}

func (l *jsonList) Close() error {
	end := "\n]\n"
	if l.n == 0 {
		end = "[]\n"
	}
	_, err := io.WriteString(l.out, end)
	if cerr := l.out.Close(); err == nil {
		err = cerr
	}
	return err
}

// ConversationsOut is out, as a JSON list when path ends in .json (what
// vLLM's --output-file holds); conv.Writer writes one conversation per
// Write.
func ConversationsOut(path string, out io.WriteCloser) io.WriteCloser {
	if filepath.Ext(path) == ".json" {
		return &jsonList{out: out}
	}
	return out
}

// ParsePercentages reads vLLM's --warmup-percentages: "0%,50%" (the % is
// optional), each in [0, 100), sorted.
func ParsePercentages(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(strings.ReplaceAll(f, "%", "")), 64)
		if err != nil || !(v >= 0 && v < 100) {
			return nil, fmt.Errorf("%q is not a percentage in [0%%, 100%%)", f)
		}
		out = append(out, v/100)
	}
	slices.Sort(out)
	return out, nil
}
