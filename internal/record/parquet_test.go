package record

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/mtkit/mtkit/internal/cputime"
	"github.com/mtkit/mtkit/internal/deepeq"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// diffRecords compares records; time.Time fields compare with Equal (the
// location is not part of the format) and nil and empty ITL lists are equal.
func diffRecords(want, got []Record) string { return diff(want, got, cmpopts.EquateEmpty()) }

// diff is cmp.Diff(want, got, opts...) after a check with deepeq.Equal,
// which finds equal values many times faster (cmp.Diff took 92.5% of
// TestParquetBlocks' CPU). deepeq.Equal counts nil and empty slices as
// equal: only values that differ in more than that reach cmp.
func diff(want, got any, opts ...cmp.Option) string {
	if deepeq.Equal(want, got) {
		return ""
	}
	return cmp.Diff(want, got, opts...)
}

// encodeParquet encodes recs as a Parquet file; closing it twice is no error.
func encodeParquet(t testing.TB, recs []Record) []byte {
	t.Helper()
	return encodeParquetGroups(t, recs, ParquetRowGroupRows)
}

// encodeParquetGroups encodes with row groups of at most rows records.
func encodeParquetGroups(t testing.TB, recs []Record, rows int) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := newParquetEncoder(&buf, rows)
	encodeAll(t, enc, recs)
	if err := enc.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	return buf.Bytes()
}

func decodeParquet(t testing.TB, data []byte) []Record {
	t.Helper()
	dec, err := NewParquetDecoder(bytes.NewReader(data), int64(len(data)), "x.parquet")
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	return decodeAll(t, dec)
}

func TestParquetRoundTrip(t *testing.T) {
	t.Parallel()
	// Row groups of 1,000 records: 3,010 records span four of them.
	for _, n := range []int{0, 1, 999, 1000, 3010} {
		recs := genRecords(uint64(n), n)
		got := decodeParquet(t, encodeParquetGroups(t, recs, 1000))
		if d := diffRecords(recs, got); d != "" {
			t.Fatalf("n=%d: %s", n, d)
		}
	}
}

func TestParquetFields(t *testing.T) {
	t.Parallel()
	// Nanosecond precision far from the epoch, nil pointers, a list.
	ts := time.Date(2031, 7, 9, 1, 2, 3, 999999999, time.UTC)
	recs := []Record{
		{RunID: "r", Start: ts, End: ts.Add(1), ITLNs: []int64{1, 2, 1 << 40}, TTFTNs: Ptr(int64(0)), CachedTokens: Ptr(int64(0))},
		{RunID: "r", Seq: 1, Start: ts, End: ts},
	}
	got := decodeParquet(t, encodeParquet(t, recs))
	if !got[0].Start.Equal(ts) || got[0].End.Sub(ts) != 1 {
		t.Errorf("timestamps: got %v %v, want %v", got[0].Start, got[0].End, ts)
	}
	if got[0].TTFTNs == nil || *got[0].TTFTNs != 0 || got[0].CachedTokens == nil {
		t.Errorf("zero pointer became nil: %+v", got[0])
	}
	if got[1].TTFTNs != nil || got[1].CachedTokens != nil || got[1].FirstToken != nil || got[1].PromptTokens != nil {
		t.Errorf("nil pointer became non-nil: %+v", got[1])
	}
	if d := cmp.Diff([]int64{1, 2, 1 << 40}, got[0].ITLNs); d != "" {
		t.Error(d)
	}
}

