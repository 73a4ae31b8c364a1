package sim

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mtkit/mtkit/internal/tokenize"
)

// DefaultModel is the model id served when Config.Model is empty.
const DefaultModel = "mtkit-sim"

// Defaults applied by New to zero fields of Config.
const (
	DefaultBlockSize   = 16
	DefaultMaxTokens   = 256
	DefaultMaxModelLen = 131072
	DefaultErrorStatus = 500
	DefaultRetryAfter  = time.Second
	DefaultStall       = time.Second
)

// Config is the simulated server's model: timing, prefix cache, output and
// faults. The zero value is a valid zero-latency server with no cache.
type Config struct {
	// Model is the only model id served (default DefaultModel). Requests
	// naming another model get HTTP 404; requests naming none use it.
	Model string
	// Seed makes output text, ids and fault draws reproducible.
	Seed int64

	// TTFTBase is the fixed part of the time to first token.
	TTFTBase time.Duration
	// PrefillPerToken is the prefill cost of each prompt token that is not
	// served from the prefix cache.
	PrefillPerToken time.Duration
	// DecodePerToken is the time between output tokens with one running
	// sequence.
	DecodePerToken time.Duration
	// DecodeSlowdownPerSeq stretches DecodePerToken by this fraction for
	// every running sequence beyond the first: the interval is
	// DecodePerToken × (1 + DecodeSlowdownPerSeq × (running − 1)).
	DecodeSlowdownPerSeq float64
	// MaxRunning caps the sequences (choices) running at once; requests
	// beyond it wait in a FIFO queue. 0 means no cap.
	MaxRunning int
	// Precise makes waits accurate to tens of microseconds: Go's idle
	// timers have millisecond granularity, so the last 1.5ms before each
	// deadline is slept in nanosleep (blocking an OS thread per stream)
	// and the last 80µs spun.
	Precise bool

	// CacheTokens is the prefix-cache capacity in tokens (0 = no cache):
	// the local tier, GPU memory in an engine.
	CacheTokens int
	// OffloadTokens is the capacity in tokens of a second tier, an LRU
	// that receives the blocks evicted from the first (CPU memory behind
	// a KV connector in vLLM; 0 = none). It needs CacheTokens > 0.
	OffloadTokens int
	// OffloadLoadPerToken is the cost of each prompt token loaded from
	// the offload tier, in place of PrefillPerToken.
	OffloadLoadPerToken time.Duration
	// HideCachedTokens leaves usage.prompt_tokens_details out of
	// responses, as vLLM does without --enable-prompt-tokens-details.
	HideCachedTokens bool
	// BlockSize is the number of tokens per cache block (default 16).
	BlockSize int
	// MaxModelLen is the context length: prompt + max_tokens beyond it
	// gets HTTP 400 (default DefaultMaxModelLen). Reported by /v1/models.
	MaxModelLen int
	// Tokenizer counts prompt tokens (default tokenize.Load("") → o200k).
	Tokenizer tokenize.Tokenizer
	// DefaultMaxTokens caps the output of requests without max_tokens
	// (default DefaultMaxTokens); their natural length is drawn uniformly
	// up to it.
	DefaultMaxTokens int
	// ReasoningTokens is the number of delta.reasoning_content tokens a
	// chat completion emits before its content (0 = no reasoning).
	ReasoningTokens int
	// ToolCallRate is the probability that a chat request offering tools
	// with tool_choice "auto" (or none given) is answered with a tool
	// call; "required" or a named function always is, "none" never.
	ToolCallRate float64
	// Replicas > 1 serves a Router in front of that many replicas, each
	// with its own cache (Start only; a Server is one replica).
	Replicas int
	// AffinityBreak is the share of a session's requests the Router sends
	// away from the session's replica.
	AffinityBreak float64
	// APIKey, when set, is required as "Authorization: Bearer APIKey".
	APIKey string
	// Addr is the listen address of Start (default "127.0.0.1:0").
	Addr string

	// Faults injects errors into requests.
	Faults Faults
}

