package main

import (
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/mtkit/mtkit/internal/record"
)

// recordSpec shapes a synthetic record set that looks like a real mtrun
// run: clients replaying multi-turn conversations one after another, a
// warmup phase, a few percent of failed attempts retried as mtrun
// retries them (internal/replay/turn.go), one ITL gap per output token
// after the first, and cached prompt tokens that grow with the history.
type recordSpec struct {
	n        int     // records to write, retries and warmup included
	clients  int     // concurrent clients (default 256)
	warmup   int     // first requests recorded with phase=warmup (default n/100)
	failRate float64 // probability that an attempt fails (default 0.03)
	retries  int     // mtrun --max-retries (default 3)
	seed     uint64
}

// failureKind is a failed attempt's class, HTTP status and error text as
// mtrun records them (internal/replay/client.go), and how often it occurs
// among failures. A stream error keeps the chunks received before the
// stream broke.
type failureKind struct {
	class  string
	status int
	err    string
	weight float64
}

// recordFailures are the failure kinds of generated records.
var recordFailures = []failureKind{
	{record.ErrHTTP5xx, 500, "HTTP 500: {\"error\":{\"message\":\"internal server error\",\"type\":\"server_error\"}}", 0.45},
	{record.ErrRateLimit, 429, "HTTP 429: {\"error\":{\"message\":\"too many requests\"}}", 0.2},
	{record.ErrTimeout, 0, "Post \"http://127.0.0.1:8000/v1/chat/completions\": context deadline exceeded", 0.15},
	{record.ErrConnect, 0, "Post \"http://127.0.0.1:8000/v1/chat/completions\": dial tcp 127.0.0.1:8000: connect: connection refused", 0.1},
	{record.ErrStream, 200, "stream: unexpected EOF after 12 chunks", 0.05},
	{record.ErrContext, 400, "HTTP 400: {\"error\":{\"message\":\"This model's maximum context length is 32768 tokens\"}}", 0.05},
}

// retryFailRate is the probability that a retry fails too: failures come
// in bursts (a restarting engine), so some requests fail for good.
const retryFailRate = 0.4

// benchClient is one simulated client: its clock and its conversation.
type benchClient struct {
	id      int
	at      int64 // ns since the run's start: when its next request is due
	conv    int   // conversation number
	turns   int   // user turns of the conversation
	turn    int
	history int64 // prompt tokens of the conversation so far
	think   int64 // planned think time before the next turn
}

type clientHeap []*benchClient

