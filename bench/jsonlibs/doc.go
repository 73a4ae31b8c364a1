// Package jsonlibs holds the benchmarks that compare mtkit's JSON code
// with JSON libraries it does not use, sonic and segmentio: a module of
// its own (as deploy/kubernetes is), so that those libraries are not
// mtkit dependencies and sonic, which must be updated for each Go
// release, never holds back mtkit's toolchain. The libraries mtkit uses
// or could switch to (goccy/go-json, encoding/json v1 and v2) are
// compared in the benchmarks of the packages themselves
// (internal/record BenchmarkRecordJSON, internal/replay
// BenchmarkChunkJSON, internal/convert BenchmarkScanJSON), on the same
// inputs as here; the figures are in docs/performance.md.
//
//	cd bench/jsonlibs && go test -run '^$' -bench . -benchmem
package jsonlibs
