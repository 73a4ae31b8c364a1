package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/clitest"
	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/inferenceperf"
	"github.com/mtkit/mtkit/internal/sim"
	"github.com/mtkit/mtkit/internal/tokenize"
)

const multiTurnExample = "../../internal/inferenceperf/testdata/vllm-config-shared-prefix-multi-turn.yml"

// TestInferencePerfExample runs inference-perf's own
// examples/vllm/config-shared-prefix-multi-turn.yml, with only its URL
// replaced, against the simulator (serving the file's model), and checks
// the users × prompt groups, each request's prompt (system prompt plus
// the accumulated context) and the stage's planned arrival rate.
func TestInferencePerfExample(t *testing.T) {
	t.Parallel()
	cfg, err := sim.ParseConfig("preset=zero,model=HuggingFaceTB/SmolLM2-135M-Instruct")
	if err != nil {
		t.Fatal(err)
	}
	srv := startSim(t, cfg)
	orig, err := os.ReadFile(multiTurnExample)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(path, bytes.Replace(orig, []byte("http://0.0.0.0:8000"), []byte(srv.URL), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	recPath, convPath := filepath.Join(dir, "records.jsonl"), filepath.Join(dir, "convs.jsonl")
	got := runMtrun(t, "", nil, "--config", path, "--records", recPath, "-o", convPath, "--no-metrics", "-q")
	if got.code != 0 {
		t.Fatalf("exit %d: %s", got.code, got.stderr)
	}
	data, err := os.ReadFile(recPath)
	if err != nil {
		t.Fatal(err)
	}
	recs := readRecords(t, data, recPath)
	tok, err := tokenize.Load(tokenize.Default)
	if err != nil {
		t.Fatal(err)
	}

	// Users × prompt groups: 10 users for each of 2 system prompts, each
	// asking its own 50-token question in every round.
	f, err := os.Open(convPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := conv.NewReader(f, convPath)
	convs := map[string]conv.Conversation{}
	groups := map[string]int{}
	for rd.Scan() {
		c := rd.Conversation()
		convs[c.ID] = c
		if c.Messages[0].Role != conv.RoleSystem || tok.Count(c.Messages[0].Content) != 100 {
			t.Fatalf("%s: first message %s of %d tokens, want the group's 100-token system prompt", c.ID, c.Messages[0].Role, tok.Count(c.Messages[0].Content))
		}
		groups[c.Messages[0].Content]++
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	if len(convs) != 20 || len(groups) != 2 {
		t.Fatalf("%d sessions over %d system prompts; want 2 groups × 10 users", len(convs), len(groups))
	}
	for _, n := range groups {
		if n != 10 {
			t.Errorf("a system prompt has %d users, want 10", n)
		}
	}

	// Each request's prompt: the system prompt, then every earlier round's
	// question and answer, then the question. The simulator counts the
	// whole completion prompt; mtrun labels each message ("User: ..."),
	// which adds a few tokens a message; where a label meets the text the
	// tokenizer may merge one token more or less, so a round may differ by
	// one token from the session's first rounds' rate.
	if len(recs) != 100 {
		t.Fatalf("%d records, want 20/s × 5 s = 100", len(recs))
	}
	byConv := map[string][]int{}
	for i, r := range recs {
		if r.ErrorClass != "" || r.PromptTokens == nil || r.CompletionTokens == nil || *r.CompletionTokens != 50 || r.MaxTokens != 50 {
			t.Fatalf("record %d: error %q, max_tokens %d; want a 50-token answer", i, r.ErrorClass, r.MaxTokens)
		}
		if r.Stage != 1 || r.StageLoad != "requests=20" {
			t.Errorf("record %d: stage %d %q, want 1 requests=20", i, r.Stage, r.StageLoad)
		}
		byConv[r.ConversationID] = append(byConv[r.ConversationID], i)
	}
	for id, idx := range byConv {
		sort.Slice(idx, func(a, b int) bool { return recs[idx[a]].Turn < recs[idx[b]].Turn })
		c := convs[id]
		q := tok.Count(c.Messages[1].Content)
		context := 100 + q // system prompt and the first question
		var labels []int
		for k, i := range idx {
			r := recs[i]
			if r.Turn != k || c.Messages[1+2*k].Content != c.Messages[1].Content {
				t.Fatalf("%s: turn %d at %d, or another question; want the session's question in every round", id, r.Turn, k)
			}
			labels = append(labels, int(*r.PromptTokens)-context)
			context += tok.Count(c.Messages[2+2*k].Content) + q
		}
		if len(labels) != 5 {
			t.Fatalf("%s: %d rounds, want 100 requests / 20 users", id, len(labels))
		}
		first, perRound := labels[0], labels[1]-labels[0]
		if first < 0 || first > 12 || perRound < 2 || perRound > 10 {
			t.Errorf("%s: %v prompt tokens beyond the system prompt, questions and answers; want a few label tokens a round", id, labels)
		}
		for k, l := range labels {
			if d := l - (first + k*perRound); d < -k || d > k {
				t.Errorf("%s: %v prompt tokens beyond the system prompt, questions and answers: round %d is %d off the labels' rate", id, labels, k, d)
			}
		}
	}

	// The stage's rate: the records were sent on the planned schedule,
	// whose 100 arrival times over the 5 s stage are uniform order
	// statistics (a Poisson process given its count).
	c, err := inferenceperf.Parse(path, bytes.Replace(orig, []byte("http://0.0.0.0:8000"), []byte(srv.URL), 1))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := c.Plan(tok, tokenize.Default, 0)
	if err != nil {
		t.Fatal(err)
	}
	planned := plan.Schedule.Times(0)
	var sent []time.Time
	for _, r := range recs {
		sent = append(sent, r.Scheduled)
	}
	slices.SortFunc(sent, func(a, b time.Time) int { return a.Compare(b) })
	for i := range sent {
		if d := sent[i].Sub(sent[0]) - (planned[i] - planned[0]); d < -time.Microsecond || d > time.Microsecond {
			t.Fatalf("request %d intended %s after the first, planned %s", i, sent[i].Sub(sent[0]), planned[i]-planned[0])
		}
	}
	if planned[len(planned)-1] != 5*time.Second {
		t.Errorf("the last request is planned at %s, want the stage's end (inference-perf's constant timer)", planned[len(planned)-1])
	}
	if d := ksUniform(planned, 5*time.Second); d > 1.36/math.Sqrt(float64(len(planned))) {
		t.Errorf("Kolmogorov-Smirnov distance %.3f of the arrival times from uniform over the stage: above the 5%% critical value", d)
	}
}

// ksUniform is the Kolmogorov-Smirnov distance of sorted times from the
// uniform distribution over [0, span].
func ksUniform(times []time.Duration, span time.Duration) float64 {
	n := float64(len(times))
	var d float64
	for i, t := range times {
		u := float64(t) / float64(span)
		d = max(d, float64(i+1)/n-u, u-float64(i)/n)
	}
	return d
}

// TestConfigErrors: a bad --config is a usage error naming the file (and
// the line and key, for a key), and the plan of --dry-run is golden.
func TestConfigErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	orig, err := os.ReadFile(multiTurnExample)
	if err != nil {
		t.Fatal(err)
	}
	unknown := write("unknown.yml", strings.Replace(string(orig), "  num_workers: 2\n", "  num_workers: 2\n  burst: 3\n", 1))
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown key", []string{"--config", unknown}, unknown + ":4: load.burst: not a key of inference-perf's config"},
		{"neither kind", []string{"--config", "testdata/flags.tsv"}, "--config testdata/flags.tsv: neither an inference-perf config"},
		{"missing", []string{"--config", filepath.Join(dir, "none.yml")}, "none.yml: no such file"},
		{"with an input", []string{"--config", multiTurnExample, "a.jsonl"}, "give no input file with it"},
		{"with a load flag", []string{"--config", multiTurnExample, "--rate", "3"}, "--rate: the load is set by the inference-perf config"},
		{"dry run alone", []string{"--dry-run"}, "--dry-run prints the plan of an inference-perf --config"},
		{"dry run of a generate config", []string{"--config", write("g.json", `{"filetype": "generate_conversations", "num_conversations": 2, "prompt_input": {}}`), "--dry-run"}, "--dry-run: " + dir},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := runMtrun(t, "", nil, tc.args...)
			if got.code != 2 || !strings.Contains(got.stderr, tc.want) || got.stdout != "" {
				t.Errorf("exit %d, stderr %q, stdout %q; want 2 and an error containing %q", got.code, got.stderr, got.stdout, tc.want)
			}
		})
	}
	got := runMtrun(t, "", nil, "--config", multiTurnExample, "--dry-run", "--seed", "3")
	if got.code != 0 {
		t.Fatalf("--dry-run: exit %d: %s", got.code, got.stderr)
	}
	clitest.Golden(t, "testdata/config-dry-run.stdout", got.stdoutBytes)
}

