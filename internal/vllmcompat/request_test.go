package vllmcompat

import (
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mtkit/mtkit/internal/record"
)

func TestVLLMRequestFrom(t *testing.T) {
	t.Parallel()
	p := record.Ptr[int64]
	ok := record.Record{Phase: record.PhaseMeasure, Start: time.UnixMilli(5000), LatencyNs: 2e6, TTFTNs: p(1e6),
		PromptTokens: p(200), CachedTokens: p(50), CompletionTokens: p(10), Chunks: 5, InputMessages: 3, ConversationID: "c", Client: 1}
	q, counted := RequestFrom(&ok)
	want := Request{TTFTMs: 1, LatencyMs: 2, StartTimeMs: 5000, InputNumTurns: 3, InputNumTokens: 200, OutputNumTokens: 10,
		OutputNumChunks: 4, OutputNumFirstChunkTokens: 2, ApproxCachedPercent: 25, ConversationID: "c", ClientID: 1}
	if !counted || q != want {
		t.Errorf("got %+v, %v; want %+v", q, counted, want)
	}
	for name, mod := range map[string]func(*record.Record){
		"failed":  func(r *record.Record) { r.ErrorClass = record.ErrHTTP5xx },
		"retried": func(r *record.Record) { r.Retried = true },
		"warmup":  func(r *record.Record) { r.Phase = record.PhaseWarmup },
		"choice":  func(r *record.Record) { r.Choice = 1 },
	} {
		r := ok
		mod(&r)
		if _, counted := RequestFrom(&r); counted {
			t.Errorf("%s record counted", name)
		}
	}
}

func TestParseParam(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want Param
	}{
		{"model=llama", Param{"model", "llama"}},
		{`model="7"`, Param{"model", "7"}},
		{"model=", Param{"model", ""}},
		{"num_clients=2", Param{"num_clients", int64(2)}},
		{"seed=18446744073709551615", Param{"seed", uint64(18446744073709551615)}},
		{"warmup_runtime_sec=1.25", Param{"warmup_runtime_sec", 1.25}},
		{"active_conversations=null", Param{"active_conversations", nil}},
		{"a=b=c", Param{"a", "b=c"}},
		{`x=[1]`, Param{"x", "[1]"}},
	} {
		got, err := ParseParam(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseParam(%q) = %#v, %v; want %#v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "model", "=1", " model=1"} {
		if _, err := ParseParam(bad); err == nil {
			t.Errorf("ParseParam(%q): no error", bad)
		}
	}
}

// FuzzParam: what String writes, ParseParam reads back, for the value
// types mtrun passes (text, int, uint64, float, None).
func FuzzParam(f *testing.F) {
	f.Add("model", "llama", int64(2), uint64(3), 1.5)
	f.Add("m", `"7"`, int64(-1), uint64(1<<63), 2.0)
	f.Fuzz(func(t *testing.T, name, text string, i int64, u uint64, x float64) {
		if name == "" || strings.Contains(name, "=") || strings.TrimSpace(name) != name || !utf8.ValidString(text) || math.IsNaN(x) || math.IsInf(x, 0) {
			return
		}
		for _, v := range []any{text, i, u, x, nil} {
			p := Param{name, v}
			got, err := ParseParam(p.String())
			if err != nil {
				t.Fatalf("%q: %v", p.String(), err)
			}
			if !sameValue(got.Value, v) || got.Name != name {
				t.Errorf("%#v -> %q -> %#v", p, p.String(), got)
			}
		}
	})
}

// sameValue: equal, or the same number (an integral float reads back as
// an integer, a small uint64 as an int64).
func sameValue(a, b any) bool {
	if a == b {
		return true
	}
	x, ok1 := Param{Value: a}.Number()
	y, ok2 := Param{Value: b}.Number()
	return ok1 && ok2 && x == y
}
