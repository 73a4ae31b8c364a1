package cliflag

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mtkit/mtkit/internal/command"
)

// Help categories (headings in --help, which lists the flags in the order
// they are declared). A tool uses the ones it needs, and may set a shared
// flag's Category to another.
const (
	CatInput    = "Input:"
	CatOutput   = "Output:"
	CatServer   = "Server and requests:"
	CatLoad     = "Load (who sends when):"
	CatLimits   = "Limits (how much):"
	CatTokens   = "Output tokens:"
	CatFailures = "Failures and time-outs:"
	CatRun      = "Run:"
	CatVLLM     = "vLLM benchmark_serving_multi_turn.py (vLLM's names and meanings):"
)

// The usage texts of the shared flags. A flag built by one of the
// constructors below has the same name, aliases, type and usage in every
// tool (TestVocabulary checks it against every tool's flags).
const (
	seedUsage      = "`SEED` (0 to 2^64-1) of the tool's random choices: the same seed and inputs give the same output"
	tokenizerUsage = "tokenizer `SPEC`: a built-in encoding (o200k_base, cl100k_base), a model name (gpt-4o), a tokenizer.json file, a model directory, or none"
	outputUsage    = "write conversations to `FILE`: - is stdout, .gz and .zst compress"
	quietUsage     = "print no summary on stderr (warnings and errors still go there)"
	strictUsage    = "stop with an error at the first malformed input record instead of skipping it"
	maxTurnsUsage  = "keep the first `N` messages (user and assistant: vLLM's turns) of each conversation; 0: all"
	thinkTimeUsage = "think time `DIST` before each user message but the first: none, a duration (2s) or a distribution (exponential:mean=2s, uniform:1s:5s)"
	metricsUsage   = "server metrics series `FILE` (JSONL; mtrun writes it, mtstats reads it)"
	noMetricsUsage = "no server metrics: mtrun scrapes none, mtstats reads no series"
	configUsage    = "workload config `FILE`: vLLM's generate_conversations JSON; mtrun also runs inference-perf's YAML config (docs/inference-perf.md), told apart by content"
	formatUsage    = "input `FORMAT`: auto (detected from each input's content) or a format name (an unknown name lists them all; docs/mtrun.md, Inputs)"
)

// Seed is --seed: the tool's own random choices, as an unsigned 64-bit
// number in every tool.
func Seed(dst *uint64) *cli.GenericFlag {
	if dst == nil {
		dst = new(uint64)
	}
	return &cli.GenericFlag{Name: "seed", Value: seedValue{dst}, Usage: seedUsage, Category: CatRun}
}

// Config is -c/--config, the workload config file.
func Config(dst *string) *cli.StringFlag {
	return &cli.StringFlag{Name: "config", Aliases: []string{"c"}, Destination: dst, Usage: configUsage, Category: CatInput}
}

// Tokenizer is --tokenizer (-t), the token counter; def is the tool's
// default ("none" when the tool counts nothing unless asked).
func Tokenizer(dst *string, def string) *cli.StringFlag {
	return &cli.StringFlag{Name: "tokenizer", Aliases: []string{"t"}, Value: def, Destination: dst, Usage: tokenizerUsage, Category: CatInput}
}

// Output is -o/--output, where the tool writes conversations; def is ""
// (none) or "-" (stdout).
func Output(dst *string, def string) *cli.StringFlag {
	f := &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: def, Destination: dst, Usage: outputUsage, Category: CatOutput}
	if def == "" {
		f.DefaultText = "none"
	}
	return f
}

// Quiet is -q/--quiet.
func Quiet(dst *bool) *cli.BoolFlag {
	return &cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Destination: dst, Usage: quietUsage, DisableDefaultText: true, Category: CatOutput}
}

// Strict is --strict.
func Strict(dst *bool) *cli.BoolFlag {
	return &cli.BoolFlag{Name: "strict", Destination: dst, Usage: strictUsage, DisableDefaultText: true, Category: CatInput}
}

