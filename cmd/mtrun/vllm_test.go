package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/mtkit/mtkit/internal/mtstats"
	"github.com/mtkit/mtkit/internal/report"
	"github.com/mtkit/mtkit/internal/sim"
)

// vllmList writes n conversations of turns user turns in vLLM's input
// format (a JSON list of {"id", "messages"}) and returns its path.
func vllmList(t *testing.T, n, turns int) string {
	t.Helper()
	type msg struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	var convs []map[string]any
	for i := range n {
		var msgs []msg
		for k := range turns {
			msgs = append(msgs, msg{"user", fmt.Sprintf("question %d of conversation %d", k, i)},
				msg{"assistant", "a dataset answer of a few words"})
		}
		convs = append(convs, map[string]any{"id": fmt.Sprintf("conv-%d", i), "messages": msgs})
	}
	b, _ := json.Marshal(convs)
	path := filepath.Join(t.TempDir(), "conversations.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// readmeCommands returns the benchmark_serving_multi_turn.py command
// lines of a vLLM README, continuation lines joined and exported
// variables expanded, without the "python script.py" prefix.
func readmeCommands(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	vars := map[string]string{}
	var cmds [][]string
	var cur string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if cur != "" {
			cur += " " + line
		} else if strings.HasPrefix(line, "python benchmark_serving_multi_turn.py") {
			cur = line
		} else if k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "="); ok && strings.HasPrefix(line, "export ") {
			vars[k] = v
		}
		if cur != "" && !strings.HasSuffix(cur, "\\") {
			words := strings.Fields(os.Expand(cur, func(k string) string { return vars[k] }))
			cmds = append(cmds, words[2:])
			cur = ""
		} else {
			cur = strings.TrimSuffix(cur, "\\")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cmds
}

// TestVLLMReadmeCommands runs the example commands of vLLM's
// benchmarks/multi_turn README (testdata/vllm, see PROVENANCE) against the
// simulator, replacing only the URL (added: the examples use vLLM's
// default) and the input file.
func TestVLLMReadmeCommands(t *testing.T) {
	t.Parallel()
	cmds := readmeCommands(t, filepath.Join("testdata", "vllm", "README.excerpt.md"))
	if len(cmds) == 0 {
		t.Fatal("no command found in the README")
	}
	cfg, err := sim.ParseConfig("preset=zero,model=Llama")
	if err != nil {
		t.Fatal(err)
	}
	srv := startSim(t, cfg)
	input := vllmList(t, 6, 3)
	for i, cmd := range cmds {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			args := []string{"--url", srv.URL}
			for j := 0; j < len(cmd); j++ {
				args = append(args, cmd[j])
				switch cmd[j] {
				case "-i", "--input-file":
					j++
					args = append(args, input)
				case "-u", "--url":
					args = args[:len(args)-1]
					j++
					args[1] = srv.URL
				}
			}
			got := runMtrun(t, "", nil, args...)
			if got.code != 0 {
				t.Fatalf("mtrun %s: exit %d: %s", strings.Join(args, " "), got.code, got.stderr)
			}
			recs := readRecords(t, got.stdoutBytes, "stdout")
			if len(recs) != 18 {
				t.Errorf("%d records, want 18 (6 conversations × 3 turns)", len(recs))
			}
			for _, r := range recs {
				if !r.OK() || r.Model != "Llama" || r.MinTokens != 0 {
					t.Errorf("record %+v", r)
					break
				}
			}
		})
	}
}

// bodyServer answers every completion with a short stream and keeps the
// request bodies.
type bodyServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []map[string]any
}

func newBodyServer(t *testing.T) *bodyServer {
	bs := &bodyServer{}
	bs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			io.WriteString(w, `{"data":[{"id":"served"}]}`)
			return
		}
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		bs.mu.Lock()
		bs.bodies = append(bs.bodies, body)
		bs.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(bs.Close)
	return bs
}

