// Package e2e holds mtkit's end-to-end tests: the real mtgen, mtconvert,
// mtrun and mtstats binaries against a real inference engine, Ollama
// (llama.cpp inside), serving the tiny deterministic model that
// internal/cmd/mkgguf generates.
//
// The tests carry the build tag e2e and start and stop everything they need
// on 127.0.0.1:
//
//	go test -tags e2e -count=1 -v ./e2e/
//
// or scripts/e2e.sh, which also builds and caches Ollama first. See
// docs/e2e.md for the environment variables and measured timings.
package e2e
