package record

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // named zones for the encoder tests, whatever the host has
	"unicode/utf8"
)

// encodeLine is r's line as JSONEncoder writes it, or its error.
func encodeLine(r *Record) ([]byte, error) {
	var buf bytes.Buffer
	err := NewJSONEncoder(&buf).Encode(r)
	if err != nil && buf.Len() > 0 {
		return buf.Bytes(), errors.New("a record that failed wrote " + buf.String())
	}
	return buf.Bytes(), err
}

// validUTF8 reports whether every string field of r is valid UTF-8 (JSON
// cannot carry other strings: they come back with U+FFFD).
func validUTF8(r *Record) bool {
	for _, f := range Fields() {
		if s, ok := f.Value(r).(string); ok && !utf8.ValidString(s) {
			return false
		}
	}
	return true
}

// timesAsText returns r with every time as RFC 3339 text gives it back:
// a zone offset with seconds loses them (in encoding/json too).
func timesAsText(r *Record) Record {
	c := *r
	for _, f := range Fields() {
		var p *time.Time
		switch f.Kind {
		case KindTime:
			p = at[time.Time](&f, &c)
		case KindTimePtr:
			if p = *at[*time.Time](&f, &c); p != nil {
				p = Ptr(*p)
				*at[*time.Time](&f, &c) = p
			}
		}
		if p != nil {
			b, err := p.MarshalText()
			if err == nil {
				err = p.UnmarshalText(b)
			}
			if err != nil {
				panic(err) // checkEncode calls it only for encodable records
			}
		}
	}
	return c
}

// checkEncode asserts that JSONEncoder writes r as one line that decodes
// to r, or fails (writing nothing) exactly where encoding/json fails: a
// NaN or infinite float, a time outside years 0–9999 or with a zone
// offset of 24 hours or more. It reports whether r was written.
func checkEncode(t *testing.T, r *Record) bool {
	t.Helper()
	_, stdErr := json.Marshal(r)
	line, err := encodeLine(r)
	switch {
	case err != nil && stdErr == nil:
		t.Fatalf("JSONEncoder fails (%v) on a record encoding/json writes: %+v", err, r)
	case err == nil && stdErr != nil:
		t.Fatalf("JSONEncoder wrote %s where encoding/json fails: %v", line, stdErr)
	case err != nil:
		return false
	}
	if bytes.Count(line, []byte("\n")) != 1 || !bytes.HasSuffix(line, []byte("\n")) {
		t.Fatalf("not one line: %q", line)
	}
	var back Record
	if err := unmarshalRecord(line, &back, nil); err != nil {
		t.Fatalf("decode %s: %v", line, err)
	}
	if validUTF8(r) {
		if d := diffRecords([]Record{timesAsText(r)}, []Record{back}); d != "" {
			t.Fatalf("%s\ndecodes to a different record:\n%s", line, d)
		}
	}
	checkIdempotent(t, &back)
	return true
}

