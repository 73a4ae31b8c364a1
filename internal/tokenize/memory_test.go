package tokenize

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// memChildEnv names the tokenizer.json a re-executed test binary loads
// for BenchmarkLoadMemory before it exits.
const memChildEnv = "MTKIT_TOKENIZE_MEMCHILD"

// TestMain lets BenchmarkLoadMemory re-execute the test binary as a child
// that only loads a tokenizer, so the child's peak RSS is the load's.
func TestMain(m *testing.M) {
	if p := os.Getenv(memChildEnv); p != "" {
		os.Exit(memChild(p))
	}
	os.Exit(m.Run())
}

// memChild loads the tokenizer.json at path and prints the live heap after
// a collection, in bytes.
func memChild(path string) int {
	tok, err := Load(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Println(ms.HeapAlloc)
	runtime.KeepAlive(tok)
	return 0
}

// BenchmarkLoadMemory loads each tokenizer.json fixture in a child process
// and reports its peak RSS (the whole process: runtime and test binary
// included) and the heap the loaded tokenizer keeps, besides the load time.
func BenchmarkLoadMemory(b *testing.B) {
	for _, model := range fixtureModels {
		b.Run(model, func(b *testing.B) {
			path := fixturePath(b, model)
			var rss, live float64
			for b.Loop() {
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), memChildEnv+"="+path)
				out, err := cmd.Output()
				if err != nil {
					b.Fatalf("child: %v", err)
				}
				n, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
				if err != nil {
					b.Fatalf("child output %q: %v", out, err)
				}
				live = max(live, n)
				rss = max(rss, float64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss)*1024)
			}
			b.ReportMetric(rss/1e6, "peak-RSS-MB")
			b.ReportMetric(live/1e6, "live-heap-MB")
		})
	}
}
