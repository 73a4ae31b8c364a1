package mtrun

import (
	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/tokenize"
	"github.com/mtkit/mtkit/internal/vllmcompat"
)

// applyVLLM maps the vLLM flags onto o; model is -m/--model.
func (v *Flags) applyVLLM(o *Options) error {
	r := &o.Replay
	if v.Model != "" && !v.Given(&v.Tokenizer) {
		// vLLM's --model is the tokenizer's path and, unless
		// --served-model-name is given, the model name.
		o.tokenizer = modelTokenizer("--model", v.Model, o, false)
	}
	if v.ServedModel != "" {
		r.Model = v.ServedModel
	}
	if v.Given(&v.MaxTurns) {
		n := v.MaxTurns
		if n < 0 {
			return command.Usagef("--max-turns %d: want a number of messages, 0 for all (--max-user-turns counts user turns)", n)
		}
		if v.Given(&v.MaxUserTurns) {
			return command.Usagef("--max-turns (messages, vLLM) and --max-user-turns exclude each other")
		}
		r.MaxTurns = (n + 1) / 2
	}
	if v.Given(&v.LimitMin) || v.Given(&v.LimitMax) {
		if err := v.applyTokenLimits(o); err != nil {
			return err
		}
	}
	if v.Given(&v.VLLMRequestTimeout) {
		if v.Given(&v.RequestTimeout) {
			return command.Usagef("--request-timeout-sec (vLLM, stretched for long answers) and --request-timeout exclude each other")
		}
		if v.VLLMRequestTimeout <= 0 {
			return command.Usagef("--request-timeout-sec 0: want a positive time-out")
		}
		r.RequestTimeout, r.StretchTimeout = v.VLLMRequestTimeout, true
	}
	if _, err := vllmcompat.ParsePercentages(v.WarmupPct); err != nil {
		return command.Usagef("--warmup-percentages %q: %v", v.WarmupPct, err)
	}
	if v.Excel || v.StatsJSON != "" || v.Verbose {
		o.VLLM = &vllmcompat.Outputs{
			Excel: v.Excel, StatsJSON: v.StatsJSON, Verbose: v.Verbose,
			Warmup: v.WarmupPct, Model: v.Model, Clients: v.Clients, Active: v.Active, Seed: v.Seed,
			MinTokens: v.LimitMin, MaxTokens: v.LimitMax,
		}
		if o.warmupStep {
			o.VLLM.Warmup = "0%"
		}
		if !v.Given(&v.Active) {
			o.VLLM.Active = -1 // vLLM prints None
		}
	}
	return nil
}

// applyTokenLimits gives --limit-min-tokens and --limit-max-tokens vLLM's
// meaning: N > 0 is sent as is, 0 is the dataset answer's length, a
// negative value sends nothing; when one is positive both must be.
func (v *Flags) applyTokenLimits(o *Options) error {
	r := &o.Replay
	lo, hi := v.LimitMin, v.LimitMax
	switch {
	case v.Given(&v.MaxTokens) || v.Given(&v.MinTokens):
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
// warning goes to o.Warnings.
func modelTokenizer(setting, model string, o *Options, named bool) string {
	spec, warning := tokenize.ForModel(setting, model, o.tokenizer, named)
	if warning != "" {
		o.Warnings = append(o.Warnings, warning)
	}
	return spec
}
