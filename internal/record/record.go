// Package record defines the per-request record that mtrun writes and
// mtstats reads, and its codecs: JSONL (one record per line) and Parquet.
// Field names are identical in both; durations are nanoseconds (_ns),
// timestamps RFC 3339 with nanoseconds in JSON and int64 ns in Parquet.
// Every record is self-contained (run id, shard, seq), so record streams
// from several runs or hosts can simply be concatenated.
package record

import "time"

// Phases of a run.
const (
	PhaseWarmup  = "warmup"
	PhaseMeasure = "measure"
)

// Error classes, stable values of Record.ErrorClass.
const (
	ErrNone      = ""
	ErrConnect   = "connect"     // dial, reset, refused, EOF before headers
	ErrTimeout   = "timeout"     // request timeout
	ErrHTTP4xx   = "http_4xx"    // 4xx other than 429 and context length
	ErrRateLimit = "rate_limit"  // 429
	ErrHTTP5xx   = "http_5xx"    // 5xx
	ErrStream    = "stream"      // malformed or truncated stream
	ErrCanceled  = "canceled"    // aborted by the user (second Ctrl-C)
	ErrContext   = "context_len" // prompt does not fit the model
)

// Record is one request attempt of one turn of one conversation.
type Record struct {
	// Identity.
	RunID          string `json:"run_id" parquet:"run_id,dict"`
	Shard          int    `json:"shard" parquet:"shard"`
	Seq            int64  `json:"seq" parquet:"seq"`
	ConversationID string `json:"conversation_id" parquet:"conversation_id,dict"`
	Turn           int    `json:"turn" parquet:"turn"`
	Attempt        int    `json:"attempt" parquet:"attempt"`
	Choice         int    `json:"choice" parquet:"choice"`
	Client         int    `json:"client" parquet:"client"`
	Phase          string `json:"phase" parquet:"phase,dict"`
	// Segment and Segments are the part i of N of a run split over
	// processes (mtrun --segment i/N), and Host the sending machine; zero
	// and empty in a run that is not split.
	Segment  int    `json:"segment,omitempty" parquet:"segment"`
	Segments int    `json:"segments,omitempty" parquet:"segments"`
	Host     string `json:"host,omitempty" parquet:"host,dict"`
	Model    string `json:"model" parquet:"model,dict"`

	// Timestamps.
	Scheduled  time.Time  `json:"scheduled" parquet:"scheduled,timestamp(nanosecond)"`
	Start      time.Time  `json:"start" parquet:"start,timestamp(nanosecond)"`
	FirstToken *time.Time `json:"first_token,omitempty" parquet:"first_token,optional,timestamp(nanosecond)"`
	End        time.Time  `json:"end" parquet:"end,timestamp(nanosecond)"`

	// Timings (ns).
	TTFTNs            *int64   `json:"ttft_ns,omitempty" parquet:"ttft_ns,optional"`
	TTFTContentNs     *int64   `json:"ttft_content_ns,omitempty" parquet:"ttft_content_ns,optional"`
	TPOTNs            *float64 `json:"tpot_ns,omitempty" parquet:"tpot_ns,optional"`
	ITLNs             []int64  `json:"itl_ns,omitempty" parquet:"itl_ns,list"`
	LatencyNs         int64    `json:"latency_ns" parquet:"latency_ns"`
	IntendedLatencyNs int64    `json:"intended_latency_ns" parquet:"intended_latency_ns"`
	// LatenessNs is how late the load generator itself sent the request:
	// start − the later of scheduled and the moment its client was free
	// (scheduled + ClientWaitNs). Records without client_wait_ns were
	// written before the two were apart: their lateness_ns is start −
	// scheduled, any client wait included.
	LatenessNs int64 `json:"lateness_ns" parquet:"lateness_ns"`
	// ClientWaitNs is how long the turn, once due, waited for its client
	// to be free: the client was still waiting for an earlier answer (of
	// another conversation it serves in closed loop, or of this
	// conversation's previous turn when the schedule made the turn due
	// before that ended), or for a --max-in-flight slot. That is the
	// load's shape, not the generator sending late. nil: not recorded
	// (records of older versions).
	ClientWaitNs   *int64 `json:"client_wait_ns,omitempty" parquet:"client_wait_ns,optional"`
	ThinkPlannedNs int64  `json:"think_planned_ns" parquet:"think_planned_ns"`
	ThinkActualNs  int64  `json:"think_actual_ns" parquet:"think_actual_ns"`

	// Sizes: server usage (nil when the server did not report) and client counts.
	PromptTokens           *int64 `json:"prompt_tokens" parquet:"prompt_tokens,optional"`
	CompletionTokens       *int64 `json:"completion_tokens" parquet:"completion_tokens,optional"`
	CachedTokens           *int64 `json:"cached_tokens" parquet:"cached_tokens,optional"`
	ReasoningTokens        *int64 `json:"reasoning_tokens,omitempty" parquet:"reasoning_tokens,optional"`
	ClientPromptTokens     int64  `json:"client_prompt_tokens" parquet:"client_prompt_tokens"`
	ClientCompletionTokens int64  `json:"client_completion_tokens" parquet:"client_completion_tokens"`
	InputMessages          int    `json:"input_messages" parquet:"input_messages"`
	DroppedMessages        int    `json:"dropped_messages" parquet:"dropped_messages"`
	MaxTokens              int    `json:"max_tokens" parquet:"max_tokens"`
	MinTokens              int    `json:"min_tokens" parquet:"min_tokens"`
	Chunks                 int    `json:"chunks" parquet:"chunks"`
	ReasoningChunks        int    `json:"reasoning_chunks" parquet:"reasoning_chunks"`

	// Outcome.
	FinishReason   string `json:"finish_reason" parquet:"finish_reason,dict"`
	Status         int    `json:"status" parquet:"status"`
	ErrorClass     string `json:"error_class" parquet:"error_class,dict"`
	Error          string `json:"error,omitempty" parquet:"error,optional"`
	Retried        bool   `json:"retried" parquet:"retried"`
	VerifyMismatch *bool  `json:"verify_mismatch,omitempty" parquet:"verify_mismatch,optional"`
	// ConversationEnd is, on the records of a conversation's last
	// request, how the conversation ended: finished, failed (a request
	// failed and the conversation went on to its end) or abandoned
	// (--on-failure abandon); "" on the others. A conversation none of
	// whose records has it is unfinished (the run stopped first).
	ConversationEnd string `json:"conversation_end,omitempty" parquet:"conversation_end,optional"`
	// ServerExtra holds extra fields of the server's response (e.g.
	// kv_transfer_params) as a JSON object, when present.
	ServerExtra string `json:"server_extra,omitempty" parquet:"server_extra,optional"`
	// Backend is the response header named by mtrun --backend-header: the
	// replica a router chose; "" when not asked for or absent.
	Backend string `json:"backend,omitempty" parquet:"backend,optional"`

	// Stage is the load stage of a staged run or sweep (mtrun --stages,
	// --sweep) the turn was intended in, from 1; 0 when the run had no
	// stages.
	Stage int `json:"stage" parquet:"stage"`
	// StageLoad is that stage's load level as --stages writes it,
	// KIND=LEVEL (e.g. clients=8, rate=2.5, users=40); "" without stages.
	StageLoad string `json:"stage_load,omitempty" parquet:"stage_load,optional"`
}

// OK reports whether the attempt succeeded.
func (r *Record) OK() bool { return r.ErrorClass == ErrNone }

// Measured reports whether the record belongs to the measured phase.
func (r *Record) Measured() bool { return r.Phase != PhaseWarmup }

// Key identifies a record across merged inputs: records with equal keys
// are duplicates.
type Key struct {
	RunID string
	Shard int
	Seq   int64
}

// Key returns the record's identity.
func (r *Record) Key() Key { return Key{r.RunID, r.Shard, r.Seq} }

// Ptr returns a pointer to v, for the optional fields.
func Ptr[T any](v T) *T { return &v }
