// Package command is the glue the mtkit mains share: standard streams that
// tests can replace, urfave/cli apps that never write usage errors to
// stdout, exit codes, two-stage Ctrl-C handling and the version string.
package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

// Exit codes shared by the tools.
const (
	ExitOK          = 0
	ExitFailure     = 1
	ExitUsage       = 2
	ExitCheckFailed = 3 // mtstats --check: an SLO was not met
	ExitInterrupted = 130
)

// Streams are a tool's standard streams and signal source.
type Streams struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
	// Signals delivers interrupts (SIGINT, SIGTERM); nil means none.
	Signals <-chan os.Signal
}

// OSStreams returns the process's standard streams, with SIGINT and
// SIGTERM delivered on Signals.
func OSStreams() Streams {
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	return Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Signals: sig}
}

// IsTerminal reports whether w is a terminal (progress is drawn only then).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// ExitError is an error that carries an exit code.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}
func (e *ExitError) Unwrap() error { return e.Err }

// Exit wraps err with an exit code; a nil err exits silently with code.
func Exit(code int, err error) error { return &ExitError{Code: code, Err: err} }

// Usagef returns a usage error (exit code 2).
func Usagef(format string, args ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// NewApp returns an app that writes help to s.Out, errors to s.Err, turns
// flag errors into usage errors (exit 2, on stderr) and never calls
// os.Exit itself.
func NewApp(name, usage string, s Streams) *cli.App {
	return &cli.App{
		Name:                   name,
		Usage:                  usage,
		Version:                Version(),
		Reader:                 s.In,
		Writer:                 s.Out,
		ErrWriter:              s.Err,
		HideHelpCommand:        true,
		CustomAppHelpTemplate:  helpTemplate,
		UseShortOptionHandling: true,
		ExitErrHandler:         func(*cli.Context, error) {},
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return Usagef("%v (see %s --help)", err, name)
		},
	}
}

// helpTemplate is urfave/cli's app help without commands, with the
// options in the order they are declared and a heading wherever their
// Category changes (urfave/cli's own categories sort the headings and the
// flags by name).
const helpTemplate = `NAME:
   {{template "helpNameTemplate" .}}

USAGE:
   {{if .UsageText}}{{wrap .UsageText 3}}{{else}}{{.HelpName}} [options]{{if .ArgsUsage}} {{.ArgsUsage}}{{end}}{{end}}{{if .Description}}

DESCRIPTION:
   {{template "descriptionTemplate" .}}{{end}}

OPTIONS:{{$cat := ""}}{{range .VisibleFlags}}{{if ne .GetCategory $cat}}{{$cat = .GetCategory}}{{if $cat}}

   {{$cat}}{{end}}{{end}}
   {{.String}}{{end}}
`

// Run runs app with args (args[0] is the program name; options may follow
// the files, see OptionsFirst) and returns the exit code, printing any
// error to stderr as "name: message".
func Run(ctx context.Context, app *cli.App, args []string) int {
	withOwnHelpAndVersion(app)
	if app.Metadata == nil {
		app.Metadata = map[string]any{}
	}
	app.Metadata[argsKey] = args
	args, err := OptionsFirst(app.Flags, args)
	if err != nil {
		fmt.Fprintf(app.ErrWriter, "%s: %v (see %s --help)\n", app.Name, err, app.Name)
		return ExitUsage
	}
	err = app.RunContext(ctx, args)
	if err == nil {
		return ExitOK
	}
	code := ExitFailure
	var ee *ExitError
	var ce cli.ExitCoder
	switch {
	case errors.As(err, &ee):
		code = ee.Code
		if ee.Err == nil {
			return code
		}
	case errors.As(err, &ce):
		code = ce.ExitCode()
	case strings.HasPrefix(err.Error(), "flag provided but not defined"),
		strings.HasPrefix(err.Error(), "Required flag"):
		code = ExitUsage
	}
	fmt.Fprintf(app.ErrWriter, "%s: %v\n", app.Name, err)
	return code
}

// argsKey is where Run keeps its args in the app's Metadata.
const argsKey = "command.args"

// Args returns the command line Run was given (args[0] is the program
// name), as typed: a tool records it (mtrun's manifest, its secrets
// redacted) without reading os.Args.
func Args(c *cli.Context) []string {
	a, _ := c.App.Metadata[argsKey].([]string)
	return a
}

// withOwnHelpAndVersion replaces urfave/cli's global help and version
// flags, which every App.Run mutates (a data race when apps run in
// parallel, as in tests), with flags of the app's own.
func withOwnHelpAndVersion(app *cli.App) {
	if app.HideHelp {
		return // already done
	}
	app.HideHelp, app.HideVersion = true, true
	app.Flags = append([]cli.Flag{
		&cli.BoolFlag{Name: "help", Aliases: []string{"h"}, Usage: "show help", DisableDefaultText: true},
		&cli.BoolFlag{Name: "version", Usage: "print the version", DisableDefaultText: true},
	}, app.Flags...)
	action := app.Action
	app.Action = func(c *cli.Context) error {
		if c.Bool("version") {
			_, err := fmt.Fprintf(app.Writer, "%s %s\n", app.Name, app.Version)
			return err
		}
		if action == nil {
			return cli.ShowAppHelp(c)
		}
		return action(c)
	}
}

// DefaultTermGrace is how long SIGTERM lets in-flight work run before
// cancelling it: well under the 30 s Kubernetes (and 10 s docker stop)
// wait between SIGTERM and SIGKILL, so outputs are closed in time.
const DefaultTermGrace = 5 * time.Second

// Interrupts is InterruptsGrace with DefaultTermGrace.
func Interrupts(parent context.Context, sig <-chan os.Signal) (stop, abort context.Context, release func()) {
	return InterruptsGrace(parent, sig, DefaultTermGrace)
}

// InterruptsGrace turns a signal channel into two contexts: stop is
// cancelled by the first signal (start no new work, finish what is in
// flight), abort by the second (cancel in-flight work), or, when the
// first is SIGTERM (docker stop, Kubernetes), termGrace after it (at once
// if termGrace <= 0). Calling release stops watching.
func InterruptsGrace(parent context.Context, sig <-chan os.Signal, termGrace time.Duration) (stop, abort context.Context, release func()) {
	return interrupts(parent, sig, termGrace, time.After)
}

// interrupts is InterruptsGrace with the grace timer injected (tests).
func interrupts(parent context.Context, sig <-chan os.Signal, termGrace time.Duration, after func(time.Duration) <-chan time.Time) (stop, abort context.Context, release func()) {
	abort, cancelAbort := context.WithCancel(parent)
	stop, cancelStop := context.WithCancel(abort)
	done := make(chan struct{})
	go func() {
		n := 0
		var grace <-chan time.Time
		for {
			select {
			case <-done:
				return
			case <-grace:
				cancelAbort()
				return
			case s, ok := <-sig:
				if !ok {
					if grace == nil {
						return
					}
					sig = nil // wait for the grace period only
					continue
				}
				n++
				switch {
				case n > 1 || s == syscall.SIGTERM && termGrace <= 0:
					cancelAbort()
					return
				case s == syscall.SIGTERM:
					cancelStop()
					grace = after(termGrace)
				default:
					cancelStop()
				}
			}
		}
	}()
	return stop, abort, func() {
		close(done)
		cancelStop()
		cancelAbort()
	}
}

// Version is the module version from the build info, or the VCS revision
// for builds from a checkout.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}
