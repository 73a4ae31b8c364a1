// Package cputime reads the process's CPU time. Benchmarks report it
// beside wall time: on a shared, loaded machine the CPU time an operation
// takes is steadier than the wall time it takes.
package cputime

import "time"

// Process returns the user and system CPU time of the process so far, all
// threads and the garbage collector included; 0 where the platform does
// not report it.
func Process() time.Duration { return process() }
