package tokenize

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestTokenTable checks lookups and texts of a tokenTable against a map,
// including keys that are not their id's text, ids without text and
// duplicate keys.
func TestTokenTable(t *testing.T) {
	t.Parallel()
	var b tableBuilder
	want := map[string]int32{}
	for i := range int32(3000) {
		s := fmt.Sprintf("tok%d", i*7)
		b.both(i, []byte(s))
		want[s] = i
	}
	b.text(5, []byte("<special>")) // the text changes; the key stays
	b.both(4000, []byte(""))       // the empty key
	want[""] = 4000
	tab, err := b.build(4001)
	if err != nil {
		t.Fatal(err)
	}
	for k, id := range want {
		if got, ok := tab.lookup(k); !ok || got != id {
			t.Errorf("lookup(%q) = %d, %v; want %d", k, got, ok, id)
		}
	}
	for _, k := range []string{"tok1", "tok", "<special>", "tok20999x"} {
		if id, ok := tab.lookup(k); ok {
			t.Errorf("lookup(%q) = %d, want none", k, id)
		}
	}
	if got := string(tab.text(5)); got != "<special>" {
		t.Errorf("text(5) = %q", got)
	}
	if got := string(tab.text(3500)); got != "" || tab.size() != 4002 {
		t.Errorf("text(3500) = %q, size %d", got, tab.size())
	}
	b.both(1, []byte("tok7"))
	if _, err := b.build(4001); err == nil {
		t.Error("duplicate key: no error")
	}
}

// BenchmarkVocabLookup compares tokenTable with the map[string]int32 it
// replaced, on o200k_base's 200k tokens (hits) and as many strings that
// are not tokens (misses): time per lookup and the heap each keeps.
func BenchmarkVocabLookup(b *testing.B) {
	tok, err := newBuiltin("o200k_base")
	if err != nil {
		b.Fatal(err)
	}
	tab := tok.vocab
	var keys []string
	rng := rand.New(rand.NewPCG(1, 1))
	var ids []int32 // the ids whose text is their key
	for id := range int32(tab.size()) {
		s := string(tab.text(id))
		if got, ok := tab.lookup(s); ok && got == id {
			ids = append(ids, id)
			keys = append(keys, s, s+string(rune('a'+rng.IntN(26)))+"\x00")
		}
	}
	rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	b.Run("table", func(b *testing.B) {
		var t2 *tokenTable
		mb := heapKept(func() {
			var tb tableBuilder
			for _, id := range ids {
				tb.both(id, tab.text(id))
			}
			t2, _ = tb.build(int32(tab.size() - 1))
		})
		n := 0
		for b.Loop() {
			for _, k := range keys {
				if _, ok := t2.lookup(k); ok {
					n++
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)), "ns/lookup")
		b.ReportMetric(mb, "MB-kept")
	})
	b.Run("map", func(b *testing.B) {
		var m map[string]int32
		var texts []string
		mb := heapKept(func() {
			m = make(map[string]int32, len(ids))
			texts = make([]string, tab.size())
			for _, id := range ids {
				s := string(tab.text(id))
				m[s] = id
				texts[id] = s
			}
		})
		n := 0
		for b.Loop() {
			for _, k := range keys {
				if _, ok := m[k]; ok {
					n++
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)), "ns/lookup")
		b.ReportMetric(mb, "MB-kept")
		runtime.KeepAlive(texts)
	})
}

// BenchmarkMergeLookup compares mergeTable with the map[uint64]mergeRule
// it replaced, on Qwen3's merges: every merge's pair (hits) and as many
// pairs that are not merges (misses); time per lookup and heap kept.
func BenchmarkMergeLookup(b *testing.B) {
	tok, err := Load(fixturePath(b, "qwen3"))
	if err != nil {
		b.Fatal(err)
	}
	mt := tok.(*bpe).merges
	rng := rand.New(rand.NewPCG(2, 2))
	var keys []uint64
	for _, k := range mt.pairs {
		keys = append(keys, k, pairKey(int32(rng.IntN(150000)), int32(rng.IntN(150000))))
	}
	rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	lookups := func(b *testing.B, get func(uint64) bool) {
		n := 0
		for b.Loop() {
			for _, k := range keys {
				if get(k) {
					n++
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)), "ns/lookup")
	}
	b.Run("table", func(b *testing.B) {
		var t2 *mergeTable
		mb := heapKept(func() {
			t2 = newMergeTable(mt.len())
			for j, k := range mt.pairs {
				t2.add(k, mt.ids[j])
			}
		})
		lookups(b, func(k uint64) bool { _, ok := t2.get(k); return ok })
		b.ReportMetric(mb, "MB-kept")
	})
	b.Run("map", func(b *testing.B) {
		var m map[uint64]mergeRule
		mb := heapKept(func() {
			m = make(map[uint64]mergeRule, mt.len())
			for j, k := range mt.pairs {
				m[k] = mergeRule{rank: int32(j), id: mt.ids[j]}
			}
		})
		lookups(b, func(k uint64) bool { _, ok := m[k]; return ok })
		b.ReportMetric(mb, "MB-kept")
	})
}

// heapKept returns the megabytes of heap that build leaves live.
func heapKept(build func()) float64 {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	build()
	runtime.GC()
	runtime.ReadMemStats(&m1)
	return float64(m1.HeapAlloc-m0.HeapAlloc) / 1e6
}
