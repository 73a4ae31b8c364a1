package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
)

// GeneratorVersion changes whenever the bytes mkgguf writes for the same
// tokenizer.json change, so that cached models are regenerated.
const GeneratorVersion = "1"

// spec is the shape of the generated model.
type spec struct {
	Dim       int    // embedding_length
	Layers    int    // block_count
	FFN       int    // feed_forward_length
	Heads     int    // attention.head_count
	KVHeads   int    // attention.head_count_kv
	Context   int    // context_length
	Cycle     int    // length of the greedy decoding cycle
	Seed      uint64 // seed of every random weight
	EntryText string // the token after which decoding enters the cycle
}

// defaultSpec is the model the end-to-end tests serve: about 40 MB with the
// Qwen vocabulary, all of it the token embedding and the output matrix.
var defaultSpec = spec{
	Dim:       64,
	Layers:    2,
	FFN:       128,
	Heads:     4,
	KVHeads:   2,
	Context:   32768,
	Cycle:     1024,
	Seed:      20240601,
	EntryText: "\n",
}

// Weight scales. The residual stream is dominated by the current token's
// embedding (entries of magnitude about 0.58 after RMSNorm scaling), attention
// and FFN add small but non-zero contributions, so real attention over the
// whole history is computed and cached while the next token still depends
// only on the current one.
const (
	logitTarget = 50.0 // logit of the wired next token
	attnScale   = 0.1  // q, k, v weights
	attnOutAmp  = 0.02 // attention output projection
	ffnScale    = 0.1  // gate and up
	ffnDownAmp  = 0.01 // down projection
	biasScale   = 0.01 // q, k, v biases
	minMargin   = 15.0 // required logit gap between the wired token and any other
)

// modelInfo describes the generated model's deterministic behaviour; mkgguf
// writes it next to the GGUF for the tests.
type modelInfo struct {
	GeneratorVersion string   `json:"generator_version"`
	TokenizerSHA256  string   `json:"tokenizer_sha256"`
	Architecture     string   `json:"architecture"`
	VocabSize        int      `json:"vocab_size"`
	Dim              int      `json:"embedding_length"`
	Layers           int      `json:"block_count"`
	ContextLength    int      `json:"context_length"`
	BOS              int      `json:"bos_token_id"`
	EOS              int      `json:"eos_token_id"`
	EntryToken       int      `json:"entry_token_id"`
	CycleIDs         []int    `json:"cycle_token_ids"`
	CycleText        []string `json:"cycle_text"`
	MinMargin        float64  `json:"min_logit_margin"`
}

// wordToken matches byte-level tokens that are a space and 4 to 9 lower-case
// ASCII letters: ordinary words that re-tokenize to themselves.
var wordToken = regexp.MustCompile(`^Ġ[a-z]{4,9}$`)

// model is a generated GGUF: metadata, tensors and the behaviour it wires.
type model struct {
	kvs     []kv
	tensors []*tensor
	info    modelInfo
}

// special token names of the Qwen family.
const (
	bosText = "<|endoftext|>"
	eosText = "<|im_end|>"
)

// chatTemplate is the ChatML template, for engines that read it from the
// GGUF (Ollama uses its own Go template, given in the Modelfile).
const chatTemplate = "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"

