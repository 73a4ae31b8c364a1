package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ggufFile is what the minimal reader below extracts from a GGUF file.
type ggufFile struct {
	version uint32
	kv      map[string]any
	keys    []string
	tensors []tensorInfo
	data    []byte // the tensor data section
}

type tensorInfo struct {
	name   string
	dims   []uint64
	typ    ggmlType
	offset uint64
}

// readGGUF parses a GGUF v3 file independently of the writer: header,
// metadata, tensor infos, alignment and data bounds.
func readGGUF(b []byte) (*ggufFile, error) {
	r := &reader{b: b}
	if string(r.next(4)) != ggufMagic {
		return nil, errors.New("bad magic")
	}
	f := &ggufFile{version: r.u32(), kv: map[string]any{}}
	nt, nkv := r.u64(), r.u64()
	if r.err != nil || nt > 1<<20 || nkv > 1<<20 {
		return nil, fmt.Errorf("bad counts %d %d: %v", nt, nkv, r.err)
	}
	for range nkv {
		k := r.str()
		f.keys = append(f.keys, k)
		f.kv[k] = r.value(ggufType(r.u32()))
	}
	for range nt {
		ti := tensorInfo{name: r.str()}
		nd := r.u32()
		if nd > 4 {
			return nil, fmt.Errorf("tensor %s: %d dims", ti.name, nd)
		}
		for range nd {
			ti.dims = append(ti.dims, r.u64())
		}
		ti.typ = ggmlType(r.u32())
		ti.offset = r.u64()
		f.tensors = append(f.tensors, ti)
	}
	if r.err != nil {
		return nil, r.err
	}
	start := align(uint64(r.off))
	if start > uint64(len(b)) {
		return nil, errors.New("data section past end of file")
	}
	f.data = b[start:]
	for _, t := range f.tensors {
		tt := tensor{dims: t.dims, typ: t.typ}
		if t.offset%ggufAlignment != 0 {
			return nil, fmt.Errorf("tensor %s: offset %d not aligned", t.name, t.offset)
		}
		if t.offset+tt.bytes() > uint64(len(f.data)) {
			return nil, fmt.Errorf("tensor %s: data past end of file", t.name)
		}
	}
	return f, nil
}

// floats returns the values of a named F16 or F32 tensor.
func (f *ggufFile) floats(name string) ([]float32, []uint64, error) {
	for _, t := range f.tensors {
		if t.name != name {
			continue
		}
		tt := tensor{dims: t.dims, typ: t.typ}
		raw := f.data[t.offset : t.offset+tt.bytes()]
		out := make([]float32, tt.elems())
		for i := range out {
			if t.typ == ggmlF16 {
				out[i] = halfToFloat32(binary.LittleEndian.Uint16(raw[2*i:]))
			} else {
				out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
			}
		}
		return out, t.dims, nil
	}
	return nil, nil, fmt.Errorf("no tensor %s", name)
}

type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) next(n uint64) []byte {
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)-r.off) {
		r.err = fmt.Errorf("offset %d: need %d bytes, have %d", r.off, n, len(r.b)-r.off)
		return nil
	}
	p := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return p
}

func (r *reader) u32() uint32 {
	if p := r.next(4); p != nil {
		return binary.LittleEndian.Uint32(p)
	}
	return 0
}

