package replay

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/schedule"
	"github.com/mtkit/mtkit/internal/sim"
	"github.com/mtkit/mtkit/internal/source"
)

// BenchmarkRunSim measures the whole client (replay.Run with records
// discarded) against the zero-latency simulator over loopback, client
// and server in one process: ns per streamed chunk of both together.
func BenchmarkRunSim(b *testing.B) {
	srv, err := sim.Start(context.Background(), sim.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	for _, tc := range []struct {
		name    string
		clients int
		tokens  int
	}{
		{"turns_c16_t4", 16, 4},
		{"chunks_c8_t1000", 8, 1000},
	} {
		b.Run(tc.name, func(b *testing.B) {
			convs := make([]conv.Conversation, tc.clients)
			for i := range convs {
				convs[i] = conv.Conversation{ID: fmt.Sprint("c", i), Messages: []conv.Message{
					{Role: conv.RoleUser, Content: "hello there, how are you"},
					{Role: conv.RoleAssistant, Content: "ok", OutputTokens: tc.tokens},
				}}
			}
			o := Options{URL: srv.URL, Model: sim.DefaultModel, MaxModelLen: 1 << 20, Stream: true, IncludeUsage: true,
				Schedule: schedule.Closed{Clients: tc.clients}, Loop: true, Think: func(time.Duration, *rand.Rand) time.Duration { return 0 }}
			var sink countRecords
			b.ReportAllocs()
			b.ResetTimer()
			o.MaxRequests = max(b.N, tc.clients)
			if _, err := Run(context.Background(), context.Background(), o, source.Slice(convs), Sink{Records: &sink}); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if sink.failed > 0 {
				b.Fatalf("%d failed requests", sink.failed)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(max(sink.chunks, 1)), "ns/chunk")
		})
	}
}

// countRecords is a record sink that only counts.
type countRecords struct{ n, chunks, failed int }

func (c *countRecords) Encode(r *record.Record) error {
	c.n++
	c.chunks += r.Chunks
	if !r.OK() {
		c.failed++
	}
	return nil
}

func (c *countRecords) Flush() error { return nil }

func (c *countRecords) Close() error { return nil }
