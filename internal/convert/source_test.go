package convert

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/mtkit/mtkit/internal/jsonl"
)

type piece struct {
	text string
	line int
}

// readAll drains a source, returning the records and the final error (nil
// at a clean end).
func readAll(r io.Reader) ([]piece, bool, error) {
	src := newSource(r, "in.json")
	var out []piece
	for {
		b, line, err := src.next()
		if errors.Is(err, io.EOF) {
			return out, src.isList, nil
		}
		if err != nil {
			return out, src.isList, err
		}
		out = append(out, piece{string(b), line})
	}
}

func TestSource(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		in      string
		want    []piece
		list    bool
		wantErr string
	}{
		{name: "jsonl", in: "{\"a\":1}\n\n  {\"b\":2}  \n{\"c\":3}", want: []piece{{`{"a":1}`, 1}, {`{"b":2}`, 3}, {`{"c":3}`, 4}}},
		{name: "empty", in: "", want: nil},
		{name: "blank", in: " \n\t\n", want: nil},
		{name: "array one line", in: `[{"a":"x,]}"},{"b":[1,2]}]`, list: true, want: []piece{{`{"a":"x,]}"}`, 1}, {`{"b":[1,2]}`, 1}}},
		{name: "array indented", in: "\n[\n  {\n    \"a\": \"q\\\"}\"\n  },\n  {\"b\": 2}\n]\n", list: true,
			want: []piece{{"{\n    \"a\": \"q\\\"}\"\n  }", 3}, {`{"b": 2}`, 6}}},
		{name: "empty array", in: " [ ] ", list: true, want: nil},
		{name: "scalars", in: `[1, "a", null]`, list: true, want: []piece{{"1", 1}, {`"a"`, 1}, {"null", 1}}},
		{name: "truncated", in: "[\n{\"a\":1},\n{\"b\":", list: true, want: []piece{{`{"a":1}`, 2}}, wantErr: "in.json:3: unexpected end of input"},
		{name: "missing comma", in: `[{"a":1} {"b":2}]`, list: true, want: []piece{{`{"a":1}`, 1}}, wantErr: "in.json:1: invalid JSON: expected ',' or ']'"},
		{name: "trailing garbage", in: `[{"a":1}] x`, list: true, want: []piece{{`{"a":1}`, 1}}, wantErr: "unexpected 'x' after the JSON array"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// One byte at a time exercises every buffer boundary.
			for _, r := range []io.Reader{strings.NewReader(tc.in), iotest.OneByteReader(strings.NewReader(tc.in))} {
				got, list, err := readAll(r)
				if list != tc.list {
					t.Errorf("list = %v, want %v", list, tc.list)
				}
				if len(got) != len(tc.want) {
					t.Fatalf("got %+v, want %+v", got, tc.want)
				}
				for i := range got {
					if got[i] != tc.want[i] {
						t.Errorf("record %d = %+v, want %+v", i, got[i], tc.want[i])
					}
				}
				switch {
				case tc.wantErr == "" && err != nil:
					t.Errorf("err = %v", err)
				case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
					t.Errorf("err = %v, want %q", err, tc.wantErr)
				case tc.wantErr != "":
					var je *jsonl.Error
					if !errors.As(err, &je) {
						t.Errorf("err %v is not a located *jsonl.Error", err)
					}
				}
			}
		})
	}
}

func TestSourceReadError(t *testing.T) {
	t.Parallel()
	boom := errors.New("disk on fire")
	for _, in := range []string{`[{"a":1},{"b"`, `{"a":1}` + "\n" + `{"b"`} {
		_, _, err := readAll(io.MultiReader(strings.NewReader(in), iotest.ErrReader(boom)))
		var je *jsonl.Error
		if !errors.Is(err, boom) || errors.As(err, &je) {
			t.Errorf("%q: err = %v, want the read error, not a record error", in, err)
		}
	}
}

// FuzzArraySplitter checks the array splitter against encoding/json: a
// valid JSON array splits into exactly its elements; a clean split whose
// elements are all valid JSON means the array was valid.
func FuzzArraySplitter(f *testing.F) {
	for _, s := range []string{`[]`, `[{"a":"]"},{"b":"\\\""}]`, "[\n 1,\n \"x\",\n [2]\n]", `[{"a":1}`, `[1 2]`, `[{"a":"\`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if i := bytes.IndexFunc(data, func(r rune) bool { return !strings.ContainsRune(" \t\r\n", r) }); i < 0 || data[i] != '[' {
			return
		}
		got, _, err := readAll(iotest.HalfReader(bytes.NewReader(data)))
		var want []json.RawMessage
		if jerr := json.Unmarshal(data, &want); jerr == nil {
			if err != nil {
				t.Fatalf("valid array %q: %v", data, err)
			}
			if len(got) != len(want) {
				t.Fatalf("%q: %d elements, want %d", data, len(got), len(want))
			}
			for i := range got {
				var a, b bytes.Buffer
				if cerr := json.Compact(&a, []byte(got[i].text)); cerr != nil {
					t.Fatalf("element %d %q: %v", i, got[i].text, cerr)
				}
				json.Compact(&b, want[i])
				if a.String() != b.String() {
					t.Errorf("element %d = %s, want %s", i, a.String(), b.String())
				}
			}
			return
		}
		if err != nil {
			return
		}
		for _, p := range got {
			if !json.Valid([]byte(p.text)) {
				return
			}
		}
		t.Fatalf("invalid array %q split cleanly into valid elements %+v", data, got)
	})
}
