package metrics

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

var fixedTime = time.Date(2026, 11, 23, 22, 0, 0, 0, time.UTC)

func TestReaderErrors(t *testing.T) {
	good := `{"run_id":"r","time":"2026-11-23T22:00:00Z","replica":0,"url":"u","name":"x","type":"gauge","labels":{},"value":1}`
	tests := []struct {
		in    string
		field string
		line  int
	}{
		{"{", "", 1},
		{good + "\n" + `{"time":"2026-11-23T22:00:00Z","name":"x","type":"gauge","value":"1"}`, "value", 2},
		{`{"name":"x","type":"gauge","value":1}`, "time", 1},
		{`{"time":"2026-11-23T22:00:00Z","type":"gauge","value":1}`, "name", 1},
		{`{"time":"2026-11-23T22:00:00Z","name":"x","type":"gauge"}`, "value", 1},
		{`{"time":"2026-11-23T22:00:00Z","name":"x","type":"gauge","value":1,"nonfinite":"NaN"}`, "nonfinite", 1},
		{`{"time":"2026-11-23T22:00:00Z","name":"x","type":"gauge","nonfinite":"inf"}`, "nonfinite", 1},
		{`{"time":"2026-11-23T22:00:00Z","name":"x","type":"counterz","value":1}`, "type", 1},
		{`{"time":"2026-11-23T22:00:00Z","name":"x","type":"gauge","value":1,"replica":-1}`, "replica", 1},
		{"\n\n" + `{"time":"yesterday","name":"x","type":"gauge","value":1}`, "", 3},
	}
	for _, tt := range tests {
		r := NewReader(strings.NewReader(tt.in), "s.jsonl")
		for r.Scan() {
		}
		var se *SyntaxError
		if !errors.As(r.Err(), &se) || se.Field != tt.field || se.Line != tt.line || se.File != "s.jsonl" {
			t.Errorf("%q: %v, want s.jsonl:%d: %s", tt.in, r.Err(), tt.line, tt.field)
		}
	}
	r := NewReader(strings.NewReader(good+"\n\n"+good), "s.jsonl")
	n := 0
	for r.Scan() {
		n++
	}
	if n != 2 || r.Err() != nil {
		t.Errorf("good lines: %d, %v", n, r.Err())
	}
}

func TestWriterRoundTrip(t *testing.T) {
	v := 2.5
	in := []Sample{
		{RunID: "r", Time: fixedTime, Replica: 1, URL: "http://h/metrics", Name: "vllm:num_requests_running", Type: "gauge",
			Labels: map[string]string{"engine": "0"}, Value: &v, Canonical: Running, Engine: "vllm"},
		{RunID: "r", Time: fixedTime, Replica: 1, URL: "http://h/metrics", Name: "x", Type: "gauge", Labels: map[string]string{}, NonFinite: "NaN"},
	}
	var buf bytes.Buffer
	if err := NewWriter(&buf).Write(in); err != nil {
		t.Fatal(err)
	}
	r := NewReader(&buf, "b")
	var out []Sample
	for r.Scan() {
		out = append(out, r.Sample())
	}
	if r.Err() != nil || len(out) != 2 {
		t.Fatalf("%v %d", r.Err(), len(out))
	}
	if *out[0].Value != 2.5 || out[0].Canonical != Running || !out[0].Time.Equal(fixedTime) || out[0].Labels["engine"] != "0" || out[1].NonFinite != "NaN" || out[1].Value != nil {
		t.Errorf("%+v", out)
	}
}

// FuzzReader: any line is a sample or a SyntaxError naming the line.
func FuzzReader(f *testing.F) {
	f.Add([]byte(`{"run_id":"r","time":"2026-11-23T22:00:00Z","replica":0,"url":"u","name":"x","type":"gauge","labels":{},"value":1}`))
	f.Add([]byte(`{"time":"2026-11-23T22:00:00Z","name":"up","type":"gauge","labels":{},"value":0,"error":"HTTP 500"}` + "\n{"))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := NewReader(bytes.NewReader(in), "f")
		for r.Scan() {
			s := r.Sample()
			if s.Name == "" || s.Time.IsZero() {
				t.Fatalf("invalid sample accepted: %+v", s)
			}
		}
		var se *SyntaxError
		if err := r.Err(); err != nil && (!errors.As(err, &se) || se.Line < 1) {
			t.Fatalf("error without a line: %v", err)
		}
	})
}
