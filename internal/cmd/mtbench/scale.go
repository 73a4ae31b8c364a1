package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"syscall"
	"time"

	"github.com/mtkit/mtkit/internal/sim"
)

// goroutineHeader matches the first line of each goroutine in a Go
// traceback: "goroutine 42 [select]:", or with GOTRACEBACK=all
// "goroutine 42 gp=0xc000102000 m=nil [select]:". Goroutine 0 is the
// signal handler's system stack, not a goroutine.
var goroutineHeader = regexp.MustCompile(`(?m)^goroutine [1-9]\d* [^\n]*\[[^\n]*\]:$`)

// scale runs mtrun with 10,000 concurrent users, each in a 20-turn
// conversation with think time, and measures its peak memory (max RSS
// from rusage) and its goroutines. mtrun has no introspection endpoint,
// so near the end of the window it is sent SIGQUIT, on which the Go
// runtime prints every goroutine's stack and exits: the goroutines are
// counted from that dump. Memory per conversation is (max RSS − the RSS
// of a one-request run) / conversations.
func (b *bench) scale(ctx context.Context, dir string) error {
	const sec = "scale"
	n := pick(b, 1000, 10000)
	window := pick(b, 4*time.Second, 12*time.Second)
	h, err := startSim(sim.Config{TTFTBase: 10 * time.Millisecond, DecodePerToken: 5 * time.Millisecond}, false)
	if err != nil {
		return err
	}
	defer h.close()
	path := filepath.Join(dir, "scale.jsonl")
	if err := writeConvs(path, convSpec{n: n, turns: 20, userWords: 40, output: 20, thinkMs: 5000}); err != nil {
		return err
	}
	one := filepath.Join(dir, "one.jsonl")
	if err := writeConvs(one, convSpec{n: 1, turns: 1, userWords: 8, output: 1}); err != nil {
		return err
	}
	bin := b.bin("mtrun")
	if bin == "" {
		return errors.New("mtrun binary missing from --bin")
	}
	name := fmt.Sprintf("%s conversations", thousands(int64(n)))
	for i := range b.runs {
		p0, _, err := b.mtrunRun(ctx, h.URL, one, filepath.Join(dir, "one.records.jsonl"), nil, runOpts{})
		if err != nil {
			return err
		}
		recs := filepath.Join(dir, "scale.records.jsonl")
		args := []string{"--url", h.URL, "--model", "mtkit-sim", "--records", recs, "--quiet",
			"--clients", fmt.Sprint(n), "--think-time", "uniform:4s:6s", path}
		var peakRSS int64
		p, err := runProc(ctx, bin, args, runOpts{env: []string{"GOTRACEBACK=all"}, during: func(pr *os.Process) {
			deadline := time.Now().Add(window)
			for time.Now().Before(deadline) && ctx.Err() == nil {
				time.Sleep(250 * time.Millisecond)
				if rss, err := vmRSS(pr.Pid); err == nil {
					peakRSS = max(peakRSS, rss)
				}
			}
			_ = pr.Signal(syscall.SIGQUIT)
		}})
		if err != nil {
			return err
		}
		if !p.Signalled && p.ExitCode != 2 {
			return fmt.Errorf("mtrun ended before the measurement window (exit %d): %s", p.ExitCode, tail(p.Stderr, 500))
		}
		gs := len(goroutineHeader.FindAllStringIndex(p.Stderr, -1))
		if gs == 0 {
			return fmt.Errorf("no goroutine dump after SIGQUIT: %s", tail(p.Stderr, 300))
		}
		turns, err := countLines(recs)
		if err != nil {
			return err
		}
		perConv := float64(max(p.MaxRSS-p0.MaxRSS, 0)) / float64(n) / 1e3
		b.logf("run %d: %d conversations, %d turns in %v; max RSS %.0f MB (sampled VmRSS peak %.0f MB, one-request run %.0f MB); %d goroutines; CPU %v",
			i+1, n, turns, window, float64(p.MaxRSS)/1e6, float64(peakRSS)/1e6, float64(p0.MaxRSS)/1e6, gs, p.CPU.Round(time.Millisecond))
		rssT := atMost(1000)
		if b.smoke {
			rssT = nil
		}
		b.figs.add(sec, "max RSS, "+name, "MB", rssT, float64(p.MaxRSS)/1e6)
		b.figs.add(sec, "goroutines, "+name, "", nil, float64(gs))
		b.figs.add(sec, "memory per active conversation", "kB", nil, perConv)
		b.figs.add(sec, "turns completed in the window", "turns", nil, float64(turns))
	}
	b.figs.note(sec, "max RSS, "+name, fmt.Sprintf("mtrun --clients %d, conversations of 20 turns (40-word user messages, 20-token answers), think time uniform 4-6 s, simulator TTFT 10ms + 5ms/token; measured over a %v window, then SIGQUIT for the goroutine dump", n, window))
	return nil
}

// countLines counts the complete lines of a file.
func countLines(path string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return bytes.Count(data, []byte{'\n'}), nil
}
