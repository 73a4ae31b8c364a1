package vllmbook

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mtkit/mtkit/internal/vllmcompat"
	"github.com/xuri/excelize/v2"
)

// TestWriteVLLMXLSX checks the figures of vLLM's workbook against pandas'
// describe() of the same values (computed by hand: linear percentiles,
// std with ddof = 1) and the tail selection of --warmup-percentages.
func TestWriteVLLMXLSX(t *testing.T) {
	t.Parallel()
	var reqs []vllmcompat.Request
	for i, ttft := range []float64{4, 1, 3, 2} { // start order: 1, 2, 3, 4 below
		reqs = append(reqs, vllmcompat.Request{TTFTMs: ttft, LatencyMs: 10, StartTimeMs: 1000 * ttft, ConversationID: "c", ClientID: i})
	}
	path := filepath.Join(t.TempDir(), "w.xlsx")
	wb := &Workbook{Params: []vllmcompat.Param{{Name: "model", Value: "m"}, {Name: "num_clients", Value: 2}}, Warmup: []float64{0, 0.5}, Requests: reqs}
	if err := WriteXLSX(path, wb); err != nil {
		t.Fatal(err)
	}
	// Issue 23: excelize's SaveAs wrote the file executable (0755).
	if st, err := os.Stat(path); err != nil || st.Mode().Perm()&0o111 != 0 {
		t.Errorf("%s: mode %v (%v), want 0644 as the HTML report", path, st.Mode(), err)
	}
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, _ := f.GetRows("Summary")
	for r, want := range map[int][]string{
		0: {"model", "num_clients"}, 1: {"m", "2"},
		4: {"runtime_sec", "requests_per_sec"}, 5: {"3.01", "1.32890365448504"}, // (4000+10-1000)/1000 s
		8: {"ttft_ms", "4", "2.5", "1.2909944487358", "1", "1.75", "2.5", "3.25", "3.7", "4"},
		// 7 metrics, then 2 blank rows: the next block starts at 7+8+2.
		17: {"runtime_sec", "requests_per_sec"}, 18: {"1.01", "1.98019801980198"}, // the last 2 requests
		21: {"ttft_ms", "2", "3.5", "0.707106781186547", "3", "3.25", "3.5", "3.75", "3.9", "4"},
	} {
		if r >= len(rows) || !slices.Equal(rows[r], want) {
			t.Errorf("Summary row %d = %q, want %q", r, rows[min(r, len(rows)-1)], want)
		}
	}
	raw, _ := f.GetRows("Raw data")
	if len(raw) != 5 || raw[1][0] != "1" || raw[4][0] != "4" || raw[1][len(raw[1])-1] != "1010" {
		t.Errorf("Raw data not sorted by start, or end_time_ms wrong: %q", raw)
	}
}
