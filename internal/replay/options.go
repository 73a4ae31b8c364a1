package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"time"

	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/replay/openai"
	"github.com/mtkit/mtkit/internal/schedule"
)

// Defaults.
const (
	DefaultClients        = 1
	DefaultMaxRetries     = 3 // the CLI's default; Options.MaxRetries 0 means no retry
	DefaultRequestTimeout = 10 * time.Minute
	DefaultRetryBase      = 250 * time.Millisecond
	DefaultRetryMax       = 10 * time.Second
)

// Sampling is how a client picks which of its active conversations goes next.
type Sampling string

// Conversation sampling modes.
const (
	SampleRoundRobin Sampling = "round_robin"
	SampleRandom     Sampling = "random"
)

// OnFailure is what happens to a conversation whose turn failed after all retries.
type OnFailure string

// Failure policies.
const (
	// ContinueConversation goes on with the next user turn, from the last
	// successful context (the failed turn is left out of the history).
	ContinueConversation OnFailure = "continue"
	// AbandonConversation ends the conversation; it is reported as failed.
	AbandonConversation OnFailure = "abandon"
)

// ThinkFunc draws a think time (the pause before a user turn after the
// previous answer). planned is the conversation file's value for the
// turn; rng is the session's own random source, seeded by RandSeed and
// the session's index (schedule.SessionRand), so a session's draws do
// not depend on the other sessions.
type ThinkFunc func(planned time.Duration, rng *rand.Rand) time.Duration