// buildModel generates the weights of s for the vocabulary v.
func buildModel(s spec, v *vocab, tokenizerSHA string) (*model, error) {
	if s.Dim%s.Heads != 0 || s.Heads%s.KVHeads != 0 {
		return nil, fmt.Errorf("spec: dim %d, heads %d, kv heads %d do not divide", s.Dim, s.Heads, s.KVHeads)
	}
	bos, ok := v.ids[bosText]
	if !ok {
		return nil, fmt.Errorf("vocabulary has no %s token", bosText)
	}
	eos, ok := v.ids[eosText]
	if !ok {
		return nil, fmt.Errorf("vocabulary has no %s token", eosText)
	}
	entry, err := entryToken(v, s.EntryText)
	if err != nil {
		return nil, err
	}
	cycle := chooseCycle(v, s)
	if len(cycle) < s.Cycle {
		return nil, fmt.Errorf("vocabulary has %d word tokens, the cycle needs %d", len(cycle), s.Cycle)
	}
	for _, id := range cycle {
		if id == entry {
			return nil, fmt.Errorf("entry token %d is a word token", entry)
		}
	}

	rng := rand.New(rand.NewPCG(s.Seed, s.Seed^0x9e3779b97f4a7c15))
	uniform := func(n int, scale float64) []float32 {
		out := make([]float32, n)
		for i := range out {
			out[i] = float32((rng.Float64()*2 - 1) * scale)
		}
		return out
	}
	ones := func(n int) []float32 {
		out := make([]float32, n)
		for i := range out {
			out[i] = 1
		}
		return out
	}
	nv, d := len(v.tokens), s.Dim
	headDim := d / s.Heads
	kvDim := headDim * s.KVHeads

	embd := uniform(nv*d, 1)
	// Embeddings are stored as f16: wire the output matrix from the rounded
	// values so that the margins checked below are the ones the engine sees.
	for i, x := range embd {
		embd[i] = halfToFloat32(float32ToHalf(x))
	}
	out := make([]float32, nv*d)
	// Each cycle token's row is aligned with the previous cycle token's
	// embedding; the first one's row also with the entry token's. After the
	// final RMSNorm the hidden state has norm sqrt(d), so the wired logit is
	// about logitTarget and every unrelated row scores near 0.
	wire := func(dst, src int) {
		e := embd[src*d : (src+1)*d]
		var norm float64
		for _, x := range e {
			norm += float64(x) * float64(x)
		}
		k := logitTarget / math.Sqrt(norm) / math.Sqrt(float64(d))
		row := out[dst*d : (dst+1)*d]
		for i, x := range e {
			row[i] += float32(float64(x) * k)
		}
	}
	for i, id := range cycle {
		wire(cycle[(i+1)%len(cycle)], id)
	}
	wire(cycle[0], entry)

	var tensors []*tensor
	add := func(name string, typ ggmlType, data []float32, dims ...uint64) {
		tensors = append(tensors, &tensor{name: name, dims: dims, typ: typ, data: data})
	}
	add("token_embd.weight", ggmlF16, embd, uint64(d), uint64(nv))
	add("output_norm.weight", ggmlF32, ones(d), uint64(d))
	add("output.weight", ggmlF16, out, uint64(d), uint64(nv))
	for l := range s.Layers {
		p := fmt.Sprintf("blk.%d.", l)
		add(p+"attn_norm.weight", ggmlF32, ones(d), uint64(d))
		add(p+"attn_q.weight", ggmlF32, uniform(d*d, attnScale), uint64(d), uint64(d))
		add(p+"attn_q.bias", ggmlF32, uniform(d, biasScale), uint64(d))
		add(p+"attn_k.weight", ggmlF32, uniform(d*kvDim, attnScale), uint64(d), uint64(kvDim))
		add(p+"attn_k.bias", ggmlF32, uniform(kvDim, biasScale), uint64(kvDim))
		add(p+"attn_v.weight", ggmlF32, uniform(d*kvDim, attnScale), uint64(d), uint64(kvDim))
		add(p+"attn_v.bias", ggmlF32, uniform(kvDim, biasScale), uint64(kvDim))
		add(p+"attn_output.weight", ggmlF32, uniform(d*d, attnOutAmp), uint64(d), uint64(d))
		add(p+"ffn_norm.weight", ggmlF32, ones(d), uint64(d))
		add(p+"ffn_gate.weight", ggmlF32, uniform(d*s.FFN, ffnScale), uint64(d), uint64(s.FFN))
		add(p+"ffn_up.weight", ggmlF32, uniform(d*s.FFN, ffnScale), uint64(d), uint64(s.FFN))
		add(p+"ffn_down.weight", ggmlF32, uniform(s.FFN*d, ffnDownAmp), uint64(s.FFN), uint64(d))
	}
	for i := range out {
		out[i] = halfToFloat32(float32ToHalf(out[i]))
	}
	margin := checkMargins(embd, out, d, cycle, entry)
	if margin < minMargin {
		return nil, fmt.Errorf("cycle logit margin %.1f is below %.1f: change the seed or the cycle length", margin, minMargin)
	}

	cycleText := make([]string, len(cycle))
	for i, id := range cycle {
		cycleText[i], _ = decodeByteLevel(v.tokens[id])
	}
	m := &model{tensors: tensors}
	m.info = modelInfo{
		GeneratorVersion: GeneratorVersion,
		TokenizerSHA256:  tokenizerSHA,
		Architecture:     "qwen2",
		VocabSize:        nv,
		Dim:              d,
		Layers:           s.Layers,
		ContextLength:    s.Context,
		BOS:              bos,
		EOS:              eos,
		EntryToken:       entry,
		CycleIDs:         cycle,
		CycleText:        cycleText,
		MinMargin:        math.Round(margin*100) / 100,
	}
	m.kvs = []kv{
		{"general.architecture", "qwen2"},
		{"general.name", "mtkit-tiny-qwen2"},
		{"general.description", "mtkit end-to-end test model: greedy decoding walks a fixed cycle of word tokens (generator v" + GeneratorVersion + ")"},
		{"general.license", "Apache-2.0"},
		{"general.file_type", uint32(1)}, // mostly F16
		{"general.quantization_version", uint32(2)},
		{"qwen2.context_length", uint32(s.Context)},
		{"qwen2.embedding_length", uint32(d)},
		{"qwen2.block_count", uint32(s.Layers)},
		{"qwen2.feed_forward_length", uint32(s.FFN)},
		{"qwen2.attention.head_count", uint32(s.Heads)},
		{"qwen2.attention.head_count_kv", uint32(s.KVHeads)},
		{"qwen2.rope.freq_base", float32(1e6)},
		{"qwen2.attention.layer_norm_rms_epsilon", float32(1e-6)},
		{"tokenizer.ggml.model", "gpt2"},
		{"tokenizer.ggml.pre", "qwen2"},
		{"tokenizer.ggml.tokens", v.tokens},
		{"tokenizer.ggml.token_type", v.types},
		{"tokenizer.ggml.merges", v.merges},
		{"tokenizer.ggml.bos_token_id", uint32(bos)},
		{"tokenizer.ggml.eos_token_id", uint32(eos)},
		{"tokenizer.ggml.padding_token_id", uint32(bos)},
		{"tokenizer.ggml.add_bos_token", false},
		{"tokenizer.chat_template", chatTemplate},
	}
	return m, nil
}

