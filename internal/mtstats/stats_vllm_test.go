package mtstats

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestVLLMLayoutNoRecords: in vLLM's layout the workbook is the result;
// with no records it holds the parameters only, and mtstats succeeds
// (mtrun --excel-output relies on this).
func TestVLLMLayoutNoRecords(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(in, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	book := filepath.Join(dir, "w.xlsx")
	o := Options{Inputs: []string{in}, Out: io.Discard, Err: io.Discard, NoMetrics: true, XLSX: book, XLSXLayout: XLSXVLLM}
	if err := Run(context.Background(), o); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if _, err := os.Stat(book); err != nil {
		t.Errorf("workbook: %v", err)
	}
}
