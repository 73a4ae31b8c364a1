package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// unmarshalRecord decodes one JSON line into r with the same result as
// json.Unmarshal: a hand-written decoder handles well-formed lines of the
// record schema (about 5× faster); anything else it is unsure of (an
// error, an escaped or non-ASCII key, a value of an unexpected type) is
// left to encoding/json, so errors and edge cases are encoding/json's.
// FuzzFastDecoder checks the two agree.
func unmarshalRecord(line []byte, r *Record, c *decodeCache) error {
	if fastDecoderOK {
		if fastUnmarshal(line, r, c) {
			return nil
		}
		*r = Record{}
	}
	return json.Unmarshal(line, r)
}

// errSlow makes the fast decoder give up.
var errSlow = errors.New("slow path")

// fastFields are the JSON names the fast decoder knows; it is used only if
// they are exactly the Record's (a field added to Record without teaching
// the fast decoder disables it rather than dropping the field).
var fastFields = []string{
	"run_id", "shard", "seq", "conversation_id", "turn", "attempt", "choice", "client", "phase", "model",
	"scheduled", "start", "first_token", "end",
	"ttft_ns", "ttft_content_ns", "tpot_ns", "itl_ns", "latency_ns", "intended_latency_ns", "lateness_ns",
	"think_planned_ns", "think_actual_ns",
	"prompt_tokens", "completion_tokens", "cached_tokens", "reasoning_tokens", "client_prompt_tokens",
	"client_completion_tokens", "input_messages", "dropped_messages", "max_tokens", "min_tokens", "chunks",
	"reasoning_chunks", "finish_reason", "status", "error_class", "error", "retried", "verify_mismatch",
	"server_extra",
}

var fastDecoderOK = func() bool {
	t := reflect.TypeFor[Record]()
	var names []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		names = append(names, name)
	}
	return strings.Join(names, ",") == strings.Join(fastFields, ",")
}()

type fastDec struct {
	b    []byte
	i    int
	c    *decodeCache
	hint int // index in fastFields of the expected next key
}

// fastIndex maps a field name to its index in fastFields.
var fastIndex = func() map[string]int {
	m := make(map[string]int, len(fastFields))
	for i, name := range fastFields {
		m[name] = i
	}
	return m
}()

// decodeCache lets consecutive records share memory: repeated strings
// (run, conversation, phase, model...) are interned, and the optional
// numbers and ITL lists are carved from shared slabs, so a typical record
// costs a few allocations instead of a dozen.
type decodeCache struct {
	strs map[string]string
	i64  []int64
	f64  []float64
}

const (
	maxInterned = 4096
	slabSize    = 4096
)

func (c *decodeCache) intern(b []byte) string {
	if c == nil {
		return string(b)
	}
	if s, ok := c.strs[string(b)]; ok {
		return s
	}
	if c.strs == nil || len(c.strs) >= maxInterned {
		c.strs = make(map[string]string, 256)
	}
	s := string(b)
	c.strs[s] = s
	return s
}

// ints returns a slice holding vs, from the slab when it is small.
func (c *decodeCache) ints(vs []int64) []int64 {
	if c == nil || len(vs) > slabSize/8 {
		return append(make([]int64, 0, len(vs)), vs...)
	}
	if cap(c.i64)-len(c.i64) < len(vs) {
		c.i64 = make([]int64, 0, slabSize)
	}
	n := len(c.i64)
	c.i64 = append(c.i64, vs...)
	return c.i64[n : n+len(vs) : n+len(vs)]
}

func (c *decodeCache) int64Ptr(v int64) *int64 {
	if c == nil {
		return &v
	}
	return &c.ints([]int64{v})[0]
}

func (c *decodeCache) float64Ptr(v float64) *float64 {
	if c == nil {
		return &v
	}
	if len(c.f64) == cap(c.f64) {
		c.f64 = make([]float64, 0, slabSize/8)
	}
	c.f64 = append(c.f64, v)
	return &c.f64[len(c.f64)-1]
}

func fastUnmarshal(line []byte, r *Record, c *decodeCache) bool {
	d := fastDec{b: line, c: c}
	if err := d.object(r); err != nil {
		return false
	}
	d.ws()
	return d.i == len(d.b)
}

func (d *fastDec) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *fastDec) next() byte {
	d.ws()
	if d.i >= len(d.b) {
		return 0
	}
	return d.b[d.i]
}