// TestVLLMFlagMeanings checks the flags whose vLLM meaning differs from
// what mtkit's flag of the same name meant, in the requests sent.
func TestVLLMFlagMeanings(t *testing.T) {
	t.Parallel()
	input := vllmList(t, 2, 3) // answers: 7 o200k tokens
	modelDir := t.TempDir()    // a model directory without a tokenizer
	for _, tc := range []struct {
		name  string
		args  []string
		turns int            // requests per conversation
		want  map[string]any // body fields; nil value: absent
	}{
		{"defaults", nil, 3, map[string]any{"model": "served", "max_tokens": 7.0, "min_tokens": nil, "seed": nil}},
		{"max-turns counts messages", []string{"--max-turns", "3"}, 2, nil},
		{"max-turns even", []string{"--max-turns", "2"}, 1, nil},
		{"max-turns 0 is all, as in mtconvert", []string{"--max-turns", "0"}, 3, nil},
		{"max-user-turns", []string{"--max-user-turns", "2"}, 2, nil},
		{"limits from the dataset", []string{"--limit-min-tokens", "0", "--limit-max-tokens", "0"}, 3, map[string]any{"max_tokens": 7.0, "min_tokens": 7.0}},
		{"fixed limits", []string{"--limit-min-tokens", "5", "--limit-max-tokens", "9"}, 3, map[string]any{"max_tokens": 9.0, "min_tokens": 5.0}},
		{"no limits", []string{"--limit-min-tokens", "-1", "--limit-max-tokens", "-1"}, 3, map[string]any{"max_tokens": nil, "min_tokens": nil}},
		{"no max, min from dataset", []string{"--limit-max-tokens", "-1"}, 3, map[string]any{"max_tokens": nil, "min_tokens": nil}},
		{"clamp", []string{"--clamp-max-tokens", "4"}, 3, map[string]any{"max_tokens": 4.0, "min_tokens": nil}},
		{"model and served name", []string{"-m", modelDir, "--served-model-name", "Llama"}, 3, map[string]any{"model": "Llama"}},
		{"model alone is the name", []string{"--model", "other"}, 3, map[string]any{"model": "other"}},
		{"seed is mtrun's only", []string{"--seed", "7"}, 3, map[string]any{"seed": nil}},
		{"request-seed", []string{"--request-seed", "7"}, 3, map[string]any{"seed": 7.0}},
		{"accepted as in vLLM", []string{"--no-early-stop", "--trust-remote-code", "--warmup-percentages", "0%,50%", "-v", "--request-timeout-sec", "120"}, 3, nil},
		{"durations take units", []string{"--request-timeout-sec", "2m", "--term-grace", "1", "--duration", "1h"}, 3, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bs := newBodyServer(t)
			args := append([]string{"--url", bs.URL, "--tokenizer", "o200k_base", "-i", input}, tc.args...)
			if tc.name == "model and served name" {
				args = slices.DeleteFunc(args, func(s string) bool { return s == "--tokenizer" || s == "o200k_base" })
			}
			got := runMtrun(t, "", nil, args...)
			if got.code != 0 {
				t.Fatalf("exit %d: %s", got.code, got.stderr)
			}
			if len(bs.bodies) != 2*tc.turns {
				t.Errorf("%d requests, want %d", len(bs.bodies), 2*tc.turns)
			}
			for _, b := range bs.bodies {
				for k, want := range tc.want {
					if got, ok := b[k]; (want == nil && ok) || (want != nil && got != want) {
						t.Errorf("body %s = %v, want %v", k, got, want)
					}
				}
			}
		})
	}
}

func TestVLLMFlagErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--limit-max-tokens", "100"}, "both must be positive"},
		{[]string{"--limit-min-tokens", "9", "--limit-max-tokens", "5"}, "above --limit-max-tokens"},
		{[]string{"--limit-max-tokens", "5", "--limit-min-tokens", "5", "--max-tokens", "5"}, "exclude --max-tokens"},
		{[]string{"--max-turns", "-1"}, "--max-user-turns counts user turns"},
		{[]string{"--request-timeout-sec", "0"}, "want a positive time-out"},
		{[]string{"--request-timeout-sec", "-5"}, "negative"},
		{[]string{"--max-turns", "2", "--max-user-turns", "1"}, "exclude each other"},
		{[]string{"--request-timeout-sec", "10", "--request-timeout", "10"}, "exclude each other"},
		{[]string{"--warmup-percentages", "0%,100%"}, "not a percentage"},
	} {
		got := runMtrun(t, "", nil, append([]string{"--url", "http://127.0.0.1:1"}, tc.args...)...)
		if got.code != 2 || !strings.Contains(got.stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, got.code, got.stderr, tc.want)
		}
	}
}

