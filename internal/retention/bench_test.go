package retention

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/record"
)

// benchRecords returns n records of 256 clients each serving
// conversations of 2 to 12 turns one after another, as mtbench's
// generated runs do.
func benchRecords(n int) []record.Record {
	rng := rand.New(rand.NewPCG(3, 4))
	type client struct {
		conv, turn, turns int
		ctx               int64
		t                 time.Duration
	}
	cl := make([]client, 256)
	next := 0
	t0 := time.Unix(1e9, 0)
	out := make([]record.Record, n)
	for k := range out {
		c := &cl[rng.IntN(len(cl))]
		if c.turn == c.turns {
			*c = client{conv: next, turns: 2 + rng.IntN(11), t: c.t}
			next++
		}
		prompt := c.ctx + 100 + int64(rng.IntN(100))
		ttft := time.Duration(20+rng.IntN(30)) * time.Millisecond
		lat := ttft + time.Duration(rng.IntN(2000))*time.Millisecond
		start := t0.Add(c.t)
		out[k] = record.Record{RunID: "r", Seq: int64(k), ConversationID: "conv" + strconv.Itoa(c.conv), Turn: c.turn,
			Phase: record.PhaseMeasure, Start: start, End: start.Add(lat), TTFTNs: record.Ptr(int64(ttft)),
			PromptTokens: record.Ptr(prompt), CompletionTokens: record.Ptr(int64(100)), CachedTokens: record.Ptr(c.ctx)}
		c.ctx = prompt + 100
		c.turn++
		c.t += lat + time.Duration(rng.IntN(5000))*time.Millisecond
	}
	return out
}

// BenchmarkPass is the retention pass over 200,000 records: Add for
// each, then Result.
func BenchmarkPass(b *testing.B) {
	recs := benchRecords(200_000)
	b.ReportAllocs()
	for b.Loop() {
		p := New()
		for i := range recs {
			p.Add(&recs[i], true)
		}
		p.Result(Options{})
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(recs)), "ns/record")
}
