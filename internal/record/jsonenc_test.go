package record

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // named zones for the encoder tests, whatever the host has
)

// stdJSONEncoder is the JSONEncoder as it was before the fast encoder:
// encoding/json with HTML escaping off, flushed after each record. It is
// the reference the fast encoder must match byte for byte, and the
// baseline of BenchmarkEncodeJSONL.
type stdJSONEncoder struct {
	w   io.Writer
	enc *json.Encoder
}

var _ Encoder = (*stdJSONEncoder)(nil)

func newStdJSONEncoder(w io.Writer) *stdJSONEncoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &stdJSONEncoder{w: w, enc: enc}
}

func (e *stdJSONEncoder) Encode(r *Record) error {
	if err := e.enc.Encode(r); err != nil {
		return err
	}
	return e.Close()
}

func (e *stdJSONEncoder) Flush() error {
	if f, ok := e.w.(interface{ Flush() error }); ok {
		return f.Flush()
	}
	return nil
}

func (e *stdJSONEncoder) Close() error { return e.Flush() }

// stdLine is r's line as encoding/json writes it.
func stdLine(r *Record) ([]byte, error) {
	var buf bytes.Buffer
	err := newStdJSONEncoder(&buf).Encode(r)
	return buf.Bytes(), err
}

// checkEncode asserts that the fast encoder and JSONEncoder write r
// exactly as encoding/json does, or fail where it fails with its error.
// It reports whether the fast path wrote r.
func checkEncode(t *testing.T, r *Record) bool {
	t.Helper()
	want, wantErr := stdLine(r)
	fast, ok := appendRecordFast([]byte("prefix"), r)
	if !bytes.HasPrefix(fast, []byte("prefix")) {
		t.Fatalf("appendRecordFast lost dst: %q", fast)
	}
	fast = fast[len("prefix"):]
	switch {
	case ok && wantErr != nil:
		t.Fatalf("fast encoder wrote %s where encoding/json fails: %v", fast, wantErr)
	case ok && string(fast)+"\n" != string(want):
		t.Fatalf("fast encoder differs from encoding/json:\nstd:  %s\nfast: %s", want, fast)
	case !ok && wantErr == nil:
		t.Fatalf("fast encoder rejects what encoding/json writes: %s", want)
	case !ok && len(fast) != 0:
		t.Fatalf("rejecting fast encoder appended %q", fast)
	}

	var buf bytes.Buffer
	err := NewJSONEncoder(&buf).Encode(r)
	if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
		t.Fatalf("JSONEncoder error %v, encoding/json error %v", err, wantErr)
	}
	if buf.String() != string(want) {
		t.Fatalf("JSONEncoder differs from encoding/json:\nstd: %q\ngot: %q", want, buf.Bytes())
	}
	return ok
}

func TestFastEncoderEnabled(t *testing.T) {
	t.Parallel()
	if !fastEncoderOK {
		got := structFields(reflect.TypeFor[Record]())
		for i := range max(len(got), len(encFields)) {
			g, w := "(none)", "(none)"
			if i < len(got) {
				g = got[i]
			}
			if i < len(encFields) {
				w = encFields[i]
			}
			if g != w {
				t.Errorf("field %d: Record has %q, encFields has %q", i, g, w)
			}
		}
		t.Fatal("the fast JSON encoder is off: teach jsonenc.go (encFields and appendRecordFast) the Record's fields")
	}
}

