package cputime

import "testing"

// TestProcessAdvances: burning CPU makes the process's CPU time grow.
func TestProcessAdvances(t *testing.T) {
	start := Process()
	if start <= 0 {
		t.Fatalf("Process() = %v at start, want > 0", start)
	}
	x := 0
	for Process()-start < 20_000_000 { // 20 ms of CPU
		for i := range 100_000 {
			x += i
		}
	}
	_ = x
}
