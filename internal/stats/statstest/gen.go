// Package statstest generates request records for the tests of stats
// and mtstats: multi-turn runs with growing histories, think time, cache
// hits, streamed chunks, failures and retries.
package statstest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/record"
)

// Config shapes generated records.
type Config struct {
	Seed          uint64
	Run           string
	Shard         int
	Convs         int // conversations
	MaxTurns      int
	Warmup        int // conversations in the warmup phase
	FailEvery     int // every n-th request fails (0: never)
	NoCache       bool
	ITL           bool
	Clients       int
	Start         time.Time
	RequestsLimit int // stop after this many records (0: no limit)
}

// Records simulates a multi-turn run: conversations with growing
// histories, think time between turns, server usage with prefix-cache
// hits, streamed chunks with ITL gaps, occasional failures and retries.
func Records(cfg Config) []record.Record {
	rng := rand.New(rand.NewPCG(cfg.Seed, 42))
	if cfg.Start.IsZero() {
		cfg.Start = time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	}
	if cfg.Clients == 0 {
		cfg.Clients = 4
	}
	var out []record.Record
	seq := int64(0)
	for c := range cfg.Convs {
		t := cfg.Start.Add(time.Duration(c) * 700 * time.Millisecond)
		turns := 1 + rng.IntN(cfg.MaxTurns)
		history := int64(0)
		phase := record.PhaseMeasure
		if c < cfg.Warmup {
			phase = record.PhaseWarmup
		}
		for turn := range turns {
			think := time.Duration(0)
			if turn > 0 {
				think = time.Duration(rng.IntN(1500)) * time.Millisecond
			}
			scheduled := t.Add(think)
			late := time.Duration(rng.IntN(3000)) * time.Microsecond
			start := scheduled.Add(late)
			userTok := int64(20 + rng.IntN(200))
			prompt := history + userTok
			cached := history / 16 * 16
			outTok := int64(10 + rng.IntN(120))
			ttft := time.Duration(30+rng.IntN(200)+int(prompt-cached)/20) * time.Millisecond
			var itl []int64
			gen := time.Duration(0)
			for range outTok - 1 {
				g := time.Duration(8+rng.IntN(20)) * time.Millisecond
				gen += g
				if cfg.ITL {
					itl = append(itl, int64(g))
				}
			}
			end := start.Add(ttft + gen)
			first := start.Add(ttft)
			r := record.Record{
				RunID: cfg.Run, Shard: cfg.Shard, Seq: seq,
				ConversationID: fmt.Sprintf("conv-%03d", c), Turn: turn, Client: c % cfg.Clients,
				Phase: phase, Model: "tiny",
				Scheduled: scheduled, Start: start, FirstToken: &first, End: end,
				TTFTNs: record.Ptr(int64(ttft)), TTFTContentNs: record.Ptr(int64(ttft)),
				ITLNs:     itl,
				LatencyNs: int64(end.Sub(start)), IntendedLatencyNs: int64(end.Sub(scheduled)),
				LatenessNs: int64(late), ThinkPlannedNs: int64(think), ThinkActualNs: int64(think + late),
				PromptTokens: record.Ptr(prompt), CompletionTokens: record.Ptr(outTok),
				CachedTokens:       record.Ptr(cached),
				ClientPromptTokens: prompt + 3, ClientCompletionTokens: outTok,
				InputMessages: 2*turn + 1, MaxTokens: 128, Chunks: int(outTok),
				FinishReason: "length", Status: 200,
			}
			if outTok > 1 {
				r.TPOTNs = record.Ptr(float64(gen) / float64(outTok-1))
			}
			if cfg.NoCache {
				r.CachedTokens = nil
			}
			seq++
			if cfg.FailEvery > 0 && int(seq)%cfg.FailEvery == 0 {
				// A retried 5xx, then the final attempt times out.
				retry := r
				retry.Retried, retry.ErrorClass, retry.Status, retry.Error = true, record.ErrHTTP5xx, 503, "server overloaded"
				retry.TTFTNs, retry.TTFTContentNs, retry.TPOTNs, retry.FirstToken, retry.ITLNs = nil, nil, nil, nil, nil
				retry.CompletionTokens, retry.CachedTokens, retry.PromptTokens, retry.Chunks = nil, nil, nil, 0
				out = append(out, retry)
				r.Seq, r.Attempt = seq, 1
				seq++
				r.ErrorClass, r.Status, r.Error = record.ErrTimeout, 0, "request timeout"
				r.TTFTNs, r.TTFTContentNs, r.TPOTNs, r.FirstToken, r.ITLNs = nil, nil, nil, nil, nil
				r.CompletionTokens, r.Chunks = nil, 0
			}
			out = append(out, r)
			if cfg.RequestsLimit > 0 && len(out) >= cfg.RequestsLimit {
				return out
			}
			history = prompt + outTok
			t = end
		}
	}
	return out
}

// JSONL encodes recs as JSON lines.
func JSONL(t testing.TB, recs []record.Record) []byte {
	t.Helper()
	var b bytes.Buffer
	encodeAll(t, record.NewJSONEncoder(&b), recs)
	return b.Bytes()
}

// Parquet encodes recs as a Parquet file.
func Parquet(t testing.TB, recs []record.Record) []byte {
	t.Helper()
	var b bytes.Buffer
	encodeAll(t, record.NewParquetEncoder(&b), recs)
	return b.Bytes()
}

// encodeAll encodes recs with enc and closes it.
func encodeAll(t testing.TB, enc record.Encoder, recs []record.Record) {
	t.Helper()
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
}