// TestFastEncoderFits checks that the self-check notices any change to
// the Record's fields.
func TestFastEncoderFits(t *testing.T) {
	t.Parallel()
	rt := reflect.TypeFor[Record]()
	fields := func() []reflect.StructField {
		fs := make([]reflect.StructField, rt.NumField())
		for i := range fs {
			fs[i] = rt.Field(i)
		}
		return fs
	}
	if !fastEncoderFits(reflect.StructOf(fields())) {
		t.Fatal("an identical struct does not fit")
	}
	for _, tc := range []struct {
		name   string
		change func([]reflect.StructField) []reflect.StructField
	}{
		{"renamed key", func(fs []reflect.StructField) []reflect.StructField {
			fs[3].Tag = `json:"conversation"`
			return fs
		}},
		{"omitempty added", func(fs []reflect.StructField) []reflect.StructField {
			fs[1].Tag = `json:"shard,omitempty"`
			return fs
		}},
		{"omitempty dropped", func(fs []reflect.StructField) []reflect.StructField {
			fs[17].Tag = `json:"itl_ns"`
			return fs
		}},
		{"string option", func(fs []reflect.StructField) []reflect.StructField {
			fs[2].Tag = `json:"seq,string"`
			return fs
		}},
		{"retyped", func(fs []reflect.StructField) []reflect.StructField {
			fs[16].Type = reflect.TypeFor[*float32]()
			return fs
		}},
		{"field added", func(fs []reflect.StructField) []reflect.StructField {
			return append(fs, reflect.StructField{Name: "Extra", Type: reflect.TypeFor[string](), Tag: `json:"extra"`})
		}},
		{"field removed", func(fs []reflect.StructField) []reflect.StructField {
			return fs[:len(fs)-1]
		}},
		{"fields swapped", func(fs []reflect.StructField) []reflect.StructField {
			fs[4], fs[5] = fs[5], fs[4]
			return fs
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if fastEncoderFits(reflect.StructOf(tc.change(fields()))) {
				t.Error("changed struct still fits the fast encoder")
			}
		})
	}
	if fastEncoderFits(reflect.TypeFor[marshalingRecord]()) {
		t.Error("a struct with its own MarshalJSON fits the fast encoder")
	}
}

// marshalingRecord has the Record's fields and a MarshalJSON of its own.
type marshalingRecord Record

func (*marshalingRecord) MarshalJSON() ([]byte, error) { return []byte("{}"), nil }

