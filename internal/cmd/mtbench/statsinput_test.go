package main

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestWriteStatsInput writes the mtstats input of the tools section
// (records.jsonl, records.parquet and records-no-itl.parquet, 2 M
// records, or MTKIT_STATS_RECORDS) into MTKIT_STATS_INPUT_DIR, to time
// mtstats builds against each other on it (docs/performance.md, "Cache
// retention pass"); skipped without the variable:
//
//	MTKIT_STATS_INPUT_DIR=/tmp/in go test -run WriteStatsInput -timeout 30m ./internal/cmd/mtbench
func TestWriteStatsInput(t *testing.T) {
	dir := os.Getenv("MTKIT_STATS_INPUT_DIR")
	if dir == "" {
		t.Skip("MTKIT_STATS_INPUT_DIR not set")
	}
	n := 2_000_000
	if s := os.Getenv("MTKIT_STATS_RECORDS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	files := recordFiles{filepath.Join(dir, "records.jsonl"), filepath.Join(dir, "records.parquet"), filepath.Join(dir, "records-no-itl.parquet")}
	if err := writeRecordFiles(files, recordSpec{n: n, seed: 1}); err != nil {
		t.Fatal(err)
	}
}
