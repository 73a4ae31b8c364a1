package metrics

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sums adds the values of the samples tagged with each canonical name.
func sums(samples []Sample) map[string]float64 {
	m := map[string]float64{}
	for _, s := range samples {
		if s.Canonical != "" && s.Value != nil {
			m[s.Canonical] += *s.Value
		}
	}
	return m
}

func find(samples []Sample, name string, labels map[string]string) *Sample {
	for i := range samples {
		if samples[i].Name == name && LabelKey(samples[i].Labels) == LabelKey(labels) {
			return &samples[i]
		}
	}
	return nil
}

func TestParseFixtures(t *testing.T) {
	vllmModel := "Qwen/Qwen3-8B"
	sgl := map[string]string{"model_name": "meta-llama/Llama-3.1-8B-Instruct"}
	tests := []struct {
		file      string
		samples   int
		engine    string
		canonical map[string]float64
		check     func(t *testing.T, ss []Sample)
	}{
		{
			file: "vllm.prom", samples: 68, engine: "vllm",
			canonical: map[string]float64{
				Running: 5, Waiting: 1, KVUsage: 0.75, PrefixQueries: 5120, PrefixHits: 3584,
				ExternalPrefixQuery: 512, ExternalPrefixHits: 256, Preemptions: 2,
				PromptTokens: 6200, GenerationTokens: 1800,
			},
			check: func(t *testing.T, ss []Sample) {
				// The deprecated names are kept raw, not counted twice.
				for _, n := range []string{"vllm:gpu_cache_usage_perc", "vllm:gpu_prefix_cache_hits_total"} {
					s := find(ss, n, map[string]string{"engine": "0", "model_name": vllmModel})
					if s == nil || s.Canonical != "" {
						t.Errorf("%s: %+v, want kept raw without a canonical name", n, s)
					}
				}
				b := find(ss, "vllm:time_to_first_token_seconds_bucket", map[string]string{"engine": "1", "le": "+Inf", "model_name": vllmModel})
				if b == nil || *b.Value != 9 || b.Type != "histogram" {
					t.Errorf("+Inf bucket: %+v", b)
				}
				if s := find(ss, "python_gc_objects_collected_total", map[string]string{"generation": "0"}); s == nil || s.Engine != "" {
					t.Errorf("raw series: %+v", s)
				}
			},
		},
		{
			file: "sglang.prom", samples: 91, engine: "sglang",
			canonical: map[string]float64{Running: 162, Waiting: 2826, KVUsage: 0.28, PromptTokens: 8.128902e+06, GenerationTokens: 7.557572e+06},
			check: func(t *testing.T, ss []Sample) {
				s := find(ss, "sglang:time_per_output_token_seconds_count", sgl)
				if s == nil || *s.Value != 7.400757e+06 {
					t.Errorf("count: %+v", s)
				}
				s = find(ss, "sglang:func_latency_seconds_bucket", map[string]string{"le": "0.07500000000000001", "name": "generate_request"})
				if s == nil || *s.Value != 14006 {
					t.Errorf("bucket with a long bound: %+v", s)
				}
			},
		},
		{
			file: "llamacpp.prom", samples: 10, engine: "llamacpp",
			canonical: map[string]float64{Running: 0, Waiting: 0, KVUsage: 0.491063, PromptTokens: 6886, GenerationTokens: 3469},
			check: func(t *testing.T, ss []Sample) {
				s := find(ss, "llamacpp:prompt_seconds_total", map[string]string{})
				if s == nil || *s.Value != 2903.63 || s.Type != "counter" || s.Canonical != "" {
					t.Errorf("raw counter: %+v", s)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			ss, err := Parse(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if len(ss) != tt.samples {
				t.Errorf("%d samples, want %d", len(ss), tt.samples)
			}
			got := sums(ss)
			for k, want := range tt.canonical {
				if g, ok := got[k]; !ok || g != want {
					t.Errorf("%s = %v (present %v), want %v", k, g, ok, want)
				}
			}
			for k := range got {
				if _, ok := tt.canonical[k]; !ok {
					t.Errorf("unexpected canonical %s = %v", k, got[k])
				}
			}
			for _, s := range ss {
				if s.Labels == nil {
					t.Fatalf("%s: nil labels", s.Name)
				}
				if strings.HasPrefix(s.Name, tt.engine) && s.Engine != tt.engine {
					t.Errorf("%s: engine %q", s.Name, s.Engine)
				}
			}
			tt.check(t, ss)
		})
	}
}

func TestParseSpecialValues(t *testing.T) {
	in := "# TYPE x gauge\nx{a=\"1\"} NaN\nx{a=\"2\"} +Inf\n# TYPE s summary\ns{quantile=\"0.5\"} 1\ns_sum 3\ns_count 2\nu 7\n"
	ss, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ name, labels, nonfinite, typ string }{
		{"s", `quantile="0.5",`, "", "summary"},
		{"s_count", "", "", "summary"},
		{"s_sum", "", "", "summary"},
		{"u", "", "", "untyped"},
		{"x", `a="1",`, "NaN", "gauge"},
		{"x", `a="2",`, "+Inf", "gauge"},
	}
	if len(ss) != len(want) {
		t.Fatalf("%d samples: %+v", len(ss), ss)
	}
	for i, w := range want {
		s := ss[i]
		if s.Name != w.name || LabelKey(s.Labels) != w.labels || s.NonFinite != w.nonfinite || s.Type != w.typ || (s.Value == nil) != (w.nonfinite != "") {
			t.Errorf("%d: %+v, want %+v", i, s, w)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{
		"<html><body>not found</body></html>\n",
		"x{a=\"1\" 1\n",
		"# TYPE x counter\nx -1 2 3 4\n",
		"{\"object\":\"error\"}\n",
	} {
		if ss, err := Parse(strings.NewReader(in)); err == nil {
			t.Errorf("%q: no error, %d samples", in, len(ss))
		}
	}
}

func TestDefaultURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://h:8000":      "http://h:8000/metrics",
		"http://h:8000/":     "http://h:8000/metrics",
		"http://h:8000/v1":   "http://h:8000/metrics",
		"http://h:8000/v1/":  "http://h:8000/metrics",
		"https://h/api/v1":   "https://h/api/metrics",
		" http://u:p@h/v1 ":  "http://u:p@h/metrics",
		"http://h:8000/v1v1": "http://h:8000/v1v1/metrics",
	} {
		if got := DefaultURL(in); got != want {
			t.Errorf("DefaultURL(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Display("http://user:secret@h:1/metrics"); got != "http://h:1/metrics" {
		t.Errorf("Display: %q", got)
	}
}

// FuzzParse: any input parses or fails cleanly; what parses has labels,
// a known type and a value or a non-finite marker, and survives the
// series file round trip.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"vllm.prom", "sglang.prom", "llamacpp.prom"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		// The start of each fixture: whole ones make the fuzzer's
		// minimisation of new inputs crawl.
		f.Add(b[:min(len(b), 1500)])
	}
	f.Add([]byte("# TYPE x histogram\nx_bucket{le=\"1\"} 1\nx_bucket{le=\"+Inf\"} 2\nx_sum 3\nx_count 2\n"))
	f.Add([]byte("x NaN\ny -Inf 1700000000000\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		ss, err := Parse(bytes.NewReader(in))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		w := NewWriter(&buf)
		for i := range ss {
			ss[i].Time = fixedTime
		}
		if err := w.Write(ss); err != nil {
			t.Fatal(err)
		}
		r := NewReader(&buf, "fuzz")
		n := 0
		for r.Scan() {
			n++
		}
		if r.Err() != nil || n != len(ss) {
			t.Fatalf("round trip: %d of %d samples, %v", n, len(ss), r.Err())
		}
	})
}
