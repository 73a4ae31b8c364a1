package llmd_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/mtkit/mtkit/internal/llmd"
	"github.com/mtkit/mtkit/internal/llmd/llmdtest"
)

// TestExampleValidates: llm-d-benchmark's own example report passes the
// schema (the schema and the library agree on a real report).
func TestExampleValidates(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/br_v0_2_example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(jsonable(doc))
	if err != nil {
		t.Fatal(err)
	}
	if err := llmdtest.Validate(b); err != nil {
		t.Fatal(err)
	}
}

// jsonable turns what YAML decodes into what JSON encodes: timestamps
// as their text, .inf (concurrency) as the largest float.
func jsonable(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = jsonable(x)
		}
	case []any:
		for i, x := range v {
			v[i] = jsonable(x)
		}
	case time.Time:
		return v.Format(time.RFC3339)
	case float64:
		if math.IsInf(v, 1) {
			return math.MaxFloat64
		}
	}
	return v
}

func sample() *llmd.Report {
	q := func(p float64) float64 { return 100 + 10*p }
	return &llmd.Report{
		Version: llmd.Version,
		Run:     llmd.Run{UID: "r1", Time: &llmd.RunTime{Start: "2026-01-02T03:04:05Z", End: "2026-01-02T03:04:10Z", Duration: "PT5S"}},
		Scenario: &llmd.Scenario{Load: &llmd.Load{
			Metadata: llmd.LoadMetadata{SchemaVersion: "0.0.1"},
			Standardized: llmd.LoadStandardized{
				Tool: "mtkit", ToolVersion: "dev", Source: llmd.SourceSampled, Stage: 1,
				InputSeqLen: llmd.SequenceLength{Distribution: llmd.DistOther, Value: 150},
				MultiTurn:   &llmd.MultiTurn{Enabled: true},
			},
			Native: llmd.LoadNative{Config: map[string]any{"load": map[string]any{"type": "constant"}}},
		}},
		Results: llmd.Results{
			RequestPerformance: &llmd.RequestPerformance{Aggregate: &llmd.Aggregate{
				Requests: &llmd.Requests{Total: 3, InputLength: llmd.NewStatistics(llmd.UnitCount, 150, 1, 149, 151, q)},
				Latency: &llmd.Latency{
					TimeToFirstToken:  llmd.NewStatistics(llmd.UnitMs, 12, math.NaN(), 12, 12, q),
					InterTokenLatency: llmd.NewStatistics(llmd.UnitMsPerToken, 2, 0.1, 1, 3, q),
				},
				Throughput: &llmd.Throughput{RequestRate: llmd.Rate(llmd.UnitQueriesPerS, 0.6)},
			}},
			Observability: map[string]any{"mtkit": map[string]any{"cache_hit_rate": 0.5}},
		},
	}
}

func TestWriteValidates(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := llmd.Write(&b, []*llmd.Report{sample()}); err != nil {
		t.Fatal(err)
	}
	if err := llmdtest.Validate(b.Bytes()); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if n := strings.Count(b.String(), `"stddev"`); n != 2 {
		t.Errorf("%d standard deviations written, want 2 (the TTFT's, of one sample, is undefined):\n%s", n, b.String())
	}
	// Two reports: a YAML stream of two documents.
	b.Reset()
	if err := llmd.Write(&b, []*llmd.Report{sample(), sample()}); err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(b.String(), "---\n")
	if len(docs) != 3 || docs[0] != "" {
		t.Fatalf("%d documents, want 2 after ---", len(docs)-1)
	}
	for _, d := range docs[1:] {
		if err := llmdtest.Validate([]byte(d)); err != nil {
			t.Error(err)
		}
	}
	if llmd.NewStatistics(llmd.UnitMs, math.NaN(), 1, 1, 1, nil) != nil {
		t.Error("statistics without a mean were made")
	}
}

// TestInvalidRejected: the validation can fail.
func TestInvalidRejected(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		edit func(r *llmd.Report)
	}{
		{"no uid", func(r *llmd.Report) { r.Run.UID = "" }},
		{"bad units", func(r *llmd.Report) {
			r.Results.RequestPerformance.Aggregate.Latency.TimeToFirstToken.Units = "ms/token"
		}},
		{"unknown unit", func(r *llmd.Report) { r.Results.RequestPerformance.Aggregate.Requests.InputLength.Units = "tokens" }},
		{"bad source", func(r *llmd.Report) { r.Scenario.Load.Standardized.Source = "synthetic" }},
		{"negative total", func(r *llmd.Report) { r.Results.RequestPerformance.Aggregate.Requests.Total = -1 }},
	} {
		r := sample()
		tc.edit(r)
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if tc.name == "no uid" {
			b = bytes.Replace(b, []byte(`"uid":"",`), nil, 1)
		}
		if err := llmdtest.Validate(b); err == nil {
			t.Errorf("%s: validated", tc.name)
		}
	}
	// An unknown field where the schema forbids extras.
	b, _ := json.Marshal(sample())
	b = bytes.Replace(b, []byte(`"uid":"r1"`), []byte(`"uid":"r1","extra":1`), 1)
	if err := llmdtest.Validate(b); err == nil {
		t.Error("an unknown run field validated")
	}
}
