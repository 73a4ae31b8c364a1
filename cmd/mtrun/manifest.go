package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/replay"
)

// manifest describes a run: what was asked, with which software, on
// which input and host. Secrets are never written.
type manifest struct {
	RunID      string          `json:"run_id"`
	Started    time.Time       `json:"started"`
	Ended      *time.Time      `json:"ended,omitempty"`
	Version    string          `json:"mtkit_version"`
	GoVersion  string          `json:"go_version"`
	Host       string          `json:"host"`
	OS         string          `json:"os"`
	CPUs       int             `json:"cpus"`
	Args       []string        `json:"args"`
	Input      string          `json:"input"`
	InputHash  string          `json:"input_sha256"`
	Tokenizer  string          `json:"tokenizer"`
	URL        string          `json:"url"`
	Model      string          `json:"model,omitempty"`
	MaxModel   int             `json:"max_model_len,omitempty"`
	Settings   map[string]any  `json:"settings"`
	Summary    *replay.Summary `json:"summary,omitempty"`
	Simulated  bool            `json:"simulated"`
	Records    string          `json:"records"`
	ConvOutput string          `json:"conversations_output,omitempty"`
	Metrics    *seriesInfo     `json:"metrics,omitempty"`
}

// manifestPath is --manifest, or the records file name + ".manifest.json";
// "" when records go to stdout and no manifest was asked for.
func manifestPath(o *options) string {
	if o.manifest != "" {
		return o.manifest
	}
	if o.records == "" || o.records == "-" {
		return ""
	}
	base := o.records
	for _, ext := range []string{".gz", ".zst", ".parquet", ".jsonl", ".json"} {
		base = strings.TrimSuffix(base, ext)
	}
	return base + ".manifest.json"
}

// writeManifest writes the manifest; sum is nil for the one written
// before the run (no summary, no end time), which also checks that the
// path can be written. A manifest file is replaced atomically, so a
// failing write leaves the earlier one.
func writeManifest(o *options, sum *replay.Summary, digest string, started time.Time, stdout io.Writer) error {
	path := manifestPath(o)
	if path == "" || path == "-" && sum == nil {
		return nil
	}
	host, _ := os.Hostname()
	r := &o.replay
	m := manifest{
		RunID: r.RunID, Started: started.UTC(), Version: command.Version(), GoVersion: runtime.Version(),
		Host: host, OS: runtime.GOOS + "/" + runtime.GOARCH, CPUs: runtime.NumCPU(), Args: o.args,
		Input: o.input, InputHash: digest, Tokenizer: o.tokenizer, URL: r.URL, Model: r.Model,
		MaxModel: r.MaxModelLen, Simulated: o.sim, Records: o.records, ConvOutput: o.convOut,
		Metrics: o.metrics.manifest(),
		Settings: map[string]any{
			"api": r.API, "stream": r.Stream, "include_usage": r.IncludeUsage, "n": r.N,
			"clients": r.Clients, "active": r.Active, "sampling": r.Sampling, "rate": r.Rate,
			"poisson": r.Poisson, "max_concurrency": r.MaxInFlight, "loop": r.Loop,
			"schedule": o.scheduleName(), "users": o.sched.users, "user_gap": o.sched.userGap.String(), "time_scale": o.sched.timeScale,
			"max_requests": r.MaxRequests, "duration": r.Duration.String(), "max_turns": r.MaxTurns,
			"warmup_turns": r.WarmupTurns, "warmup_step": o.warmupStep, "max_tokens": r.FixedMaxTokens,
			"limit_min_tokens": r.LimitMinTokens, "limit_max_tokens": r.LimitMaxTokens,
			"max_retries": r.MaxRetries, "on_failure": r.OnFailure, "request_timeout": r.RequestTimeout.String(),
			"headers": headerNames(o), "extra_body": r.ExtraBody, "sim_config": o.simSpec,
			"segment": o.scale.seg.String(), "start_at": o.scale.startAtString(),
		},
	}
	if sum != nil {
		end := started.Add(sum.Elapsed).UTC()
		m.RunID, m.Model, m.MaxModel, m.Summary, m.Ended = sum.RunID, sum.Model, sum.MaxModelLen, sum, &end
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err == nil {
		b, err = replay.NewRedactor(r).JSON(b) // the URL's userinfo, echoed model names
	}
	if err != nil {
		return err
	}
	if path == "-" {
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	if err := writeFileAtomic(path, append(b, '\n')); err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	return nil
}

// writeFileAtomic writes data to a temporary file next to path and
// renames it into place; a path that exists and is not a regular file
// (/dev/null, a pipe) is written directly.
func writeFileAtomic(path string, data []byte) error {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return os.WriteFile(path, data, 0o644)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// headerNames lists the extra headers sent, without their values.
func headerNames(o *options) []string {
	var names []string
	for k := range o.replay.Headers {
		names = append(names, k)
	}
	return names
}