// Faults are injected failures. Rates are probabilities per request in
// [0, 1], drawn from the seeded generator of each request.
type Faults struct {
	// ErrorRate is the probability that a request fails with ErrorStatus.
	ErrorRate float64
	// ErrorStatus is the HTTP status of injected errors (default 500).
	ErrorStatus int
	// FailEvery makes every FailEvery-th valid request fail with
	// ErrorStatus (0 = never).
	FailEvery int
	// ErrorBurst makes each injected error the start of a burst: the
	// next ErrorBurst-1 valid requests fail with ErrorStatus too, as
	// when an engine restarts (0 or 1 = single errors).
	ErrorBurst int
	// RateLimitRate is the probability of HTTP 429 with a Retry-After
	// header.
	RateLimitRate float64
	// RetryAfter is the Retry-After of 429 responses (default 1s; sent in
	// whole seconds, rounded up, and exactly in retry-after-ms).
	RetryAfter time.Duration
	// StallRate is the probability that a request stalls once for Stall
	// at a seeded point between its first and last token.
	StallRate float64
	// Stall is the length of a stall (default 1s).
	Stall time.Duration
	// DisconnectRate is the probability that the server drops the
	// connection at a seeded point of the response.
	DisconnectRate float64
	// MalformedRate is the probability that a stream carries one
	// malformed SSE data line (truncated JSON) at a seeded point; a
	// non-streaming response is truncated instead.
	MalformedRate float64
	// EchoSecrets makes the server hostile to secrets: GET /metrics
	// writes the request's Authorization and X-* header values into a
	// metric name, a label name, label values (also base64-encoded) and
	// HELP text, and injected errors quote them (plain, base64 and
	// JSON-escaped) in their message, as a careless proxy or engine
	// would. For checking that no secret reaches an output.
	EchoSecrets bool
}

// withDefaults returns c with defaults applied, or an error naming the
// first invalid field.
func (c Config) withDefaults() (Config, error) {
	if c.Model == "" {
		c.Model = DefaultModel
	}
	if c.BlockSize == 0 {
		c.BlockSize = DefaultBlockSize
	}
	if c.MaxModelLen == 0 {
		c.MaxModelLen = DefaultMaxModelLen
	}
	if c.DefaultMaxTokens == 0 {
		c.DefaultMaxTokens = DefaultMaxTokens
	}
	if c.Addr == "" {
		c.Addr = "127.0.0.1:0"
	}
	f := &c.Faults
	if f.ErrorStatus == 0 {
		f.ErrorStatus = DefaultErrorStatus
	}
	if f.RetryAfter == 0 {
		f.RetryAfter = DefaultRetryAfter
	}
	if f.Stall == 0 {
		f.Stall = DefaultStall
	}
	return c, c.validate()
}

// validate checks ranges of a Config whose defaults are applied.
func (c Config) validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("sim config: %s: %s", field, fmt.Sprintf(format, args...)))
	}
	for name, d := range map[string]time.Duration{
		"TTFTBase": c.TTFTBase, "PrefillPerToken": c.PrefillPerToken, "DecodePerToken": c.DecodePerToken,
		"OffloadLoadPerToken": c.OffloadLoadPerToken,
		"Faults.RetryAfter":   c.Faults.RetryAfter, "Faults.Stall": c.Faults.Stall,
	} {
		if d < 0 {
			bad(name, "negative duration %v", d)
		}
	}
	if c.DecodeSlowdownPerSeq < 0 || math.IsNaN(c.DecodeSlowdownPerSeq) || math.IsInf(c.DecodeSlowdownPerSeq, 0) {
		bad("DecodeSlowdownPerSeq", "must be a finite number >= 0, got %v", c.DecodeSlowdownPerSeq)
	}
	for name, n := range map[string]int{
		"MaxRunning": c.MaxRunning, "CacheTokens": c.CacheTokens, "OffloadTokens": c.OffloadTokens, "ReasoningTokens": c.ReasoningTokens, "Replicas": c.Replicas,
		"Faults.FailEvery": c.Faults.FailEvery, "Faults.ErrorBurst": c.Faults.ErrorBurst,
	} {
		if n < 0 {
			bad(name, "must be >= 0, got %d", n)
		}
	}
	for name, n := range map[string]int{
		"BlockSize": c.BlockSize, "MaxModelLen": c.MaxModelLen, "DefaultMaxTokens": c.DefaultMaxTokens,
	} {
		if n <= 0 {
			bad(name, "must be > 0, got %d", n)
		}
	}
	if c.OffloadTokens > 0 && c.CacheTokens < c.BlockSize {
		bad("OffloadTokens", "an offload tier needs a first tier: CacheTokens must hold at least one block (%d tokens), got %d", c.BlockSize, c.CacheTokens)
	}
	if c.Faults.ErrorStatus < 400 || c.Faults.ErrorStatus > 599 {
		bad("Faults.ErrorStatus", "must be an HTTP error status 400-599, got %d", c.Faults.ErrorStatus)
	}
	for name, p := range map[string]float64{
		"Faults.ErrorRate": c.Faults.ErrorRate, "Faults.RateLimitRate": c.Faults.RateLimitRate,
		"Faults.StallRate": c.Faults.StallRate, "Faults.DisconnectRate": c.Faults.DisconnectRate,
		"Faults.MalformedRate": c.Faults.MalformedRate, "ToolCallRate": c.ToolCallRate, "AffinityBreak": c.AffinityBreak,
	} {
		if !(p >= 0 && p <= 1) {
			bad(name, "must be a probability in [0, 1], got %v", p)
		}
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return errors.Join(errs...)
}

