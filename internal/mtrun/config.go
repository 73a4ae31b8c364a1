package mtrun

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/inferenceperf"
	"github.com/mtkit/mtkit/internal/replay"
	"github.com/mtkit/mtkit/internal/replay/openai"
	"github.com/mtkit/mtkit/internal/source"
	"github.com/mtkit/mtkit/internal/stagerun"
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

// applyConfig reads --config: vLLM's generate_conversations config is
// the input, as if given as FILE; an inference-perf config sets the
// input, the load and the server settings the command line leaves alone.
// positional are the arguments after the options.
func (v *Flags) applyConfig(positional []string, o *Options) error {
	o.cfg = configFile{path: v.Config, dryRun: v.DryRun}
	path := v.Config
	if path == "" {
		if v.DryRun {
			return command.Usagef("--dry-run prints the plan of an inference-perf --config; give one")
		}
		return nil
	}
	if len(positional) > 0 || v.Given(&v.Input) {
		return command.Usagef("--config %s is the workload; give no input file with it", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return command.Usagef("--config: %v", err)
	}
	o.input = path
	head := data[:min(len(data), source.DetectBytes)]
	if g, ok := source.Lookup("generate"); ok && g.Detect(path, head) {
		if v.DryRun {
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
	// The load is the file's.
	if f := v.FirstGiven(&v.Rate, &v.Arrival, &v.Clients, &v.Active, &v.Users, &v.UserGap, &v.Stages, &v.Sweep,
		&v.MaxConcurrency, &v.Loop, &v.ThinkTime, &v.RequestRate, &v.WarmupStep, &v.TimeScale, &v.InputFormat); f != "" {
		return command.Usagef("--%s: the load is set by the inference-perf config %s (load.Stages); drop one", f, path)
	}
	o.cfg.iperf, o.inputFmt = cfg, "inference-perf"
	o.Warnings = append(o.Warnings, cfg.Notes...)
	return v.applyInferencePerf(o, cfg)
}

// applyInferencePerf takes the settings of cfg the command line does not
// give (see docs/inference-perf.md).
func (v *Flags) applyInferencePerf(o *Options, cfg *inferenceperf.Config) error {
	r := &o.Replay
	unset := func(dsts ...any) bool { return v.FirstGiven(dsts...) == "" }
	r.IgnoreEOS = v.IgnoreEOS || unset(&v.IgnoreEOS) && (!cfg.HasServer || cfg.Server.IgnoreEOS)
	switch s := cfg.Server; {
	case !cfg.HasServer:
	case o.sim:
		o.Warnings = append(o.Warnings, fmt.Sprintf("--sim: the server of %s (%s, model %q) is not used", cfg.File, s.BaseURL, s.ModelName))
	default:
		if unset(&v.URL) {
			r.URL = s.BaseURL
		}
		if s.ModelName != "" && unset(&v.Model, &v.ServedModel) {
			r.Model = s.ModelName
		}
		if s.APIKey != "" && unset(&v.APIKey) {
			r.APIKey = s.APIKey
		}
	}
	if unset(&v.API) {
		r.API = openai.APICompletions
		if cfg.API.Chat {
			r.API = openai.APIChat
		}
	}
	if unset(&v.NoStream) {
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
	if cfg.Load.RequestTimeout > 0 && unset(&v.RequestTimeout, &v.VLLMRequestTimeout) {
		r.RequestTimeout = cfg.Load.RequestTimeout
	}
	if unset(&v.MaxRetries) {
		r.MaxRetries = 0 // inference-perf does not retry
	}
	if cfg.MetricsInterval > 0 && unset(&v.MetricsInterval) {
		o.metrics.interval = cfg.MetricsInterval
	}
	if cfg.Tokenizer != "" && unset(&v.Tokenizer) {
		o.tokenizer = modelTokenizer("tokenizer.pretrained_model_name_or_path", cfg.Tokenizer, o, true)
	}
	return nil
}

// usePlan takes the plan of an inference-perf config's input: its
// schedule, its cap on sessions in progress and its stages (each
// record's stage_load is requests=RATE).
func (o *Options) usePlan(in *source.Input) {
	p, ok := in.Source.(*source.Planned)
	if !ok {
		return
	}
	o.cfg.plan = p.Plan
	o.Replay.MaxInFlight = p.Plan.MaxInFlight
	o.Stage.Stages = nil
	if !p.Plan.Probe { // a sweep's stages are known after its probe
		o.Stage.Stages = stagerun.RequestStages(p.Plan.Stages)
	}
}

// dryRun prints the plan and what the command line made of it.
func (o *Options) dryRun(w io.Writer) error {
	p := o.cfg.plan
	if p == nil {
		return errors.New("--dry-run: no plan") // applyConfig let a generate config through: a bug
	}
	url := o.Replay.URL
	if o.sim {
		url = "the built-in simulator (--sim)"
	}
	model := o.Replay.Model
	if model == "" {
		model = "the first id of /v1/models"
	}
	if _, err := fmt.Fprintf(w, "mtrun: %s, model %s, api %s, stream %t, ignore_eos %t, max retries %d, tokenizer %s\n",
		url, model, o.Replay.API, o.Replay.Stream, o.Replay.IgnoreEOS, o.Replay.MaxRetries, p.Tokenizer); err != nil {
		return err
	}
	return p.Describe(w)
}