// MaxTurns is --max-turns, counted in messages as vLLM counts turns: N
// messages are (N+1)/2 user turns.
func MaxTurns(dst *int) *cli.IntFlag {
	return &cli.IntFlag{Name: "max-turns", Destination: dst, Usage: maxTurnsUsage, DefaultText: "0", Category: CatLimits}
}

// ThinkTime is --think-time, a distribution of seconds (dist syntax);
// defText says what the tool does when it is not given.
func ThinkTime(dst *string, defText string) *cli.StringFlag {
	return &cli.StringFlag{Name: "think-time", Destination: dst, Usage: thinkTimeUsage, DefaultText: defText, Category: CatLoad}
}

// InputFormat is --input-format, the input's format when it is not to be
// detected; def is "auto".
func InputFormat(dst *string) *cli.StringFlag {
	return &cli.StringFlag{Name: "input-format", Value: "auto", Destination: dst, Usage: formatUsage, Category: CatInput}
}

// CatMetrics is the heading of the server metrics flags.
const CatMetrics = "Server metrics (docs/server-metrics.md):"

// MetricsFile is --metrics-file, the server metrics series; defText says
// where it is when not given.
func MetricsFile(dst *string, defText string) *cli.StringFlag {
	return &cli.StringFlag{Name: "metrics-file", Destination: dst, DefaultText: defText, Usage: metricsUsage, Category: CatMetrics}
}

// NoMetrics is --no-metrics.
func NoMetrics(dst *bool) *cli.BoolFlag {
	return &cli.BoolFlag{Name: "no-metrics", Destination: dst, DisableDefaultText: true, Usage: noMetricsUsage, Category: CatMetrics}
}

// Duration is a duration flag read by ParseDuration (a bare number is
// seconds). usage names the placeholder in backquotes; the default shown
// is *dst, none when it is 0. dst may be nil: cli.Context.Duration(name)
// reads the value too.
func Duration(name string, dst *time.Duration, usage string) *cli.GenericFlag {
	if dst == nil {
		dst = new(time.Duration)
	}
	return &cli.GenericFlag{Name: name, Value: durationValue{dst}, Usage: usage}
}

// Alias is a hidden flag old that sets flag name to its own value, for
// spellings that scripts may still use. A non-empty note is printed to
// stderr ("TOOL: --old is deprecated: NOTE") when the alias is used;
// vLLM's spellings, which mtrun keeps on purpose, have none. Giving both
// old and name is a usage error.
func Alias(old, name, note string) *cli.StringFlag {
	return &cli.StringFlag{Name: old, Hidden: true, Action: func(c *cli.Context, v string) error {
		return setFromAlias(c, old, name, v, note)
	}}
}

// BoolAlias is Alias for an old spelling that takes no value; using it
// sets name to value (for a bool flag, "true").
func BoolAlias(old, name, value, note string) *cli.BoolFlag {
	return &cli.BoolFlag{Name: old, Hidden: true, Action: func(c *cli.Context, set bool) error {
		if !set {
			return nil // --old=false: nothing asked
		}
		return setFromAlias(c, old, name, value, note)
	}}
}

func setFromAlias(c *cli.Context, old, name, v, note string) error {
	if c.IsSet(name) {
		return command.Usagef("%s and %s are the same flag (%s is the old spelling): give one", dash(old), dash(name), dash(old))
	}
	if err := c.Set(name, v); err != nil {
		return command.Usagef("invalid value %q for flag %s: %v", v, dash(old), err)
	}
	if note != "" {
		fmt.Fprintf(c.App.ErrWriter, "%s: %s is deprecated: %s\n", c.App.Name, dash(old), note)
	}
	return nil
}