// specKey is one key of the compact spec syntax.
type specKey struct {
	name string
	help string
	set  func(c *Config, v string) error
	get  func(c *Config) string // "" when the field has its zero value
}

// specKeys lists the keys of ParseConfig in documentation order.
var specKeys = []specKey{
	{"preset", "zero (all timing 0, the default) or realistic (ttft=20ms,prefill=0.05ms,decode=10ms,slowdown=0.02,max-running=256,cache=1000000)", setPreset, nil},
	{"model", "model id served", func(c *Config, v string) error { c.Model = v; return nil }, func(c *Config) string { return c.Model }},
	{"seed", "seed of output text, ids and faults", intKey64(func(c *Config) *int64 { return &c.Seed }), func(c *Config) string { return itoa64(c.Seed) }},
	{"ttft", "fixed part of time to first token (duration)", durKey(func(c *Config) *time.Duration { return &c.TTFTBase }), durGet(func(c *Config) time.Duration { return c.TTFTBase })},
	{"prefill", "prefill time per uncached prompt token (duration)", durKey(func(c *Config) *time.Duration { return &c.PrefillPerToken }), durGet(func(c *Config) time.Duration { return c.PrefillPerToken })},
	{"decode", "time per output token with one running sequence (duration)", durKey(func(c *Config) *time.Duration { return &c.DecodePerToken }), durGet(func(c *Config) time.Duration { return c.DecodePerToken })},
	{"slowdown", "fractional decode slowdown per extra running sequence", floatKey(func(c *Config) *float64 { return &c.DecodeSlowdownPerSeq }), floatGet(func(c *Config) float64 { return c.DecodeSlowdownPerSeq })},
	{"max-running", "cap on running sequences, beyond it requests queue (0 = none)", intKey(func(c *Config) *int { return &c.MaxRunning }), intGet(func(c *Config) int { return c.MaxRunning })},
	{"precise", "nanosleep+spin the last 1.5ms of each wait for µs accuracy (bool)", boolKey(func(c *Config) *bool { return &c.Precise }), func(c *Config) string { return boolGet(c.Precise) }},
	{"cache", "prefix-cache capacity in tokens (0 = no cache)", intKey(func(c *Config) *int { return &c.CacheTokens }), intGet(func(c *Config) int { return c.CacheTokens })},
	{"offload", "capacity in tokens of a second cache tier that receives the blocks evicted from the first (0 = none)", intKey(func(c *Config) *int { return &c.OffloadTokens }), intGet(func(c *Config) int { return c.OffloadTokens })},
	{"offload-load", "load time per prompt token found in the offload tier (duration)", durKey(func(c *Config) *time.Duration { return &c.OffloadLoadPerToken }), durGet(func(c *Config) time.Duration { return c.OffloadLoadPerToken })},
	{"hide-cached", "leave usage.prompt_tokens_details (cached_tokens) out of responses (bool)", boolKey(func(c *Config) *bool { return &c.HideCachedTokens }), func(c *Config) string { return boolGet(c.HideCachedTokens) }},
	{"block", "tokens per cache block (default 16)", intKey(func(c *Config) *int { return &c.BlockSize }), intGet(func(c *Config) int { return c.BlockSize })},
	{"max-model-len", "context length; longer requests get HTTP 400", intKey(func(c *Config) *int { return &c.MaxModelLen }), intGet(func(c *Config) int { return c.MaxModelLen })},
	{"max-tokens", "output cap of requests without max_tokens (default 256)", intKey(func(c *Config) *int { return &c.DefaultMaxTokens }), intGet(func(c *Config) int { return c.DefaultMaxTokens })},
	{"reasoning", "reasoning_content tokens before the content of chat completions", intKey(func(c *Config) *int { return &c.ReasoningTokens }), intGet(func(c *Config) int { return c.ReasoningTokens })},
	{"tool-calls", "probability of a tool call answering a chat request with tools and tool_choice auto", floatKey(func(c *Config) *float64 { return &c.ToolCallRate }), floatGet(func(c *Config) float64 { return c.ToolCallRate })},
	{"replicas", "serve N replicas behind a session-aware router (X-Session-ID, X-Session-Token; X-Sim-Backend names the replica)", intKey(func(c *Config) *int { return &c.Replicas }), intGet(func(c *Config) int { return c.Replicas })},
	{"affinity-break", "share of a session's requests the router sends to another replica", floatKey(func(c *Config) *float64 { return &c.AffinityBreak }), floatGet(func(c *Config) float64 { return c.AffinityBreak })},
	{"tokenizer", "prompt tokenizer: built-in encoding or tokenizer.json path (default o200k_base)", setTokenizer, func(c *Config) string {
		if c.Tokenizer == nil {
			return ""
		}
		return c.Tokenizer.Name()
	}},
	{"api-key", "required bearer token", func(c *Config, v string) error { c.APIKey = v; return nil }, func(c *Config) string { return c.APIKey }},
	{"addr", "listen address of the server (default 127.0.0.1:0)", func(c *Config, v string) error { c.Addr = v; return nil }, func(c *Config) string { return c.Addr }},
	{"error-rate", "probability of an injected error with status", floatKey(func(c *Config) *float64 { return &c.Faults.ErrorRate }), floatGet(func(c *Config) float64 { return c.Faults.ErrorRate })},
	{"status", "HTTP status of injected errors (default 500)", intKey(func(c *Config) *int { return &c.Faults.ErrorStatus }), intGet(func(c *Config) int { return c.Faults.ErrorStatus })},
	{"fail-every", "every Nth valid request fails with status (0 = never)", intKey(func(c *Config) *int { return &c.Faults.FailEvery }), intGet(func(c *Config) int { return c.Faults.FailEvery })},
	{"burst", "each injected error starts a burst of N failing requests (default 1)", intKey(func(c *Config) *int { return &c.Faults.ErrorBurst }), intGet(func(c *Config) int { return c.Faults.ErrorBurst })},
	{"rate-limit", "probability of HTTP 429 with Retry-After", floatKey(func(c *Config) *float64 { return &c.Faults.RateLimitRate }), floatGet(func(c *Config) float64 { return c.Faults.RateLimitRate })},
	{"retry-after", "Retry-After of 429 responses (duration, default 1s)", durKey(func(c *Config) *time.Duration { return &c.Faults.RetryAfter }), durGet(func(c *Config) time.Duration { return c.Faults.RetryAfter })},
	{"stall-rate", "probability of one stall inside a response", floatKey(func(c *Config) *float64 { return &c.Faults.StallRate }), floatGet(func(c *Config) float64 { return c.Faults.StallRate })},
	{"stall", "length of a stall (duration, default 1s)", durKey(func(c *Config) *time.Duration { return &c.Faults.Stall }), durGet(func(c *Config) time.Duration { return c.Faults.Stall })},
	{"disconnect-rate", "probability of dropping the connection mid-response", floatKey(func(c *Config) *float64 { return &c.Faults.DisconnectRate }), floatGet(func(c *Config) float64 { return c.Faults.DisconnectRate })},
	{"malformed-rate", "probability of one malformed SSE line (truncated JSON)", floatKey(func(c *Config) *float64 { return &c.Faults.MalformedRate }), floatGet(func(c *Config) float64 { return c.Faults.MalformedRate })},
	{"echo-secrets", "echo the request's Authorization and X-* headers in /metrics names, labels and HELP, and in injected errors (bool)", boolKey(func(c *Config) *bool { return &c.Faults.EchoSecrets }), func(c *Config) string { return boolGet(c.Faults.EchoSecrets) }},
}