func (r *reader) u64() uint64 {
	if p := r.next(8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

func (r *reader) str() string { return string(r.next(r.u64())) }

func (r *reader) value(t ggufType) any {
	switch t {
	case typeUint32:
		return r.u32()
	case typeInt32:
		return int32(r.u32())
	case typeFloat32:
		return math.Float32frombits(r.u32())
	case typeBool:
		p := r.next(1)
		return p != nil && p[0] == 1
	case typeString:
		return r.str()
	case typeArray:
		et, n := ggufType(r.u32()), r.u64()
		if n > uint64(len(r.b)) {
			r.err = fmt.Errorf("array of %d elements", n)
			return nil
		}
		out := make([]any, 0, n)
		for range n {
			out = append(out, r.value(et))
		}
		return out
	}
	if r.err == nil {
		r.err = fmt.Errorf("offset %d: unexpected value type %d", r.off, t)
	}
	return nil
}

// testTokenizer returns a small Qwen-shaped tokenizer.json: the 256 byte
// tokens, a merge per word letter pair, nwords word tokens, and Qwen's
// special tokens.
func testTokenizer(t testing.TB, nwords int, pairMerges bool) []byte {
	t.Helper()
	vocab := map[string]int{}
	for b := 0; b < 256; b++ {
		for r, c := range byteDecoder {
			if int(c) == b {
				vocab[string(r)] = b
			}
		}
	}
	var merges []any
	for i := range nwords {
		w := "Ġ"
		for n := i; ; n /= 26 {
			w += string(rune('a' + n%26))
			if n < 26 && len(w) >= 6 {
				break
			}
		}
		vocab[w] = len(vocab)
		if pairMerges {
			merges = append(merges, []string{w[:len(w)-1], w[len(w)-1:]})
		} else {
			merges = append(merges, w[:len(w)-1]+" "+w[len(w)-1:])
		}
	}
	added := []map[string]any{
		{"id": len(vocab) + 1, "content": bosText, "special": true}, // leaves a gap
		{"id": len(vocab) + 2, "content": "<|im_start|>", "special": true},
		{"id": len(vocab) + 3, "content": eosText, "special": true},
		{"id": len(vocab) + 4, "content": "<think>", "special": false},
	}
	b, err := json.Marshal(map[string]any{
		"model":        map[string]any{"type": "BPE", "vocab": vocab, "merges": merges},
		"added_tokens": added,
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestHalfRoundTrip(t *testing.T) {
	t.Parallel()
	for h := range 1 << 16 {
		f := halfToFloat32(uint16(h))
		if f != f { // NaN
			continue
		}
		if got := float32ToHalf(f); got != uint16(h) {
			t.Fatalf("half %#04x -> %g -> %#04x", h, f, got)
		}
	}
}

func TestFloat32ToHalf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   float32
		want uint16
	}{
		{0, 0x0000},
		{float32(math.Copysign(0, -1)), 0x8000},
		{1, 0x3c00},
		{-2, 0xc000},
		{0.1, 0x2e66},
		{65504, 0x7bff},
		{65520, 0x7c00}, // rounds up to +Inf
		{1e9, 0x7c00},
		{float32(math.Inf(-1)), 0xfc00},
		{5.960464477539063e-08, 0x0001}, // smallest subnormal
		{2.9e-08, 0x0000},               // below half of it
		{6.097555160522461e-05, 0x03ff}, // largest subnormal
		{1.0009765625, 0x3c01},
		{1.00048828125, 0x3c00}, // tie, rounds to even
		{1.00146484375, 0x3c02}, // tie, rounds to even
	} {
		if got := float32ToHalf(tc.in); got != tc.want {
			t.Errorf("float32ToHalf(%g) = %#04x, want %#04x", tc.in, got, tc.want)
		}
	}
	if h := float32ToHalf(float32(math.NaN())); h&0x7c00 != 0x7c00 || h&0x3ff == 0 {
		t.Errorf("NaN -> %#04x", h)
	}
}

func TestParseVocab(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, json string
		tokens     []string
		types      []int32
		merges     []string
		err        string
	}{
		{
			name:   "string merges and gap",
			json:   `{"model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":3},"merges":["a b"]},"added_tokens":[{"id":4,"content":"<s>","special":true},{"id":5,"content":"<t>","special":false}]}`,
			tokens: []string{"a", "b", "[PAD2]", "ab", "<s>", "<t>"},
			types:  []int32{tokenNormal, tokenNormal, tokenUnused, tokenNormal, tokenControl, tokenUserDefined},
			merges: []string{"a b"},
		},
		{
			name:   "pair merges, added token restates vocab",
			json:   `{"model":{"type":"BPE","vocab":{"a":0,"b":1,"<s>":2},"merges":[["a","b"]]},"added_tokens":[{"id":2,"content":"<s>","special":true}]}`,
			tokens: []string{"a", "b", "<s>"},
			types:  []int32{tokenNormal, tokenNormal, tokenControl},
			merges: []string{"a b"},
		},
		{name: "not json", json: `{`, err: "unexpected end"},
		{name: "unigram", json: `{"model":{"type":"Unigram","vocab":{"a":0},"merges":[]}}`, err: "model.type"},
		{name: "empty vocab", json: `{"model":{"type":"BPE","vocab":{},"merges":[]}}`, err: "empty"},
		{name: "no merges", json: `{"model":{"type":"BPE","vocab":{"a":0}}}`, err: "model.merges: missing"},
		{name: "bad merge", json: `{"model":{"type":"BPE","vocab":{"a":0},"merges":["ab"]}}`, err: `"ab" is not`},
		{name: "bad pair", json: `{"model":{"type":"BPE","vocab":{"a":0},"merges":[["a"]]}}`, err: "neither"},
		{name: "negative id", json: `{"model":{"type":"BPE","vocab":{"a":-1},"merges":[]}}`, err: "out of range"},
		{name: "huge id", json: `{"model":{"type":"BPE","vocab":{"a":99999999},"merges":[]}}`, err: "out of range"},
		{name: "shared id", json: `{"model":{"type":"BPE","vocab":{"a":0,"b":0},"merges":[]}}`, err: "names both"},
		{name: "duplicate content", json: `{"model":{"type":"BPE","vocab":{"a":0},"merges":[]},"added_tokens":[{"id":1,"content":"a"}]}`, err: "has ids 0 and 1"},
		{name: "empty added", json: `{"model":{"type":"BPE","vocab":{"a":0},"merges":[]},"added_tokens":[{"id":1,"content":""}]}`, err: "added_tokens[0]: empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v, err := parseVocab("tok.json", []byte(tc.json))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.HasPrefix(err.Error(), "tok.json: ") {
					t.Fatalf("err = %v, want tok.json: ...%s...", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(v.tokens) != fmt.Sprint(tc.tokens) || fmt.Sprint(v.types) != fmt.Sprint(tc.types) || fmt.Sprint(v.merges) != fmt.Sprint(tc.merges) {
				t.Errorf("got %q %v %q, want %q %v %q", v.tokens, v.types, v.merges, tc.tokens, tc.types, tc.merges)
			}
		})
	}
}

func FuzzParseVocab(f *testing.F) {
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":3},"merges":["a b"]},"added_tokens":[{"id":4,"content":"<s>","special":true}]}`))
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{"a":0},"merges":[["a","b"]]}}`))
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{"a":1000000},"merges":[]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := parseVocab("fuzz.json", data)
		if err != nil {
			return
		}
		if len(v.tokens) != len(v.types) || len(v.ids) != len(v.tokens) {
			t.Fatalf("inconsistent vocab: %d tokens, %d types, %d ids", len(v.tokens), len(v.types), len(v.ids))
		}
		for id, tok := range v.tokens {
			if v.ids[tok] != id {
				t.Fatalf("token %q: id %d, index says %d", tok, id, v.ids[tok])
			}
		}
	})
}

func TestDecodeByteLevel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"Ġhello", " hello", true},
		{"Ċ", "\n", true},
		{"ĠÃ©", " \xc3\xa9", true},
		{"<|im_end|>", "<|im_end|>", true},
		{"日本", "", false},
	} {
		got, ok := decodeByteLevel(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("decodeByteLevel(%q) = %q, %v, want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestGenerate writes a model twice, checks the bytes are identical, parses
// the file back and walks the wired cycle over the stored weights.
func TestGenerate(t *testing.T) {
	t.Parallel()
	for _, pairs := range []bool{false, true} {
		t.Run(fmt.Sprintf("pairMerges=%v", pairs), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			tok := writeFile(t, dir, "tokenizer.json", testTokenizer(t, 1300, pairs))
			a, b := filepath.Join(dir, "a", "m.gguf"), filepath.Join(dir, "b", "m.gguf")
			for _, p := range []string{a, b} {
				if _, gen, err := ensure(tok, p, false); err != nil || !gen {
					t.Fatalf("ensure(%s) = %v, %v", p, gen, err)
				}
			}
			ab, err := os.ReadFile(a)
			if err != nil {
				t.Fatal(err)
			}
			bb, err := os.ReadFile(b)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(ab, bb) {
				t.Fatal("two runs wrote different bytes")
			}
			checkModelFile(t, ab, a)
		})
	}
}

func checkModelFile(t *testing.T, data []byte, path string) {
	t.Helper()
	f, err := readGGUF(data)
	if err != nil {
		t.Fatal(err)
	}
	if f.version != 3 {
		t.Errorf("version %d", f.version)
	}
	for _, k := range []string{
		"general.architecture", "qwen2.context_length", "qwen2.embedding_length", "qwen2.block_count",
		"qwen2.feed_forward_length", "qwen2.attention.head_count", "qwen2.attention.head_count_kv",
		"qwen2.rope.freq_base", "qwen2.attention.layer_norm_rms_epsilon", "tokenizer.ggml.model",
		"tokenizer.ggml.pre", "tokenizer.ggml.tokens", "tokenizer.ggml.token_type", "tokenizer.ggml.merges",
		"tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id", "tokenizer.ggml.padding_token_id",
	} {
		if _, ok := f.kv[k]; !ok {
			t.Errorf("missing metadata %s", k)
		}
	}
	if f.kv["general.architecture"] != "qwen2" || f.kv["tokenizer.ggml.model"] != "gpt2" || f.kv["tokenizer.ggml.pre"] != "qwen2" {
		t.Errorf("architecture/tokenizer metadata: %v %v %v", f.kv["general.architecture"], f.kv["tokenizer.ggml.model"], f.kv["tokenizer.ggml.pre"])
	}
	tokens := f.kv["tokenizer.ggml.tokens"].([]any)
	types := f.kv["tokenizer.ggml.token_type"].([]any)
	if len(tokens) != len(types) {
		t.Fatalf("%d tokens, %d types", len(tokens), len(types))
	}
	nblk := int(f.kv["qwen2.block_count"].(uint32))
	if want := 3 + 12*nblk; len(f.tensors) != want {
		t.Errorf("%d tensors, want %d", len(f.tensors), want)
	}
	var info modelInfo
	_, infoPath := sidecars(path)
	ib, err := os.ReadFile(infoPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(ib, &info); err != nil {
		t.Fatal(err)
	}
	if info.VocabSize != len(tokens) || int(f.kv["tokenizer.ggml.eos_token_id"].(uint32)) != info.EOS {
		t.Errorf("info %+v disagrees with the file", info)
	}

	embd, dims, err := f.floats("token_embd.weight")
	if err != nil {
		t.Fatal(err)
	}
	out, odims, err := f.floats("output.weight")
	if err != nil {
		t.Fatal(err)
	}
	d, nv := int(dims[0]), int(dims[1])
	if nv != len(tokens) || fmt.Sprint(dims) != fmt.Sprint(odims) {
		t.Fatalf("embedding dims %v, output dims %v, %d tokens", dims, odims, len(tokens))
	}
	// Greedy decoding with attention and FFN left out: from the entry token
	// the argmax over the whole vocabulary must walk the cycle round and
	// back to its start (each step depends only on the current token, so
	// that checks every transition; a second round would repeat them),
	// and never land on a non-normal token.
	cur := info.EntryToken
	seen := map[int]bool{}
	for step := range len(info.CycleIDs) + 1 {
		next := argmaxLogit(out, embd[cur*d:(cur+1)*d], d, nv)
		if want := info.CycleIDs[step%len(info.CycleIDs)]; next != want {
			t.Fatalf("step %d: %d -> %d, want %d", step, cur, next, want)
		}
		if types[next].(int32) != tokenNormal {
			t.Fatalf("step %d: token %d has type %d", step, next, types[next])
		}
		seen[next] = true
		cur = next
	}
	if len(seen) != len(info.CycleIDs) || len(seen) != defaultSpec.Cycle {
		t.Errorf("cycle visits %d distinct tokens, want %d", len(seen), defaultSpec.Cycle)
	}
	for i, id := range info.CycleIDs {
		if s, _ := decodeByteLevel(tokens[id].(string)); s != info.CycleText[i] || !strings.HasPrefix(s, " ") {
			t.Fatalf("cycle text %d: %q, token %q", i, info.CycleText[i], tokens[id])
		}
	}
}

// argmaxLogit returns the row of out (nv rows of d weights) with the
// highest dot product with the embedding e, the first of equals. It is
// arithmetic on one goroutine's own slices, so the race detector has
// nothing to find in it and is kept out (go:norace): instrumented, these
// 1025 × vocabulary × d products were most of the package's time under
// -race.
//
//go:norace
func argmaxLogit(out, e []float32, d, nv int) int {
	best, bestID := math.Inf(-1), -1
	for v := range nv {
		var s float64
		for i, x := range out[v*d : (v+1)*d] {
			s += float64(x) * float64(e[i])
		}
		if s > best {
			best, bestID = s, v
		}
	}
	return bestID
}

func TestEnsureCache(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tok := writeFile(t, dir, "tokenizer.json", testTokenizer(t, 1100, false))
	out := filepath.Join(dir, "m.gguf")
	if _, gen, err := ensure(tok, out, false); err != nil || !gen {
		t.Fatalf("first ensure = %v, %v", gen, err)
	}
	if _, gen, err := ensure(tok, out, false); err != nil || gen {
		t.Fatalf("second ensure = %v, %v, want cached", gen, err)
	}
	if _, gen, err := ensure(tok, out, true); err != nil || !gen {
		t.Fatalf("forced ensure = %v, %v", gen, err)
	}
	writeFile(t, dir, "tokenizer.json", testTokenizer(t, 1101, false))
	if _, gen, err := ensure(tok, out, false); err != nil || !gen {
		t.Fatalf("ensure after tokenizer change = %v, %v, want regenerated", gen, err)
	}
	stamp, _ := sidecars(out)
	writeFile(t, dir, filepath.Base(stamp), []byte("mkgguf generator=0 tokenizer-sha256=x\n"))
	if _, gen, err := ensure(tok, out, false); err != nil || !gen {
		t.Fatalf("ensure after version change = %v, %v, want regenerated", gen, err)
	}
	if err := os.Remove(out); err != nil {
		t.Fatal(err)
	}
	if _, gen, err := ensure(tok, out, false); err != nil || !gen {
		t.Fatalf("ensure after removal = %v, %v, want regenerated", gen, err)
	}
}

func TestEnsureErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	few := writeFile(t, dir, "few.json", testTokenizer(t, 100, false))
	bad := writeFile(t, dir, "bad.json", []byte(`{"model":{"type":"BPE"`))
	for _, tc := range []struct{ tok, err string }{
		{few, "the cycle needs 1024"},
		{bad, "bad.json: unexpected end"},
		{filepath.Join(dir, "missing.json"), "no such file"},
	} {
		_, _, err := ensure(tc.tok, filepath.Join(dir, "m.gguf"), false)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("ensure(%s) = %v, want %q", tc.tok, err, tc.err)
		}
	}
}

func TestRunUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tok := writeFile(t, dir, "tokenizer.json", testTokenizer(t, 1100, false))
	for _, tc := range []struct {
		args   []string
		stdout string
		err    string
		usage  bool
	}{
		{args: nil, err: "-tokenizer is required", usage: true},
		{args: []string{"-bogus"}, err: "not defined", usage: true},
		{args: []string{"-tokenizer", tok, "extra"}, err: `unexpected argument "extra"`, usage: true},
		{args: []string{"-tokenizer", tok, "-o", filepath.Join(dir, "x.gguf")}, stdout: filepath.Join(dir, "x.gguf") + "\n"},
	} {
		var stdout bytes.Buffer
		err := run(tc.args, &stdout, io.Discard)
		var ue usageError
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) || errors.As(err, &ue) != tc.usage {
			t.Errorf("run(%q) = %v, want %q (usage %v)", tc.args, err, tc.err, tc.usage)
		}
		if stdout.String() != tc.stdout {
			t.Errorf("run(%q) stdout %q, want %q", tc.args, stdout.String(), tc.stdout)
		}
	}
}

// TestQwenTokenizer builds the real model when the Qwen tokenizer.json is
// in the mtkit cache (scripts/fixtures.sh puts it there).
func TestQwenTokenizer(t *testing.T) {
	t.Parallel()
	path := os.Getenv("MTKIT_QWEN_TOKENIZER")
	if path == "" {
		dir, err := cacheDir()
		if err != nil {
			t.Skip(err)
		}
		matches, _ := filepath.Glob(filepath.Join(dir, "fixtures", "*", "tokenizer.json"))
		for _, m := range matches {
			if strings.Contains(strings.ToLower(m), "qwen") || filepath.Base(filepath.Dir(m)) == "dev" {
				path = m
				break
			}
		}
	}
	if path == "" {
		t.Skip("no Qwen tokenizer.json in the cache; run scripts/fixtures.sh or set MTKIT_QWEN_TOKENIZER")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := parseVocab(path, data)
	if err != nil {
		t.Fatal(err)
	}
	m, err := buildModel(defaultSpec, v, "x")
	if err != nil {
		t.Fatal(err)
	}
	if m.info.VocabSize < 151643 || m.info.EOS != 151645 || m.info.BOS != 151643 || m.info.EntryToken != 198 {
		t.Errorf("unexpected Qwen ids: %+v", m.info)
	}
	if m.info.MinMargin < minMargin {
		t.Errorf("margin %.2f", m.info.MinMargin)
	}
}
