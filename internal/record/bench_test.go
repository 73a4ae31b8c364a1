package record

import (
	"bufio"
	"io"
	"testing"
	"time"
)

// benchRecord is a typical streamed request: 100 ITL gaps, usage, timings.
func benchRecord(i int) *Record {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(i) * time.Millisecond)
	ft := start.Add(50 * time.Millisecond)
	itl := make([]int64, 100)
	for k := range itl {
		itl[k] = int64(10e6 + k*1000)
	}
	pt, ct, cached := int64(1200), int64(101), int64(1024)
	return &Record{RunID: "20260102T030405Z-0123456789ab", Seq: int64(i), ConversationID: "conv-000042", Turn: 3,
		Phase: PhaseMeasure, Model: "mtkit-sim", Scheduled: start, Start: start, FirstToken: &ft, End: ft.Add(time.Second),
		TTFTNs: Ptr(int64(50e6)), TPOTNs: Ptr(10e6), ITLNs: itl, LatencyNs: 1050e6, IntendedLatencyNs: 1050e6,
		PromptTokens: &pt, CompletionTokens: &ct, CachedTokens: &cached, MaxTokens: 101, Chunks: 101,
		FinishReason: "length", Status: 200}
}

// BenchmarkEncode measures record encoding, JSONL (flushed per record,
// as mtrun writes) and Parquet (zstd), reporting records/s.
func BenchmarkEncode(b *testing.B) {
	recs := make([]*Record, 1024)
	for i := range recs {
		recs[i] = benchRecord(i)
	}
	for _, tc := range []struct {
		name string
		enc  func(w io.Writer) Encoder
	}{
		{"jsonl", func(w io.Writer) Encoder { return NewJSONEncoder(bufio.NewWriter(w)) }},
		{"parquet", func(w io.Writer) Encoder { return NewParquetEncoder(w) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			benchEncode(b, tc.enc(io.Discard), recs)
		})
	}
}
