package record

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// genRecords returns n realistic records of one run: conversations of a
// few turns, some failures and retries, warmup first, optional server
// fields left nil now and then.
func genRecords(seed uint64, n int) []Record {
	rng := rand.New(rand.NewPCG(seed, 7))
	base := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)
	out := make([]Record, 0, n)
	conv, turn := 0, 0
	for i := range n {
		if turn == 0 || rng.IntN(4) == 0 {
			conv, turn = conv+1, 0
		}
		start := base.Add(time.Duration(i)*37*time.Millisecond + time.Duration(rng.IntN(1000)))
		ttft := int64(20e6 + rng.IntN(200e6))
		nOut := 1 + rng.IntN(40)
		itl := make([]int64, nOut-1)
		t := ttft
		for j := range itl {
			itl[j] = int64(5e6 + rng.IntN(30e6))
			t += itl[j]
		}
		ft := start.Add(time.Duration(ttft))
		r := Record{
			RunID: fmt.Sprintf("run-%d", seed), Shard: 0, Seq: int64(i),
			ConversationID: fmt.Sprintf("c%04d", conv), Turn: turn, Client: rng.IntN(4),
			Phase: PhaseMeasure, Model: "llama",
			Scheduled: start.Add(-time.Duration(rng.IntN(5e6))), Start: start, FirstToken: &ft,
			End:    start.Add(time.Duration(t)),
			TTFTNs: Ptr(ttft), TTFTContentNs: Ptr(ttft), ITLNs: itl,
			LatencyNs: t, ThinkPlannedNs: int64(rng.IntN(2e9)),
			PromptTokens: Ptr(int64(100 + 50*turn)), CompletionTokens: Ptr(int64(nOut)),
			CachedTokens: Ptr(int64(40 * turn)), ClientPromptTokens: int64(98 + 50*turn),
			ClientCompletionTokens: int64(nOut), InputMessages: 2*turn + 1, MaxTokens: 64,
			Chunks: nOut, FinishReason: "length", Status: 200,
		}
		if nOut > 1 {
			r.TPOTNs = Ptr(float64(t-ttft) / float64(nOut-1))
		}
		r.IntendedLatencyNs = r.End.Sub(r.Scheduled).Nanoseconds()
		r.LatenessNs = r.Start.Sub(r.Scheduled).Nanoseconds()
		if i%3 > 0 { // a third as records of older versions: no client wait
			r.ClientWaitNs = Ptr(int64(0))
			if i%3 == 2 {
				w := r.LatenessNs / 2
				r.ClientWaitNs, r.LatenessNs = Ptr(w), r.LatenessNs-w
			}
		}
		if i < n/10 {
			r.Phase = PhaseWarmup
		}
		switch rng.IntN(20) {
		case 0:
			r.ErrorClass, r.Error, r.Status = ErrTimeout, "context deadline exceeded", 0
			r.TTFTNs, r.TPOTNs, r.FirstToken, r.ITLNs, r.CompletionTokens = nil, nil, nil, nil, nil
		case 1:
			r.CachedTokens = nil
		case 2:
			r.Retried, r.ErrorClass, r.Status = true, ErrHTTP5xx, 503
		}
		turn++
		out = append(out, r)
	}
	return out
}

