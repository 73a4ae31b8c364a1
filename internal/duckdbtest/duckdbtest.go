// Package duckdbtest runs SQL in DuckDB for tests: an independent reader
// (and writer) of the files mtkit writes.
package duckdbtest

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Query runs sql through scripts/duckdb/duckdb.mjs and returns the rows
// of its last statement. Without node or the DuckDB fixture (see
// scripts/fixtures.sh) it skips, or fails when MTKIT_REQUIRE_FIXTURES=1.
func Query(t testing.TB, sql string) []map[string]any {
	t.Helper()
	fixtures := os.Getenv("MTKIT_FIXTURES")
	if fixtures == "" {
		cache := os.Getenv("MTKIT_CACHE")
		if cache == "" {
			home, _ := os.UserHomeDir()
			cache = filepath.Join(home, ".cache", "mtkit")
		}
		fixtures = filepath.Join(cache, "fixtures")
	}
	node, err := exec.LookPath("node")
	if _, serr := os.Stat(filepath.Join(fixtures, "node_modules", "@duckdb", "node-api")); err != nil || serr != nil {
		msg := "DuckDB (node and @duckdb/node-api) missing: run scripts/fixtures.sh (or set MTKIT_FIXTURES)"
		if os.Getenv("MTKIT_REQUIRE_FIXTURES") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	_, file, _, _ := runtime.Caller(0)
	cmd := exec.Command(node, filepath.Join(filepath.Dir(file), "..", "..", "scripts", "duckdb", "duckdb.mjs"))
	cmd.Env = append(os.Environ(), "MTKIT_FIXTURES="+fixtures)
	cmd.Stdin = strings.NewReader(sql)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("duckdb: %v\n%s\nSQL: %s", err, stderr.String(), sql)
	}
	var rows []map[string]any
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatalf("duckdb: %v: %s", err, out)
	}
	return rows
}