// entryToken returns the id of the single token that text is.
func entryToken(v *vocab, text string) (int, error) {
	for id, tok := range v.tokens {
		if v.types[id] != tokenNormal {
			continue
		}
		if s, ok := decodeByteLevel(tok); ok && s == text {
			return id, nil
		}
	}
	return 0, fmt.Errorf("vocabulary has no single token for %q", text)
}

// chooseCycle picks s.Cycle word tokens in a seeded random order.
func chooseCycle(v *vocab, s spec) []int {
	var words []int
	for id, tok := range v.tokens {
		if v.types[id] == tokenNormal && wordToken.MatchString(tok) {
			words = append(words, id)
		}
	}
	slices.Sort(words)
	rng := rand.New(rand.NewPCG(s.Seed^0x5bd1e995, s.Seed))
	rng.Shuffle(len(words), func(i, j int) { words[i], words[j] = words[j], words[i] })
	if len(words) > s.Cycle {
		words = words[:s.Cycle]
	}
	return words
}

// dot returns the dot product of row and h. It is arithmetic on one
// goroutine over slices no other goroutine holds, so the race detector is
// kept out of it (go:norace): instrumented, checkMargins' 1025 × 1024 × 64
// products were most of the package's test time under -race, every test
// that builds a model paying them.
//
//go:norace
func dot(row []float32, h []float64) float64 {
	var s float64
	for i, x := range row {
		s += float64(x) * h[i]
	}
	return s
}

// checkMargins returns the smallest gap, over the cycle tokens and the entry
// token, between the logit of the wired next token and the best other logit,
// computed from the stored weights with attention and FFN left out. Rows of
// tokens outside the cycle are zero, so only cycle rows can compete.
func checkMargins(embd, out []float32, d int, cycle []int, entry int) float64 {
	norm := func(id int) []float64 {
		e := embd[id*d : (id+1)*d]
		var ss float64
		for _, x := range e {
			ss += float64(x) * float64(x)
		}
		rms := math.Sqrt(ss / float64(d))
		h := make([]float64, d)
		for i, x := range e {
			h[i] = float64(x) / rms
		}
		return h
	}
	logit := func(row int, h []float64) float64 { return dot(out[row*d:(row+1)*d], h) }
	margin := math.Inf(1)
	check := func(from, want int) {
		h := norm(from)
		best := 0.0 // rows outside the cycle score 0
		for _, c := range cycle {
			if c != want {
				best = math.Max(best, logit(c, h))
			}
		}
		margin = math.Min(margin, logit(want, h)-best)
	}
	for i, id := range cycle {
		check(id, cycle[(i+1)%len(cycle)])
	}
	check(entry, cycle[0])
	return margin
}