// TestParquetSchema checks what a generic Parquet reader (DuckDB, pandas)
// sees: the JSON field names as columns, timestamps in nanoseconds.
func TestParquetSchema(t *testing.T) {
	t.Parallel()
	data := encodeParquet(t, genRecords(5, 10))
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	cols := map[string]parquet.Field{}
	for _, fl := range f.Schema().Fields() {
		cols[fl.Name()] = fl
	}
	for _, name := range []string{"run_id", "seq", "start", "ttft_ns", "itl_ns", "cached_tokens", "error_class", "retried"} {
		if _, ok := cols[name]; !ok {
			t.Errorf("column %s missing; have %v", name, f.Schema())
		}
	}
	lt := cols["start"].Type().LogicalType()
	if lt == nil || !strings.Contains(lt.String(), "TIMESTAMP") || !strings.Contains(lt.String(), "NANOS") {
		t.Errorf("start: logical type %v, want TIMESTAMP(NANOS)", lt)
	}
	if !cols["cached_tokens"].Optional() {
		t.Error("cached_tokens is not optional")
	}
	// Read generically, as a schema-agnostic tool would.
	rows := make([]parquet.Row, 20)
	r := parquet.NewReader(f)
	n, err := r.ReadRows(rows)
	if err != nil && err != io.EOF {
		t.Fatal(err)
	}
	if n != 10 || f.NumRows() != 10 {
		t.Errorf("read %d rows, file says %d, want 10", n, f.NumRows())
	}
	if len(f.RowGroups()) != 1 {
		t.Errorf("%d row groups", len(f.RowGroups()))
	}
	if c := f.Metadata().RowGroups[0].Columns[0].MetaData.Codec.String(); c != "ZSTD" {
		t.Errorf("codec %s, want ZSTD", c)
	}
}

// TestParquetFlushInterval checks that row groups are written as time
// passes, so memory stays bounded on slow runs.
func TestParquetFlushInterval(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	enc := NewParquetEncoder(&buf)
	now := time.Unix(0, 0)
	enc.now = func() time.Time { return now }
	enc.lastFlush = now
	recs := genRecords(6, 5)
	for i := range recs {
		now = now.Add(600 * time.Millisecond)
		if err := enc.Encode(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(f.RowGroups()); got < 2 {
		t.Errorf("%d row groups, want one per second", got)
	}
	if d := diffRecords(recs, decodeParquet(t, buf.Bytes())); d != "" {
		t.Error(d)
	}
}

func TestParquetDecoderBadFile(t *testing.T) {
	t.Parallel()
	data := encodeParquet(t, genRecords(7, 100))
	for _, bad := range [][]byte{nil, []byte("PAR1"), data[:len(data)/2], append([]byte("PAR1xxxx"), data[8:]...)} {
		dec, err := NewParquetDecoder(bytes.NewReader(bad), int64(len(bad)), "bad.parquet")
		if err != nil {
			continue
		}
		for dec.Scan() {
		}
	}
	// A file without footer (killed writer) must give an error, not a panic.
	p := filepath.Join(t.TempDir(), "k.parquet")
	if err := os.WriteFile(p, data[:len(data)-10], 0o644); err != nil {
		t.Fatal(err)
	}
	fs := &Files{Paths: []string{p}}
	for fs.Scan() {
	}
	if fs.Err() == nil {
		t.Error("no error for a parquet file without footer")
	}
}

// claimRows returns the Parquet file data with a footer that claims rows
// rows in the file and in its first row group, as a damaged footer can.
func claimRows(t testing.TB, data []byte, rows int64) []byte {
	t.Helper()
	n := len(data)
	flen := int(binary.LittleEndian.Uint32(data[n-8 : n-4]))
	var md format.FileMetaData
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), data[n-8-flen:n-8], &md); err != nil {
		t.Fatal(err)
	}
	md.NumRows, md.RowGroups[0].NumRows = rows, rows
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
	if err != nil {
		t.Fatal(err)
	}
	out := append([]byte{}, data[:n-8-flen]...)
	out = append(out, footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, "PAR1"...)
}

