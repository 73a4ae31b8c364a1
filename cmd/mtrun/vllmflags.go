package main

import (
	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/tokenize"
	"github.com/mtkit/mtkit/internal/vllmcompat"
)

// applyVLLM maps the vLLM flags onto o; model is -m/--model.
func (v *flagValues) applyVLLM(o *options) error {
	r := &o.replay
	if v.model != "" && !v.given(&v.tokenizer) {
		// vLLM's --model is the tokenizer's path and, unless
		// --served-model-name is given, the model name.
		o.tokenizer = modelTokenizer("--model", v.model, o, false)
	}
	if v.servedModel != "" {
		r.Model = v.servedModel
	}
	if v.given(&v.maxTurns) {
		n := v.maxTurns
		if n < 0 {
			return command.Usagef("--max-turns %d: want a number of messages, 0 for all (--max-user-turns counts user turns)", n)
		}
		if v.given(&v.maxUserTurns) {
			return command.Usagef("--max-turns (messages, vLLM) and --max-user-turns exclude each other")
		}
		r.MaxTurns = (n + 1) / 2
	}
	if v.given(&v.limitMin) || v.given(&v.limitMax) {
		if err := v.applyTokenLimits(o); err != nil {
			return err
		}
	}
	if v.given(&v.vllmRequestTimeout) {
		if v.given(&v.requestTimeout) {
			return command.Usagef("--request-timeout-sec (vLLM, stretched for long answers) and --request-timeout exclude each other")
		}
		if v.vllmRequestTimeout <= 0 {
			return command.Usagef("--request-timeout-sec 0: want a positive time-out")
		}
		r.RequestTimeout, r.StretchTimeout = v.vllmRequestTimeout, true
	}
	if _, err := vllmcompat.ParsePercentages(v.warmupPct); err != nil {
		return command.Usagef("--warmup-percentages %q: %v", v.warmupPct, err)
	}
	if v.excel || v.statsJSON != "" || v.verbose {
		o.vllm = &vllmcompat.Outputs{
			Excel: v.excel, StatsJSON: v.statsJSON, Verbose: v.verbose,
			Warmup: v.warmupPct, Model: v.model, Clients: v.clients, Active: v.active, Seed: v.seed,
			MinTokens: v.limitMin, MaxTokens: v.limitMax,
		}
		if o.warmupStep {
			o.vllm.Warmup = "0%"
		}
		if !v.given(&v.active) {
			o.vllm.Active = -1 // vLLM prints None
		}
	}
	return nil
}

// applyTokenLimits gives --limit-min-tokens and --limit-max-tokens vLLM's
// meaning: N > 0 is sent as is, 0 is the dataset answer's length, a
// negative value sends nothing; when one is positive both must be.
func (v *flagValues) applyTokenLimits(o *options) error {
	r := &o.replay
	lo, hi := v.limitMin, v.limitMax
	switch {
	case v.given(&v.maxTokens) || v.given(&v.minTokens):
		return command.Usagef("--limit-min-tokens/--limit-max-tokens (vLLM) exclude --max-tokens and --min-tokens")
	case (lo > 0 || hi > 0) && (lo < 1 || hi < 1):
		return command.Usagef("--limit-min-tokens %d --limit-max-tokens %d: when one is set both must be positive, as in vLLM (--clamp-min-tokens/--clamp-max-tokens bound the dataset's target instead)", lo, hi)
	case lo > hi && hi > 0:
		return command.Usagef("--limit-min-tokens %d is above --limit-max-tokens %d", lo, hi)
	}
	switch {
	case hi > 0:
		r.FixedMaxTokens = hi
	case hi < 0:
		r.FixedMaxTokens = -1
	}
	switch {
	case lo > 0:
		r.FixedMinTokens = lo
	case lo == 0:
		r.SendMinTokens = true // min_tokens = max_tokens = the dataset's length
	}
	return nil
}

// modelTokenizer is the tokenizer that setting (vLLM's --model, or an
// inference-perf config's tokenizer) names, see tokenize.ForModel; its
// warning goes to o.warnings.
func modelTokenizer(setting, model string, o *options, named bool) string {
	spec, warning := tokenize.ForModel(setting, model, o.tokenizer, named)
	if warning != "" {
		o.warnings = append(o.warnings, warning)
	}
	return spec
}
