package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mtkit/mtkit/internal/cliflag"
	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/tokenize"
	"github.com/mtkit/mtkit/internal/vllmcompat"
)

// vllmFlags are the flags of vLLM's benchmarks/multi_turn/
// benchmark_serving_multi_turn.py that mtrun has under vLLM's name only,
// with vLLM's meaning (where mtkit had a flag of the same name with
// another meaning, mtkit's is now under the name given in the usage).
// The flags both share with the same meaning are declared in newApp.
func vllmFlags(v *flagValues) []cli.Flag {
	timeout := cliflag.Duration("request-timeout-sec", &v.vllmRequestTimeout, "per-request `TIMEOUT`, raised to 0.2 s per max_tokens for long answers (--request-timeout is fixed)")
	flags := []cli.Flag{
		&cli.StringFlag{Name: "served-model-name", DefaultText: "--model", Usage: "the model `NAME` sent in requests"},
		&cli.IntFlag{Name: "limit-min-tokens", DefaultText: "not sent", Usage: "send min_tokens `N`; 0: the dataset answer's length, -1: none (--clamp-min-tokens bounds the dataset's target instead)"},
		&cli.IntFlag{Name: "limit-max-tokens", DefaultText: "not sent", Usage: "send max_tokens `N`; 0: the dataset answer's length, -1: none (--clamp-max-tokens bounds the dataset's target instead)"},
		timeout,
		&cli.BoolFlag{Name: "excel-output", Aliases: []string{"e"}, Usage: "write statistics_<clients>_clients__<time>.xlsx (sheets Summary and Raw data, vLLM's columns)"},
		&cli.StringFlag{Name: "stats-json-output", Usage: "write the per-request statistics (ttft_ms, tpot_ms, ...) as a JSON list to `FILE`"},
		&cli.StringFlag{Name: "warmup-percentages", Value: "0%", Usage: "summarise the workbook without the first `P%`[,P%...] of the requests (ignored with --warmup-step)"},
		&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "one line per request on stderr, and time_between_user_turns_sec in the workbook"},
		&cli.BoolFlag{Name: "no-early-stop", Usage: "do not stop when one client is done; mtrun never stops early, so this changes nothing"},
		&cli.BoolFlag{Name: "trust-remote-code", Usage: "accepted for vLLM command lines; mtrun runs no tokenizer code"},
	}
	cliflag.SetCategory(cliflag.CatVLLM, flags)
	return flags
}

// applyVLLM maps the vLLM flags onto o; model is -m/--model.
func applyVLLM(c *cli.Context, o *options, v *flagValues) error {
	r := &o.replay
	if model := c.String("model"); model != "" {
		// vLLM's --model is the tokenizer's path and, unless
		// --served-model-name is given, the model name.
		if !c.IsSet("tokenizer") {
			o.tokenizer = modelTokenizer("--model", model, o, false)
		}
	}
	if name := c.String("served-model-name"); name != "" {
		r.Model = name
	}
	if c.IsSet("max-turns") {
		n := c.Int("max-turns")
		if n < 0 {
			return command.Usagef("--max-turns %d: want a number of messages, 0 for all (--max-user-turns counts user turns)", n)
		}
		if c.IsSet("max-user-turns") {
			return command.Usagef("--max-turns (messages, vLLM) and --max-user-turns exclude each other")
		}
		r.MaxTurns = (n + 1) / 2
	}
	if c.IsSet("limit-min-tokens") || c.IsSet("limit-max-tokens") {
		if err := applyTokenLimits(c, o); err != nil {
			return err
		}
	}
	if c.IsSet("request-timeout-sec") {
		if c.IsSet("request-timeout") {
			return command.Usagef("--request-timeout-sec (vLLM, stretched for long answers) and --request-timeout exclude each other")
		}
		if v.vllmRequestTimeout <= 0 {
			return command.Usagef("--request-timeout-sec 0: want a positive time-out")
		}
		r.RequestTimeout, r.StretchTimeout = v.vllmRequestTimeout, true
	}
	p, err := vllmcompat.ParsePercentages(c.String("warmup-percentages"))
	if err != nil {
		return command.Usagef("--warmup-percentages %q: %v", c.String("warmup-percentages"), err)
	}
	if c.Bool("excel-output") || c.String("stats-json-output") != "" || c.Bool("verbose") {
		o.vllm = &vllmcompat.Outputs{
			Excel: c.Bool("excel-output"), StatsJSON: c.String("stats-json-output"), Verbose: c.Bool("verbose"),
			Warmup: p, Model: c.String("model"), Clients: r.Clients, Active: r.Active, Seed: v.seed,
			MinTokens: c.Int("limit-min-tokens"), MaxTokens: c.Int("limit-max-tokens"),
		}
		if o.warmupStep {
			o.vllm.Warmup = []float64{0}
		}
		if !c.IsSet("active") {
			o.vllm.Active = -1 // vLLM prints None
		}
	}
	return nil
}

// applyTokenLimits gives --limit-min-tokens and --limit-max-tokens vLLM's
// meaning: N > 0 is sent as is, 0 is the dataset answer's length, a
// negative value sends nothing; when one is positive both must be.
func applyTokenLimits(c *cli.Context, o *options) error {
	r := &o.replay
	lo, hi := c.Int("limit-min-tokens"), c.Int("limit-max-tokens")
	switch {
	case c.IsSet("max-tokens") || c.IsSet("min-tokens"):
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
// inference-perf config's tokenizer) names: the model directory when it
// holds a tokenizer mtrun can read, else the current one with a warning
// (mtrun downloads nothing). A name that is no directory here is
// warned about when it has a path separator, or always when named is set
// (the setting names a tokenizer, not a served model).
func modelTokenizer(setting, model string, o *options, named bool) string {
	if _, err := os.Stat(model); err == nil {
		_, err := tokenize.Load(model)
		if err == nil {
			return model
		}
		o.warnings = append(o.warnings, fmt.Sprintf("%s %s: %v; counting tokens with %s (set --tokenizer)", setting, model, err, o.tokenizer))
	} else if named || strings.ContainsRune(model, os.PathSeparator) {
		o.warnings = append(o.warnings, fmt.Sprintf("%s %s: no such directory here, so no tokenizer from it; counting tokens with %s (set --tokenizer)", setting, model, o.tokenizer))
	}
	return o.tokenizer
}