// TestParquetClaimedRows reads files whose footer claims more rows than
// their pages hold, up to 2^40: the error names the file, the column and
// both counts, and room is made only for the rows the pages hold (room
// made for the claim at once was a fatal out-of-memory error).
func TestParquetClaimedRows(t *testing.T) {
	data := encodeParquet(t, genRecords(41, 20))
	byTurn, err := NewColumns("turn", "ttft_ns", "phase", "error_class", "retried", "itl_ns")
	if err != nil {
		t.Fatal(err)
	}
	for _, rows := range []int64{21, 1 << 34, 1 << 40} {
		for _, cols := range []*Columns{nil, byTurn} {
			t.Run(fmt.Sprintf("%d/%v", rows, cols != nil), func(t *testing.T) {
				p := filepath.Join(t.TempDir(), "claims.parquet")
				if err := os.WriteFile(p, claimRows(t, data, rows), 0o644); err != nil {
					t.Fatal(err)
				}
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				fs := &Files{Paths: []string{p}, Columns: cols}
				for fs.Scan() {
				}
				runtime.ReadMemStats(&after)
				err := fs.Err()
				if err == nil {
					t.Fatal("no error")
				}
				want := fmt.Sprintf("20 of %d rows", rows)
				if msg := err.Error(); !strings.Contains(msg, "claims.parquet") || !strings.Contains(msg, want) || !strings.Contains(msg, "column ") {
					t.Errorf("error %q, want the file, a column and %q", msg, want)
				}
				if got := after.TotalAlloc - before.TotalAlloc; got > 512<<20 {
					t.Errorf("allocated %d MB for a 20-row file", got>>20)
				}
			})
		}
	}
}

// TestParquetFooterLength opens files whose last bytes claim a footer
// longer than the file: the error names the file and both sizes, and no
// room is made for the claim (parquet-go makes it before reading, up to
// 4 GB and seconds of clearing it).
func TestParquetFooterLength(t *testing.T) {
	data := encodeParquet(t, genRecords(42, 5))
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"magic only", []byte("PAR1PAR1"), "footer of 827474256 bytes in a file of 8 bytes"},
		{"2 GB footer", withFooterLength(data, 1<<31), fmt.Sprintf("footer of %d bytes in a file of %d bytes", 1<<31, len(data))},
		{"one byte too long", withFooterLength(data, uint32(len(data)-11)), fmt.Sprintf("footer of %d bytes in a file of %d bytes", len(data)-11, len(data))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := NewParquetDecoder(bytes.NewReader(tc.data), int64(len(tc.data)), "f.parquet")
			runtime.ReadMemStats(&after)
			if err == nil || !strings.HasPrefix(err.Error(), "f.parquet: parquet: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want f.parquet and %q", err, tc.want)
			}
			if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
				t.Errorf("allocated %d KB", got>>10)
			}
		})
	}
}

// withFooterLength returns data with its footer length set to n.
func withFooterLength(data []byte, n uint32) []byte {
	out := append([]byte{}, data...)
	binary.LittleEndian.PutUint32(out[len(out)-8:], n)
	return out
}

func BenchmarkDecode(b *testing.B) {
	recs := genRecords(9, 20000)
	js, pq := encodeJSONL(b, recs), encodeParquet(b, recs)
	b.Run("jsonl", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(js)))
		cpu := cputime.Process()
		for b.Loop() {
			dec := NewJSONDecoder(bytes.NewReader(js), "b")
			for dec.Scan() {
			}
		}
		b.ReportMetric(float64(b.N*len(recs))/b.Elapsed().Seconds(), "records/s")
		b.ReportMetric(float64(b.N*len(recs))/(cputime.Process()-cpu).Seconds(), "records/cpu-s")
	})
	b.Run("parquet", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(pq)))
		cpu := cputime.Process()
		for b.Loop() {
			dec, err := NewParquetDecoder(bytes.NewReader(pq), int64(len(pq)), "b")
			if err != nil {
				b.Fatal(err)
			}
			for dec.Scan() {
			}
		}
		b.ReportMetric(float64(b.N*len(recs))/b.Elapsed().Seconds(), "records/s")
		b.ReportMetric(float64(b.N*len(recs))/(cputime.Process()-cpu).Seconds(), "records/cpu-s")
	})
}

