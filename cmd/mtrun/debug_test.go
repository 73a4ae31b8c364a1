package main

import (
	"strings"
	"testing"
)

// TestDebugAddrLoopbackOnly: a non-loopback --debug-addr is a usage error.
func TestDebugAddrLoopbackOnly(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"0.0.0.0:0", ":6060", "192.0.2.1:80", "nonsense"} {
		got := runMtrun(t, "", nil, "--debug-addr", addr, "--url", "http://127.0.0.1:1")
		if got.code != 2 || !strings.Contains(got.stderr, "--debug-addr") {
			t.Errorf("--debug-addr %s: exit %d, stderr %q; want 2 and an error naming the flag", addr, got.code, got.stderr)
		}
	}
}
