package tokenize

import (
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// bpe is a byte-level BPE tokenizer loaded from a tokenizer.json, or a
// built-in tiktoken encoding: added tokens, normalizer, pre-tokenizer, then
// merges over the bytes of each piece. It works on raw bytes throughout; the byte-to-unicode mapping is
// applied once, to the vocabulary, when the file is loaded.
type bpe struct {
	name         string
	vocab        *tokenTable // raw bytes of a token <-> id; the text of each id
	byteID       [256]int32  // id of each single byte, -1 if none
	merges       *mergeTable
	rankMerges   bool // tiktoken: merge by the rank of the pair's bytes in vocab, not by merges
	ignoreMerges bool
	unkID        int32               // -1 if the model has no unk_token
	normalize    func(string) string // nil if the model has no normalizer
	pre          pipeline
	added        []addedToken
	rawMatch     *matcher // added tokens matched before normalization
	normMatch    *matcher // added tokens matched on normalized text
	rawIdx       []int    // matcher index -> index into added
	normIdx      []int
	cache        *pieceCache
}

var _ Tokenizer = (*bpe)(nil)

// addedToken is an entry of added_tokens.
type addedToken struct {
	content             string
	id                  int32
	lstrip, rstrip      bool
	singleWord          bool
	normalized, special bool
}

// newBPE builds the tokenizer of a parsed tokenizer.json.
func newBPE(f *hfFile, name string) (*bpe, error) {
	m := f.Model
	if m == nil {
		return nil, fmt.Errorf("model: missing")
	}
	if m.Type != "" && m.Type != "BPE" {
		return nil, fmt.Errorf("model.type: unsupported model %q (only BPE)", m.Type)
	}
	if m.vocab == nil {
		return nil, fmt.Errorf("model.vocab: missing")
	}
	if m.Dropout != nil && *m.Dropout > 0 {
		return nil, fmt.Errorf("model.dropout: %v is not supported (non-deterministic)", *m.Dropout)
	}
	if m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "" {
		return nil, fmt.Errorf("model.continuing_subword_prefix: %q is not supported", *m.ContinuingSubwordPrefix)
	}
	if m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "" {
		return nil, fmt.Errorf("model.end_of_word_suffix: %q is not supported", *m.EndOfWordSuffix)
	}
	t := &bpe{
		name:         name,
		merges:       newMergeTable(m.merges.len()),
		ignoreMerges: m.IgnoreMerges,
		unkID:        -1,
		cache:        newPieceCache(),
	}

	// Pre-tokenizer; the model must be byte-level.
	byteLevel := false
	if !isNull(f.PreTokenizer) {
		var err error
		steps, bl, err := parsePreTokenizer(f.PreTokenizer, "pre_tokenizer", nil)
		if err != nil {
			return nil, err
		}
		t.pre, byteLevel = steps, bl
	}
	if !byteLevel && !isNull(f.Decoder) {
		d, err := parseComponent(f.Decoder, "decoder")
		if err != nil {
			return nil, err
		}
		byteLevel = d.Type == "ByteLevel"
	}
	if !byteLevel {
		return nil, fmt.Errorf("pre_tokenizer: not a byte-level BPE (no ByteLevel pre-tokenizer or decoder); SentencePiece-style models are not supported")
	}
	if !isNull(f.Normalizer) {
		fn, err := parseNormalizer(f.Normalizer, "normalizer")
		if err != nil {
			return nil, err
		}
		t.normalize = fn
	}

	// Vocabulary: keyed by the raw bytes each token stands for; the text
	// of an id is those bytes, or an added token's content.
	v := m.vocab
	maxID := v.maxID
	for _, a := range f.AddedTokens {
		if a.ID != nil {
			if *a.ID < 0 || *a.ID >= 1<<31-1 {
				return nil, fmt.Errorf("added_tokens: token %q: id %d out of range", a.Content, *a.ID)
			}
			maxID = max(maxID, int32(*a.ID))
		}
	}
	if maxID >= maxTableID {
		return nil, fmt.Errorf("model.vocab: id %d too large", maxID)
	}
	for _, a := range f.AddedTokens {
		if a.Content != "" && a.ID != nil {
			v.b.text(int32(*a.ID), []byte(a.Content))
		}
	}
	var err error
	if t.vocab, err = v.b.build(maxID); err != nil {
		return nil, fmt.Errorf("model.vocab: %w", err)
	}
	v.b = tableBuilder{} // garbage from here on
	// byLevel returns the id of a token written as in tokenizer.json.
	var raw []byte
	byLevel := func(tok []byte) (int32, bool) {
		var ok bool
		if raw, ok = appendByteLevelDecode(raw[:0], tok); ok {
			return t.vocab.lookup(string(raw))
		}
		id, ok := v.odd[string(tok)]
		return id, ok
	}
	for b := range 256 {
		t.byteID[b] = -1
		if id, ok := t.vocab.lookup(string([]byte{byte(b)})); ok {
			t.byteID[b] = id
		}
	}
	if m.UnkToken != nil {
		if id, ok := byLevel([]byte(*m.UnkToken)); ok {
			t.unkID = id
		}
	}

	// Merges, in rank order.
	if m.merges.len() >= maxTableID {
		return nil, fmt.Errorf("model.merges: %d merges, at most %d supported", m.merges.len(), maxTableID-1)
	}
	var ab []byte
	for i := range m.merges.len() {
		a, b := m.merges.pair(i)
		ida, oka := byLevel(a)
		idb, okb := byLevel(b)
		ab = append(append(ab[:0], a...), b...)
		idm, okm := byLevel(ab)
		switch {
		case !oka:
			return nil, fmt.Errorf("model.merges[%d]: token %q not in vocab", i, a)
		case !okb:
			return nil, fmt.Errorf("model.merges[%d]: token %q not in vocab", i, b)
		case !okm:
			return nil, fmt.Errorf("model.merges[%d]: merged token %q not in vocab", i, ab)
		}
		t.merges.add(pairKey(ida, idb), idm)
	}

	// Added tokens.
	var rawToks, normToks []string
	for i, a := range f.AddedTokens {
		if a.Content == "" {
			return nil, fmt.Errorf("added_tokens[%d]: empty content", i)
		}
		if a.ID == nil {
			return nil, fmt.Errorf("added_tokens[%d]: missing id", i)
		}
		at := addedToken{
			content: a.Content, id: int32(*a.ID),
			lstrip: a.LStrip, rstrip: a.RStrip, singleWord: a.SingleWord,
			special: a.Special,
		}
		// Like the reference: normalized defaults to !special.
		at.normalized = !a.Special
		if a.Normalized != nil {
			at.normalized = *a.Normalized
		}
		t.added = append(t.added, at)
		if at.normalized && t.normalize != nil {
			normToks = append(normToks, t.normalize(at.content))
			t.normIdx = append(t.normIdx, len(t.added)-1)
		} else {
			rawToks = append(rawToks, at.content)
			t.rawIdx = append(t.rawIdx, len(t.added)-1)
		}
	}
	t.rawMatch = newMatcher(rawToks)
	t.normMatch = newMatcher(normToks)
	return t, nil
}

// parseNormalizer returns the function of a normalizer object.
func parseNormalizer(raw []byte, field string) (func(string) string, error) {
	c, err := parseComponent(raw, field)
	if err != nil {
		return nil, err
	}
	switch c.Type {
	case "NFC":
		return norm.NFC.String, nil
	case "NFD":
		return norm.NFD.String, nil
	case "NFKC":
		return norm.NFKC.String, nil
	case "NFKD":
		return norm.NFKD.String, nil
	case "Lowercase":
		return strings.ToLower, nil
	case "Sequence":
		var fns []func(string) string
		for i, sub := range c.Normalizers {
			fn, err := parseNormalizer(sub, fmt.Sprintf("%s.normalizers[%d]", field, i))
			if err != nil {
				return nil, err
			}
			fns = append(fns, fn)
		}
		return func(s string) string {
			for _, fn := range fns {
				s = fn(s)
			}
			return s
		}, nil
	}
	return nil, fmt.Errorf("%s.type: unsupported normalizer %q (supported: NFC, NFD, NFKC, NFKD, Lowercase, Sequence)", field, c.Type)
}

// Name returns the path of the tokenizer.json, or the name of a built-in
// encoding.
func (t *bpe) Name() string { return t.name }

// Encode returns the ids of text. Added tokens written in text become
// their ids; no BOS/EOS is added.
func (t *bpe) Encode(text string) []int {
	e := t.newEncoder()
	e.ids = make([]int, 0, len(text)/3+1)
	e.run(text)
	ids := e.ids
	e.free()
	return ids
}

// Count returns len(Encode(text)) without building the id slice. It
// allocates nothing once the pieces of text are in the cache.
func (t *bpe) Count(text string) int {
	e := t.newEncoder()
	e.counting = true
	e.run(text)
	n := e.n
	e.free()
	return n
}

// encoder is the state of one Encode or Count: where the ids go and the
// scratch of encodePiece. Its callbacks are method values bound once, when
// the encoder is made, and encoders are reused through encoders, so that
// a call does not allocate closures (BenchmarkCountMessage: 8 allocations
// a call before).
type encoder struct {
	t        *bpe
	counting bool  // Count: only n is kept
	n        int   // the number of ids, when counting
	ids      []int // the ids, when encoding
	one      [1]int32
	buf      []int32
	// The bound methods: piece, raw and norm.
	pieceFn       func(string)
	rawFn, normFn func(seg string, tok int)
}

// encoders holds free encoders.
var encoders = sync.Pool{New: func() any {
	e := &encoder{}
	e.pieceFn, e.rawFn, e.normFn = e.piece, e.raw, e.norm
	return e
}}

// newEncoder returns a free encoder for t.
func (t *bpe) newEncoder() *encoder {
	e := encoders.Get().(*encoder)
	e.t = t
	return e
}

// free returns e to encoders, keeping only its scratch.
func (e *encoder) free() {
	e.t, e.counting, e.n, e.ids = nil, false, 0, nil
	encoders.Put(e)
}

// run runs the whole pipeline on text.
func (e *encoder) run(text string) {
	text = validUTF8(text)
	e.t.splitAdded(text, e.t.rawMatch, e.t.rawIdx, e.rawFn)
}

// out adds ids to the result.
func (e *encoder) out(ids []int32) {
	if e.counting {
		e.n += len(ids)
		return
	}
	for _, id := range ids {
		e.ids = append(e.ids, int(id))
	}
}

// raw handles a segment of the text as written: an added token (tok >= 0)
// or text to normalize and cut at the normalized added tokens.
func (e *encoder) raw(seg string, tok int) {
	t := e.t
	if tok >= 0 {
		e.one[0] = t.added[tok].id
		e.out(e.one[:])
		return
	}
	if t.normalize != nil {
		seg = t.normalize(seg)
	}
	t.splitAdded(seg, t.normMatch, t.normIdx, e.normFn)
}

// norm handles a segment of normalized text: an added token (tok >= 0) or
// text to pre-tokenize.
func (e *encoder) norm(seg string, tok int) {
	if tok >= 0 {
		e.one[0] = e.t.added[tok].id
		e.out(e.one[:])
		return
	}
	e.t.pre.run(seg, e.pieceFn)
}

// piece merges one pre-tokenized piece, in chunks of maxPiece bytes.
func (e *encoder) piece(p string) {
	for len(p) > maxPiece {
		n := maxPiece
		for n > 0 && !utf8.RuneStart(p[n]) {
			n--
		}
		e.out(e.t.encodePiece(p[:n], &e.one, &e.buf))
		p = p[n:]
	}
	e.out(e.t.encodePiece(p, &e.one, &e.buf))
}

// maxPiece is the longest piece, in bytes, that is merged as a whole. A
// longer one (a run of text with no white space or punctuation, e.g. a
// pasted blob) is merged in chunks of maxPiece bytes cut at character
// boundaries, which bounds the memory and makes the cost linear in its
// length. Its ids can then differ from the model's own tokenizer near each
// cut, as with Meta's Llama 3 tokenizer, which cuts runs at 25,000
// characters; pieces of ordinary text, even unspaced scripts, are far
// shorter and unchanged.
const maxPiece = 32 << 10

// encodePiece returns the ids of one pre-tokenized piece. The result may
// alias one, *buf or the cache and is valid until the next call.
func (t *bpe) encodePiece(p string, one *[1]int32, buf *[]int32) []int32 {
	if len(p) == 1 {
		if id := t.byteID[p[0]]; id >= 0 {
			one[0] = id
			return one[:]
		}
	}
	if t.ignoreMerges {
		if id, ok := t.vocab.lookup(p); ok {
			one[0] = id
			return one[:]
		}
	}
	if ids, ok := t.cache.get(p); ok {
		return ids
	}
	var syms []int32
	if len(p) > cacheMaxPiece {
		// Not cached: the ids only live until the next call.
		if cap(*buf) < len(p) {
			*buf = make([]int32, len(p))
		}
		syms = (*buf)[:len(p)]
	} else {
		syms = make([]int32, len(p))
	}
	for i := 0; i < len(p); i++ {
		syms[i] = t.byteID[p[i]]
	}
	if t.rankMerges {
		syms = mergeRanks(t.vocab, p, syms)
	} else {
		syms = merge(t.merges, syms)
	}
	if t.unkID >= 0 || hasNeg(syms) {
		syms = t.fixUnknown(syms)
	}
	t.cache.put(p, syms)
	return syms
}

// hasNeg reports whether ids holds a -1 (a byte missing from the vocab).
func hasNeg(ids []int32) bool {
	for _, id := range ids {
		if id < 0 {
			return true
		}
	}
	return false
}

// fixUnknown replaces bytes missing from the vocabulary with unk_token, or
// drops them when the model has none, as the reference does.
func (t *bpe) fixUnknown(ids []int32) []int32 {
	out := ids[:0]
	for _, id := range ids {
		switch {
		case id >= 0:
			out = append(out, id)
		case t.unkID >= 0:
			out = append(out, t.unkID)
		}
	}
	return out
}

// splitAdded cuts s at the added tokens m finds, calling fn for each
// segment of plain text (tok = -1) and each token (tok = index into
// t.added), honoring lstrip, rstrip and single_word like the reference.
func (t *bpe) splitAdded(s string, m *matcher, idx []int, fn func(seg string, tok int)) {
	if s == "" {
		return
	}
	if m.empty() {
		fn(s, -1)
		return
	}
	done, pos := 0, 0
	for pos < len(s) {
		start, end, k, ok := m.find(s, pos)
		if !ok {
			break
		}
		pos = end
		a := &t.added[idx[k]]
		if a.singleWord {
			before, _ := utf8.DecodeLastRuneInString(s[:start])
			after, _ := utf8.DecodeRuneInString(s[end:])
			if (start > 0 && isWordRune(before)) || (end < len(s) && isWordRune(after)) {
				continue
			}
		}
		if a.lstrip {
			start = max(len(strings.TrimRightFunc(s[:start], unicode.IsSpace)), done)
		}
		stop := end
		if a.rstrip {
			stop = len(s) - len(strings.TrimLeftFunc(s[end:], unicode.IsSpace))
			pos = stop
		}
		if start > done {
			fn(s[done:start], -1)
		}
		fn("", idx[k])
		done = stop
	}
	if done < len(s) {
		fn(s[done:], -1)
	}
}

// isWordRune reports whether r counts as part of a word for single_word
// added tokens.
func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// Decode returns the text of ids: the bytes of byte-level tokens, the
// content of added tokens. Unknown ids are skipped.
func (t *bpe) Decode(ids []int) string {
	var sb strings.Builder
	for _, id := range ids {
		if id >= 0 && id < t.vocab.size() {
			sb.Write(t.vocab.text(int32(id)))
		}
	}
	return sb.String()
}

// validUTF8 replaces each byte of s that is not part of valid UTF-8 with
// U+FFFD, as ranging over a string does.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var sb strings.Builder
	for _, r := range s {
		sb.WriteRune(r)
	}
	return sb.String()
}
