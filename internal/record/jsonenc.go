package record

import (
	"bytes"
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// appendRecord appends r as one JSON object (no newline) byte-identical
// to what a json.Encoder with SetEscapeHTML(false) writes for it, and
// returns encoding/json's error where encoding/json fails (a time outside
// RFC 3339, a NaN or infinite float). A hand-written encoder does the
// work (2–4× faster, no allocation); values it cannot write, and any
// Record whose fields no longer match encFields, go through encoding/json.
// FuzzEncodeRecord checks the two agree.
func appendRecord(dst []byte, r *Record) ([]byte, error) {
	if fastEncoderOK {
		if b, ok := appendRecordFast(dst, r); ok {
			return b, nil
		}
	}
	return appendRecordStd(dst, r)
}

// appendRecordStd is appendRecord through encoding/json.
func appendRecordStd(dst []byte, r *Record) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return dst, err
	}
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}

// encFields describes the Record the fast encoder writes, one field per
// entry: Go name, Go type and json tag, in declaration order (which is
// encoding/json's output order). The fast encoder is used only if they
// are exactly the Record's: a field added, renamed, retyped or re-tagged
// without teaching appendRecordFast disables it rather than writing a
// different line than encoding/json would.
var encFields = []string{
	"RunID string run_id",
	"Shard int shard",
	"Seq int64 seq",
	"ConversationID string conversation_id",
	"Turn int turn",
	"Attempt int attempt",
	"Choice int choice",
	"Client int client",
	"Phase string phase",
	"Model string model",
	"Scheduled time.Time scheduled",
	"Start time.Time start",
	"FirstToken *time.Time first_token,omitempty",
	"End time.Time end",
	"TTFTNs *int64 ttft_ns,omitempty",
	"TTFTContentNs *int64 ttft_content_ns,omitempty",
	"TPOTNs *float64 tpot_ns,omitempty",
	"ITLNs []int64 itl_ns,omitempty",
	"LatencyNs int64 latency_ns",
	"IntendedLatencyNs int64 intended_latency_ns",
	"LatenessNs int64 lateness_ns",
	"ThinkPlannedNs int64 think_planned_ns",
	"ThinkActualNs int64 think_actual_ns",
	"PromptTokens *int64 prompt_tokens",
	"CompletionTokens *int64 completion_tokens",
	"CachedTokens *int64 cached_tokens",
	"ReasoningTokens *int64 reasoning_tokens,omitempty",
	"ClientPromptTokens int64 client_prompt_tokens",
	"ClientCompletionTokens int64 client_completion_tokens",
	"InputMessages int input_messages",
	"DroppedMessages int dropped_messages",
	"MaxTokens int max_tokens",
	"MinTokens int min_tokens",
	"Chunks int chunks",
	"ReasoningChunks int reasoning_chunks",
	"FinishReason string finish_reason",
	"Status int status",
	"ErrorClass string error_class",
	"Error string error,omitempty",
	"Retried bool retried",
	"VerifyMismatch *bool verify_mismatch,omitempty",
	"ServerExtra string server_extra,omitempty",
}

// structFields returns the fields of struct type t in the form of
// encFields.
func structFields(t reflect.Type) []string {
	names := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		names = append(names, f.Name+" "+f.Type.String()+" "+f.Tag.Get("json"))
	}
	return names
}

// fastEncoderFits reports whether appendRecordFast writes values of
// struct type t as encoding/json does: exactly the fields of encFields,
// and no JSON or text marshaler of t's own that encoding/json would call
// instead.
func fastEncoderFits(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	if p.Implements(reflect.TypeFor[json.Marshaler]()) || p.Implements(reflect.TypeFor[encoding.TextMarshaler]()) {
		return false
	}
	return slices.Equal(structFields(t), encFields)
}

// fastEncoderOK enables appendRecordFast.
var fastEncoderOK = fastEncoderFits(reflect.TypeFor[Record]())