func TestEncodeRecordEdgeCases(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	ams, err := time.LoadLocation("Europe/Amsterdam")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		set      func(r *Record)
		contains string // expected in the line; "" when encoding fails
	}{
		{"zero record", func(r *Record) { *r = Record{} },
			`{"run_id":"","shard":0,"seq":0,"conversation_id":"","turn":0,"attempt":0,"choice":0,"client":0,"phase":"","model":"","scheduled":"0001-01-01T00:00:00Z","start":"0001-01-01T00:00:00Z","end":"0001-01-01T00:00:00Z","latency_ns":0,"intended_latency_ns":0,"lateness_ns":0,"think_planned_ns":0,"think_actual_ns":0,"prompt_tokens":null,"completion_tokens":null,"cached_tokens":null,"client_prompt_tokens":0,"client_completion_tokens":0,"input_messages":0,"dropped_messages":0,"max_tokens":0,"min_tokens":0,"chunks":0,"reasoning_chunks":0,"finish_reason":"","status":0,"error_class":"","retried":false}` + "\n"},
		{"all optional set", func(r *Record) {
			r.ReasoningTokens, r.VerifyMismatch, r.Error, r.ServerExtra = Ptr(int64(7)), Ptr(true), "boom", `{"k":1}`
			r.TTFTContentNs = Ptr(int64(3))
		}, `"error":"boom","retried":false,"verify_mismatch":true,"server_extra":"{\"k\":1}"}`},
		{"pointers to zero", func(r *Record) {
			r.TTFTNs, r.TTFTContentNs, r.TPOTNs, r.ReasoningTokens = Ptr(int64(0)), Ptr(int64(0)), Ptr(0.0), Ptr(int64(0))
			r.PromptTokens, r.VerifyMismatch = Ptr(int64(0)), Ptr(false)
		}, `"ttft_ns":0,"ttft_content_ns":0,"tpot_ns":0,`},
		{"nil pointers", func(r *Record) {
			r.FirstToken, r.TTFTNs, r.TPOTNs, r.PromptTokens, r.CompletionTokens, r.CachedTokens = nil, nil, nil, nil, nil, nil
		}, `"prompt_tokens":null,"completion_tokens":null,"cached_tokens":null,`},
		{"nil itl", func(r *Record) { r.ITLNs = nil }, `"tpot_ns":10000000,"latency_ns"`},
		{"empty itl", func(r *Record) { r.ITLNs = []int64{} }, `"tpot_ns":10000000,"latency_ns"`},
		{"one itl", func(r *Record) { r.ITLNs = []int64{-5} }, `"itl_ns":[-5],`},
		{"extreme ints", func(r *Record) {
			r.Seq, r.LatencyNs, r.Shard, r.ITLNs = math.MaxInt64, math.MinInt64, -1, []int64{math.MinInt64, 0, math.MaxInt64}
		}, `"itl_ns":[-9223372036854775808,0,9223372036854775807],"latency_ns":-9223372036854775808,`},
		{"escapes", func(r *Record) { r.RunID = "a\"b\\c/d\b\f\n\r\t\x00\x01\x1f\x7f<>&'" },
			`"run_id":"a\"b\\c/d\b\f\n\r\t\u0000\u0001\u001f` + "\x7f" + `<>&'"`},
		{"line separators", func(r *Record) { r.Error = "x\u2028y\u2029z\u202a" }, `"error":"x\u2028y\u2029z` + "\u202a" + `"`},
		{"invalid utf-8", func(r *Record) { r.Model = "a\xffb\xe2\x80c\xed\xa0\x80\xc0\xaf" },
			`"model":"a\ufffdb\ufffd\ufffdc\ufffd\ufffd\ufffd\ufffd\ufffd"`},
		{"unicode", func(r *Record) { r.ConversationID = "é日本🙂\U0010ffff" }, `"conversation_id":"é日本🙂` + "\U0010ffff" + `"`},
		{"negative zero", func(r *Record) { r.TPOTNs = Ptr(math.Copysign(0, -1)) }, `"tpot_ns":-0,`},
		{"tiny float", func(r *Record) { r.TPOTNs = Ptr(1e-7) }, `"tpot_ns":1e-7,`},
		{"float at 1e-6", func(r *Record) { r.TPOTNs = Ptr(1e-6) }, `"tpot_ns":0.000001,`},
		{"float below 1e-6", func(r *Record) { r.TPOTNs = Ptr(math.Nextafter(1e-6, 0)) }, `"tpot_ns":9.999999999999997e-7,`},
		{"denormal", func(r *Record) { r.TPOTNs = Ptr(-5e-324) }, `"tpot_ns":-5e-324,`},
		{"huge float", func(r *Record) { r.TPOTNs = Ptr(1e21) }, `"tpot_ns":1e+21,`},
		{"below 1e21", func(r *Record) { r.TPOTNs = Ptr(math.Nextafter(1e21, 0)) }, `"tpot_ns":999999999999999900000,`},
		{"max float", func(r *Record) { r.TPOTNs = Ptr(-math.MaxFloat64) }, `"tpot_ns":-1.7976931348623157e+308,`},
		{"fraction", func(r *Record) { r.TPOTNs = Ptr(12345.678) }, `"tpot_ns":12345.678,`},
		{"NaN", func(r *Record) { r.TPOTNs = Ptr(math.NaN()) }, ""},
		{"+Inf", func(r *Record) { r.TPOTNs = Ptr(math.Inf(1)) }, ""},
		{"-Inf", func(r *Record) { r.TPOTNs = Ptr(math.Inf(-1)) }, ""},
		{"nanoseconds", func(r *Record) {
			r.Scheduled, r.Start, r.End = base.Add(1), base.Add(120*time.Millisecond), base.Add(999999999)
		}, `"scheduled":"2026-01-02T03:04:05.000000001Z","start":"2026-01-02T03:04:05.12Z",` +
			`"first_token":"2026-01-02T03:04:05.05Z","end":"2026-01-02T03:04:05.999999999Z"`},
		{"fixed zones", func(r *Record) {
			r.Scheduled = base.In(time.FixedZone("IST", 5*3600+1800))
			r.Start = base.In(time.FixedZone("", -8*3600))
			r.End = base.In(time.FixedZone("UTC", 0))
		}, `"scheduled":"2026-01-02T08:34:05+05:30","start":"2026-01-01T19:04:05-08:00",` +
			`"first_token":"2026-01-02T03:04:05.05Z","end":"2026-01-02T03:04:05Z"`},
		{"named zones", func(r *Record) {
			r.Scheduled, r.Start, r.End = base.In(ny), base.AddDate(0, 6, 0).In(ny), base.AddDate(-126, 0, 0).In(ams)
		}, `"scheduled":"2026-01-01T22:04:05-05:00","start":"2026-07-01T23:04:05-04:00",`},
		{"offset seconds", func(r *Record) { r.Start = base.In(time.FixedZone("LMT", 1172)) }, `"start":"2026-01-02T03:23:37+00:19"`},
		{"offset 23:59", func(r *Record) { r.Start = base.In(time.FixedZone("", -(24*3600 - 60))) }, `-23:59"`},
		{"offset 24h", func(r *Record) { r.Start = base.In(time.FixedZone("", 24*3600)) }, ""},
		{"first token offset 24h", func(r *Record) { r.FirstToken = Ptr(base.In(time.FixedZone("", -25*3600))) }, ""},
		{"year 0", func(r *Record) { r.End = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC) }, `"end":"0000-01-01T00:00:00Z"`},
		{"year 9999", func(r *Record) { r.End = time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC) }, `"end":"9999-12-31T23:59:59.999999999Z"`},
		{"year 10000", func(r *Record) { r.End = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, ""},
		{"year -1", func(r *Record) { r.Scheduled = time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC) }, ""},
		{"monotonic clock", func(r *Record) { r.Start = time.Now(); r.End = r.Start.Add(time.Second) }, `"start":"`},
		{"long strings", func(r *Record) {
			r.ServerExtra = strings.Repeat(`{"kv_transfer_params":{"a":"\u00e9"}}`, 1000)
			r.Error = strings.Repeat("é\n", 5000)
		}, `"server_extra":"{\"kv_transfer_params\":{\"a\":\"\\u00e9\"}}{`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := *benchRecord(0)
			r.ITLNs = r.ITLNs[:3]
			tc.set(&r)
			ok := checkEncode(t, &r)
			if tc.contains == "" {
				if ok {
					t.Fatal("fast encoder accepted a record encoding/json rejects")
				}
				return
			}
			if !ok {
				t.Fatal("fast encoder rejected the record")
			}
			line, err := stdLine(&r)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(line, []byte(tc.contains)) {
				t.Errorf("line lacks %s:\n%s", tc.contains, line)
			}
		})
	}
}

