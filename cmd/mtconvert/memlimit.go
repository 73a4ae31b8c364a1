package main

import (
	"runtime/debug"

	"github.com/mtkit/mtkit/internal/convert"
)

// limitMemory sets the run's soft memory limit (convert.Options.
// MemoryLimit) unless the user tuned the collector with GOMEMLIMIT or
// GOGC; it returns the limit set, 0 for none.
func limitMemory(o *convert.Options, getenv func(string) string) int64 {
	n := o.MemoryLimit()
	if n == 0 || getenv("GOMEMLIMIT") != "" || getenv("GOGC") != "" {
		return 0
	}
	debug.SetMemoryLimit(n)
	return n
}
