package cliflag

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mtkit/mtkit/internal/command"
)

func TestParseSeed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0", 0, true},
		{"42", 42, true},
		{" 7 ", 7, true},
		{"18446744073709551615", 1<<64 - 1, true},
		{"18446744073709551616", 0, false},
		{"-1", 0, false},
		{"1.5", 0, false},
		{"0x10", 0, false},
		{"", 0, false},
	} {
		got, err := ParseSeed(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseSeed(%q) = %d, %v; want %d, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// FuzzParseSeed checks that a seed that parses prints back as itself.
func FuzzParseSeed(f *testing.F) {
	for _, s := range []string{"0", "42", "-1", "18446744073709551615", "1e3", "+5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSeed(s)
		if err != nil {
			return
		}
		if back, err := ParseSeed(seedValue{&n}.String()); err != nil || back != n {
			t.Fatalf("ParseSeed(%q) = %d, which reads back as %d, %v", s, n, back, err)
		}
	})
}

// opts is what the test app's flags bind to.
type opts struct {
	count   int
	to      string
	timeout time.Duration
	seed    uint64
}

// runApp runs a small app with the shared flags and aliases and returns
// the exit code, the options and stderr.
func runApp(args ...string) (int, opts, string) {
	var o opts
	var errb bytes.Buffer
	app := command.NewApp("tool", "test", command.Streams{Out: &bytes.Buffer{}, Err: &errb})
	app.Flags = []cli.Flag{
		&cli.IntFlag{Name: "count", Destination: &o.count},
		&cli.StringFlag{Name: "to", Destination: &o.to},
		Duration("timeout", &o.timeout, "`D`"),
		Seed(&o.seed),
		Alias("n", "count", "use --count"),
		Alias("vllm-count", "count", ""),
		BoolAlias("records", "to", "-", "use --to -"),
	}
	app.Action = func(*cli.Context) error { return nil }
	code := command.Run(context.Background(), app, append([]string{"tool"}, args...))
	return code, o, errb.String()
}

func TestAliases(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		args     string
		code     int
		want     opts
		wantNote string // a part of stderr; "" means stderr is empty
	}{
		{"new spelling", "--count 3", 0, opts{count: 3}, ""},
		{"old spelling", "-n 3", 0, opts{count: 3}, "tool: -n is deprecated: use --count\n"},
		{"old spelling with =", "-n=4", 0, opts{count: 4}, "deprecated"},
		{"vLLM spelling, no note", "--vllm-count 5", 0, opts{count: 5}, ""},
		{"both spellings", "-n 3 --count 4", command.ExitUsage, opts{count: 4}, "-n and --count are the same flag"},
		{"bad value named by the old spelling", "-n x", command.ExitUsage, opts{}, `invalid value "x" for flag -n`},
		{"bool alias", "--records", 0, opts{to: "-"}, "tool: --records is deprecated: use --to -\n"},
		{"bool alias false", "--records=false", 0, opts{}, ""},
		{"bool alias and new", "--records --to x", command.ExitUsage, opts{to: "x"}, "same flag"},
		{"duration with unit", "--timeout 1m", 0, opts{timeout: time.Minute}, ""},
		{"duration bare seconds", "--timeout 2.5", 0, opts{timeout: 2500 * time.Millisecond}, ""},
		{"duration bad", "--timeout 2parsecs", command.ExitUsage, opts{}, `invalid value "2parsecs" for flag -timeout`},
		{"seed", "--seed 18446744073709551615", 0, opts{seed: 1<<64 - 1}, ""},
		{"seed negative", "--seed -1", command.ExitUsage, opts{}, "not a seed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, got, stderr := runApp(strings.Fields(tc.args)...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tc.code, stderr)
			}
			if code == 0 && got != tc.want {
				t.Errorf("options %+v, want %+v", got, tc.want)
			}
			if tc.wantNote == "" && stderr != "" || !strings.Contains(stderr, tc.wantNote) {
				t.Errorf("stderr %q, want %q", stderr, tc.wantNote)
			}
		})
	}
}

// TestHelpConventions checks every shared constructor: a placeholder on
// every flag that takes a value, no default written into the usage text
// (cli adds it), and no "(default: false)" on bools.
func TestHelpConventions(t *testing.T) {
	t.Parallel()
	var s string
	var d time.Duration
	var n int
	var u uint64
	var b bool
	for _, f := range []cli.Flag{
		Seed(&u), Tokenizer(&s, "none"), Output(&s, "-"), Output(&s, ""), Quiet(&b), Strict(&b),
		MaxTurns(&n), ThinkTime(&s, "none"), InputFormat(&s), Duration("d", &d, "wait `D`"),
		MetricsFile(&s, "next to the records"), NoMetrics(&b),
	} {
		CheckHelp(t, f)
	}
}

// recorder is a t that keeps the errors.
type recorder struct{ errs []string }

func (r *recorder) Helper()                        {}
func (r *recorder) Errorf(format string, a ...any) { r.errs = append(r.errs, format) }

// TestCheckHelpCatches shows that CheckHelp fails each broken flag of the
// old help: a bare "value", a doubled default, a bool's default.
func TestCheckHelpCatches(t *testing.T) {
	t.Parallel()
	for _, f := range []cli.Flag{
		&cli.StringFlag{Name: "api", Value: "chat", Usage: "endpoint: chat or completions"},
		&cli.Float64Flag{Name: "temperature", Usage: "sampling temperature `T` (default: server's)"},
		&cli.BoolFlag{Name: "no-stream", Usage: "non-streaming requests"},
	} {
		var r recorder
		CheckHelp(&r, f)
		if len(r.errs) != 1 {
			t.Errorf("%s: %d errors, want 1", f.Names()[0], len(r.errs))
		}
	}
}

// TestContextGetters: code that reads a shared seed or duration flag with
// cli.Context's getters (c.Duration, c.Uint64) gets its value, also when
// the flag is bound to nothing.
func TestContextGetters(t *testing.T) {
	t.Parallel()
	var gotD time.Duration
	var gotS uint64
	app := command.NewApp("tool", "test", command.Streams{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}})
	app.Flags = []cli.Flag{Duration("gap", nil, "`D`"), Seed(nil)}
	app.Action = func(c *cli.Context) error {
		gotD, gotS = c.Duration("gap"), c.Uint64("seed")
		return nil
	}
	if code := command.Run(context.Background(), app, []string{"tool", "--gap", "1.5", "--seed", "18446744073709551615"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if gotD != 1500*time.Millisecond || gotS != 1<<64-1 {
		t.Errorf("c.Duration = %v, c.Uint64 = %d", gotD, gotS)
	}
}