// checkIdempotent asserts that a decoded record encodes to a line that
// decodes to the same record.
func checkIdempotent(t *testing.T, r *Record) {
	t.Helper()
	line, err := encodeLine(r)
	if err != nil {
		t.Fatalf("re-encode %+v: %v", r, err)
	}
	var back Record
	if err := unmarshalRecord(line, &back, nil); err != nil {
		t.Fatalf("re-decode %s: %v", line, err)
	}
	if d := diffRecords([]Record{*r}, []Record{back}); d != "" {
		t.Fatalf("%s\nencode∘decode not idempotent:\n%s", line, d)
	}
}

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
		name string
		set  func(r *Record)
		ok   bool // the record can be encoded
	}{
		{"zero record", func(r *Record) { *r = Record{} }, true},
		{"all optional set", func(r *Record) {
			r.ReasoningTokens, r.VerifyMismatch, r.Error, r.ServerExtra = Ptr(int64(7)), Ptr(true), "boom", `{"k":1}`
			r.TTFTContentNs, r.ClientWaitNs = Ptr(int64(3)), Ptr(int64(4))
		}, true},
		{"pointers to zero", func(r *Record) {
			r.TTFTNs, r.TTFTContentNs, r.TPOTNs, r.ReasoningTokens = Ptr(int64(0)), Ptr(int64(0)), Ptr(0.0), Ptr(int64(0))
			r.PromptTokens, r.VerifyMismatch, r.ClientWaitNs = Ptr(int64(0)), Ptr(false), Ptr(int64(0))
		}, true},
		{"nil pointers", func(r *Record) {
			r.FirstToken, r.TTFTNs, r.TPOTNs, r.PromptTokens, r.CompletionTokens, r.CachedTokens = nil, nil, nil, nil, nil, nil
		}, true},
		{"nil itl", func(r *Record) { r.ITLNs = nil }, true},
		{"empty itl", func(r *Record) { r.ITLNs = []int64{} }, true},
		{"one itl", func(r *Record) { r.ITLNs = []int64{-5} }, true},
		{"extreme ints", func(r *Record) {
			r.Seq, r.LatencyNs, r.Shard, r.ITLNs = math.MaxInt64, math.MinInt64, -1, []int64{math.MinInt64, 0, math.MaxInt64}
		}, true},
		{"escapes", func(r *Record) { r.RunID = "a\"b\\c/d\b\f\n\r\t\x00\x01\x1f\x7f<>&'" }, true},
		{"line separators", func(r *Record) { r.Error = "x\u2028y\u2029z\u202a" }, true},
		{"invalid utf-8", func(r *Record) { r.Model = "a\xffb\xe2\x80c\xed\xa0\x80\xc0\xaf" },
			true},
		{"unicode", func(r *Record) { r.ConversationID = "é日本🙂\U0010ffff" }, true},
		{"negative zero", func(r *Record) { r.TPOTNs = Ptr(math.Copysign(0, -1)) }, true},
		{"tiny float", func(r *Record) { r.TPOTNs = Ptr(1e-7) }, true},
		{"float at 1e-6", func(r *Record) { r.TPOTNs = Ptr(1e-6) }, true},
		{"float below 1e-6", func(r *Record) { r.TPOTNs = Ptr(math.Nextafter(1e-6, 0)) }, true},
		{"denormal", func(r *Record) { r.TPOTNs = Ptr(-5e-324) }, true},
		{"huge float", func(r *Record) { r.TPOTNs = Ptr(1e21) }, true},
		{"below 1e21", func(r *Record) { r.TPOTNs = Ptr(math.Nextafter(1e21, 0)) }, true},
		{"max float", func(r *Record) { r.TPOTNs = Ptr(-math.MaxFloat64) }, true},
		{"fraction", func(r *Record) { r.TPOTNs = Ptr(12345.678) }, true},
		{"NaN", func(r *Record) { r.TPOTNs = Ptr(math.NaN()) }, false},
		{"+Inf", func(r *Record) { r.TPOTNs = Ptr(math.Inf(1)) }, false},
		{"-Inf", func(r *Record) { r.TPOTNs = Ptr(math.Inf(-1)) }, false},
		{"nanoseconds", func(r *Record) {
			r.Scheduled, r.Start, r.End = base.Add(1), base.Add(120*time.Millisecond), base.Add(999999999)
		}, true},
		{"fixed zones", func(r *Record) {
			r.Scheduled = base.In(time.FixedZone("IST", 5*3600+1800))
			r.Start = base.In(time.FixedZone("", -8*3600))
			r.End = base.In(time.FixedZone("UTC", 0))
		}, true},
		{"named zones", func(r *Record) {
			r.Scheduled, r.Start, r.End = base.In(ny), base.AddDate(0, 6, 0).In(ny), base.AddDate(-126, 0, 0).In(ams)
		}, true},
		{"offset seconds", func(r *Record) { r.Start = base.In(time.FixedZone("LMT", 1172)) }, true},
		{"offset 23:59", func(r *Record) { r.Start = base.In(time.FixedZone("", -(24*3600 - 60))) }, true},
		{"offset 24h", func(r *Record) { r.Start = base.In(time.FixedZone("", 24*3600)) }, false},
		{"first token offset 24h", func(r *Record) { r.FirstToken = Ptr(base.In(time.FixedZone("", -25*3600))) }, false},
		{"year 0", func(r *Record) { r.End = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC) }, true},
		{"year 9999", func(r *Record) { r.End = time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC) }, true},
		{"year 10000", func(r *Record) { r.End = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, false},
		{"year -1", func(r *Record) { r.Scheduled = time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC) }, false},
		{"monotonic clock", func(r *Record) { r.Start = time.Now(); r.End = r.Start.Add(time.Second) }, true},
		{"long strings", func(r *Record) {
			r.ServerExtra = strings.Repeat(`{"kv_transfer_params":{"a":"\u00e9"}}`, 1000)
			r.Error = strings.Repeat("é\n", 5000)
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := *benchRecord(0)
			r.ITLNs = r.ITLNs[:3]
			tc.set(&r)
			if ok := checkEncode(t, &r); ok != tc.ok {
				t.Fatalf("encoded: %v, want %v", ok, tc.ok)
			}
		})
	}
}

