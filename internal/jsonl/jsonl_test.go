package jsonl

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestLines(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 200000)
	in := "a\r\n\n  \nb\n" + long + "\nlast"
	l := NewLines(iotest.HalfReader(strings.NewReader(in)))
	type line struct {
		s string
		n int
	}
	var got []line
	for {
		b, n, err := l.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, line{string(b), n})
	}
	want := []line{{"a", 1}, {"b", 4}, {long, 5}, {"last", 6}}
	if len(got) != len(want) {
		t.Fatalf("got %d lines, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d = %.20q@%d, want %.20q@%d", i, got[i].s, got[i].n, want[i].s, want[i].n)
		}
	}
}

func TestFieldError(t *testing.T) {
	t.Parallel()
	var v struct {
		A struct {
			B int `json:"b"`
		} `json:"a"`
	}
	for _, tc := range []struct{ in, want string }{
		{`{"a":{"b":"x"}}`, "a.b: expected int, got JSON string"},
		{`[1]`, "(top level): expected struct"},
		{`{"a":`, "invalid JSON at byte 5: unexpected end of JSON input"},
		{`{"a":}`, "invalid JSON at byte 6"},
	} {
		err := FieldError(json.Unmarshal([]byte(tc.in), &v))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want prefix %q", tc.in, err, tc.want)
		}
	}
	e := &Error{File: "f", Line: 3, Err: errors.New("bad")}
	if e.Error() != "f:3: bad" {
		t.Errorf("Error() = %q", e.Error())
	}
}
