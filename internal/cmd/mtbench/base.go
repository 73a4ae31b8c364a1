package main

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// variant is an mtrun binary a figure is measured with: this tree's
// (bin "" and label "") or the --base-bin one, built from an earlier
// commit, whose figures are labelled "before" and have no target.
type variant struct {
	bin   string // "": --bin's mtrun
	label string // "" or " [before]"
	cpus  string // taskset CPU list ("": not pinned)
}

// before is the label of the base binary's figures.
const before = " [before]"

// variants returns this tree's mtrun and, with --base-bin, the base
// one, in an order that alternates with run (interleaved: a change of
// the machine's load falls on both alike).
func (b *bench) variants(run int) []variant {
	vs := []variant{{}}
	if b.baseBin != "" {
		vs = append(vs, variant{bin: filepath.Join(b.baseBin, "mtrun"), label: before})
		if run%2 == 1 {
			vs[0], vs[1] = vs[1], vs[0]
		}
	}
	return vs
}

// tgt is t for this tree's figures and none for the base's.
func (v variant) tgt(t *target) *target {
	if v.label != "" {
		return nil
	}
	return t
}

// loadAverage returns the machine's one-minute load average (NaN when
// unknown).
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return math.NaN()
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

// pinSelf sets the CPUs of every thread of this process (taskset -a -p)
// and returns what restores them; without taskset it does nothing and
// returns false.
func pinSelf(cpus string) (restore func(), ok bool) {
	if _, err := exec.LookPath("taskset"); err != nil {
		return func() {}, false
	}
	pid := strconv.Itoa(os.Getpid())
	out, err := exec.Command("taskset", "-p", pid).Output()
	if err != nil {
		return func() {}, false
	}
	// "pid N's current affinity mask: 3"
	f := strings.Fields(string(out))
	mask := f[len(f)-1]
	if exec.Command("taskset", "-a", "-p", "-c", cpus, pid).Run() != nil {
		return func() {}, false
	}
	return func() { exec.Command("taskset", "-a", "-p", mask, pid).Run() }, true
}

// runQueueWait returns the time the threads of process pid ("self" for
// this one) have spent runnable but waiting for a CPU, summed over its
// live threads (/proc/PID/task/*/schedstat, second field); false when
// the kernel does not report it.
func runQueueWait(pid string) (time.Duration, bool) {
	tasks, err := os.ReadDir("/proc/" + pid + "/task")
	if err != nil {
		return 0, false
	}
	var sum int64
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/" + pid + "/task/" + t.Name() + "/schedstat")
		if err != nil {
			continue // the thread ended
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			return 0, false
		}
		v, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return 0, false
		}
		sum += v
	}
	return time.Duration(sum), true
}

// watchRunQueue polls the run-queue wait of a running child every 50 ms
// until it exits, and stores the last reading in *wait (a runOpts.during
// function).
func watchRunQueue(wait *time.Duration) func(p *os.Process) {
	return func(p *os.Process) {
		pid := strconv.Itoa(p.Pid)
		for {
			w, ok := runQueueWait(pid)
			if !ok {
				return
			}
			*wait = max(*wait, w) // an exited thread's wait is no longer counted
			time.Sleep(50 * time.Millisecond)
		}
	}
}