func (h clientHeap) Len() int { return len(h) }
func (h clientHeap) Less(i, j int) bool {
	return h[i].at < h[j].at || h[i].at == h[j].at && h[i].id < h[j].id
}
func (h clientHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *clientHeap) Push(x any)   { *h = append(*h, x.(*benchClient)) }
func (h *clientHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

// genRecords calls emit with s.n records in the order mtrun would number
// them (seq 0, 1, …). Every record is new (encoders may keep its slices
// until they flush).
func genRecords(s recordSpec, emit func(*record.Record) error) error {
	if s.clients <= 0 {
		s.clients = 256
	}
	if s.warmup < 0 {
		s.warmup = 0
	} else if s.warmup == 0 {
		s.warmup = s.n / 100
	}
	if s.failRate == 0 {
		s.failRate = 0.03
	}
	if s.retries == 0 {
		s.retries = 3
	}
	rng := rand.New(rand.NewPCG(s.seed, 0x7265636f726473))
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	lognormal := func(median, sigma float64) float64 { return median * math.Exp(sigma*rng.NormFloat64()) }
	h := make(clientHeap, s.clients)
	nextConv := 0
	newConv := func(c *benchClient) {
		c.conv, nextConv = nextConv, nextConv+1
		c.turns, c.turn, c.history = 2+rng.IntN(11), 0, int64(200+rng.IntN(1800)) // system prompt and documents
	}
	for i := range h {
		h[i] = &benchClient{id: i, at: int64(rng.IntN(2e9))} // ramp-up over 2 s
		newConv(h[i])
	}
	heap.Init(&h)
	var (
		rec  *record.Record
		seq  int64
		reqs int // requests started (first attempts), for the warmup phase
	)
	for seq < int64(s.n) {
		c := h[0]
		userTok := int64(lognormal(60, 1))
		prompt := c.history + userTok
		maxTokens := 1 + min(int(lognormal(50, 0.8)), 2047)
		phase := record.PhaseMeasure
		if reqs < s.warmup {
			phase = record.PhaseWarmup
		}
		reqs++
		scheduled := c.at
		var wait int64 // client wait: a quarter of the turns wait exp(3 ms) for their client
		if rng.Float64() < 0.25 {
			wait = int64(rng.ExpFloat64() * 3e6)
		}
		start := scheduled + wait + int64(20e3+rng.ExpFloat64()*200e3) // lateness: 20 µs + exp(200 µs)
		var ok bool
		var latency int64
		for attempt := 0; ; attempt++ {
			failRate := s.failRate
			if attempt > 0 {
				failRate = retryFailRate
			}
			fail := rng.Float64() < failRate
			rec = &record.Record{RunID: "20260102T030405Z-bench", Seq: seq, ConversationID: "conv" + strconv.Itoa(c.conv),
				Turn: c.turn, Attempt: attempt, Client: c.id, Phase: phase, Model: "mtkit-sim", MaxTokens: maxTokens,
				InputMessages: 2*c.turn + 2, ClientPromptTokens: prompt - prompt/20, ThinkPlannedNs: c.think}
			rec.Scheduled = base.Add(time.Duration(scheduled))
			rec.Start = base.Add(time.Duration(start))
			rec.LatenessNs, rec.ClientWaitNs = start-scheduled-wait, record.Ptr(wait)
			if attempt == 0 && c.turn > 0 {
				rec.ThinkActualNs = c.think + rec.LatenessNs
			}
			cached := int64(0)
			if c.turn > 0 && rng.Float64() < 0.9 { // prefix-cache hit on the history
				cached = c.history / 16 * 16
			}
			ttft := int64(15e6+float64(prompt-cached)*0.08e6) + int64(lognormal(8e6, 0.5))
			if fail {
				f := pickFailure(rng.Float64())
				rec.ErrorClass, rec.Status, rec.Error = f.class, f.status, f.err
				latency = int64(lognormal(3e6, 1))
				if f.class == record.ErrTimeout {
					latency = 60e9 + int64(rng.IntN(1e6))
				}
				if f.class == record.ErrStream {
					itl := gaps(rng, 12, lognormal)
					rec.Chunks, rec.ITLNs = 13, itl
					ft := rec.Start.Add(time.Duration(ttft))
					rec.FirstToken, rec.TTFTNs = &ft, record.Ptr(ttft)
					latency = ttft + sum(itl) + 1e5
				}
			} else {
				out := int64(maxTokens)
				if rng.Float64() < 0.3 { // stopped before max_tokens
					out = 1 + rng.Int64N(out)
				}
				itl := gaps(rng, int(out-1), lognormal)
				decode := sum(itl)
				latency = ttft + decode + int64(50e3+rng.IntN(300e3))
				ft := rec.Start.Add(time.Duration(ttft))
				rec.FirstToken, rec.TTFTNs, rec.ITLNs = &ft, record.Ptr(ttft), itl
				if out > 1 {
					rec.TPOTNs = record.Ptr(float64(decode) / float64(out-1))
				}
				rec.PromptTokens, rec.CompletionTokens, rec.CachedTokens = record.Ptr(prompt), record.Ptr(out), record.Ptr(cached)
				rec.ClientCompletionTokens, rec.Chunks, rec.Status = out, int(out), 200
				rec.FinishReason = "stop"
				if out == int64(maxTokens) {
					rec.FinishReason = "length"
				}
				ok = true
			}
			end := start + latency
			rec.End = base.Add(time.Duration(end))
			rec.LatencyNs, rec.IntendedLatencyNs = latency, end-scheduled
			rec.Retried = !ok && attempt < s.retries && retryable(rec.ErrorClass)
			if err := emit(rec); err != nil {
				return err
			}
			seq++
			if !rec.Retried || seq >= int64(s.n) {
				c.at = end
				break
			}
			// mtrun's backoff: exponential from 250 ms with jitter.
			backoff := int64(250e6) << attempt
			start = end + backoff/2 + rng.Int64N(backoff/2+1)
		}
		if ok {
			c.history = prompt + *rec.CompletionTokens
		}
		c.turn++
		if c.turn < c.turns {
			c.think = int64(lognormal(2e9, 0.7))
			c.at += c.think
		} else {
			newConv(c)
			c.think = 0
			c.at += int64(rng.IntN(1e9)) // the client picks its next conversation
		}
		heap.Fix(&h, 0)
	}
	return nil
}

// pickFailure maps u in [0, 1) to a failure kind by weight.
func pickFailure(u float64) *failureKind {
	for i := range recordFailures {
		if u < recordFailures[i].weight {
			return &recordFailures[i]
		}
		u -= recordFailures[i].weight
	}
	return &recordFailures[len(recordFailures)-1]
}

// retryable are the classes mtrun retries (internal/replay/client.go).
func retryable(class string) bool {
	switch class {
	case record.ErrConnect, record.ErrTimeout, record.ErrRateLimit, record.ErrHTTP5xx, record.ErrStream:
		return true
	}
	return false
}

// gaps returns n inter-token gaps: a decode step of about 12 ms with
// jitter, and now and then a stall of a prefill batched in (5 to 20
// steps).
func gaps(rng *rand.Rand, n int, lognormal func(median, sigma float64) float64) []int64 {
	dst := make([]int64, 0, n)
	for range n {
		g := lognormal(12e6, 0.15)
		if rng.IntN(100) == 0 {
			g *= 5 + 15*rng.Float64()
		}
		dst = append(dst, int64(g))
	}
	return dst
}

func sum(xs []int64) int64 {
	var s int64
	for _, x := range xs {
		s += x
	}
	return s
}

// recordFiles are the files writeRecordFiles writes ("" = skipped).
type recordFiles struct {
	jsonl   string // JSONL
	parquet string // a directory of Parquet parts
	noITL   string // Parquet parts of the same records without ITL gaps
}

// writeRecordFiles writes the same generated records to each of files,
// through record.Create as mtrun --records writes them.
func writeRecordFiles(files recordFiles, s recordSpec) error {
	type out struct {
		enc   record.Encoder
		noITL bool
	}
	var outs []out
	for _, f := range []struct {
		path  string
		noITL bool
	}{{files.jsonl, false}, {files.parquet, false}, {files.noITL, true}} {
		if f.path == "" {
			continue
		}
		e, err := record.Create(f.path, nil)
		if err != nil {
			return err
		}
		outs = append(outs, out{e, f.noITL})
	}
	err := genRecords(s, func(r *record.Record) error {
		for _, o := range outs {
			if o.noITL {
				c := *r
				c.ITLNs = nil
				r = &c
			}
			if err := o.enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	})
	for _, o := range outs {
		if cerr := o.enc.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("writing records: %w", err)
	}
	return nil
}
