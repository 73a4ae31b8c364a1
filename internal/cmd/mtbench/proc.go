package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// proc is a finished child process and what it used.
type proc struct {
	Wall      time.Duration
	CPU       time.Duration // user + system
	MaxRSS    int64         // bytes
	Stderr    string
	ExitCode  int
	Signalled bool
}

// runOpts configure a child process.
type runOpts struct {
	stdin  string // file to read as stdin ("" = none)
	stdout string // file to write stdout to ("" = discard)
	env    []string
	// during, when set, is called with the running process; the child is
	// waited for when it returns.
	during func(p *os.Process)
}

// runProc runs bin with args and returns its rusage (the child's own,
// from wait4, so nothing of this process is counted). A non-zero exit is
// an error unless the child was stopped by a signal that during sent.
func runProc(ctx context.Context, bin string, args []string, o runOpts) (*proc, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), o.env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if o.stdin != "" {
		f, err := os.Open(o.stdin)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		cmd.Stdin = f
	}
	if o.stdout != "" {
		f, err := os.Create(o.stdout)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		cmd.Stdout = f
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	if o.during != nil {
		o.during(cmd.Process)
	}
	err := cmd.Wait()
	p := &proc{Wall: time.Since(start), Stderr: stderr.String()}
	st := cmd.ProcessState
	if st == nil {
		return nil, fmt.Errorf("%s: %w", bin, err)
	}
	p.CPU = st.UserTime() + st.SystemTime()
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		p.MaxRSS = ru.Maxrss * 1024 // kilobytes on Linux
	}
	p.ExitCode = st.ExitCode()
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		p.Signalled = true
	}
	if err != nil && o.during == nil {
		return p, fmt.Errorf("%s %s: %w: %s", bin, strings.Join(args, " "), err, tail(p.Stderr, 800))
	}
	return p, nil
}

// tail returns the last n bytes of s.
func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// vmRSS returns the resident set size of a running process in bytes.
func vmRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimPrefix(line, "VmRSS:"), "%d", &kb); err != nil {
				return 0, err
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("/proc/%d/status: no VmRSS", pid)
}
