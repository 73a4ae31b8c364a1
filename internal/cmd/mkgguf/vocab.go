package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Token types of tokenizer.ggml.token_type (llama.cpp's llama_token_type).
const (
	tokenNormal      int32 = 1
	tokenControl     int32 = 3
	tokenUserDefined int32 = 4
	tokenUnused      int32 = 5
)

// vocab is what the GGUF tokenizer metadata needs from a tokenizer.json.
type vocab struct {
	tokens []string // by id; gaps are filled with "[PAD<id>]"
	types  []int32  // by id
	merges []string // "left right", in rank order
	ids    map[string]int
}

// hfTokenizer is the subset of a Hugging Face tokenizer.json mkgguf reads.
type hfTokenizer struct {
	Model struct {
		Type   string          `json:"type"`
		Vocab  map[string]int  `json:"vocab"`
		Merges json.RawMessage `json:"merges"`
	} `json:"model"`
	AddedTokens []struct {
		ID      int    `json:"id"`
		Content string `json:"content"`
		Special bool   `json:"special"`
	} `json:"added_tokens"`
}

// maxVocab bounds the vocabulary size so that a corrupt file cannot make
// mkgguf allocate without limit.
const maxVocab = 1 << 22

// parseVocab reads a byte-level BPE tokenizer.json. name is used in errors.
func parseVocab(name string, data []byte) (*vocab, error) {
	var hf hfTokenizer
	if err := json.Unmarshal(data, &hf); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if hf.Model.Type != "BPE" {
		return nil, fmt.Errorf("%s: model.type: %q is not BPE", name, hf.Model.Type)
	}
	if len(hf.Model.Vocab) == 0 {
		return nil, fmt.Errorf("%s: model.vocab: empty", name)
	}
	merges, err := parseMerges(hf.Model.Merges)
	if err != nil {
		return nil, fmt.Errorf("%s: model.merges: %w", name, err)
	}
	n := 0
	for tok, id := range hf.Model.Vocab {
		if id < 0 || id >= maxVocab {
			return nil, fmt.Errorf("%s: model.vocab: token %q: id %d out of range [0, %d)", name, tok, id, maxVocab)
		}
		n = max(n, id+1)
	}
	for i, a := range hf.AddedTokens {
		if a.ID < 0 || a.ID >= maxVocab {
			return nil, fmt.Errorf("%s: added_tokens[%d]: id %d out of range [0, %d)", name, i, a.ID, maxVocab)
		}
		if a.Content == "" {
			return nil, fmt.Errorf("%s: added_tokens[%d]: empty content", name, i)
		}
		n = max(n, a.ID+1)
	}
	v := &vocab{
		tokens: make([]string, n),
		types:  make([]int32, n),
		merges: merges,
		ids:    make(map[string]int, n),
	}
	set := func(id int, tok string, typ int32) error {
		if v.tokens[id] != "" && v.tokens[id] != tok {
			return fmt.Errorf("id %d names both %q and %q", id, v.tokens[id], tok)
		}
		v.tokens[id], v.types[id] = tok, typ
		return nil
	}
	for tok, id := range hf.Model.Vocab {
		if tok == "" {
			return nil, fmt.Errorf("%s: model.vocab: empty token for id %d", name, id)
		}
		if err := set(id, tok, tokenNormal); err != nil {
			return nil, fmt.Errorf("%s: model.vocab: %w", name, err)
		}
	}
	for i, a := range hf.AddedTokens {
		typ := tokenUserDefined
		if a.Special {
			typ = tokenControl
		}
		v.tokens[a.ID] = "" // an added token may restate a vocab entry
		if err := set(a.ID, a.Content, typ); err != nil {
			return nil, fmt.Errorf("%s: added_tokens[%d]: %w", name, i, err)
		}
	}
	for id, tok := range v.tokens {
		if tok == "" {
			v.tokens[id], v.types[id] = fmt.Sprintf("[PAD%d]", id), tokenUnused
		}
		if prev, dup := v.ids[v.tokens[id]]; dup {
			return nil, fmt.Errorf("%s: token %q has ids %d and %d", name, v.tokens[id], prev, id)
		}
		v.ids[v.tokens[id]] = id
	}
	return v, nil
}

// parseMerges accepts both merge encodings of tokenizer.json: "left right"
// strings and ["left", "right"] pairs.
func parseMerges(raw json.RawMessage) ([]string, error) {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, errors.New("missing")
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, err
	}
	out := make([]string, len(items))
	for i, it := range items {
		var s string
		if err := json.Unmarshal(it, &s); err == nil {
			if l, r, ok := strings.Cut(s, " "); !ok || l == "" || r == "" || strings.Contains(r, " ") {
				return nil, fmt.Errorf("[%d]: %q is not \"left right\"", i, s)
			}
			out[i] = s
			continue
		}
		var pair []string
		if err := json.Unmarshal(it, &pair); err != nil || len(pair) != 2 {
			return nil, fmt.Errorf("[%d]: %s is neither \"left right\" nor a pair of strings", i, truncate(it, 40))
		}
		if pair[0] == "" || pair[1] == "" || strings.Contains(pair[0], " ") || strings.Contains(pair[1], " ") {
			return nil, fmt.Errorf("[%d]: pair %q has an empty part or a space", i, pair)
		}
		out[i] = pair[0] + " " + pair[1]
	}
	return out, nil
}

func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "..."
}

// byteDecoder maps the printable characters of GPT-2's byte-level alphabet
// back to the bytes they stand for.
var byteDecoder = func() map[rune]byte {
	m := make(map[rune]byte, 256)
	n := 0
	for b := 0; b < 256; b++ {
		if (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff) {
			m[rune(b)] = byte(b)
			continue
		}
		m[rune(256+n)] = byte(b)
		n++
	}
	return m
}()

// decodeByteLevel returns the bytes a byte-level BPE token stands for, and
// false when tok contains a character outside the byte-level alphabet.
func decodeByteLevel(tok string) (string, bool) {
	var b strings.Builder
	for _, r := range tok {
		c, ok := byteDecoder[r]
		if !ok {
			return "", false
		}
		b.WriteByte(c)
	}
	return b.String(), true
}
