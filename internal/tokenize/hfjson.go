package tokenize

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// hfFile is the subset of a Hugging Face tokenizer.json that a byte-level
// BPE tokenizer needs.
type hfFile struct {
	AddedTokens  []hfAddedToken  `json:"added_tokens"`
	Normalizer   json.RawMessage `json:"normalizer"`
	PreTokenizer json.RawMessage `json:"pre_tokenizer"`
	Decoder      json.RawMessage `json:"decoder"`
	Model        *hfModel        `json:"model"`
}

// hfAddedToken is one entry of added_tokens.
type hfAddedToken struct {
	ID         *int   `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized *bool  `json:"normalized"`
	Special    bool   `json:"special"`
}

// hfModel is the "model" object.
type hfModel struct {
	Type                    string            `json:"type"`
	Vocab                   map[string]int    `json:"vocab"`
	Merges                  []json.RawMessage `json:"merges"`
	IgnoreMerges            bool              `json:"ignore_merges"`
	Dropout                 *float64          `json:"dropout"`
	UnkToken                *string           `json:"unk_token"`
	ContinuingSubwordPrefix *string           `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string           `json:"end_of_word_suffix"`
	ByteFallback            bool              `json:"byte_fallback"`
}

// hfComponent is the common shape of normalizers, pre-tokenizers and
// decoders: a type tag plus type-specific fields.
type hfComponent struct {
	Type          string            `json:"type"`
	Normalizers   []json.RawMessage `json:"normalizers"`
	Pretokenizers []json.RawMessage `json:"pretokenizers"`
	Decoders      []json.RawMessage `json:"decoders"`
	// Split
	Pattern  *hfPattern `json:"pattern"`
	Behavior string     `json:"behavior"`
	Invert   bool       `json:"invert"`
	// ByteLevel
	AddPrefixSpace *bool `json:"add_prefix_space"`
	UseRegex       *bool `json:"use_regex"`
	// Digits
	IndividualDigits bool `json:"individual_digits"`
}

// hfPattern is a Split pattern: a regular expression or a literal string.
type hfPattern struct {
	Regex  *string `json:"Regex"`
	String *string `json:"String"`
}

// ParseJSON parses a Hugging Face tokenizer.json document holding a
// byte-level BPE model (GPT-2, GPT-4o, Llama-3, Qwen2/Qwen3 style); name is
// used in errors and returned by Name. It never panics on malformed input.
func ParseJSON(data []byte, name string) (Tokenizer, error) {
	var f hfFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", jsonErrPos(name, data, err), err)
	}
	b, err := newBPE(&f, name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return b, nil
}

// jsonErrPos returns name:line:col for a JSON syntax or type error, or name.
func jsonErrPos(name string, data []byte, err error) string {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 || off > int64(len(data)) {
		return name
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := int(off) - bytes.LastIndexByte(data[:off], '\n')
	return fmt.Sprintf("%s:%d:%d", name, line, col)
}

// isNull reports whether a raw JSON value is absent or null.
func isNull(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null"
}

// parseComponent decodes a normalizer, pre-tokenizer or decoder object.
func parseComponent(raw json.RawMessage, field string) (*hfComponent, error) {
	var c hfComponent
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	if c.Type == "" {
		return nil, fmt.Errorf("%s: missing \"type\"", field)
	}
	return &c, nil
}

// parseMerge decodes one merges entry: "a b" or ["a", "b"].
func parseMerge(raw json.RawMessage) (a, b string, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		var pair []string
		if err := json.Unmarshal(raw, &pair); err != nil {
			return "", "", err
		}
		if len(pair) != 2 {
			return "", "", fmt.Errorf("want 2 tokens, got %d", len(pair))
		}
		return pair[0], pair[1], nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", "", err
	}
	a, b, ok := strings.Cut(s, " ")
	if !ok || a == "" || b == "" || strings.Contains(b, " ") {
		return "", "", fmt.Errorf("%q: want two tokens separated by one space", s)
	}
	return a, b, nil
}