// TestEncodeRecordRandom compares the fast encoder with encoding/json on
// random records (FuzzEncodeRecord explores further).
func TestEncodeRecordRandom(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	data := make([]byte, 512)
	fast := 0
	const n = 3000
	for range n {
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		r := fuzzRecord(data, randString(rng), randString(rng))
		if checkEncode(t, r) {
			fast++
		}
		checkIdempotent(t, r)
	}
	if fast < n/2 {
		t.Errorf("fast path taken for only %d of %d random records", fast, n)
	}
	for _, r := range genRecords(8, 300) {
		if !checkEncode(t, &r) {
			t.Fatalf("fast path not taken for an ordinary record: %+v", r)
		}
	}
}

// randString returns a short string mixing ASCII, escapes, multi-byte
// runes and invalid UTF-8.
func randString(rng *rand.Rand) string {
	pieces := []string{"a", "run-1", " ", "\"", "\\", "\n", "\x00", "\x1f", "\x7f", "<&>", "é", "日", "🙂",
		"\u2028", "\u2029", "\xff", "\xe2\x80", "\xed\xa0\x80", "\U0010ffff", "\ufffd"}
	var sb strings.Builder
	for range rng.IntN(8) {
		sb.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return sb.String()
}

// checkIdempotent asserts that a line the encoder writes decodes, through
// the JSONDecoder's own parser, into a record that encodes to a line which
// decodes to the same record and re-encodes to itself. (The first line
// may differ from the second: invalid UTF-8 is written as \ufffd escapes,
// which decode to U+FFFD, which is written unescaped.)
func checkIdempotent(t *testing.T, r *Record) {
	t.Helper()
	line, err := appendRecord(nil, r)
	if err != nil {
		return
	}
	decode := func(line []byte) Record {
		t.Helper()
		var back Record
		var cache decodeCache
		if err := unmarshalRecord(line, &back, &cache); err != nil {
			t.Fatalf("decode %s: %v", line, err)
		}
		return back
	}
	encode := func(r *Record) []byte {
		t.Helper()
		line, err := appendRecord(nil, r)
		if err != nil {
			t.Fatalf("re-encode %+v: %v", r, err)
		}
		return line
	}
	back := decode(line)
	line2 := encode(&back)
	back2 := decode(line2)
	if d := diffRecords([]Record{back}, []Record{back2}); d != "" {
		t.Fatalf("%s\n%s\ndecoded records differ:\n%s", line, line2, d)
	}
	if line3 := encode(&back2); !bytes.Equal(line2, line3) {
		t.Fatalf("encode∘decode not idempotent:\nfirst:  %s\nsecond: %s", line2, line3)
	}
}

// fuzzBits draws values from fuzz input; past its end it yields zeros.
type fuzzBits []byte

func (f *fuzzBits) u64() uint64 {
	var b [8]byte
	n := copy(b[:], *f)
	*f = (*f)[n:]
	return binary.LittleEndian.Uint64(b[:])
}

func (f *fuzzBits) byte() byte {
	if len(*f) == 0 {
		return 0
	}
	c := (*f)[0]
	*f = (*f)[1:]
	return c
}

func (f *fuzzBits) int64() int64 {
	switch f.byte() % 8 {
	case 0:
		return 0
	case 1:
		return math.MaxInt64
	case 2:
		return math.MinInt64
	case 3:
		return -1
	case 4:
		return int64(f.byte())
	default:
		return int64(f.u64())
	}
}

func (f *fuzzBits) intPtr() *int64 {
	if f.byte()%3 == 0 {
		return nil
	}
	return Ptr(f.int64())
}

var fuzzFloats = []float64{0, math.Copysign(0, -1), 1, -1, 1e-6, math.Nextafter(1e-6, 0), 1e-7, 1e21,
	math.Nextafter(1e21, 0), 1e20, 5e-324, math.MaxFloat64, -math.MaxFloat64, 0.1, 123456.789,
	math.NaN(), math.Inf(1), math.Inf(-1)}

func (f *fuzzBits) float() float64 {
	if c := int(f.byte()); c < len(fuzzFloats) {
		return fuzzFloats[c]
	}
	return math.Float64frombits(f.u64())
}

var fuzzZones = func() []*time.Location {
	zones := []*time.Location{time.UTC, time.Local, time.FixedZone("", 0), time.FixedZone("UTC", 0)}
	for _, name := range []string{"America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "Europe/Amsterdam", "Africa/Monrovia"} {
		loc, err := time.LoadLocation(name)
		if err != nil {
			panic(err) // time/tzdata is linked in
		}
		zones = append(zones, loc)
	}
	return zones
}()

func (f *fuzzBits) time() time.Time {
	mode := f.byte()
	if mode%16 == 0 {
		return time.Time{}
	}
	var t time.Time
	switch sec := int64(f.u64()); {
	case mode%16 == 1: // anywhere, mostly unrepresentable in RFC 3339
		t = time.Unix(sec, 0)
	case mode%2 == 0: // around now
		t = time.Unix(1767225600+sec%(1<<30), 0)
	default: // years 0 to 9999 and a little beyond
		t = time.Unix(minRFC3339Sec-1e6+int64(uint64(sec)%(maxRFC3339Sec-minRFC3339Sec+2e6)), 0)
	}
	switch ns := f.u64(); f.byte() % 4 {
	case 0:
	case 1:
		t = t.Add(time.Duration(ns % 1e9))
	case 2:
		t = t.Add(time.Duration(ns%1000) * time.Millisecond)
	case 3:
		t = t.Add(time.Duration(ns%1e6) * time.Microsecond)
	}
	if z := int(f.byte()); z < len(fuzzZones) {
		return t.In(fuzzZones[z])
	} else if z < 128 {
		// Offsets up to ±25 h, with seconds.
		return t.In(time.FixedZone("Z", int(int64(f.u64())%(25*3600))))
	}
	return t.UTC()
}

func (f *fuzzBits) timePtr() *time.Time {
	if f.byte()%3 == 0 {
		return nil
	}
	return Ptr(f.time())
}

// str picks a string built from the fuzzer's strings a and b.
func (f *fuzzBits) str(a, b string) string {
	switch f.byte() % 8 {
	case 0:
		return ""
	case 1, 2:
		return a
	case 3, 4:
		return b
	case 5:
		return a + b
	case 6: // may cut a multi-byte rune
		if a == "" {
			return a
		}
		return a[:int(f.byte())%len(a)]
	default:
		return PhaseMeasure
	}
}

// fuzzRecord builds a record whose every field is drawn from data and the
// strings a and b.
func fuzzRecord(data []byte, a, b string) *Record {
	f := fuzzBits(data)
	r := &Record{
		RunID: f.str(a, b), Shard: int(f.int64()), Seq: f.int64(), ConversationID: f.str(a, b),
		Turn: int(f.int64()), Attempt: int(f.int64()), Choice: int(f.int64()), Client: int(f.int64()),
		Phase: f.str(a, b), Model: f.str(a, b),
		Scheduled: f.time(), Start: f.time(), FirstToken: f.timePtr(), End: f.time(),
		TTFTNs: f.intPtr(), TTFTContentNs: f.intPtr(),
		LatencyNs: f.int64(), IntendedLatencyNs: f.int64(), LatenessNs: f.int64(),
		ThinkPlannedNs: f.int64(), ThinkActualNs: f.int64(),
		PromptTokens: f.intPtr(), CompletionTokens: f.intPtr(), CachedTokens: f.intPtr(), ReasoningTokens: f.intPtr(),
		ClientPromptTokens: f.int64(), ClientCompletionTokens: f.int64(),
		InputMessages: int(f.int64()), DroppedMessages: int(f.int64()), MaxTokens: int(f.int64()),
		MinTokens: int(f.int64()), Chunks: int(f.int64()), ReasoningChunks: int(f.int64()),
		FinishReason: f.str(a, b), Status: int(f.int64()), ErrorClass: f.str(a, b), Error: f.str(a, b),
		Retried: f.byte()%2 == 1, ServerExtra: f.str(a, b),
	}
	if f.byte()%3 != 0 {
		r.TPOTNs = Ptr(f.float())
	}
	switch c := f.byte(); c % 4 {
	case 0:
	case 1:
		r.ITLNs = []int64{}
	default:
		r.ITLNs = make([]int64, int(c)%40)
		for i := range r.ITLNs {
			r.ITLNs[i] = f.int64()
		}
	}
	if v := f.byte() % 3; v > 0 {
		r.VerifyMismatch = Ptr(v == 2)
	}
	return r
}

func FuzzEncodeRecord(f *testing.F) {
	f.Add([]byte{}, "", "")
	f.Add(bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 200, 255}, 40), "run-1", "conv-7")
	f.Add(bytes.Repeat([]byte{0xff, 0x80, 0x11}, 100), "a\"\\\n\x00é", "\u2028\xff\xe2\x80")
	rng := rand.New(rand.NewPCG(9, 9))
	for range 8 {
		data := make([]byte, 300)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		f.Add(data, randString(rng), randString(rng))
	}
	f.Fuzz(func(t *testing.T, data []byte, a, b string) {
		r := fuzzRecord(data, a, b)
		checkEncode(t, r)
		checkIdempotent(t, r)
	})
}

