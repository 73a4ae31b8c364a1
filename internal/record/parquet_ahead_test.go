package record

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

// writeParts writes groups of recs as the part files of a new directory,
// one file per element of sizes, with row groups of rows records.
func writeParts(t *testing.T, recs []Record, sizes []int, rows int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "r.parquet")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, n := range sizes {
		name := filepath.Join(dir, fmt.Sprintf("part-%06d.parquet", i))
		if err := os.WriteFile(name, encodeParquetGroups(t, recs[:n], rows), 0o644); err != nil {
			t.Fatal(err)
		}
		recs = recs[n:]
	}
	return dir
}

// TestFilesParquetAhead: the parts of a directory (and Parquet files
// after it) are decoded ahead, while the current part is read, into
// buffers shared between the parts; the records, their order, the
// problems with their row numbers, the labels and the final error are
// those of the parts read one after the other. Parts alternate between
// records with every optional value and list and records with none, so
// a buffer reused from another part must show none of its values.
func TestFilesParquetAhead(t *testing.T) {
	t.Parallel()
	recs := genRecords(21, 1400)
	for i := range recs {
		if (i/100)%2 == 1 {
			recs[i].TTFTNs, recs[i].TPOTNs, recs[i].ITLNs, recs[i].FirstToken, recs[i].CachedTokens = nil, nil, nil, nil, nil
		} else {
			recs[i].Error, recs[i].VerifyMismatch, recs[i].Backend = "boom", Ptr(i%3 == 0), "b1"
		}
	}
	recs[250].RunID = "" // a problem, with its row number, in the third part
	dir := writeParts(t, recs, []int{100, 100, 100, 300, 100, 100, 100}, 100)
	single := writeFile(t, "single.parquet", encodeParquetGroups(t, recs[900:1100], 70))
	other := writeFile(t, "other.parquet", encodeParquet(t, recs[1100:1200]))
	jsonl := writeFile(t, "r.jsonl", encodeJSONL(t, recs[1200:1300]))
	// A part directory with a part that is not Parquet (read as JSONL)
	// and one cut short (a fatal error where it is reached).
	bad := writeParts(t, recs[1300:], []int{40, 30}, 25)
	if err := os.WriteFile(filepath.Join(bad, "part-000002.parquet"), encodeJSONL(t, recs[1370:1375]), 0o644); err != nil {
		t.Fatal(err)
	}
	cut := encodeParquet(t, recs[1375:1400])
	if err := os.WriteFile(filepath.Join(bad, "part-000003.parquet"), cut[:len(cut)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	// A part directory whose first part has its pages overwritten (a
	// fatal error while the next part is being decoded ahead).
	corrupt := writeParts(t, recs[:200], []int{100, 100}, 100)
	first := filepath.Join(corrupt, "part-000000.parquet")
	data, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	footer := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	for i := 4; i < (len(data)-8-footer)/3; i++ { // the first pages, not the page index
		data[i] = 0xff
	}
	if err := os.WriteFile(first, data, 0o644); err != nil {
		t.Fatal(err)
	}
	sel, err := NewColumns("turn", "ttft_ns", "phase", "error_class", "retried", "itl_ns", "error")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		paths []string
		min   int // records and problems read at least
	}{
		{"directory", []string{dir}, 900},
		{"files after a directory", []string{"d=" + dir, single, other, jsonl, single}, 1300},
		{"bad parts", []string{dir, bad, other}, 970},
		{"corrupt part", []string{corrupt, other}, 0},
	} {
		for _, cols := range []*Columns{nil, sel} {
			want, wantErr := filesTranscript(&Files{Paths: tc.paths, Columns: cols, sequential: true})
			if len(want) < tc.min || (wantErr == "") != (tc.name != "bad parts" && tc.name != "corrupt part") {
				t.Fatalf("%s: %d records, final error %q", tc.name, len(want), wantErr)
			}
			f := &Files{Paths: tc.paths, Columns: cols}
			got, gotErr := filesTranscript(f)
			if len(f.ahead) != 0 {
				t.Errorf("%s: %d inputs left open ahead after the end", tc.name, len(f.ahead))
			}
			if d := diff(want, got); d != "" {
				t.Errorf("%s, columns %v: decoded ahead differs (-one by one +ahead):\n%s", tc.name, cols != nil, d)
			}
			if gotErr != wantErr {
				t.Errorf("%s, columns %v: final error %q, one by one %q", tc.name, cols != nil, gotErr, wantErr)
			}
		}
	}
	// The reference reads every part on its own, so it must see the
	// values written.
	want := slices.Concat(recs[:250], recs[251:900])
	var got []Record
	f := &Files{Paths: []string{dir}, sequential: true}
	for f.Scan() {
		if f.Err() == nil {
			got = append(got, *f.Record())
		}
	}
	if d := diffRecords(want, got); d != "" {
		t.Fatalf("parts read one by one: %s", d)
	}
}

// TestFilesParquetAheadStarts: once the first part's rows are handed out,
// the next part is already being decoded (with one row group per part,
// the decoder would otherwise wait for each part in turn), and never more
// than parquetAhead row groups are under way; with a limit of one row
// group (a single processor) nothing is decoded ahead. Close stops early
// without leaking the parts opened ahead.
func TestFilesParquetAheadStarts(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{parquetAhead, 1} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) { testAheadStarts(t, limit) })
	}
}

func testAheadStarts(t *testing.T, limit int) {
	recs := genRecords(5, 600)
	dir := writeParts(t, recs, []int{100, 100, 100, 100, 100, 100}, 100)
	f := &Files{Paths: []string{dir}, maxAhead: limit}
	inFlight := func() int {
		n := len(f.dec.(*ParquetDecoder).ahead)
		for _, s := range f.ahead {
			n += len(s.dec.(*ParquetDecoder).ahead)
		}
		return n
	}
	for i := range 350 {
		if !f.Scan() || f.Err() != nil {
			t.Fatalf("record %d: %v", i, f.Err())
		}
		if i%100 != 0 {
			continue
		}
		want := min(limit-1, 1)
		if len(f.ahead) != want {
			t.Fatalf("record %d: %d parts decoded ahead, want %d", i, len(f.ahead), want)
		}
		if n := inFlight(); n < want || n > limit-1 {
			t.Fatalf("record %d: %d row groups under way", i, n)
		}
	}
	if err := f.Close(); err != nil { // waits for the groups under way
		t.Fatal(err)
	}
	if len(f.ahead) != 0 {
		t.Errorf("%d inputs still open ahead after Close", len(f.ahead))
	}
}

// TestAheadLimit: two row groups are decoded at once, one when Go runs on
// a single processor, unless a test sets the limit.
func TestAheadLimit(t *testing.T) { // not parallel: it sets GOMAXPROCS
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	if n := aheadLimit(0); n != parquetAhead {
		t.Errorf("2 processors: %d row groups, want %d", n, parquetAhead)
	}
	runtime.GOMAXPROCS(1)
	if n := aheadLimit(0); n != 1 {
		t.Errorf("1 processor: %d row groups, want 1", n)
	}
	if n := aheadLimit(3); n != 3 {
		t.Errorf("limit 3: %d row groups", n)
	}
}
