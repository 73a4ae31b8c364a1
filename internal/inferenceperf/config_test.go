package inferenceperf

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/tokenize"
)

func readConfig(t *testing.T, name string) *Config {
	t.Helper()
	path := filepath.Join("testdata", name)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(path, data)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestExamples: inference-perf's own shared-prefix examples parse, with
// their values and inference-perf's defaults.
func TestExamples(t *testing.T) {
	t.Parallel()
	c := readConfig(t, "vllm-config-shared-prefix-multi-turn.yml")
	want := Load{Interval: time.Second, NumWorkers: 2, WorkerMaxConcurrency: 10, Stages: []Stage{{Rate: 20, Duration: 5 * time.Second}}}
	if c.Load.Poisson || c.Load.Interval != want.Interval || c.Load.NumWorkers != 2 || c.Load.WorkerMaxConcurrency != 10 ||
		len(c.Load.Stages) != 1 || c.Load.Stages[0] != want.Stages[0] {
		t.Errorf("load = %+v, want %+v", c.Load, want)
	}
	if c.API.Chat || c.API.Streaming {
		t.Errorf("api = %+v, want completion without streaming", c.API)
	}
	if s := c.Server; s.BaseURL != "http://0.0.0.0:8000" || s.ModelName != "HuggingFaceTB/SmolLM2-135M-Instruct" || !s.IgnoreEOS || s.Type != "vllm" {
		t.Errorf("server = %+v", s)
	}
	d := c.Data
	if d.Groups != 2 || d.UsersPerGroup != 10 || d.SystemPromptLen.Fixed != 100 || d.QuestionLen.Fixed != 50 || d.OutLen.Fixed != 50 || !d.MultiTurn {
		t.Errorf("data = %+v", d)
	}
	if c.Tokenizer != "HuggingFaceTB/SmolLM2-135M-Instruct" || c.MetricsInterval != 15*time.Second {
		t.Errorf("tokenizer %q, metrics interval %s", c.Tokenizer, c.MetricsInterval)
	}
	if len(c.Notes) != 2 || !strings.Contains(c.Notes[0], "multi-turn.yml:29: metrics.prometheus.url") || !strings.Contains(c.Notes[1], "multi-turn.yml:31: report:") {
		t.Errorf("notes = %q; want the Prometheus URL and the report section, with their lines", c.Notes)
	}

	for _, name := range []string{"vllm-config-shared-prefix.yml", "sglang-config-shared-prefix.yml"} {
		c := readConfig(t, name)
		if c.Load.Interval != 15*time.Second || len(c.Load.Stages) != 2 || c.Data.Groups != 10 || c.Data.MultiTurn {
			t.Errorf("%s: %+v", name, c)
		}
	}
	c = readConfig(t, "vllm-config-shared-prefix-distributions.yml")
	if q := c.Data.QuestionLen.Dist; q == nil || q.Type != "skew_normal" || q.Mean != 200 || q.Skew != 2.5 || q.Max != 2000 {
		t.Errorf("question_len = %+v", q)
	}
	if o := c.Data.OutLen.Dist; o == nil || o.Type != "lognormal" || o.Min != 1 || o.Max != 4096 || *c.Data.Seed != 42 {
		t.Errorf("output_len = %+v", o)
	}
}

// TestErrors: every refused or unknown key, and every bad value, is an
// error naming the file, the line and the key.
func TestErrors(t *testing.T) {
	t.Parallel()
	base := "load:\n  stages:\n  - rate: 1\n    duration: 2\ndata:\n  type: shared_prefix\n  shared_prefix:\n    num_groups: 2\n"
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"unknown top key", base + "lod: 1\n", "f.yml:9: lod: not a key of inference-perf's config"},
		{"unknown nested key", base + "    question_lenn: 3\n", "f.yml:9: data.shared_prefix.question_lenn: not a key"},
		{"sweep percentile", strings.Replace(base, "load:\n", "load:\n  sweep:\n    type: linear\n    saturation_percentile: 101\n", 1), "f.yml:4: load.sweep.saturation_percentile: 101: want a percentile"},
		{"sweep type", strings.Replace(base, "load:\n", "load:\n  sweep:\n    type: log\n", 1), `f.yml:3: load.sweep.type: "log": want one of linear, geometric`},
		{"refused data type", strings.Replace(base, "type: shared_prefix", "type: shareGPT", 1), `f.yml:6: data.type: "shareGPT": not supported by mtrun`},
		{"concurrent", strings.Replace(base, "load:\n", "load:\n  type: concurrent\n", 1), "f.yml:2: load.type: concurrent: not supported"},
		{"stage key", strings.Replace(base, "duration: 2", "duration: 2\n    num_requests: 4", 1), "f.yml:5: load.stages[0].num_requests: not supported by mtrun"},
		{"stage without duration", strings.Replace(base, "    duration: 2\n", "", 1), "f.yml:3: load.stages[0]: want both rate and duration"},
		{"zero rate", strings.Replace(base, "rate: 1", "rate: 0", 1), "f.yml:3: load.stages[0].rate: 0: want a rate above 0"},
		{"fractional duration", strings.Replace(base, "duration: 2", "duration: 2.5", 1), `load.stages[0].duration: "2.5": want a whole number`},
		{"multimodal", base + "    multimodal: {}\n", "f.yml:9: data.shared_prefix.multimodal: not supported by mtrun: multimodal"},
		{"cert", base + "server:\n  base_url: http://x\n  cert_path: /c\n", "f.yml:11: server.cert_path: not supported"},
		{"no base_url", base + "server:\n  model_name: m\n", "f.yml:9: server.base_url: missing"},
		{"circuit breakers", base + "circuit_breakers:\n- name: x\n", "f.yml:9: circuit_breakers: not supported"},
		{"no stages", "data:\n  type: shared_prefix\n  shared_prefix: {}\n", "load.stages: missing"},
		{"no data", "load:\n  stages:\n  - {rate: 1, duration: 1}\n", "f.yml: data: missing"},
		{"no shared_prefix", "load:\n  stages:\n  - {rate: 1, duration: 1}\ndata:\n  type: shared_prefix\n", "f.yml:4: data.shared_prefix: missing"},
		{"distribution key", base + "    question_len: {mean: 3, avg: 4}\n", "f.yml:9: data.shared_prefix.question_len.avg: not a key of inference-perf's distributions"},
		{"distribution min max", base + "    question_len: {min: 5, max: 4}\n", "data.shared_prefix.question_len: min 5 is above max 4"},
		{"variance and std_dev", base + "    output_len: {variance: 4}\n", "give std_dev or variance, not both"},
		{"both distributions", base + "    question_len: {mean: 3}\n    question_distribution: {mean: 3}\n", "f.yml:10: data.shared_prefix.question_distribution: give a distribution"},
		{"bad bool", base + "    enable_multi_turn_chat: maybe\n", `f.yml:9: data.shared_prefix.enable_multi_turn_chat: "maybe": want true or false`},
		{"anthropic", base + "api:\n  type: anthropic_messages\n", "f.yml:10: api.type: anthropic_messages: not supported"},
		{"not a mapping", "- 1\n", "f.yml:1: want a mapping"},
		{"empty", "", "f.yml: empty"},
		{"bad yaml", "load: [\n", "f.yml: yaml:"},
		{"google managed", base + "metrics:\n  type: prometheus\n  prometheus:\n    google_managed: true\n", "f.yml:12: metrics.prometheus.google_managed: not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse("f.yml", []byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestAccepted: values that ask for nothing mtrun lacks pass, and older
// names mean what the new ones do.
func TestAccepted(t *testing.T) {
	t.Parallel()
	c, err := Parse("f.yml", []byte(`load:
  type: poisson
  interval: 0
  circuit_breakers: []
  base_seed: 5
  request_timeout: 2.5
  stages: [{rate: 0.5, duration: 4}]
metrics:
  type: default
  prometheus: {google_managed: false}
data:
  type: shared_prefix
  shared_prefix:
    num_groups: 3
    num_prompts_per_group: 4
    group_as_user_session: true
    question_distribution: {type: uniform, min: 1, max: 3}
    output_len: ~
api:
  type: chat
  streaming: true
  headers: {X-A: "1"}
  session_id_header_key: x-session
`))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Load.Poisson || c.Load.Interval != 0 || *c.Load.BaseSeed != 5 || c.Load.RequestTimeout != 2500*time.Millisecond {
		t.Errorf("load = %+v", c.Load)
	}
	if c.Data.Groups != 3 || c.Data.UsersPerGroup != 4 || !c.Data.MultiTurn || c.Data.QuestionLen.Dist == nil || c.Data.OutLen.Fixed != 50 {
		t.Errorf("data = %+v", c.Data)
	}
	if !c.API.Chat || !c.API.Streaming || c.API.Headers[0] != [2]string{"X-A", "1"} || c.API.SessionIDHeader != "x-session" {
		t.Errorf("api = %+v", c.API)
	}
}

// TestKeysDocumented: docs/inference-perf.md names every key.
func TestKeysDocumented(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/inference-perf.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range Keys {
		if !strings.Contains(string(doc), "`"+k.Path+"`") {
			t.Errorf("docs/inference-perf.md does not name `%s`", k.Path)
		}
	}
}

func TestDetect(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		head string
		want bool
	}{
		{"load:\n  type: constant\n", true},
		{"# c\ndata:\n  type: shared_prefix\nserver: {}\n", true},
		{"api:\n  type: chat\n", false},
		{"load: 1\nfoo: 2\n", false},
		{`{"load": {}, "data": {}}`, true},
		{`{"num_conversations": 3, "prompt_input": {}}`, false},
		{"load:\n  stages:\n  - rate: [1,\n", true}, // cut short
	} {
		if got := Detect([]byte(tc.head)); got != tc.want {
			t.Errorf("Detect(%q) = %t, want %t", tc.head, got, tc.want)
		}
	}
}

// TestPlanMultiTurn: the multi-turn example plans groups × users sessions,
// each with its group's system prompt and its own question every round.
func TestPlanMultiTurn(t *testing.T) {
	t.Parallel()
	c := readConfig(t, "vllm-config-shared-prefix-multi-turn.yml")
	tok, err := tokenize.Load(tokenize.Default)
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Plan(tok, tokenize.Default, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sessions) != 20 || p.Users != 20 || p.MaxInFlight != 0 {
		t.Fatalf("%d sessions, %d users, cap %d; want 20 sessions, no cap (2 workers × 10)", len(p.Sessions), p.Users, p.MaxInFlight)
	}
	systems := map[string]int{}
	requests := 0
	for _, s := range p.Sessions {
		m := s.Messages
		if m[0].Role != conv.RoleSystem || tok.Count(m[0].Content) != 100 {
			t.Fatalf("%s: first message %s of %d tokens; want the 100-token system prompt", s.ID, m[0].Role, tok.Count(m[0].Content))
		}
		systems[m[0].Content]++
		if err := s.Validate(); err != nil {
			t.Fatalf("%s: %v", s.ID, err)
		}
		for i := 1; i < len(m); i += 2 {
			if m[i].Content != m[1].Content || tok.Count(m[i].Content) != 50 || m[i+1].OutputTokens != 50 {
				t.Fatalf("%s: round %d: question of %d tokens, output %d; want its 50-token question again and 50 out", s.ID, i/2, tok.Count(m[i].Content), m[i+1].OutputTokens)
			}
			requests++
		}
	}
	if len(systems) != 2 || requests != 100 {
		t.Errorf("%d system prompts, %d requests; want 2 groups (10 users each) and 20/s × 5 s", len(systems), requests)
	}
	for s, n := range systems {
		if n != 10 {
			t.Errorf("a system prompt has %d users, want 10 (%.20q)", n, s)
		}
	}
}

func TestPlanSingleTurn(t *testing.T) {
	t.Parallel()
	c := readConfig(t, "vllm-config-shared-prefix-distributions.yml")
	tok, err := tokenize.Load(tokenize.Default)
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Plan(tok, tokenize.Default, 9)
	if err != nil {
		t.Fatal(err)
	}
	// 1/s × 30 s, then 2/s × 30 s: one session a request.
	if len(p.Sessions) != 90 || p.TextSeed != 42 || p.ArrivalSeed != 9 {
		t.Fatalf("%d sessions, seeds %d %d; want 90, the file's 42 for the text and 9 for arrivals", len(p.Sessions), p.TextSeed, p.ArrivalSeed)
	}
	for _, s := range p.Sessions {
		if len(s.Messages) != 3 {
			t.Fatalf("%s: %d messages, want system, user, assistant", s.ID, len(s.Messages))
		}
		q, o := tok.Count(s.Messages[1].Content), s.Messages[2].OutputTokens
		if q < 10 || q > 2000 || o < 1 || o > 4096 {
			t.Errorf("%s: question %d, output %d tokens: outside the distributions' bounds", s.ID, q, o)
		}
	}
}

// TestDistributionSample: each type's draws have the mean asked for and
// stay in bounds.
func TestDistributionSample(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		d        Distribution
		wantMean float64
	}{
		{Distribution{Type: "fixed", Mean: 42, Min: 0, Max: 10}, 42}, // fixed ignores the bounds, as in inference-perf
		{Distribution{Type: "normal", Mean: 500, StdDev: 50, Min: 0, Max: 1000}, 500},
		{Distribution{Type: "lognormal", Mean: 150, StdDev: 60, Min: 1, Max: 4096}, 150},
		{Distribution{Type: "uniform", Min: 10, Max: 20}, 15.5},
		{Distribution{Type: "poisson", Mean: 7, Min: 0, Max: 100}, 7},
		{Distribution{Type: "skew_normal", Mean: 200, StdDev: 80, Skew: 2.5, Min: 10, Max: 2000}, 200 + 80*math.Sqrt(2/math.Pi)*2.5/math.Sqrt(1+6.25)},
	} {
		rng := rand.New(rand.NewPCG(1, 2))
		var sum float64
		const n = 20000
		for range n {
			x, err := tc.d.Sample(rng)
			if err != nil {
				t.Fatal(err)
			}
			if tc.d.Type != "fixed" && (x < tc.d.Min || x > tc.d.Max) {
				t.Fatalf("%s: %d outside [%d, %d]", tc.d.Type, x, tc.d.Min, tc.d.Max)
			}
			sum += float64(x)
		}
		if mean := sum / n; math.Abs(mean-tc.wantMean) > 0.02*tc.wantMean+0.5 {
			t.Errorf("%s: mean %.2f, want %.2f", tc.d.Type, mean, tc.wantMean)
		}
	}
}

