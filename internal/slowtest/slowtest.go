// Package slowtest marks the tests, and the parts of tests, that are too
// slow for the default suite (go test ./..., scripts/test.sh): long
// differential runs over whole corpora and whole simulated runs that take
// minutes under the race detector on a loaded machine. They run when the
// environment sets MTKIT_SLOW_TESTS=1, as scripts/slowtest.sh does (a step
// of .ci/run). The default suite keeps a smaller case of each.
package slowtest

import (
	"os"
	"testing"
)

// Env is the environment variable that turns the slow tests on.
const Env = "MTKIT_SLOW_TESTS"

// Enabled reports whether the slow tests run (Env is 1).
func Enabled() bool { return os.Getenv(Env) == "1" }

// Skip skips t unless the slow tests run.
func Skip(t testing.TB) {
	t.Helper()
	if !Enabled() {
		t.Skipf("slow test: runs with %s=1 (scripts/slowtest.sh)", Env)
	}
}