func (d *fastDec) object(r *Record) error {
	if d.next() != '{' {
		return errSlow
	}
	d.i++
	if d.next() == '}' {
		d.i++
		return nil
	}
	for {
		if d.next() != '"' {
			return errSlow
		}
		key, plain, err := d.str()
		if err != nil || !plain {
			return errSlow
		}
		if d.next() != ':' {
			return errSlow
		}
		d.i++
		d.ws()
		if err := d.field(r, key); err != nil {
			return err
		}
		switch d.next() {
		case ',':
			d.i++
		case '}':
			d.i++
			return nil
		default:
			return errSlow
		}
	}
}

// str scans a string at d.i and returns its raw contents; plain reports
// that it has no escapes and only ASCII (then the raw bytes are the value).
func (d *fastDec) str() ([]byte, bool, error) {
	d.i++ // opening quote
	start, plain := d.i, true
	// Fast path: up to the next quote there is no escape and no control
	// character; IndexByte is vectorised.
	if q := bytes.IndexByte(d.b[d.i:], '"'); q >= 0 {
		seg := d.b[d.i : d.i+q]
		if bytes.IndexByte(seg, '\\') < 0 {
			for _, c := range seg {
				if c < 0x20 {
					return nil, false, errSlow
				}
				if c >= utf8.RuneSelf {
					plain = false
				}
			}
			d.i += q + 1
			return seg, plain, nil
		}
	}
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			s := d.b[start:d.i]
			d.i++
			return s, plain, nil
		case c == '\\':
			plain = false
			d.i++
			if d.i >= len(d.b) {
				return nil, false, errSlow
			}
			switch d.b[d.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				d.i++
			case 'u':
				if d.i+5 > len(d.b) {
					return nil, false, errSlow
				}
				for _, h := range d.b[d.i+1 : d.i+5] {
					if !isHex(h) {
						return nil, false, errSlow
					}
				}
				d.i += 5
			default:
				return nil, false, errSlow
			}
		case c < 0x20:
			return nil, false, errSlow
		case c >= utf8.RuneSelf:
			plain = false
			d.i++
		default:
			d.i++
		}
	}
	return nil, false, errSlow
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// stringValue decodes a JSON string value; escapes and non-ASCII go
// through encoding/json for identical unquoting.
func (d *fastDec) stringValue() (string, error) {
	if d.b[d.i] != '"' {
		return "", errSlow
	}
	start := d.i
	raw, plain, err := d.str()
	if err != nil {
		return "", err
	}
	if plain {
		return string(raw), nil
	}
	var s string
	if err := json.Unmarshal(d.b[start:d.i], &s); err != nil {
		return "", errSlow
	}
	return s, nil
}