// Options configure a replay.
type Options struct {
	// Server.
	URL     string      // base URL, with or without /v1
	Model   string      // empty: first id of /v1/models
	APIKey  string      // sent as a bearer token; never recorded
	Headers http.Header // extra headers
	API     openai.API
	// ExtraBody is merged into every request body.
	ExtraBody                map[string]any
	Stream                   bool
	IncludeUsage             bool
	ContinuousUsage          bool
	MaxCompletionTokensField bool // send max_completion_tokens instead of max_tokens
	Temperature              *float64
	Seed                     *int64
	IgnoreEOS                bool
	N                        int
	SendConversationID       bool // top-level conversation_id field
	SendSessionHeader        bool // X-Session-ID header
	// SessionHeaders are sent with every request of a session.
	SessionHeaders []HeaderTemplate
	// SessionTokens names response headers (a router's session token)
	// whose value a session sends back, under the same name, with its
	// later requests.
	SessionTokens []string
	// SessionCookies keeps each session's cookies (Set-Cookie) and sends
	// them back with its later requests (llm-d's session cookie).
	SessionCookies bool
	// BackendHeader names the response header recorded as each record's
	// backend (the replica a router chose).
	BackendHeader  string
	RequestTimeout time.Duration
	// ProbeTimeout bounds the start-up GET /v1/models
	// (DefaultProbeTimeout when 0); HungAfter is how long the first
	// response head may take after the first request before the run
	// stops (DefaultHungAfter when 0; see watchHung).
	ProbeTimeout time.Duration
	HungAfter    time.Duration

	// Output length per turn: from the dataset, clamped to
	// [LimitMinTokens, LimitMaxTokens] when those are > 0 (vLLM's
	// --limit-min-tokens / --limit-max-tokens); FixedMaxTokens overrides.
	// FixedMaxTokens < 0 sends no max_tokens at all (vLLM's
	// --limit-max-tokens -1).
	FixedMaxTokens int
	LimitMinTokens int
	LimitMaxTokens int
	SendMinTokens  bool // also send min_tokens = max_tokens
	FixedMinTokens int  // > 0: send this min_tokens (vLLM's --limit-min-tokens N)
	// StretchTimeout lengthens RequestTimeout for long answers as vLLM's
	// --request-timeout-sec does: to 0.2 s per max_tokens when that is more.
	StretchTimeout bool
	// MaxModelLen enables the context guard; 0 takes the server's
	// max_model_len from /v1/models when it reports one.
	MaxModelLen int
	// KeepReasoning sends the answers' reasoning text back in the history
	// (--reasoning-in-history keep), before their content; it decides how
	// long the reusable prefix of the next turn is.
	KeepReasoning bool
	// ToolChoice, when set, is sent as tool_choice (a JSON value) with
	// every chat request that carries tools.
	ToolChoice json.RawMessage

	// Load.
	// Schedule is the load shape (see package schedule): closed-loop
	// users (schedule.Closed), open-loop arrivals (schedule.Rate), a
	// trace's clock, stages...; nil is DefaultClients closed-loop user.
	Schedule    schedule.Schedule
	Sampling    Sampling // which active conversation a closed-loop lane serves next
	MaxInFlight int      // arrivals: cap on concurrent conversations (0: none)
	Think       ThinkFunc
	// Owns, when set, says which sessions this process runs, by global
	// index (a session recycled by Loop keeps its first index): a run
	// split over processes (segment.Filter.Runs). The others are read and
	// scheduled, so every arrival keeps its global time, but not sent.
	Owns func(session int) bool
	// Lanes, when set, are the global indexes of the closed lanes this
	// process runs (a run split over processes: segment.Segment.Lanes);
	// nil runs every lane of the schedule. The schedule is the whole
	// run's: a lane's global index is what it sees (a lane's share of
	// sessions, its user-centric stagger, a stage's level) and what the
	// records' client field carries.
	Lanes []int
	// Segment, Segments and Host are recorded on every record of a split
	// run (record.Record.Segment).
	Segment, Segments int
	Host              string
	// Start, when set, is the wall-clock start the schedule's offsets
	// count from (mtrun --start-at); zero: when Run starts.
	Start    time.Time
	Loop     bool // recycle conversations with fresh ids until Duration
	RandSeed uint64

	// Stop conditions.
	MaxRequests int           // total requests (0: no limit)
	Duration    time.Duration // wall time (0: no limit)
	MaxTurns    int           // user turns per conversation (0: all)
	WarmupTurns int           // first requests recorded with phase=warmup

	// Failures.
	MaxRetries int
	OnFailure  OnFailure
	RetryBase  time.Duration
	RetryMax   time.Duration

	// Checks and diagnostics.
	Verify       bool // compare answers with the dataset's
	PrintContent bool // prompts and answers to Log
	Tokenizer    Counter

	// Identity.
	RunID string
	Shard int
	// Phase of the records when not in warmup (default measure); a
	// separate warmup pass runs with PhaseWarmup.
	Phase string
	// FirstSeq is the seq of the first record (a second pass of the same
	// run continues the numbering).
	FirstSeq int64

	// ahead bounds the look-ahead of arrivals (tests; zero: AheadSessions
	// sessions, AheadBytes bytes).
	ahead aheadBounds
	// dial, when set, opens every connection to the server (tests: an
	// in-memory network, so that a run can go on synctest's clock).
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// minTokens is the min_tokens sent with a turn whose max_tokens is
// maxTokens (0: none).
func (o *Options) minTokens(maxTokens int) int {
	switch {
	case o.FixedMinTokens > 0:
		return o.FixedMinTokens
	case o.SendMinTokens:
		return maxTokens
	}
	return 0
}

// params are the body fields every request of the run shares.
func (o *Options) params() openai.Params {
	return openai.Params{
		API: o.API, ExtraBody: o.ExtraBody, Stream: o.Stream, IncludeUsage: o.IncludeUsage,
		ContinuousUsage: o.ContinuousUsage, MaxCompletionTokensField: o.MaxCompletionTokensField,
		Temperature: o.Temperature, Seed: o.Seed, IgnoreEOS: o.IgnoreEOS, N: o.N, ToolChoice: o.ToolChoice,
	}
}

// StretchPerToken is the time per max_tokens token that StretchTimeout
// allows (vLLM assumes a TPOT of 200 ms).
const StretchPerToken = 200 * time.Millisecond

// timeoutFor is the request timeout of a turn asking for maxTokens.
func (o *Options) timeoutFor(maxTokens int) time.Duration {
	if o.StretchTimeout && maxTokens > 0 {
		// vLLM truncates to whole seconds: int(max_tokens * 0.2).
		if d := time.Duration(maxTokens) * StretchPerToken / time.Second * time.Second; d > o.RequestTimeout {
			return d
		}
	}
	return o.RequestTimeout
}

// Counter counts tokens on the client side.
type Counter interface {
	Count(text string) int
}

// withDefaults returns a copy with zero values replaced by defaults.
func (o Options) withDefaults() Options {
	if o.API == "" {
		o.API = openai.APIChat
	}
	if o.Phase == "" {
		o.Phase = record.PhaseMeasure
	}
	if o.Sampling == "" {
		o.Sampling = SampleRoundRobin
	}
	if o.N <= 0 {
		o.N = 1
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.ProbeTimeout <= 0 {
		o.ProbeTimeout = DefaultProbeTimeout
	}
	if o.HungAfter <= 0 {
		o.HungAfter = DefaultHungAfter
	}
	if o.OnFailure == "" {
		o.OnFailure = ContinueConversation
	}
	if o.RetryBase <= 0 {
		o.RetryBase = DefaultRetryBase
	}
	if o.RetryMax <= 0 {
		o.RetryMax = DefaultRetryMax
	}
	if o.Think == nil {
		o.Think = thinkFile
	}
	if st, ok := o.Schedule.(schedule.Stager); ok && o.Duration <= 0 && st.End() < schedule.NoEnd {
		o.Duration = st.End() // a staged run ends with its last stage
	}
	return o
}

// Validate reports the first invalid option.
func (o *Options) Validate() error {
	switch {
	case o.URL == "":
		return errors.New("url: missing (set --url or OPENAI_BASE_URL, or use --sim)")
	case o.API != "" && o.API != openai.APIChat && o.API != openai.APICompletions:
		return fmt.Errorf("api: %q is not chat or completions", o.API)
	case o.Sampling != "" && o.Sampling != SampleRoundRobin && o.Sampling != SampleRandom:
		return fmt.Errorf("conversation sampling: %q is not round_robin or random", o.Sampling)
	case o.OnFailure != "" && o.OnFailure != ContinueConversation && o.OnFailure != AbandonConversation:
		return fmt.Errorf("on-failure: %q is not continue or abandon", o.OnFailure)
	case o.LimitMinTokens > 0 && o.LimitMaxTokens > 0 && o.LimitMinTokens > o.LimitMaxTokens:
		return fmt.Errorf("clamp-min-tokens %d is above clamp-max-tokens %d", o.LimitMinTokens, o.LimitMaxTokens)
	case o.FixedMinTokens > 0 && o.FixedMaxTokens > 0 && o.FixedMinTokens > o.FixedMaxTokens:
		return fmt.Errorf("limit-min-tokens %d is above limit-max-tokens %d", o.FixedMinTokens, o.FixedMaxTokens)
	case o.Schedule != nil && o.Schedule.Validate() != nil:
		return o.Schedule.Validate()
	case o.Loop && o.Duration <= 0 && o.MaxRequests <= 0:
		return errors.New("loop: needs --duration or --max-requests to end")
	}
	return nil
}