// SpecHelp returns one line per key of ParseConfig: "key: meaning".
func SpecHelp() string {
	var b strings.Builder
	for _, k := range specKeys {
		fmt.Fprintf(&b, "  %-16s %s\n", k.name, k.help)
	}
	return b.String()
}

// ParseConfig parses a compact spec, comma-separated key=value items such
// as "ttft=50ms,prefill=0.1ms,decode=10ms,cache=100000,max-running=64,
// fail-every=5,status=503", into a Config. Durations use Go syntax
// ("0.1ms", "50us"); booleans may be given as a bare key ("precise",
// "hide-cached").
// Later keys override earlier ones; "preset" resets the timing fields it
// names. SpecHelp lists the keys.
func ParseConfig(spec string) (Config, error) {
	var c Config
	return c, ApplySpec(&c, spec)
}

// ApplySpec applies the items of spec (see ParseConfig) to c.
func ApplySpec(c *Config, spec string) error {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil
	}
	for i, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		key, val, hasVal := strings.Cut(item, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		val = strings.TrimSpace(val)
		k, ok := findKey(key)
		if !ok {
			return fmt.Errorf("sim config: item %d %q: unknown key %q (known: %s)", i+1, item, key, keyNames())
		}
		if !hasVal {
			if k.name != "precise" && k.name != "hide-cached" {
				return fmt.Errorf("sim config: item %d %q: key %q needs a value (%s=...)", i+1, item, key, key)
			}
			val = "true"
		}
		if err := k.set(c, val); err != nil {
			return fmt.Errorf("sim config: item %d %q: %s: %w", i+1, item, key, err)
		}
	}
	_, err := c.withDefaults()
	return err
}