// TestParquetColumnar checks that files written by ParquetEncoder take the
// columnar path and decode exactly as parquet-go's generic reader does,
// and that other schemas fall back to the generic reader.
func TestParquetColumnar(t *testing.T) {
	t.Parallel()
	recs := genRecords(41, 5000)
	recs[3].Error, recs[4].ServerExtra, recs[5].VerifyMismatch = "boom ☃", `{"k":1}`, Ptr(true)
	recs[6].ITLNs = make([]int64, 20000) // spans pages
	for i := range recs[6].ITLNs {
		recs[6].ITLNs[i] = int64(i)
	}
	data := encodeParquet(t, recs)
	dec, err := NewParquetDecoder(bytes.NewReader(data), int64(len(data)), "c.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if dec.g != nil {
		t.Fatal("ParquetEncoder output did not take the columnar path")
	}
	var got []Record
	for dec.Scan() {
		if dec.Err() != nil {
			t.Fatal(dec.Err())
		}
		got = append(got, *dec.Record())
	}
	if dec.Err() != nil {
		t.Fatal(dec.Err())
	}
	gr := parquet.NewGenericReader[Record](bytes.NewReader(data))
	generic := make([]Record, len(recs))
	if n, err := gr.Read(generic); n != len(recs) || (err != nil && err != io.EOF) {
		t.Fatalf("generic: %d, %v", n, err)
	}
	if d := diffRecords(generic, got); d != "" {
		t.Fatalf("columnar differs from generic: %s", d)
	}
	if d := diffRecords(recs, got); d != "" {
		t.Fatalf("columnar differs from input: %s", d)
	}

	type oldRecord struct {
		RunID string    `parquet:"run_id"`
		Seq   int64     `parquet:"seq"`
		Start time.Time `parquet:"start,timestamp(nanosecond)"`
		End   time.Time `parquet:"end,timestamp(nanosecond)"`
		Extra string    `parquet:"extra"`
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[oldRecord](&buf)
	ts := time.Date(2026, 1, 1, 0, 0, 0, 5, time.UTC)
	if _, err := w.Write([]oldRecord{{RunID: "old", Seq: 7, Start: ts, End: ts, Extra: "x"}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	old := decodeParquet(t, buf.Bytes())
	if len(old) != 1 || old[0].RunID != "old" || old[0].Seq != 7 || !old[0].Start.Equal(ts) || old[0].TTFTNs != nil {
		t.Errorf("older schema: %+v", old)
	}
}

// TestParquetBlocks: the columnar decoder hands out a row group in blocks
// of rows, copied column by column from the group's decoded columns into
// records it reuses; whatever the block size (one row, blocks that do not
// divide the row groups, blocks larger than a group), every field and
// selection reads as the generic (row by row) decoder reads it, over row
// groups alternating between rows with every optional value, list and
// plain string and rows with none, lists spanning pages, and records
// kept from earlier blocks keep their values.
func TestParquetBlocks(t *testing.T) {
	t.Parallel()
	recs := genRecords(51, 1300)
	for i := range recs {
		if (i/300)%2 == 1 {
			recs[i].TTFTNs, recs[i].TPOTNs, recs[i].ITLNs, recs[i].FirstToken, recs[i].CachedTokens = nil, nil, nil, nil, nil
		} else {
			recs[i].Error, recs[i].VerifyMismatch, recs[i].Backend = fmt.Sprint("boom ", i%7), Ptr(i%3 == 0), "b1"
		}
	}
	recs[5].ITLNs = make([]int64, 30000) // spans pages
	for i := range recs[5].ITLNs {
		recs[5].ITLNs[i] = int64(i)
	}
	data := encodeParquetGroups(t, recs, 300)
	if !IsColumnar(data) {
		t.Fatal("not read by the columnar decoder")
	}
	if d := diffRecords(recs, decodeGeneric(t, data)); d != "" {
		t.Fatalf("generic decoder: %s", d)
	}
	sel, err := NewColumns("turn", "ttft_ns", "phase", "error_class", "retried", "itl_ns", "error", "first_token", "verify_mismatch", "tpot_ns")
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range []int{1, 7, 256, 299, 300, 301, 5000} {
		for _, cols := range []*Columns{nil, sel} {
			dec, err := NewParquetDecoder(bytes.NewReader(data), int64(len(data)), "x.parquet")
			if err != nil {
				t.Fatal(err)
			}
			dec.cols, dec.block = cols, block
			got := decodeAll(t, dec)
			dec.Close()
			if d := diffRecords(projectAll(recs, cols), got); d != "" {
				t.Fatalf("block %d, columns %v: %s", block, cols != nil, d)
			}
		}
	}
}