// TestInferencePerfSweep runs the multi-turn example with its stages
// replaced by a sweep (load.sweep) against a simulator whose answers take
// half a second: the probe's 40 requests are recorded as warmup, then
// the two generated stages (1 request a second, then the saturation
// rate) with their stage loads.
func TestInferencePerfSweep(t *testing.T) {
	t.Parallel()
	cfg, err := sim.ParseConfig("preset=zero,decode=10ms,model=HuggingFaceTB/SmolLM2-135M-Instruct")
	if err != nil {
		t.Fatal(err)
	}
	srv := startSim(t, cfg)
	orig, err := os.ReadFile(multiTurnExample)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(orig), "http://0.0.0.0:8000", srv.URL, 1)
	text = strings.Replace(text, "  stages:\n  - rate: 20                      # Send all 20 users' requests per second\n    duration: 5\n",
		"  interval: 0\n  sweep:\n    type: linear\n    num_requests: 40\n    timeout: 30\n    num_stages: 2\n    stage_duration: 2\n    saturation_percentile: 50\n", 1)
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	recPath := filepath.Join(dir, "records.jsonl")
	got := runMtrun(t, "", nil, "--config", path, "--records", recPath, "--no-metrics", "-q")
	if got.code != 0 {
		t.Fatalf("exit %d: %s", got.code, got.stderr)
	}
	if !strings.Contains(got.stderr, "mtrun: sweep: saturation ") {
		t.Errorf("stderr %q: no saturation line", got.stderr)
	}
	data, err := os.ReadFile(recPath)
	if err != nil {
		t.Fatal(err)
	}
	probe, loads := 0, map[int]string{}
	counts := map[int]int{}
	for _, r := range readRecords(t, data, recPath) {
		if r.Phase == "warmup" {
			probe++
			continue
		}
		counts[r.Stage]++
		loads[r.Stage] = r.StageLoad
	}
	if probe != 40 {
		t.Errorf("%d probe (warmup) records, want the 40 of num_requests", probe)
	}
	if len(counts) != 2 || loads[1] != "requests=1" || counts[1] != 2 || !strings.HasPrefix(loads[2], "requests=") {
		t.Fatalf("stages %v, loads %v; want stage 1 at 1/s for 2 s, stage 2 at the saturation rate", counts, loads)
	}
	rate, err := strconv.ParseFloat(strings.TrimPrefix(loads[2], "requests="), 64)
	if err != nil || counts[2] != int(rate*2) {
		t.Errorf("stage 2: %d requests at %s for 2 s", counts[2], loads[2])
	}
}