// number scans a JSON number and returns its text.
func (d *fastDec) number() ([]byte, error) {
	start := d.i
	if d.i < len(d.b) && d.b[d.i] == '-' {
		d.i++
	}
	digits := func() int {
		n := 0
		for d.i < len(d.b) && '0' <= d.b[d.i] && d.b[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	if d.i < len(d.b) && d.b[d.i] == '0' {
		d.i++
	} else if digits() == 0 {
		return nil, errSlow
	}
	if d.i < len(d.b) && d.b[d.i] == '.' {
		d.i++
		if digits() == 0 {
			return nil, errSlow
		}
	}
	if d.i < len(d.b) && (d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		d.i++
		if d.i < len(d.b) && (d.b[d.i] == '+' || d.b[d.i] == '-') {
			d.i++
		}
		if digits() == 0 {
			return nil, errSlow
		}
	}
	return d.b[start:d.i], nil
}

func (d *fastDec) int64() (int64, error) {
	s, err := d.number()
	if err != nil {
		return 0, err
	}
	if v, ok := parseSmallInt(s); ok {
		return v, nil
	}
	// encoding/json rejects fractions and exponents for integers, as
	// ParseInt does: both take the slow path and its error.
	v, err := strconv.ParseInt(string(s), 10, 64)
	if err != nil {
		return 0, errSlow
	}
	return v, nil
}

// parseSmallInt parses an optionally negative integer of at most 18
// digits (no overflow possible); anything else is left to ParseInt.
func parseSmallInt(s []byte) (int64, bool) {
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		s = s[1:]
	}
	if len(s) == 0 || len(s) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

func (d *fastDec) literal(lit string) bool {
	if strings.HasPrefix(string(d.b[d.i:min(len(d.b), d.i+len(lit))]), lit) {
		d.i += len(lit)
		return true
	}
	return false
}

func (d *fastDec) null() bool {
	return d.i < len(d.b) && d.b[d.i] == 'n' && d.literal("null")
}

func (d *fastDec) intField(p *int) error {
	if d.null() {
		return nil
	}
	v, err := d.int64()
	*p = int(v)
	return err
}

func (d *fastDec) int64Field(p *int64) error {
	if d.null() {
		return nil
	}
	v, err := d.int64()
	*p = v
	return err
}

func (d *fastDec) int64Ptr(p **int64) error {
	if d.null() {
		*p = nil
		return nil
	}
	v, err := d.int64()
	*p = d.c.int64Ptr(v)
	return err
}

func (d *fastDec) stringField(p *string) error {
	if d.null() {
		return nil
	}
	s, err := d.stringValue()
	*p = s
	return err
}

// internField is stringField for values that repeat across records.
func (d *fastDec) internField(p *string) error {
	if d.null() {
		return nil
	}
	if d.b[d.i] == '"' {
		save := d.i
		raw, plain, err := d.str()
		if err == nil && plain {
			*p = d.c.intern(raw)
			return nil
		}
		d.i = save
	}
	return d.stringField(p)
}

func (d *fastDec) boolValue() (bool, error) {
	switch {
	case d.literal("true"):
		return true, nil
	case d.literal("false"):
		return false, nil
	}
	return false, errSlow
}

func (d *fastDec) timeValue(t *time.Time) error {
	if d.b[d.i] != '"' {
		return errSlow
	}
	start := d.i
	if _, plain, err := d.str(); err != nil || !plain {
		return errSlow
	}
	if err := t.UnmarshalJSON(d.b[start:d.i]); err != nil {
		return errSlow
	}
	return nil
}

func (d *fastDec) field(r *Record, key []byte) error {
	if d.i >= len(d.b) {
		return errSlow
	}
	// Records are written with their fields in order: try the field after
	// the previous one before looking the key up.
	idx := -1
	if d.hint < len(fastFields) && string(key) == fastFields[d.hint] {
		idx = d.hint
	} else if j, ok := fastIndex[string(key)]; ok {
		idx = j
	}
	if idx >= 0 {
		d.hint = idx + 1
	}
	switch idx {
	case 0: // run_id
		return d.internField(&r.RunID)
	case 1: // shard
		return d.intField(&r.Shard)
	case 2: // seq
		return d.int64Field(&r.Seq)
	case 3: // conversation_id
		return d.internField(&r.ConversationID)
	case 4: // turn
		return d.intField(&r.Turn)
	case 5: // attempt
		return d.intField(&r.Attempt)
	case 6: // choice
		return d.intField(&r.Choice)
	case 7: // client
		return d.intField(&r.Client)
	case 8: // phase
		return d.internField(&r.Phase)
	case 9: // model
		return d.internField(&r.Model)
	case 10: // scheduled
		return d.timeField(&r.Scheduled)
	case 11: // start
		return d.timeField(&r.Start)
	case 12: // first_token
		if d.null() {
			r.FirstToken = nil
			return nil
		}
		var t time.Time
		if err := d.timeValue(&t); err != nil {
			return err
		}
		r.FirstToken = &t
		return nil
	case 13: // end
		return d.timeField(&r.End)
	case 14: // ttft_ns
		return d.int64Ptr(&r.TTFTNs)
	case 15: // ttft_content_ns
		return d.int64Ptr(&r.TTFTContentNs)
	case 16: // tpot_ns
		if d.null() {
			r.TPOTNs = nil
			return nil
		}
		s, err := d.number()
		if err != nil {
			return err
		}
		v, err := strconv.ParseFloat(string(s), 64)
		if err != nil {
			return errSlow
		}
		r.TPOTNs = d.c.float64Ptr(v)
		return nil
	case 17: // itl_ns
		return d.int64List(&r.ITLNs)
	case 18: // latency_ns
		return d.int64Field(&r.LatencyNs)
	case 19: // intended_latency_ns
		return d.int64Field(&r.IntendedLatencyNs)
	case 20: // lateness_ns
		return d.int64Field(&r.LatenessNs)
	case 21: // think_planned_ns
		return d.int64Field(&r.ThinkPlannedNs)
	case 22: // think_actual_ns
		return d.int64Field(&r.ThinkActualNs)
	case 23: // prompt_tokens
		return d.int64Ptr(&r.PromptTokens)
	case 24: // completion_tokens
		return d.int64Ptr(&r.CompletionTokens)
	case 25: // cached_tokens
		return d.int64Ptr(&r.CachedTokens)
	case 26: // reasoning_tokens
		return d.int64Ptr(&r.ReasoningTokens)
	case 27: // client_prompt_tokens
		return d.int64Field(&r.ClientPromptTokens)
	case 28: // client_completion_tokens
		return d.int64Field(&r.ClientCompletionTokens)
	case 29: // input_messages
		return d.intField(&r.InputMessages)
	case 30: // dropped_messages
		return d.intField(&r.DroppedMessages)
	case 31: // max_tokens
		return d.intField(&r.MaxTokens)
	case 32: // min_tokens
		return d.intField(&r.MinTokens)
	case 33: // chunks
		return d.intField(&r.Chunks)
	case 34: // reasoning_chunks
		return d.intField(&r.ReasoningChunks)
	case 35: // finish_reason
		return d.internField(&r.FinishReason)
	case 36: // status
		return d.intField(&r.Status)
	case 37: // error_class
		return d.internField(&r.ErrorClass)
	case 38: // error
		return d.stringField(&r.Error)
	case 39: // retried
		if d.null() {
			return nil
		}
		v, err := d.boolValue()
		r.Retried = v
		return err
	case 40: // verify_mismatch
		if d.null() {
			r.VerifyMismatch = nil
			return nil
		}
		v, err := d.boolValue()
		r.VerifyMismatch = &v
		return err
	case 41: // server_extra
		return d.stringField(&r.ServerExtra)
	}
	// encoding/json matches keys case-insensitively (with Unicode
	// folding): a key that is not all lower-case ASCII may name a field.
	for _, c := range key {
		if c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			return errSlow
		}
	}
	return d.skip(0)
}

func (d *fastDec) timeField(t *time.Time) error {
	if d.null() {
		return nil
	}
	return d.timeValue(t)
}

func (d *fastDec) int64List(p *[]int64) error {
	if d.null() {
		*p = nil
		return nil
	}
	if d.b[d.i] != '[' {
		return errSlow
	}
	d.i++
	// encoding/json reuses the slice's backing array but the decoder
	// always starts from a zero Record, so a fresh slice is equivalent.
	var scratch [64]int64
	out := scratch[:0]
	if d.next() == ']' {
		d.i++
		*p = []int64{}
		return nil
	}
	for {
		d.ws()
		v, err := d.int64()
		if err != nil {
			return err
		}
		out = append(out, v)
		switch d.next() {
		case ',':
			d.i++
		case ']':
			d.i++
			*p = d.c.ints(out)
			return nil
		default:
			return errSlow
		}
	}
}

// skip validates and skips any value (of an unknown field).
func (d *fastDec) skip(depth int) error {
	if depth > 100 || d.i >= len(d.b) {
		return errSlow
	}
	switch c := d.b[d.i]; {
	case c == '"':
		_, _, err := d.str()
		return err
	case c == '-' || '0' <= c && c <= '9':
		_, err := d.number()
		return err
	case c == 't' || c == 'f':
		_, err := d.boolValue()
		return err
	case c == 'n':
		if d.null() {
			return nil
		}
		return errSlow
	case c == '[':
		d.i++
		if d.next() == ']' {
			d.i++
			return nil
		}
		for {
			d.ws()
			if err := d.skip(depth + 1); err != nil {
				return err
			}
			switch d.next() {
			case ',':
				d.i++
			case ']':
				d.i++
				return nil
			default:
				return errSlow
			}
		}
	case c == '{':
		d.i++
		if d.next() == '}' {
			d.i++
			return nil
		}
		for {
			if d.next() != '"' {
				return errSlow
			}
			if _, _, err := d.str(); err != nil {
				return err
			}
			if d.next() != ':' {
				return errSlow
			}
			d.i++
			d.ws()
			if err := d.skip(depth + 1); err != nil {
				return err
			}
			switch d.next() {
			case ',':
				d.i++
			case '}':
				d.i++
				return nil
			default:
				return errSlow
			}
		}
	}
	return errSlow
}