// Spec renders the non-zero fields of c in ParseConfig syntax, so that
// ParseConfig(c.Spec()) reproduces c (the tokenizer by name).
func (c Config) Spec() string {
	var parts []string
	for _, k := range specKeys {
		if k.get == nil {
			continue
		}
		if v := k.get(&c); v != "" {
			parts = append(parts, k.name+"="+v)
		}
	}
	return strings.Join(parts, ",")
}

func findKey(name string) (specKey, bool) {
	name = strings.ReplaceAll(name, "_", "-")
	for _, k := range specKeys {
		if k.name == name {
			return k, true
		}
	}
	return specKey{}, false
}

func keyNames() string {
	names := make([]string, len(specKeys))
	for i, k := range specKeys {
		names[i] = k.name
	}
	return strings.Join(names, ", ")
}

func setPreset(c *Config, v string) error {
	switch strings.ToLower(v) {
	case "zero":
		c.TTFTBase, c.PrefillPerToken, c.DecodePerToken, c.DecodeSlowdownPerSeq = 0, 0, 0, 0
	case "realistic":
		c.TTFTBase = 20 * time.Millisecond
		c.PrefillPerToken = 50 * time.Microsecond
		c.DecodePerToken = 10 * time.Millisecond
		c.DecodeSlowdownPerSeq = 0.02
		c.MaxRunning = 256
		c.CacheTokens = 1_000_000
	default:
		return fmt.Errorf("unknown preset %q (want zero or realistic)", v)
	}
	return nil
}

func setTokenizer(c *Config, v string) error {
	tok, err := tokenize.Load(v)
	if err != nil {
		return err
	}
	c.Tokenizer = tok
	return nil
}

func durKey(field func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil {
			if _, nerr := strconv.ParseFloat(v, 64); nerr == nil {
				return fmt.Errorf("duration %q needs a unit (e.g. %sms)", v, v)
			}
			return fmt.Errorf("invalid duration %q (want e.g. 10ms, 0.1ms, 50us)", v)
		}
		if d < 0 {
			return fmt.Errorf("negative duration %q", v)
		}
		*field(c) = d
		return nil
	}
}

func durGet(field func(*Config) time.Duration) func(*Config) string {
	return func(c *Config) string {
		if d := field(c); d != 0 {
			return d.String()
		}
		return ""
	}
}

func intKey(field func(*Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(strings.ReplaceAll(v, "_", ""))
		if err != nil {
			return fmt.Errorf("invalid integer %q", v)
		}
		if n < 0 {
			return fmt.Errorf("must be >= 0, got %d", n)
		}
		*field(c) = n
		return nil
	}
}

func intGet(field func(*Config) int) func(*Config) string {
	return func(c *Config) string {
		if n := field(c); n != 0 {
			return strconv.Itoa(n)
		}
		return ""
	}
}

func intKey64(field func(*Config) *int64) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.ParseInt(strings.ReplaceAll(v, "_", ""), 10, 64)
		if err != nil {
			return fmt.Errorf("invalid integer %q", v)
		}
		*field(c) = n
		return nil
	}
}

func itoa64(n int64) string {
	if n == 0 {
		return ""
	}
	return strconv.FormatInt(n, 10)
}

func floatKey(field func(*Config) *float64) func(*Config, string) error {
	return func(c *Config, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("invalid number %q", v)
		}
		if f < 0 {
			return fmt.Errorf("must be >= 0, got %v", f)
		}
		*field(c) = f
		return nil
	}
}

func floatGet(field func(*Config) float64) func(*Config) string {
	return func(c *Config) string {
		if f := field(c); f != 0 {
			return strconv.FormatFloat(f, 'g', -1, 64)
		}
		return ""
	}
}

func boolKey(field func(*Config) *bool) func(*Config, string) error {
	return func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("invalid boolean %q (want true or false)", v)
		}
		*field(c) = b
		return nil
	}
}

func boolGet(b bool) string {
	if b {
		return "true"
	}
	return ""
}