// appendRecordFast writes r field by field as encoding/json does; it
// reports false (and returns dst unchanged) for a value encoding/json
// rejects.
func appendRecordFast(dst []byte, r *Record) ([]byte, bool) {
	n0 := len(dst)
	// A typical record is about 900 bytes plus its strings and gaps.
	size := 1024 + 21*len(r.ITLNs) + len(r.RunID) + len(r.ConversationID) + len(r.Error) + len(r.ServerExtra)
	e := jsonAppender{b: slices.Grow(dst, size), ok: true}

	e.key(`{"run_id":`)
	e.str(r.RunID)
	e.key(`,"shard":`)
	e.int(int64(r.Shard))
	e.key(`,"seq":`)
	e.int(r.Seq)
	e.key(`,"conversation_id":`)
	e.str(r.ConversationID)
	e.key(`,"turn":`)
	e.int(int64(r.Turn))
	e.key(`,"attempt":`)
	e.int(int64(r.Attempt))
	e.key(`,"choice":`)
	e.int(int64(r.Choice))
	e.key(`,"client":`)
	e.int(int64(r.Client))
	e.key(`,"phase":`)
	e.str(r.Phase)
	e.key(`,"model":`)
	e.str(r.Model)

	e.key(`,"scheduled":`)
	e.time(r.Scheduled)
	e.key(`,"start":`)
	e.time(r.Start)
	if r.FirstToken != nil {
		e.key(`,"first_token":`)
		e.time(*r.FirstToken)
	}
	e.key(`,"end":`)
	e.time(r.End)

	if r.TTFTNs != nil {
		e.key(`,"ttft_ns":`)
		e.int(*r.TTFTNs)
	}
	if r.TTFTContentNs != nil {
		e.key(`,"ttft_content_ns":`)
		e.int(*r.TTFTContentNs)
	}
	if r.TPOTNs != nil {
		e.key(`,"tpot_ns":`)
		e.float(*r.TPOTNs)
	}
	if len(r.ITLNs) > 0 {
		e.key(`,"itl_ns":[`)
		for i, v := range r.ITLNs {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.int(v)
		}
		e.b = append(e.b, ']')
	}
	e.key(`,"latency_ns":`)
	e.int(r.LatencyNs)
	e.key(`,"intended_latency_ns":`)
	e.int(r.IntendedLatencyNs)
	e.key(`,"lateness_ns":`)
	e.int(r.LatenessNs)
	e.key(`,"think_planned_ns":`)
	e.int(r.ThinkPlannedNs)
	e.key(`,"think_actual_ns":`)
	e.int(r.ThinkActualNs)

	e.key(`,"prompt_tokens":`)
	e.intPtr(r.PromptTokens)
	e.key(`,"completion_tokens":`)
	e.intPtr(r.CompletionTokens)
	e.key(`,"cached_tokens":`)
	e.intPtr(r.CachedTokens)
	if r.ReasoningTokens != nil {
		e.key(`,"reasoning_tokens":`)
		e.int(*r.ReasoningTokens)
	}
	e.key(`,"client_prompt_tokens":`)
	e.int(r.ClientPromptTokens)
	e.key(`,"client_completion_tokens":`)
	e.int(r.ClientCompletionTokens)
	e.key(`,"input_messages":`)
	e.int(int64(r.InputMessages))
	e.key(`,"dropped_messages":`)
	e.int(int64(r.DroppedMessages))
	e.key(`,"max_tokens":`)
	e.int(int64(r.MaxTokens))
	e.key(`,"min_tokens":`)
	e.int(int64(r.MinTokens))
	e.key(`,"chunks":`)
	e.int(int64(r.Chunks))
	e.key(`,"reasoning_chunks":`)
	e.int(int64(r.ReasoningChunks))

	e.key(`,"finish_reason":`)
	e.str(r.FinishReason)
	e.key(`,"status":`)
	e.int(int64(r.Status))
	e.key(`,"error_class":`)
	e.str(r.ErrorClass)
	if r.Error != "" {
		e.key(`,"error":`)
		e.str(r.Error)
	}
	e.key(`,"retried":`)
	e.bool(r.Retried)
	if r.VerifyMismatch != nil {
		e.key(`,"verify_mismatch":`)
		e.bool(*r.VerifyMismatch)
	}
	if r.ServerExtra != "" {
		e.key(`,"server_extra":`)
		e.str(r.ServerExtra)
	}
	e.b = append(e.b, '}')

	if !e.ok {
		return dst[:n0], false
	}
	return e.b, true
}

// jsonAppender appends JSON values as encoding/json writes them; ok turns
// false at the first value encoding/json would reject.
type jsonAppender struct {
	b  []byte
	ok bool
}

// key appends literal JSON text (keys and punctuation).
func (e *jsonAppender) key(s string) { e.b = append(e.b, s...) }

func (e *jsonAppender) int(v int64) { e.b = strconv.AppendInt(e.b, v, 10) }

// intPtr writes a *int64 without omitempty: nil is null.
func (e *jsonAppender) intPtr(p *int64) {
	if p == nil {
		e.b = append(e.b, "null"...)
		return
	}
	e.int(*p)
}

func (e *jsonAppender) bool(v bool) {
	if v {
		e.b = append(e.b, "true"...)
	} else {
		e.b = append(e.b, "false"...)
	}
}

// time writes t as time.Time.MarshalJSON does (RFC 3339 with
// nanoseconds, trailing zeros trimmed); a time MarshalJSON rejects (year
// outside 0–9999, zone offset of 24 hours or more) fails the record.
func (e *jsonAppender) time(t time.Time) {
	n := len(e.b)
	b := append(e.b, '"')
	b, ok := appendRFC3339(b, t)
	if !ok {
		// Near or beyond the limits: time's own formatter decides.
		var err error
		if b, err = t.AppendText(b); err != nil {
			e.b, e.ok = e.b[:n], false
			return
		}
	}
	e.b = append(b, '"')
}

