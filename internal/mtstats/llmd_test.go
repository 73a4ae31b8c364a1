package mtstats

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/llmd/llmdtest"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/report"
)

// llmdRecords is a two-stage run as mtrun --config writes it: in each
// stage, 3 sessions of 2 rounds with growing prompts, the stage's load
// requests=RATE, server token counts and cached tokens; one failure.
func llmdRecords(t *testing.T, staged bool) string {
	t.Helper()
	t0 := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	var b bytes.Buffer
	seq := int64(0)
	for stage := 1; stage <= 2; stage++ {
		for s := range 3 {
			for turn := range 2 {
				start := t0.Add(time.Duration(stage*10+s+2*turn) * time.Second)
				ttft := time.Duration(20*stage+s+turn) * time.Millisecond
				ft := start.Add(ttft)
				r := record.Record{RunID: "run1", Seq: seq, ConversationID: fmt.Sprintf("stage%d-user_session_%d", stage, s), Turn: turn,
					Phase: record.PhaseMeasure, Model: "m", Scheduled: start, Start: start, FirstToken: &ft,
					End: start.Add(ttft + 500*time.Millisecond), TTFTNs: record.Ptr(int64(ttft)), LatencyNs: int64(ttft + 500*time.Millisecond),
					ITLNs: []int64{int64(10 * time.Millisecond), int64(12 * time.Millisecond)}, TPOTNs: record.Ptr(float64(11 * time.Millisecond)),
					PromptTokens: record.Ptr(int64(150 + 106*turn)), CompletionTokens: record.Ptr(int64(50)), CachedTokens: record.Ptr(int64(100 * turn)),
					MaxTokens: 50, Chunks: 3, FinishReason: "length", Status: 200}
				if staged {
					r.Stage, r.StageLoad = stage, fmt.Sprintf("requests=%d", 20*stage)
				}
				if stage == 2 && s == 2 && turn == 1 {
					r.ErrorClass, r.Status, r.TTFTNs, r.FirstToken, r.CompletionTokens, r.ITLNs, r.TPOTNs = record.ErrHTTP5xx, 500, nil, nil, nil, nil, nil
				}
				line, err := json.Marshal(&r)
				if err != nil {
					t.Fatal(err)
				}
				b.Write(append(line, '\n'))
				seq++
			}
		}
	}
	p := filepath.Join(t.TempDir(), "records.jsonl")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLLMDReport: mtstats --format llm-d writes one report per stage,
// each valid against llm-d-benchmark's schema 0.2, with the figures of
// mtstats's own JSON report of that stage in the schema's fields.
func TestLLMDReport(t *testing.T) {
	t.Parallel()
	path := llmdRecords(t, true)
	var out, errb bytes.Buffer
	if err := Run(context.Background(), Options{Inputs: []string{path}, Out: &out, Err: &errb, Format: report.FormatLLMD, Version: "v1.2.3"}); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	docs := strings.Split(out.String(), "---\n")
	if len(docs) != 3 || docs[0] != "" {
		t.Fatalf("%d documents, want one per stage after ---:\n%s", len(docs)-1, out.String())
	}
	var want bytes.Buffer
	if err := Run(context.Background(), Options{Inputs: []string{path}, Out: &want, Err: &errb, Format: report.FormatJSON, By: "stage", ByDetail: report.ByFull}); err != nil {
		t.Fatal(err)
	}
	var js struct {
		Groups []struct {
			Key              string
			Requests, Failed int
			RequestsPerSec   float64 `json:"requests_per_sec"`
			OutputTokensPerS float64 `json:"output_tokens_per_sec"`
			Metrics          map[string]map[string]float64
			Conversations    struct {
				Count          int
				WithoutFailure int `json:"without_failed_request"`
			}
			CacheHitRate      float64 `json:"cache_hit_rate"`
			CacheReportedReqs int     `json:"cache_reported_requests"`
		}
	}
	if err := json.Unmarshal(want.Bytes(), &js); err != nil {
		t.Fatal(err)
	}
	for i, d := range docs[1:] {
		if err := llmdtest.Validate([]byte(d)); err != nil {
			t.Fatalf("stage %d: %v\n%s", i+1, err, d)
		}
		var r struct {
			Run      struct{ UID, EID, Description string }
			Scenario struct {
				Load struct {
					Standardized struct {
						Tool        string
						ToolVersion string `json:"tool_version"`
						Stage       int
						RateQPS     float64 `json:"rate_qps"`
						MultiTurn   struct {
							Enabled  bool
							MaxTurns struct{ Value float64 } `json:"max_turns"`
						} `json:"multi_turn"`
					}
				}
			}
			Results struct {
				RequestPerformance struct {
					Aggregate struct {
						Requests struct{ Total, Failures int }
						Latency  struct {
							TTFT map[string]any `json:"time_to_first_token"`
							ITL  map[string]any `json:"inter_token_latency"`
						}
						Throughput struct {
							RequestRate map[string]any `json:"request_rate"`
							OutputRate  map[string]any `json:"output_token_rate"`
						}
					}
				} `json:"request_performance"`
				SessionPerformance struct {
					Sessions struct{ Total, Succeeded, Failed int }
				} `json:"session_performance"`
				Observability struct {
					MTKit struct {
						CacheHitRate float64          `json:"cache_hit_rate"`
						Turns        []map[string]any `json:"turns"`
						Retention    *struct {
							Basis    string
							Requests int
						} `json:"cache_retention"`
					} `json:"mtkit"`
				}
			}
		}
		if err := json.Unmarshal([]byte(d), &r); err != nil {
			t.Fatal(err)
		}
		g := js.Groups[i]
		std, agg := r.Scenario.Load.Standardized, r.Results.RequestPerformance.Aggregate
		if std.Stage != i+1 || std.RateQPS != float64(20*(i+1)) || std.Tool != "mtkit" || std.ToolVersion != "v1.2.3" ||
			!std.MultiTurn.Enabled || std.MultiTurn.MaxTurns.Value != 2 {
			t.Errorf("stage %d: load %+v", i+1, std)
		}
		if r.Run.EID != "run1" || r.Run.UID != fmt.Sprintf("run1-stage%d", i+1) || !strings.HasPrefix(r.Run.Description, "m [") {
			t.Errorf("stage %d: run %+v", i+1, r.Run)
		}
		if agg.Requests.Total != g.Requests || agg.Requests.Failures != g.Failed || g.Requests != 6 {
			t.Errorf("stage %d: requests %+v, mtstats %d (%d failed)", i+1, agg.Requests, g.Requests, g.Failed)
		}
		for _, c := range []struct {
			name      string
			got       map[string]any
			key, mkey string
			metric    string
		}{
			{"ttft mean", agg.Latency.TTFT, "mean", "mean", "ttft_ms"},
			{"ttft p50", agg.Latency.TTFT, "p50", "p50", "ttft_ms"},
			{"ttft p99", agg.Latency.TTFT, "p99", "p99", "ttft_ms"},
			{"itl p90", agg.Latency.ITL, "p90", "p90", "itl_ms"},
		} {
			if got, want := c.got[c.key].(float64), g.Metrics[c.metric][c.mkey]; math.Abs(got-want) > 1e-9 {
				t.Errorf("stage %d: %s %g, mtstats %g", i+1, c.name, got, want)
			}
		}
		if agg.Latency.TTFT["units"] != "ms" || agg.Latency.ITL["units"] != "ms/token" {
			t.Errorf("stage %d: units %v %v", i+1, agg.Latency.TTFT["units"], agg.Latency.ITL["units"])
		}
		if agg.Throughput.RequestRate["mean"].(float64) != g.RequestsPerSec || agg.Throughput.OutputRate["mean"].(float64) != g.OutputTokensPerS {
			t.Errorf("stage %d: rates %v %v, mtstats %g %g", i+1, agg.Throughput.RequestRate, agg.Throughput.OutputRate, g.RequestsPerSec, g.OutputTokensPerS)
		}
		s := r.Results.SessionPerformance.Sessions
		if s.Total != 3 || s.Total != g.Conversations.Count || s.Succeeded != g.Conversations.WithoutFailure || s.Succeeded+s.Failed != s.Total {
			t.Errorf("stage %d: sessions %+v, mtstats %+v", i+1, s, g.Conversations)
		}
		mk := r.Results.Observability.MTKit
		if mk.Retention == nil || mk.Retention.Basis == "" {
			t.Errorf("stage %d: no cache retention in the mtkit extras", i+1)
		}
		if len(mk.Turns) != 2 || mk.CacheHitRate != g.CacheHitRate || !(mk.CacheHitRate > 0) {
			t.Errorf("stage %d: mtkit extras %+v; want 2 turns and the cache hit rate %g", i+1, mk, g.CacheHitRate)
		}
	}

	// An unstaged run: one report, stage 0, no rate.
	out.Reset()
	if err := Run(context.Background(), Options{Inputs: []string{llmdRecords(t, false)}, Out: &out, Err: &errb, Format: report.FormatLLMD}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "---") || !strings.Contains(out.String(), `"stage": 0`) || strings.Contains(out.String(), "rate_qps") {
		t.Errorf("unstaged run: want one stage-0 report without rate_qps:\n%.400s", out.String())
	}
	if err := llmdtest.Validate(out.Bytes()); err != nil {
		t.Error(err)
	}
	if err := Run(context.Background(), Options{Inputs: []string{path}, Out: &out, Err: &errb, Format: report.FormatLLMD, By: "turn"}); err == nil {
		t.Error("--format llm-d --by turn: no error")
	}
}