// TestEncodeRecordRandom round-trips random records (FuzzEncodeRecord
// explores further).
func TestEncodeRecordRandom(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	data := make([]byte, 512)
	written := 0
	const n = 3000
	for range n {
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		if checkEncode(t, fuzzRecord(data, randString(rng), randString(rng))) {
			written++
		}
	}
	if written < n/2 {
		t.Errorf("only %d of %d random records could be written", written, n)
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
// Seconds since 1970 of 0000-01-01 and of 10000-01-01 (UTC).
const minRFC3339Sec, maxRFC3339Sec = -62167219200, 253402300800

func fuzzRecord(data []byte, a, b string) *Record {
	f := fuzzBits(data)
	r := &Record{
		RunID: f.str(a, b), Shard: int(f.int64()), Seq: f.int64(), ConversationID: f.str(a, b),
		Turn: int(f.int64()), Attempt: int(f.int64()), Choice: int(f.int64()), Client: int(f.int64()),
		Phase: f.str(a, b), Model: f.str(a, b),
		Scheduled: f.time(), Start: f.time(), FirstToken: f.timePtr(), End: f.time(),
		TTFTNs: f.intPtr(), TTFTContentNs: f.intPtr(),
		LatencyNs: f.int64(), IntendedLatencyNs: f.int64(), LatenessNs: f.int64(), ClientWaitNs: f.intPtr(),
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
		checkEncode(t, fuzzRecord(data, a, b))
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

	// A record that cannot be written writes nothing and returns its error;
	// the encoder goes on.
	bad := recs[0]
	bad.TPOTNs = Ptr(math.NaN())
	before := w.Len()
	if err := enc.Encode(&bad); err == nil {
		t.Fatal("NaN: no error")
	}
	if w.Len() != before {
		t.Fatalf("rejected record wrote %q", w.Bytes()[before:])
	}
	bad = recs[0]
	bad.End = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := enc.Encode(&bad); err == nil || w.Len() != before {
		t.Fatalf("year 10000: got error %v and %d bytes written, want an error and nothing", err, w.Len()-before)
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

// TestOldFilesRead reads the JSONL record files of cmd/mtstats/testdata,
// written by earlier versions (encoding/json, then the hand-written
// encoder), and checks that every line decodes to what encoding/json v1
// makes of it.
func TestOldFilesRead(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob("../../cmd/mtstats/testdata/*.jsonl")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no files: %v", err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var want []Record
		for line := range bytes.Lines(data) {
			if line = bytes.TrimSpace(line); len(line) == 0 {
				continue
			}
			var r Record
			if err := json.Unmarshal(line, &r); err != nil {
				t.Fatalf("%s: encoding/json: %v", p, err)
			}
			want = append(want, r)
		}
		got := decodeAll(t, NewJSONDecoder(bytes.NewReader(data), p))
		if len(want) == 0 {
			t.Fatalf("%s: no records", p)
		}
		if d := diffRecords(want, got); d != "" {
			t.Errorf("%s:\n%s", p, d)
		}
	}
}