// FuzzParse: no input makes Parse panic, and an accepted config plans.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"vllm-config-shared-prefix-multi-turn.yml", "vllm-config-shared-prefix-distributions.yml", "vllm-config-sweep.yml"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("load: &a {stages: [{rate: 1, duration: 1}]}\ndata: {type: shared_prefix, shared_prefix: {num_groups: 1, num_prompts_per_group: 1}}\nx: *a\n"))
	f.Add([]byte("load:\n  stages: [{rate: 1e308, duration: 99999999}]\n"))
	tok, err := tokenize.Load(tokenize.Default)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("f.yml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.yml") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		// Keep the plan small: the fuzzer explores the parser.
		if c.Data.Groups*c.Data.UsersPerGroup > 50 || len(c.Load.Stages) > 3 {
			return
		}
		for _, s := range c.Load.Stages {
			if s.Rate*s.Duration.Seconds() > 200 || s.Duration > time.Hour {
				return
			}
		}
		for _, l := range []Length{c.Data.SystemPromptLen, c.Data.QuestionLen, c.Data.OutLen} {
			if l.Fixed > 300 || l.Dist != nil && l.Dist.Max > 300 {
				return
			}
		}
		if _, err := c.Plan(tok, tokenize.Default, 1); err != nil && !strings.HasPrefix(err.Error(), "f.yml") {
			t.Fatalf("plan error %q does not name the file", err)
		}
	})
}