// dash is a flag name as typed: -n, --name.
func dash(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// CheckHelp reports, on t, a visible flag whose help line breaks the
// conventions: a value without a placeholder (cli shows "value"), a
// default written into the usage (cli adds one), a bool's
// "(default: false)".
func CheckHelp(t interface {
	Helper()
	Errorf(string, ...any)
}, f cli.Flag) {
	t.Helper()
	vf, ok := f.(cli.VisibleFlag)
	if ok && !vf.IsVisible() {
		return
	}
	line := f.String()
	name, usage, _ := strings.Cut(line, "\t")
	bare := false
	for _, w := range strings.Fields(name) {
		bare = bare || strings.TrimSuffix(w, ",") == "value"
	}
	switch {
	case bare:
		t.Errorf("%s: no placeholder (put one word of the usage in backquotes)", name)
	case strings.Count(usage, "(default") > 1:
		t.Errorf("%s: the default is shown twice: %q", name, usage)
	case strings.Contains(usage, "(default: false)"):
		t.Errorf("%s: a bool shows (default: false)", name)
	}
}

// NoBoolDefaults hides "(default: false)" on every bool flag: a bool is
// off unless given, in every tool.
func NoBoolDefaults(flags []cli.Flag) {
	for _, f := range flags {
		if b, ok := f.(*cli.BoolFlag); ok && !b.Value {
			b.DisableDefaultText = true
		}
	}
}

// SetCategory puts every flag in flags under the help heading cat (every
// urfave/cli flag type has a Category field).
func SetCategory(cat string, flags []cli.Flag) {
	for _, f := range flags {
		reflect.ValueOf(f).Elem().FieldByName("Category").SetString(cat)
	}
}

// Table describes flags, one line each: name, aliases, type, hidden,
// default (as --help shows it, with its environment variables), usage,
// tab-separated. Each tool keeps its table as a golden file
// (testdata/flags.tsv), and TestVocabulary compares the tables of all
// tools: a name means one thing everywhere.
func Table(flags []cli.Flag) []byte {
	var b strings.Builder
	for _, f := range flags {
		names := f.Names()
		typ := fmt.Sprintf("%T", f)
		if g, ok := f.(*cli.GenericFlag); ok {
			typ += fmt.Sprintf("(%T)", g.Value)
		}
		hidden := false
		if v, ok := f.(cli.VisibleFlag); ok {
			hidden = !v.IsVisible()
		}
		usage, def := "", ""
		if d, ok := f.(cli.DocGenerationFlag); ok {
			usage = d.GetUsage()
			if bf, ok := f.(*cli.BoolFlag); !ok || !bf.DisableDefaultText {
				def = d.GetDefaultText()
			}
			for _, e := range d.GetEnvVars() {
				def = strings.TrimPrefix(def+"; $"+e, "; ")
			}
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%v\t%s\t%s\n", names[0], strings.Join(names[1:], ","), typ, hidden, def, usage)
	}
	return []byte(b.String())
}

// SLO is --slo, service-level objectives in mtstats' syntax: mtstats
// reports them, mtrun --sweep searches for the largest level meeting them.
func SLO(dst *string) *cli.StringFlag {
	return &cli.StringFlag{Name: "slo", Destination: dst, Usage: "service-level `OBJECTIVES`, e.g. 'ttft_p95<=2s,itl_p99<=50ms,turn0:ttft_p99<=5s' (turnN: the conversations' user turn N, their request N from 0; mtstats reports them; mtrun --sweep searches for the largest level that meets them all)"}
}

// Capacity is --capacity, a sweep's capacity JSON file: mtrun --sweep
// writes it, mtstats judges the records' stages again at its levels.
func Capacity(dst *string) *cli.StringFlag {
	return &cli.StringFlag{Name: "capacity", Destination: dst, Usage: "a sweep's capacity JSON `FILE` (docs/mtstats.md): mtrun --sweep writes it; mtstats judges the records' stages again at its levels, with --slo or the file's objectives, and reports the capacity"}
}

// WarmupPercentages is vLLM's --warmup-percentages: the summary blocks of
// vLLM's workbook, which mtrun --excel-output has mtstats --xlsx-layout
// vllm write; def is the default (mtrun's "0%", as vLLM's).
func WarmupPercentages(dst *string, def string) *cli.StringFlag {
	return &cli.StringFlag{Name: "warmup-percentages", Value: def, Destination: dst, Usage: "summarise vLLM's workbook (mtrun --excel-output, mtstats --xlsx-layout vllm) without the first `P%`[,P%...] of the requests, one block each (mtrun ignores it with --warmup-step)"}
}
