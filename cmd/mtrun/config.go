package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/mtkit/mtkit/internal/cliflag"
	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/inferenceperf"
	"github.com/mtkit/mtkit/internal/replay"
	"github.com/mtkit/mtkit/internal/source"
	"github.com/mtkit/mtkit/internal/sweep"
)

// configFile is --config: a workload config, and what mtrun derived
// from it.
type configFile struct {
	path   string
	dryRun bool
	// iperf is an inference-perf config (nil for vLLM's generate config);
	// plan is what was derived from it, once the input is open.
	iperf *inferenceperf.Config
	plan  *inferenceperf.Plan
}

// dryRunFlag is --dry-run.
func dryRunFlag() cli.Flag {
	return &cli.BoolFlag{Name: "dry-run", Category: cliflag.CatRun, Usage: "print the plan derived from an inference-perf --config (sessions, stages, rates, server) and send nothing"}
}

// loadFlags set the load, which an inference-perf config sets itself.
var loadFlags = []string{"rate", "arrival", "clients", "active", "users", "user-gap", "stages", "sweep",
	"max-concurrency", "loop", "think-time", "request-rate", "warmup-step", "time-scale", "input-format"}

// applyConfig reads --config: vLLM's generate_conversations config is
// the input, as if given as FILE; an inference-perf config sets the
// input, the load and the server settings the command line leaves alone.
func applyConfig(c *cli.Context, o *options) error {
	o.cfg = configFile{path: c.String("config"), dryRun: c.Bool("dry-run")}
	path := o.cfg.path
	if path == "" {
		if o.cfg.dryRun {
			return command.Usagef("--dry-run prints the plan of an inference-perf --config; give one")
		}
		return nil
	}
	if c.NArg() > 0 || c.IsSet("input-file") {
		return command.Usagef("--config %s is the workload; give no input file with it", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return command.Usagef("--config: %v", err)
	}
	o.input = path
	head := data[:min(len(data), source.DetectBytes)]
	if g, ok := source.Lookup("generate"); ok && g.Detect(path, head) {
		if o.cfg.dryRun {
			return command.Usagef("--dry-run: %s is vLLM's generate_conversations config, whose plan mtgen --stats shows; --dry-run is for inference-perf configs", path)
		}
		o.inputFmt = "generate"
		return nil
	}
	if !inferenceperf.Detect(head) {
		return command.Usagef("--config %s: neither an inference-perf config (YAML with load and data sections) nor vLLM's generate_conversations config (JSON with prompt_input)", path)
	}
	cfg, err := inferenceperf.Parse(path, data)
	if err != nil {
		return command.Exit(command.ExitUsage, err)
	}
	for _, f := range loadFlags {
		if c.IsSet(f) {
			return command.Usagef("--%s: the load is set by the inference-perf config %s (load.stages); drop one", f, path)
		}
	}
	o.cfg.iperf, o.inputFmt = cfg, "inference-perf"
	o.warnings = append(o.warnings, cfg.Notes...)
	return applyInferencePerf(c, o, cfg)
}

// applyInferencePerf takes the settings of cfg the command line does not
// give (see docs/inference-perf.md).
func applyInferencePerf(c *cli.Context, o *options, cfg *inferenceperf.Config) error {
	r := &o.replay
	unset := func(names ...string) bool {
		for _, n := range names {
			if c.IsSet(n) {
				return false
			}
		}
		return true
	}
	r.IgnoreEOS = c.Bool("ignore-eos") || unset("ignore-eos") && (!cfg.HasServer || cfg.Server.IgnoreEOS)
	switch s := cfg.Server; {
	case !cfg.HasServer:
	case o.sim:
		o.warnings = append(o.warnings, fmt.Sprintf("--sim: the server of %s (%s, model %q) is not used", cfg.File, s.BaseURL, s.ModelName))
	default:
		if unset("url") {
			r.URL = s.BaseURL
		}
		if s.ModelName != "" && unset("model", "served-model-name") {
			r.Model = s.ModelName
		}
		if s.APIKey != "" && unset("api-key") {
			r.APIKey = s.APIKey
		}
	}
	if unset("api") {
		r.API = replay.APICompletions
		if cfg.API.Chat {
			r.API = replay.APIChat
		}
	}
	if unset("no-stream") {
		r.Stream = cfg.API.Streaming
	}
	if len(cfg.API.Headers) > 0 && r.Headers == nil {
		r.Headers = http.Header{}
	}
	for _, h := range cfg.API.Headers {
		r.Headers.Add(h[0], h[1])
	}
	if n := cfg.API.SessionIDHeader; n != "" {
		t, err := replay.ParseHeaderTemplate(n + ": {conversation_id}")
		if err != nil {
			return command.Usagef("%s: api.session_id_header_key: %v", cfg.File, err)
		}
		r.SessionHeaders = append(r.SessionHeaders, t)
	}
	if n := cfg.API.SessionTokenHeader; n != "" {
		r.SessionTokens = append(r.SessionTokens, n)
	}
	if cfg.Load.RequestTimeout > 0 && unset("request-timeout", "request-timeout-sec") {
		r.RequestTimeout = cfg.Load.RequestTimeout
	}
	if unset("max-retries") {
		r.MaxRetries = 0 // inference-perf does not retry
	}
	if cfg.MetricsInterval > 0 && unset("metrics-interval") {
		o.metrics.interval = cfg.MetricsInterval
	}
	if cfg.Tokenizer != "" && unset("tokenizer") {
		o.tokenizer = modelTokenizer("tokenizer.pretrained_model_name_or_path", cfg.Tokenizer, o, true)
	}
	return nil
}

// usePlan takes the plan of an inference-perf config's input: its
// schedule, its cap on sessions in progress and its stages (each
// record's stage_load is requests=RATE).
func (o *options) usePlan(in *source.Input) {
	p, ok := in.Source.(*source.Planned)
	if !ok {
		return
	}
	o.cfg.plan = p.Plan
	o.replay.MaxInFlight = p.Plan.MaxInFlight
	o.stage.stages = nil
	for _, s := range p.Plan.Config.Load.Stages {
		o.stage.stages = append(o.stage.stages, sweep.Stage{Kind: sweep.Requests, Level: s.Rate, Duration: s.Duration})
	}
}

// dryRun prints the plan and what the command line made of it.
func (o *options) dryRun(w io.Writer) error {
	p := o.cfg.plan
	if p == nil {
		return errors.New("--dry-run: no plan") // applyConfig let a generate config through: a bug
	}
	url := o.replay.URL
	if o.sim {
		url = "the built-in simulator (--sim)"
	}
	model := o.replay.Model
	if model == "" {
		model = "the first id of /v1/models"
	}
	if _, err := fmt.Fprintf(w, "mtrun: %s, model %s, api %s, stream %t, ignore_eos %t, max retries %d, tokenizer %s\n",
		url, model, o.replay.API, o.replay.Stream, o.replay.IgnoreEOS, o.replay.MaxRetries, p.Tokenizer); err != nil {
		return err
	}
	return p.Describe(w)
}