func TestJSONEncoderRoundTrip(t *testing.T) {
	t.Parallel()
	recs := genRecords(11, 300)
	// Edge values the decoder must read back exactly.
	recs[1].RunID = "run \"x\"\n\t\u2028é🙂<&>"
	recs[2].TPOTNs, recs[3].TPOTNs, recs[4].TPOTNs = Ptr(1e-7), Ptr(math.Copysign(0, -1)), Ptr(1.5e300)
	recs[5].Seq, recs[5].LatencyNs = math.MaxInt64, math.MinInt64
	recs[6].Start = recs[6].Start.In(time.FixedZone("", 5*3600+1800))
	recs[6].End = recs[6].End.In(time.FixedZone("", -7*3600))
	recs[7].ServerExtra, recs[7].VerifyMismatch, recs[7].ReasoningTokens = `{"a":[1,"\u00e9"]}`, Ptr(false), Ptr(int64(0))
	recs[8].PromptTokens, recs[8].ITLNs = nil, nil

	var buf bytes.Buffer
	enc := NewJSONEncoder(&buf)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(buf.Bytes(), []byte("\n")); n != len(recs) {
		t.Fatalf("%d lines for %d records", n, len(recs))
	}
	got := decodeAll(t, NewJSONDecoder(&buf, "x"))
	if d := diffRecords(recs, got); d != "" {
		t.Fatal(d)
	}
}