// encodeAll encodes recs with enc and closes it.
func encodeAll(t testing.TB, enc Encoder, recs []Record) {
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

// encodeJSONL encodes recs as JSON lines.
func encodeJSONL(t testing.TB, recs []Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	encodeAll(t, NewJSONEncoder(&buf), recs)
	return buf.Bytes()
}

func TestJSONRoundTrip(t *testing.T) {
	t.Parallel()
	recs := genRecords(1, 200)
	got := decodeAll(t, NewJSONDecoder(bytes.NewReader(encodeJSONL(t, recs)), "x"))
	if d := diffRecords(recs, got); d != "" {
		t.Fatal(d)
	}
}

func TestJSONDecoderErrors(t *testing.T) {
	t.Parallel()
	good := strings.TrimSpace(string(encodeJSONL(t, genRecords(2, 1))))
	for _, tc := range []struct {
		name, in string
		want     []string // per line: "" ok, else error substring
	}{
		{"ok", good + "\n", []string{""}},
		{"blank lines", "\n" + good + "\n\n", []string{""}},
		{"type", good + "\n" + `{"run_id":"r","turn":"x"}` + "\n", []string{"", "x:2: turn: expected int"}},
		{"missing run", `{"start":"2026-01-01T00:00:00Z"}` + "\n", []string{"x:1: run_id: missing"}},
		{"bad time", `{"run_id":"r","start":"2026-13-01T00:00:00Z"}`, []string{"x:1: start: "}},
		{"bad optional time", `{"run_id":"r","first_token":"yesterday"}`, []string{"x:1: first_token: "}},
		{"bad list element", `{"run_id":"r","itl_ns":[1,"2"]}`, []string{"x:1: itl_ns: expected "}},
		{"bad pointer", `{"run_id":"r","ttft_ns":"5"}`, []string{"x:1: ttft_ns: expected "}},
		{"bad float", `{"run_id":"r","tpot_ns":true}`, []string{"x:1: tpot_ns: expected "}},
		{"bad bool", `{"run_id":"r","retried":1}`, []string{"x:1: retried: expected bool"}},
		{"overflow", `{"run_id":"r","seq":1e400}`, []string{"x:1: seq: expected int64"}},
		{"key case", `{"run_id":"r","TURN":"x"}`, []string{"x:1: turn: expected int"}},
		{"not an object", `[1,2]`, []string{"x:1: (top level): expected "}},
		{"trailing data", good + ` x`, []string{"x:1: invalid JSON at byte "}},
		{"end before start", `{"run_id":"a","start":"2026-01-01T00:00:01Z","end":"2026-01-01T00:00:00Z"}`, []string{"x:1: end:"}},
		{"truncated last", good + "\n" + good[:len(good)/2], []string{"", "x:2: truncated last line"}},
		{"truncated middle", good[:len(good)/2] + "\n" + good + "\n", []string{"x:1: invalid JSON", ""}},
		{"garbage", "PAR2\x00\x01\n", []string{"x:1: invalid JSON"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dec := NewJSONDecoder(strings.NewReader(tc.in), "x")
			var got []string
			for dec.Scan() {
				if err := dec.Err(); err != nil {
					got = append(got, err.Error())
				} else {
					got = append(got, "")
				}
			}
			if err := dec.Err(); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			for i := range got {
				if (tc.want[i] == "") != (got[i] == "") || !strings.Contains(got[i], tc.want[i]) {
					t.Errorf("line %d: got %q, want %q", i+1, got[i], tc.want[i])
				}
			}
		})
	}
}

// FuzzJSONDecoder checks that no input panics the decoder and that every
// record it accepts survives an encode/decode round trip.
func FuzzJSONDecoder(f *testing.F) {
	f.Add(encodeJSONL(f, genRecords(3, 3)))
	f.Add([]byte(`{"run_id":"r","start":"2026-01-01T00:00:00Z","end":"2026-01-01T00:00:00Z","itl_ns":[1,2,3],"cached_tokens":null}`))
	f.Add([]byte("{\"run_id\":\"r\",\"start\"\n\n[]\nnull\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		dec := NewJSONDecoder(bytes.NewReader(in), "fuzz")
		for dec.Scan() {
			if dec.Err() != nil {
				continue
			}
			r := *dec.Record()
			dec2 := NewJSONDecoder(bytes.NewReader(encodeJSONL(t, []Record{r})), "again")
			if !dec2.Scan() || dec2.Err() != nil {
				t.Fatalf("re-decode: %v", dec2.Err())
			}
			if d := diffRecords([]Record{r}, []Record{*dec2.Record()}); d != "" {
				t.Fatal(d)
			}
		}
	})
}

// decodeAll reads every record of dec, failing on any problem.
func decodeAll(t testing.TB, dec Decoder) []Record {
	t.Helper()
	var got []Record
	for dec.Scan() {
		if err := dec.Err(); err != nil {
			t.Fatal(err)
		}
		got = append(got, *dec.Record())
	}
	if err := dec.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

// benchEncode encodes recs round-robin with enc for b.N records and
// reports records/s.
func benchEncode(b *testing.B, enc Encoder, recs []*Record) {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := enc.Encode(recs[i%len(recs)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	if err := enc.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "records/s")
}
