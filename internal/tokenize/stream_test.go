package tokenize

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// plainHF is tokenizer.json decoded the simple way, all in memory with
// encoding/json (as the loader did before it streamed): the reference the
// streamed tables are checked against.
type plainHF struct {
	AddedTokens []struct {
		ID      int    `json:"id"`
		Content string `json:"content"`
	} `json:"added_tokens"`
	Model struct {
		Vocab    map[string]int    `json:"vocab"`
		Merges   []json.RawMessage `json:"merges"`
		UnkToken *string           `json:"unk_token"`
	} `json:"model"`
}

// checkSameTables checks that tok, loaded from data, has the tables an
// in-memory decode of data gives: each vocabulary token's id by its raw
// bytes and its text, each added token's text, each byte's id, unk_token
// and every merge's rank and result (the first of duplicate pairs).
func checkSameTables(t *testing.T, data []byte, tok *bpe) {
	t.Helper()
	var f plainHF
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	vocab := f.Model.Vocab
	added := map[int]string{}
	for _, a := range f.AddedTokens {
		added[a.ID] = a.Content
	}
	for s, id := range vocab {
		raw, ok := appendByteLevelDecode(nil, []byte(s))
		if !ok {
			t.Fatalf("token %q is not byte-level", s)
		}
		if got, ok := tok.vocab.lookup(string(raw)); !ok || int(got) != id {
			t.Fatalf("lookup(%q) = %d, %v; want %d", raw, got, ok, id)
		}
		want := string(raw)
		if c, ok := added[id]; ok {
			want = c
		}
		if got := tok.Decode([]int{id}); got != want {
			t.Fatalf("Decode(%d) = %q, want %q", id, got, want)
		}
	}
	for id, c := range added {
		if got := tok.Decode([]int{id}); got != c {
			t.Fatalf("Decode(%d) = %q, want added %q", id, got, c)
		}
	}
	for b := range 256 {
		want, ok := vocab[string(byteToRune[b])]
		if !ok {
			want = -1
		}
		if int(tok.byteID[b]) != want {
			t.Fatalf("byteID[%#x] = %d, want %d", b, tok.byteID[b], want)
		}
	}
	wantUnk := -1
	if u := f.Model.UnkToken; u != nil {
		if id, ok := vocab[*u]; ok {
			wantUnk = id
		}
	}
	if int(tok.unkID) != wantUnk {
		t.Errorf("unkID = %d, want %d", tok.unkID, wantUnk)
	}
	// Rules keep the first merge of each pair; their ranks follow the
	// order of those first lines.
	first := map[uint64]int32{} // pair -> rank it must have
	for i, raw := range f.Model.Merges {
		var a, b string
		var pair []string
		if json.Unmarshal(raw, &pair) == nil && len(pair) == 2 {
			a, b = pair[0], pair[1]
		} else {
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				t.Fatal(err)
			}
			a, b, _ = strings.Cut(s, " ")
		}
		k := pairKey(int32(vocab[a]), int32(vocab[b]))
		rank, dup := first[k]
		if !dup {
			rank = int32(len(first))
			first[k] = rank
		}
		r, ok := tok.merges.get(k)
		if !ok || r.id != int32(vocab[a+b]) && !dup || r.rank != rank {
			t.Fatalf("merge %d %q %q: rule %+v, %v; want id %d, rank %d", i, a, b, r, ok, vocab[a+b], rank)
		}
	}
	if tok.merges.len() != len(first) {
		t.Errorf("%d merge rules, want %d", tok.merges.len(), len(first))
	}
}

// TestStreamedTablesFixtures loads the real tokenizer.json fixtures
// through Load (streamed from the file) and checks every table entry
// against an in-memory decode.
func TestStreamedTablesFixtures(t *testing.T) {
	t.Parallel()
	for _, model := range fixtureModels {
		t.Run(model, func(t *testing.T) {
			t.Parallel()
			p := fixturePath(t, model)
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			tok, err := Load(p)
			if err != nil {
				t.Fatal(err)
			}
			checkSameTables(t, data, tok.(*bpe))
		})
	}
}

// TestStreamedTablesSynthetic does the same on synthetic files: string and
// pair merges, a duplicate merge, added tokens inside and beyond the
// vocabulary, and an unk_token.
func TestStreamedTablesSynthetic(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		spec synthSpec
	}{
		{"pairs", synthSpec{merges: [][2]string{{"a", "b"}, {"ab", "c"}, {" ", "t"}}}},
		{"strings", synthSpec{merges: [][2]string{{"a", "b"}, {"\xe4", "\xb8"}}, stringMerges: true}},
		{"duplicate merge", synthSpec{merges: [][2]string{{"a", "b"}, {"x", "y"}, {"a", "b"}}}},
		{"added", synthSpec{merges: [][2]string{{"a", "b"}}, added: []map[string]any{
			{"id": 97, "content": "<a>"}, {"id": 400, "content": "<|end|>", "special": true}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			data := synthJSON(tc.spec)
			tok, err := ParseJSON(data, "synth.json")
			if err != nil {
				t.Fatal(err)
			}
			checkSameTables(t, data, tok.(*bpe))
		})
	}
	data := []byte(`{"model":{"vocab":{"a":0,"b":1,"ab":2,"<unk>":3},"merges":["a b"],"unk_token":"<unk>"},"decoder":{"type":"ByteLevel"}}`)
	tok, err := ParseJSON(data, "unk.json")
	if err != nil {
		t.Fatal(err)
	}
	checkSameTables(t, data, tok.(*bpe))
	if got := tok.Encode("ab\x01"); len(got) != 2 || got[0] != 2 || got[1] != 3 {
		t.Errorf(`Encode("ab\x01") = %v, want [2 3]`, got)
	}
}