// flushCounter counts Flush calls and fails writes on demand.
type flushCounter struct {
	bytes.Buffer
	flushes  int
	writeErr error
}

func (w *flushCounter) Write(p []byte) (int, error) {
	if w.writeErr != nil {
		return 0, w.writeErr
	}
	return w.Buffer.Write(p)
}

func (w *flushCounter) Flush() error { w.flushes++; return nil }

func TestJSONEncoderContract(t *testing.T) {
	t.Parallel()
	recs := genRecords(12, 3)
	w := &flushCounter{}
	enc := NewJSONEncoder(w)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			t.Fatal(err)
		}
		if w.flushes != i+1 {
			t.Fatalf("after record %d: %d flushes", i+1, w.flushes)
		}
		if n := bytes.Count(w.Bytes(), []byte("\n")); n != i+1 || !bytes.HasSuffix(w.Bytes(), []byte("\n")) {
			t.Fatalf("after record %d: %d complete lines", i+1, n)
		}
	}

	// A record encoding/json rejects writes nothing and returns its error;
	// the encoder goes on.
	bad := recs[0]
	bad.TPOTNs = Ptr(math.NaN())
	before := w.Len()
	err := enc.Encode(&bad)
	var uve *json.UnsupportedValueError
	if !errors.As(err, &uve) {
		t.Fatalf("NaN: got error %v, want *json.UnsupportedValueError", err)
	}
	if w.Len() != before {
		t.Fatalf("rejected record wrote %q", w.Bytes()[before:])
	}
	bad = recs[0]
	bad.End = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	var me *json.MarshalerError
	if err := enc.Encode(&bad); !errors.As(err, &me) || w.Len() != before {
		t.Fatalf("year 10000: got error %v, want *json.MarshalerError and nothing written", err)
	}
	if err := enc.Encode(&recs[1]); err != nil {
		t.Fatal(err)
	}

	// A write error sticks, as with json.Encoder.
	w.writeErr = errors.New("disk full")
	if err := enc.Encode(&recs[2]); !errors.Is(err, w.writeErr) {
		t.Fatalf("got %v, want the write error", err)
	}
	w.writeErr = nil
	if err := enc.Encode(&recs[2]); err == nil {
		t.Fatal("encoder went on after a write error")
	}
}

