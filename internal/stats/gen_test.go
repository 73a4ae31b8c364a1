package stats

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/record"
)

// genConfig shapes generated records.
type genConfig struct {
	seed          uint64
	run           string
	shard         int
	convs         int // conversations
	maxTurns      int
	warmup        int // conversations in the warmup phase
	failEvery     int // every n-th request fails (0: never)
	noCache       bool
	itl           bool
	clients       int
	start         time.Time
	requestsLimit int // stop after this many records (0: no limit)
}

// genRecords simulates a multi-turn run: conversations with growing
// histories, think time between turns, server usage with prefix-cache
// hits, streamed chunks with ITL gaps, occasional failures and retries.
func genRecords(cfg genConfig) []record.Record {
	rng := rand.New(rand.NewPCG(cfg.seed, 42))
	if cfg.start.IsZero() {
		cfg.start = time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	}
	if cfg.clients == 0 {
		cfg.clients = 4
	}
	var out []record.Record
	seq := int64(0)
	for c := range cfg.convs {
		t := cfg.start.Add(time.Duration(c) * 700 * time.Millisecond)
		turns := 1 + rng.IntN(cfg.maxTurns)
		history := int64(0)
		phase := record.PhaseMeasure
		if c < cfg.warmup {
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
				if cfg.itl {
					itl = append(itl, int64(g))
				}
			}
			end := start.Add(ttft + gen)
			first := start.Add(ttft)
			r := record.Record{
				RunID: cfg.run, Shard: cfg.shard, Seq: seq,
				ConversationID: fmt.Sprintf("conv-%03d", c), Turn: turn, Client: c % cfg.clients,
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
			if cfg.noCache {
				r.CachedTokens = nil
			}
			seq++
			if cfg.failEvery > 0 && int(seq)%cfg.failEvery == 0 {
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
			if cfg.requestsLimit > 0 && len(out) >= cfg.requestsLimit {
				return out
			}
			history = prompt + outTok
			t = end
		}
	}
	return out
}

// jsonl encodes recs as JSON lines.
func jsonl(t testing.TB, recs []record.Record) []byte {
	t.Helper()
	var b bytes.Buffer
	encodeAll(t, record.NewJSONEncoder(&b), recs)
	return b.Bytes()
}

// parquetBytes encodes recs as a Parquet file.
func parquetBytes(t testing.TB, recs []record.Record) []byte {
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

var genTestdata = flag.Bool("gen-testdata", false, "regenerate the record files of cmd/mtstats/testdata")

// TestGenTestdata writes the inputs of mtstats' golden tests when run with
// -gen-testdata.
func TestGenTestdata(t *testing.T) {
	if !*genTestdata {
		t.Skip("run with -gen-testdata to regenerate cmd/mtstats/testdata inputs")
	}
	dir := filepath.Join("..", "..", "cmd", "mtstats", "testdata")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	base := genRecords(genConfig{seed: 100, run: "base", convs: 24, maxTurns: 5, warmup: 2, failEvery: 23, itl: true})
	tuned := genRecords(genConfig{seed: 101, run: "tuned", convs: 24, maxTurns: 5, warmup: 2, itl: true,
		start: time.Date(2026, 5, 4, 11, 0, 0, 0, time.UTC)})
	shard1 := genRecords(genConfig{seed: 102, run: "base", shard: 1, convs: 8, maxTurns: 3, noCache: true})
	for name, data := range map[string][]byte{
		"base.jsonl":    jsonl(t, base),
		"tuned.jsonl":   jsonl(t, tuned),
		"shard1.jsonl":  jsonl(t, shard1),
		"tuned.parquet": parquetBytes(t, tuned),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

var (
	genN   = flag.Int("gen-n", 0, "with -gen-out: number of records to generate")
	genOut = flag.String("gen-out", "", "write -gen-n generated records to this file (.parquet or JSONL) for load tests")
	genITL = flag.Bool("gen-itl", true, "with -gen-out: one ITL gap per output token after the first (false: none, as records of servers that stream one chunk)")
)

// TestGenLoad writes a large record file for memory and speed checks of
// the mtstats binary: go test ./internal/stats -run TestGenLoad -gen-n 10000000 -gen-out /tmp/big.parquet
func TestGenLoad(t *testing.T) {
	if *genOut == "" {
		t.Skip("needs -gen-out")
	}
	f, err := os.Create(*genOut)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var enc record.Encoder
	if strings.HasSuffix(*genOut, ".parquet") {
		enc = record.NewParquetEncoder(f)
	} else {
		w := bufio.NewWriterSize(f, 1<<20)
		defer w.Flush()
		enc = record.NewJSONEncoder(struct{ io.Writer }{w})
	}
	n, seed := 0, uint64(0)
	for n < *genN {
		seed++
		// Like a real run: one ITL gap per output token after the first,
		// about 3% of requests retried then failed, a warmup phase.
		recs := genRecords(genConfig{seed: seed, run: "load", shard: int(seed), convs: 10000, maxTurns: 10,
			itl: *genITL, failEvery: 33, warmup: 100,
			requestsLimit: *genN - n, start: time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC).Add(time.Duration(seed) * time.Hour)})
		for i := range recs {
			if err := enc.Encode(&recs[i]); err != nil {
				t.Fatal(err)
			}
		}
		n += len(recs)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
}
