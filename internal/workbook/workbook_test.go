package workbook

import (
	"bytes"
	"testing"
)

// TestListCell checks the Excel cell limit of list cells.
func TestListCell(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n    int
		want string // prefix
		cut  bool
	}{{1, "[0]", false}, {3, "[0,0,0]", false}, {20000, "[0,0,", true}} {
		got := ListCell(make([]int64, tc.n))
		if !bytes.HasPrefix([]byte(got), []byte(tc.want)) || len([]rune(got)) > maxCellChars || (got[len(got)-1] != ']') == !tc.cut {
			t.Errorf("%d values: %d chars %q…", tc.n, len(got), got[:min(len(got), 20)])
		}
	}
}