// BenchmarkEncodeJSONL compares the JSON encoder with the encoding/json
// one it replaced, writing to a flushed bufio.Writer as mtrun does, for a
// record with 3 and with 100 inter-token gaps.
func BenchmarkEncodeJSONL(b *testing.B) {
	for _, gaps := range []int{3, 100} {
		recs := make([]*Record, 1024)
		for i := range recs {
			recs[i] = benchRecord(i)
			recs[i].ITLNs = recs[i].ITLNs[:gaps]
		}
		for _, tc := range []struct {
			name string
			enc  func(w io.Writer) Encoder
		}{
			{"std", func(w io.Writer) Encoder { return newStdJSONEncoder(bufio.NewWriter(w)) }},
			{"fast", func(w io.Writer) Encoder { return NewJSONEncoder(bufio.NewWriter(w)) }},
		} {
			b.Run(tc.name+"/itl="+strconv.Itoa(gaps), func(b *testing.B) {
				benchEncode(b, tc.enc(io.Discard), recs)
			})
		}
	}
}

// TestAppendRFC3339 compares the time formatter with the time package's
// day by day across century and leap-year boundaries, and at random
// instants with random zones; it must handle all but the first and last
// year and zone offsets of a day or more.
func TestAppendRFC3339(t *testing.T) {
	t.Parallel()
	check := func(tm time.Time) {
		t.Helper()
		want, wantErr := tm.AppendText(nil)
		got, ok := appendRFC3339([]byte("x"), tm)
		if !ok {
			if _, off := tm.Zone(); 2 <= tm.UTC().Year() && tm.UTC().Year() <= 9997 && -24*3600 < off && off < 24*3600 {
				t.Errorf("%v: left to the time package", tm)
			}
			if string(got) != "x" {
				t.Fatalf("%v: rejected but appended %q", tm, got)
			}
			return
		}
		if wantErr != nil || string(got[1:]) != string(want) {
			t.Fatalf("%v (unix %d): got %q, want %q (%v)", tm, tm.Unix(), got[1:], want, wantErr)
		}
	}
	zones := append([]*time.Location{time.FixedZone("", -30), time.FixedZone("", 30), time.FixedZone("", -(24*3600 - 1)),
		time.FixedZone("", 24*3600-1), time.FixedZone("", -24*3600), time.FixedZone("", 14*3600)}, fuzzZones...)
	for _, years := range [][2]int{{0, 3}, {1, 1}, {1599, 1601}, {1899, 1901}, {1969, 1971}, {1999, 2001}, {2099, 2101}, {9997, 9999}} {
		for tm := time.Date(years[0], 1, 1, 0, 0, 0, 0, time.UTC); tm.Year() <= years[1]; tm = tm.Add(24 * time.Hour) {
			for _, d := range []time.Duration{0, 1, 999_999_999, time.Hour*23 + 59*time.Minute + 59*time.Second + 100} {
				check(tm.Add(d))
				check(tm.Add(-d))
			}
			check(tm.In(zones[tm.YearDay()%len(zones)]))
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100_000 {
		sec := -62167219200 - 1e7 + rng.Int64N(253402300800+62167219200+2e7)
		unit := []int64{1, 1e3, 1e6, 1e9}[rng.IntN(4)] // precision, for trailing zeros
		tm := time.Unix(sec, rng.Int64N(1e9)/unit*unit)
		check(tm.In(zones[rng.IntN(len(zones))]))
		check(tm.UTC())
	}
}