// TestVLLMOutputs: -e writes vLLM's workbook in the working directory,
// --stats-json-output the per-request list, -o x.json a JSON list.
// Not parallel: it changes the working directory.
func TestVLLMOutputs(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	cfg, err := sim.ParseConfig("preset=zero")
	if err != nil {
		t.Fatal(err)
	}
	srv := startSim(t, cfg)
	input := vllmList(t, 4, 3)
	got := mtrunBeside(t, buildMtstats(t), "--url", srv.URL, "-i", input, "-p", "2", "-e", "--stats-json-output", "sub/stats.json",
		"--output-file", "out.json", "-v", "--warmup-percentages", "0%,50%", "--seed", "3", "--records", "r.jsonl")
	if got.code != 0 {
		t.Fatalf("exit %d: %s", got.code, got.stderr)
	}
	var stats []map[string]any
	b, err := os.ReadFile("sub/stats.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &stats); err != nil || len(stats) != 12 {
		t.Fatalf("stats JSON: %d entries, %v", len(stats), err)
	}
	wantKeys := []string{"approx_cached_percent", "client_id", "conversation_id", "input_num_tokens", "input_num_turns", "latency_ms",
		"output_num_chunks", "output_num_first_chunk_tokens", "output_num_tokens", "start_time_ms", "tpot_ms", "ttft_ms"}
	var keys []string
	for k := range stats[0] {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, wantKeys) {
		t.Errorf("stats keys %q, want %q", keys, wantKeys)
	}
	var convs []map[string]any
	b, err = os.ReadFile("out.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &convs); err != nil || len(convs) != 4 {
		t.Fatalf("-o out.json: %d conversations, %v\n%s", len(convs), err, b)
	}
	if n := strings.Count(got.stderr, "ttft_ms"); n != 12 {
		t.Errorf("-v: %d request lines on stderr, want 12", n)
	}

	books, _ := filepath.Glob("statistics_2_clients__*.xlsx")
	if len(books) != 1 {
		t.Fatalf("workbooks %q, want one statistics_2_clients__<time>.xlsx", books)
	}
	f, err := excelize.OpenFile(books[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if s := f.GetSheetList(); !slices.Equal(s, []string{"Summary", "Raw data"}) {
		t.Errorf("sheets %q", s)
	}
	rows, err := f.GetRows("Summary")
	if err != nil {
		t.Fatal(err)
	}
	metrics := []string{"ttft_ms", "tpot_ms", "latency_ms", "input_num_turns", "input_num_tokens", "output_num_tokens", "output_num_chunks", "time_between_user_turns_sec"}
	describe := []string{"", "count", "mean", "std", "min", "25%", "50%", "75%", "90%", "max"}
	// vLLM's offsets: parameters at row 0, then per warmup percentage a
	// runtime row pair and the describe table, 2 blank rows between.
	checks := map[int][]string{
		0: {"model", "num_clients", "num_conversations", "active_conversations", "seed"},
		4: {"runtime_sec", "requests_per_sec"}, 7: describe,
		18: {"runtime_sec", "requests_per_sec"}, 21: describe,
	}
	for r, want := range checks {
		if r >= len(rows) || !slices.Equal(rows[r], want) {
			t.Errorf("Summary row %d = %q, want %q", r, rowAt(rows, r), want)
		}
	}
	if rows[1][1] != "2" || rows[1][2] != "4" || rows[1][4] != "3" {
		t.Errorf("parameters %q", rows[1])
	}
	for i, m := range metrics {
		for _, base := range []int{8, 22} {
			if r := rowAt(rows, base+i); len(r) == 0 || r[0] != m {
				t.Errorf("Summary row %d = %q, want metric %s", base+i, r, m)
			}
		}
	}
	if c := rowAt(rows, 8); len(c) < 2 || c[1] != "12" {
		t.Errorf("0%% warmup count %q, want 12", c)
	}
	if c := rowAt(rows, 22); len(c) < 2 || c[1] != "6" {
		t.Errorf("50%% warmup count %q, want 6", c)
	}
	raw, err := f.GetRows("Raw data")
	if err != nil {
		t.Fatal(err)
	}
	wantRaw := []string{"ttft_ms", "tpot_ms", "latency_ms", "start_time_ms", "input_num_turns", "input_num_tokens", "output_num_tokens",
		"output_num_chunks", "output_num_first_chunk_tokens", "approx_cached_percent", "conversation_id", "client_id",
		"time_between_user_turns_sec", "end_time_ms"}
	if len(raw) != 13 || !slices.Equal(raw[0], wantRaw) {
		t.Errorf("Raw data: %d rows, header %q; want 13 and %q", len(raw), rowAt(raw, 0), wantRaw)
	}
}

func rowAt(rows [][]string, i int) []string {
	if i < len(rows) {
		return rows[i]
	}
	return nil
}

// TestSimServesNamedModel: the simulator serves the model the command
// line names (issue 23: with vLLM's --served-model-name llama every
// request got 404 from a simulator serving mtkit-sim).
func TestSimServesNamedModel(t *testing.T) {
	t.Parallel()
	for _, flag := range []string{"--served-model-name", "--model"} {
		got := runMtrun(t, convJSONL(2, 2, 4), nil, "--sim", "--sim-config", "preset=zero", "--tokenizer", "none", "--quiet", flag, "llama")
		if got.code != 0 {
			t.Fatalf("%s llama: exit %d: %s", flag, got.code, got.stderr)
		}
		recs := readRecords(t, got.stdoutBytes, "stdout")
		for _, r := range recs {
			if !r.OK() || r.Model != "llama" {
				t.Errorf("%s llama: %s/%d model %q, error %q %s", flag, r.ConversationID, r.Turn, r.Model, r.ErrorClass, r.Error)
			}
		}
		if len(recs) != 4 {
			t.Errorf("%s llama: %d records, want 4", flag, len(recs))
		}
	}
}

// TestSummaryVerifyOutput: the end-of-run summary counts --verify-output
// mismatches and names the first (issue 23: all 90 mismatched, and the
// summary said nothing).
func TestSummaryVerifyOutput(t *testing.T) {
	t.Parallel()
	got := runMtrun(t, convJSONL(3, 2, 4), nil, "--sim", "--sim-config", "preset=zero", "--tokenizer", "none", "--verify-output", "--max-concurrency", "1", "--clients", "1")
	if got.code != 0 {
		t.Fatalf("exit %d: %s", got.code, got.stderr)
	}
	if want := "mtrun: --verify-output: 6 of 6 answers differ from the dataset's (first: conversation conv-0, user turn 0)\n"; !strings.Contains(got.stderr, want) {
		t.Errorf("stderr %q lacks %q", got.stderr, want)
	}
}

// TestConversationVocabulary: mtrun's summary and mtstats count the same
// records' conversations with the same words and numbers (issue 23:
// mtrun said "14 finished, 21 unfinished", mtstats "completed 35").
func TestConversationVocabulary(t *testing.T) {
	t.Parallel()
	got := runMtrun(t, convJSONL(6, 3, 4), nil, "--sim", "--sim-config", "preset=zero", "--tokenizer", "none", "--clients", "1", "--max-requests", "10")
	if got.code != 0 {
		t.Fatalf("exit %d: %s", got.code, got.stderr)
	}
	var started, finished, failed, abandoned, unfinished int
	_, line, _ := strings.Cut(got.stderr, "conversations: ")
	if _, err := fmt.Sscanf(line, "%d started, %d finished, %d failed, %d abandoned, %d unfinished", &started, &finished, &failed, &abandoned, &unfinished); err != nil {
		t.Fatalf("summary %q: %v", got.stderr, err)
	}
	if unfinished == 0 || finished == 0 {
		t.Fatalf("want finished and unfinished conversations: %q", got.stderr)
	}
	var out, errb bytes.Buffer
	if err := mtstats.Run(context.Background(), mtstats.Options{Stdin: bytes.NewReader(got.stdoutBytes), Out: &out, Err: &errb, Format: report.FormatJSON}); err != nil {
		t.Fatal(err, errb.String())
	}
	var rep struct {
		Summary struct {
			Conversations struct {
				Count                                   int
				Finished, Failed, Abandoned, Unfinished *int
			}
		}
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	c := rep.Summary.Conversations
	if c.Finished == nil || c.Count != started || *c.Finished != finished || *c.Failed != failed || *c.Abandoned != abandoned || *c.Unfinished != unfinished {
		t.Errorf("mtstats: %+v; mtrun: %s", c, line)
	}
}
