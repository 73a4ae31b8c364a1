package command

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/urfave/cli/v2"
)

func TestRunExitCodes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		args       []string
		action     error
		wantCode   int
		wantStderr string
	}{
		{"ok", nil, nil, ExitOK, ""},
		{"plain error", nil, errors.New("boom"), ExitFailure, "tool: boom\n"},
		{"usage error", nil, Usagef("bad %s", "x"), ExitUsage, "tool: bad x\n"},
		{"silent exit", nil, Exit(ExitCheckFailed, nil), ExitCheckFailed, ""},
		{"interrupted", nil, Exit(ExitInterrupted, errors.New("interrupted")), ExitInterrupted, "tool: interrupted\n"},
		{"unknown flag", []string{"--nope"}, nil, ExitUsage, "tool: flag provided but not defined: -nope (see tool --help)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out, errw bytes.Buffer
			app := NewApp("tool", "test", Streams{Out: &out, Err: &errw})
			app.Flags = []cli.Flag{&cli.BoolFlag{Name: "x"}}
			app.Action = func(*cli.Context) error { return tc.action }
			code := Run(context.Background(), app, append([]string{"tool"}, tc.args...))
			if code != tc.wantCode {
				t.Errorf("code = %d, want %d", code, tc.wantCode)
			}
			if errw.String() != tc.wantStderr {
				t.Errorf("stderr = %q, want %q", errw.String(), tc.wantStderr)
			}
			if out.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", out.String())
			}
		})
	}
}

func TestInterrupts(t *testing.T) {
	t.Parallel()
	sig := make(chan os.Signal, 2)
	stop, abort, release := Interrupts(context.Background(), sig)
	defer release()
	if stop.Err() != nil || abort.Err() != nil {
		t.Fatal("cancelled before any signal")
	}
	sig <- os.Interrupt
	waitDone(t, stop)
	if abort.Err() != nil {
		t.Fatal("first signal aborted")
	}
	sig <- os.Interrupt
	waitDone(t, abort)
}

// TestInterruptsTerm: SIGTERM stops at once and aborts after the grace
// period (or at a second signal); SIGINT never aborts by itself.
func TestInterruptsTerm(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		first     os.Signal
		grace     time.Duration
		wantTimer bool // a grace timer is started
		abortNow  bool // the first signal aborts at once
	}{
		{"sigterm", syscall.SIGTERM, time.Minute, true, false},
		{"sigterm no grace", syscall.SIGTERM, 0, false, true},
		{"sigint", os.Interrupt, time.Minute, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sig := make(chan os.Signal, 2)
			timer := make(chan time.Time, 1)
			asked := make(chan time.Duration, 1)
			after := func(d time.Duration) <-chan time.Time { asked <- d; return timer }
			stop, abort, release := interrupts(context.Background(), sig, tc.grace, after)
			defer release()
			sig <- tc.first
			waitDone(t, stop)
			if tc.abortNow {
				waitDone(t, abort)
				return
			}
			if !tc.wantTimer {
				sig <- os.Interrupt // only a second signal aborts
				waitDone(t, abort)
				if len(asked) != 0 {
					t.Error("grace timer started for SIGINT")
				}
				return
			}
			if d := <-asked; d != tc.grace {
				t.Errorf("grace %v, want %v", d, tc.grace)
			}
			if abort.Err() != nil {
				t.Fatal("aborted before the grace period ended")
			}
			timer <- time.Now()
			waitDone(t, abort)
		})
	}
}

func waitDone(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("context not cancelled")
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	if v := Version(); v == "" || strings.Contains(v, " ") {
		t.Errorf("Version() = %q", v)
	}
}

func TestHelpAndVersionInParallel(t *testing.T) {
	t.Parallel()
	for i := 0; i < 8; i++ {
		t.Run("", func(t *testing.T) {
			t.Parallel()
			for _, args := range [][]string{{"tool", "--help"}, {"tool", "-h"}, {"tool", "--version"}} {
				var out, errw bytes.Buffer
				app := NewApp("tool", "test tool", Streams{Out: &out, Err: &errw})
				app.Version = "v1.2.3"
				app.Action = func(*cli.Context) error { return errors.New("action ran") }
				if code := Run(context.Background(), app, args); code != ExitOK {
					t.Fatalf("%v: code %d, stderr %q", args, code, errw.String())
				}
				want := "USAGE"
				if args[1] == "--version" {
					want = "tool v1.2.3"
				}
				if !strings.Contains(out.String(), want) {
					t.Errorf("%v: stdout %q lacks %q", args, out.String(), want)
				}
			}
		})
	}
}
