package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
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

// measureArg, as mtbench's first argument, makes it the launcher of one
// child process (measureChild). Go starts children with vfork sharing
// the parent's memory, and Linux counts the parent's peak RSS into the
// child's ru_maxrss when the child calls exec: a child of mtbench, which
// holds the simulator and generated data, would report mtbench's peak
// (measured: /bin/true started by a Go process holding 300 MB reported
// 302 MB). The launcher is a fresh, small process, so its child's max
// RSS is the child's own (never below the launcher's few MB).
const measureArg = "-mtbench-measure-child"

// childReport is what the launcher writes on fd 3 once its child ended.
type childReport struct {
	WallNs    int64  `json:"wall_ns"`
	CPUNs     int64  `json:"cpu_ns"`
	MaxRSSKB  int64  `json:"maxrss_kb"`
	ExitCode  int    `json:"exit_code"`
	Signalled bool   `json:"signalled"`
	Err       string `json:"error,omitempty"`
}

// measureChild runs args as a child with this process's standard streams
// and environment, forwards SIGINT, SIGTERM and SIGQUIT to it, and writes
// on fd 3 the child's pid (a line), then its childReport (JSON). It
// returns the exit status for the launcher.
func measureChild(args []string) int {
	report := os.NewFile(3, "report")
	if report == nil || len(args) == 0 {
		fmt.Fprintln(os.Stderr, "mtbench "+measureArg+": no report fd or no command")
		return exitUsage
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(report, "0\n")
		json.NewEncoder(report).Encode(childReport{Err: err.Error()})
		return exitError
	}
	fmt.Fprintf(report, "%d\n", cmd.Process.Pid)
	go func() {
		for sig := range sigs {
			cmd.Process.Signal(sig)
		}
	}()
	cmd.Wait()
	r := childReport{WallNs: int64(time.Since(start))}
	st := cmd.ProcessState
	r.CPUNs = int64(st.UserTime() + st.SystemTime())
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		r.MaxRSSKB = ru.Maxrss
	}
	r.ExitCode = st.ExitCode()
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		r.Signalled = true
	}
	if err := json.NewEncoder(report).Encode(r); err != nil {
		return exitError
	}
	if r.ExitCode < 0 {
		return exitError
	}
	return r.ExitCode
}

// runProc runs bin with args through the launcher (measureArg) and
// returns the child's own rusage (wait4 of the launcher's child). A
// non-zero exit is an error unless the child was stopped by a signal
// that during sent; during gets the child itself.
func runProc(ctx context.Context, bin string, args []string, o runOpts) (*proc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, self, append([]string{measureArg, bin}, args...)...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) } // forwarded to the child
	cmd.WaitDelay = 10 * time.Second
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
	rd, wr, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	cmd.ExtraFiles = []*os.File{wr}
	err = cmd.Start()
	wr.Close()
	if err != nil {
		return nil, err
	}
	br := bufio.NewReader(rd)
	line, _ := br.ReadString('\n')
	pid, _ := strconv.Atoi(strings.TrimSpace(line))
	if o.during != nil && pid > 0 {
		if child, err := os.FindProcess(pid); err == nil {
			o.during(child)
		}
	}
	werr := cmd.Wait()
	var r childReport
	if err := json.NewDecoder(br).Decode(&r); err != nil {
		return nil, fmt.Errorf("%s %s: no report from the launcher (%v, %v): %s", bin, strings.Join(args, " "), werr, err, tail(stderr.String(), 800))
	}
	if r.Err != "" {
		return nil, fmt.Errorf("%s: %s", bin, r.Err)
	}
	p := &proc{Wall: time.Duration(r.WallNs), CPU: time.Duration(r.CPUNs), MaxRSS: r.MaxRSSKB * 1024,
		Stderr: stderr.String(), ExitCode: r.ExitCode, Signalled: r.Signalled}
	if (p.ExitCode != 0 || p.Signalled) && o.during == nil {
		return p, fmt.Errorf("%s %s: exit status %d (signalled %v): %s", bin, strings.Join(args, " "), p.ExitCode, p.Signalled, tail(p.Stderr, 800))
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
