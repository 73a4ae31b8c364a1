package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/stats"
)

// vllmOutputs writes what vLLM's --excel-output, --stats-json-output and
// --verbose write, from the run's records.
type vllmOutputs struct {
	excel     bool
	statsJSON string
	verbose   bool
	warmup    []float64
	// test parameters of vLLM's summary
	model                string
	clients, active      int
	seed                 uint64
	minTokens, maxTokens int

	mu       sync.Mutex
	requests []stats.VLLMRequest
	log      io.Writer
}

// collect returns enc, also keeping vLLM's row of every record (after the
// run's redaction, which happens before enc).
func (v *vllmOutputs) collect(enc record.Encoder, log io.Writer) record.Encoder {
	if v == nil {
		return enc
	}
	v.log = log
	return &vllmTee{v: v, enc: enc}
}

type vllmTee struct {
	v   *vllmOutputs
	enc record.Encoder
}

func (t *vllmTee) Encode(r *record.Record) error {
	if q, ok := stats.VLLMRequestFrom(r); ok {
		t.v.mu.Lock()
		t.v.requests = append(t.v.requests, q)
		t.v.mu.Unlock()
		if t.v.verbose {
			fmt.Fprintf(t.v.log, "mtrun: client %d conversation %s turn %d: ttft_ms %.2f, tpot_ms %.2f, latency_ms %.2f, input_num_tokens %d, output_num_tokens %d\n",
				q.ClientID, q.ConversationID, r.Turn, q.TTFTMs, q.TPOTMs, q.LatencyMs, q.InputNumTokens, q.OutputNumTokens)
		}
	}
	return t.enc.Encode(r)
}

func (t *vllmTee) Flush() error { return t.enc.Flush() }

func (t *vllmTee) Close() error { return t.enc.Close() }

// write writes the statistics JSON and the workbook. now names the
// workbook as vLLM does (statistics_<clients>_clients__<dd-mm-YYYY_HH-MM-SS>.xlsx,
// in the working directory).
func (v *vllmOutputs) write(conversations int, warmupSec *float64, now time.Time) error {
	if v == nil {
		return nil
	}
	if v.statsJSON != "" {
		b, err := json.MarshalIndent(v.requests, "", "  ")
		if err != nil {
			return err
		}
		if dir := filepath.Dir(v.statsJSON); dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("--stats-json-output: %w", err)
			}
		}
		if err := os.WriteFile(v.statsJSON, append(b, '\n'), 0o644); err != nil {
			return fmt.Errorf("--stats-json-output: %w", err)
		}
	}
	if !v.excel {
		return nil
	}
	var active any = v.active
	if v.active < 0 {
		active = nil
	}
	params := []stats.VLLMParam{{Name: "model", Value: v.model}, {Name: "num_clients", Value: v.clients},
		{Name: "num_conversations", Value: conversations}, {Name: "active_conversations", Value: active}, {Name: "seed", Value: v.seed}}
	if v.minTokens > 0 {
		params = append(params, stats.VLLMParam{Name: "min_tokens", Value: v.minTokens})
	}
	if v.maxTokens > 0 {
		params = append(params, stats.VLLMParam{Name: "max_tokens", Value: v.maxTokens})
	}
	name := fmt.Sprintf("statistics_%d_clients__%s.xlsx", v.clients, now.Format("02-01-2006_15-04-05"))
	wb := &stats.VLLMWorkbook{Params: params, Warmup: v.warmup, WarmupRuntimeSec: warmupSec, Verbose: v.verbose, Requests: v.requests}
	if err := stats.WriteVLLMXLSX(name, wb); err != nil {
		return fmt.Errorf("--excel-output: %w", err)
	}
	fmt.Fprintf(v.log, "mtrun: client metrics exported to file: %s\n", name)
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

// conversationsOut is out, as a JSON list when path ends in .json.
func conversationsOut(path string, out io.WriteCloser) io.WriteCloser {
	if filepath.Ext(path) == ".json" {
		return &jsonList{out: out}
	}
	return out
}