// Seconds since 1970 of 0000-01-01 and of 10000-01-01 (UTC).
const minRFC3339Sec, maxRFC3339Sec = -62167219200, 253402300800

const secondsPerDay = 86400

// appendRFC3339 appends t as t.AppendText does (the layout RFC3339Nano);
// it reports false, having appended nothing, for times outside years
// 1–9998 or with a zone offset of 24 hours or more, whose formatting (or
// error) is left to the time package.
func appendRFC3339(b []byte, t time.Time) ([]byte, bool) {
	unix := t.Unix()
	if unix < minRFC3339Sec+366*secondsPerDay || unix >= maxRFC3339Sec-366*secondsPerDay {
		return b, false
	}
	_, offset := t.Zone()
	zone := offset / 60 // minutes, truncated as time does
	if zone <= -24*60 || zone >= 24*60 {
		return b, false
	}
	sec := unix + int64(offset) // wall clock in t's zone
	days := sec / secondsPerDay
	clock := int(sec - days*secondsPerDay)
	if clock < 0 {
		clock += secondsPerDay
		days--
	}
	year, month, day := civilDate(days)

	n := len(b)
	b = append(b, "0000-00-00T00:00:00"...)
	d := b[n:]
	put2(d[0:], year/100)
	put2(d[2:], year%100)
	put2(d[5:], month)
	put2(d[8:], day)
	put2(d[11:], clock/3600)
	put2(d[14:], clock/60%60)
	put2(d[17:], clock%60)

	if ns := t.Nanosecond(); ns != 0 {
		b = append(b, ".000000000"...)
		frac := b[len(b)-9:]
		for i := 8; i >= 0; i-- {
			frac[i] = byte('0' + ns%10)
			ns /= 10
		}
		for b[len(b)-1] == '0' {
			b = b[:len(b)-1]
		}
	}

	if offset == 0 {
		return append(b, 'Z'), true
	}
	sign := byte('+')
	if zone < 0 {
		sign, zone = '-', -zone
	}
	n = len(b)
	b = append(b, sign, '0', '0', ':', '0', '0')
	put2(b[n+1:], zone/60)
	put2(b[n+4:], zone%60)
	return b, true
}

// civilDate returns the proleptic Gregorian date of the given day
// counted from 1970-01-01 (H. Hinnant's days_from_civil inverse).
func civilDate(days int64) (year, month, day int) {
	z := days + 719468 // days since 0000-03-01
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097                                  // [0, 146096]
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // [0, 399]
	doy := doe - (365*yoe + yoe/4 - yoe/100)               // [0, 365], from March 1
	mp := (5*doy + 2) / 153                                // [0, 11], March is 0
	day = int(doy - (153*mp+2)/5 + 1)
	month = int(mp + 3)
	if month > 12 {
		month -= 12
	}
	year = int(yoe + era*400)
	if month <= 2 {
		year++
	}
	return year, month, day
}

// put2 writes v (0–99) as two digits at d[0:2].
func put2(d []byte, v int) {
	d[0], d[1] = digitPairs[2*v], digitPairs[2*v+1]
}

// digitPairs holds "00" to "99".
const digitPairs = "00010203040506070809" + "10111213141516171819" + "20212223242526272829" +
	"30313233343536373839" + "40414243444546474849" + "50515253545556575859" + "60616263646566676869" +
	"70717273747576777879" + "80818283848586878889" + "90919293949596979899"

// float writes f as encoding/json writes a float64: like ES6's
// number-to-string, 'f' format except for magnitudes below 1e-6 or from
// 1e21, which use 'e' with an exponent of at least one digit. NaN and
// infinities fail the record.
func (e *jsonAppender) float(f float64) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		e.ok = false
		return
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b := strconv.AppendFloat(e.b, f, format, -1, 64)
	if format == 'e' {
		// e-07 → e-7
		if n := len(b); b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	e.b = b
}

// plainASCII[c] is true for the ASCII bytes a JSON string holds as is;
// without HTML escaping that is all but control characters, '"' and '\\'.
var plainASCII = func() (t [utf8.RuneSelf]bool) {
	for c := range utf8.RuneSelf {
		t[c] = c >= 0x20 && c != '"' && c != '\\'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// str writes s as a JSON string as encoding/json does with
// SetEscapeHTML(false): short escapes for \b \f \n \r \t " and \\, \u00XX
// for other control characters, \u2028 and \u2029 escaped, and each byte
// of invalid UTF-8 replaced by \ufffd.
func (e *jsonAppender) str(s string) {
	b := append(e.b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plainASCII[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	e.b = append(b, '"')
}
