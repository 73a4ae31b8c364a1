package vllmcompat

import (
	"math"

	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/stats"
)

// Request is one row of the per-request statistics of vLLM's
// benchmark_serving_multi_turn.py (its RequestStats), in its field order.
type Request struct {
	TTFTMs      float64 `json:"ttft_ms"`
	TPOTMs      float64 `json:"tpot_ms"`
	LatencyMs   float64 `json:"latency_ms"`
	StartTimeMs float64 `json:"start_time_ms"`
	// InputNumTurns is the number of messages sent.
	InputNumTurns   int   `json:"input_num_turns"`
	InputNumTokens  int64 `json:"input_num_tokens"`
	OutputNumTokens int64 `json:"output_num_tokens"`
	// OutputNumChunks counts the chunks after the first, as vLLM does.
	OutputNumChunks int `json:"output_num_chunks"`
	// OutputNumFirstChunkTokens is estimated as tokens per chunk (mtkit
	// does not count the first chunk's tokens).
	OutputNumFirstChunkTokens int64 `json:"output_num_first_chunk_tokens"`
	// ApproxCachedPercent is the server's cached prompt tokens in percent
	// of the prompt (0 when the server does not report them).
	ApproxCachedPercent float64 `json:"approx_cached_percent"`
	ConversationID      string  `json:"conversation_id"`
	ClientID            int     `json:"client_id"`
}

// RequestFrom converts the record of a request into vLLM's row; false
// for the records vLLM does not count (failed, retried, warmup, choices
// other than the first).
func RequestFrom(r *record.Record) (Request, bool) {
	if !r.OK() || r.Retried || !r.Measured() || r.Choice != 0 {
		return Request{}, false
	}
	v := Request{
		TTFTMs: -1, LatencyMs: stats.Millis(r.LatencyNs), StartTimeMs: float64(r.Start.UnixNano()) / 1e6,
		InputNumTurns: r.InputMessages, InputNumTokens: stats.InputTokensOf(r), OutputNumTokens: stats.OutputTokensOf(r),
		OutputNumChunks: max(r.Chunks-1, 0), ConversationID: r.ConversationID, ClientID: r.Client,
	}
	if r.TTFTNs != nil {
		v.TTFTMs = stats.Millis(*r.TTFTNs)
	}
	if r.TPOTNs != nil {
		v.TPOTMs = *r.TPOTNs / 1e6
	}
	if r.Chunks > 0 {
		v.OutputNumFirstChunkTokens = max(1, int64(math.Round(float64(v.OutputNumTokens)/float64(r.Chunks))))
	}
	if r.CachedTokens != nil && v.InputNumTokens > 0 {
		v.ApproxCachedPercent = 100 * float64(*r.CachedTokens) / float64(v.InputNumTokens)
	}
	return v, true
}
