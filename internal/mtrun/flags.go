package mtrun

import (
	"time"
)

// Flags are mtrun's flags as given: cmd/mtrun binds each flag to its
// field where it declares it, so none is read back by a name that could
// be misspelt; Options checks them and turns them into the run's
// settings. The repeatable flags' values are copied in once parsed.
type Flags struct {
	// Input.
	Input, InputFormat, Tokenizer string
	Config                        string // config.go
	DryRun                        bool
	// Server and requests.
	URL, Model, APIKey, ExtraBody, API                  string
	Headers, SessionHeaders, SessionTokens              []string
	NoStream, NoUsage, ContinuousUsage, MaxCompField    bool
	Temperature                                         float64
	RequestSeed                                         int64
	IgnoreEOS, SendConvID, ConvIDField, SessionIDHeader bool
	SessionCookies                                      bool
	Choices                                             int
	BackendHeader, Reasoning, ToolChoice                string
	// Load.
	Clients, Active, MaxConcurrency, Users int
	Sampling, Arrival, ThinkTime           string
	Rate, RequestRate, TimeScale           float64
	Loop                                   bool
	UserGap                                time.Duration
	// Limits and output tokens.
	MaxRequests, MaxTurns, MaxUserTurns, WarmupTurns int
	Duration                                         time.Duration
	WarmupStep, MinTokens                            bool
	MaxTokens, ClampMin, ClampMax, MaxModelLen       int
	MaxRetries                                       int
	OnFailure                                        string
	RequestTimeout, TermGrace                        time.Duration
	Verify                                           bool
	Records, Output, Manifest, RunID, CPUProfile     string
	Shard                                            int
	Quiet, PrintContent                              bool
	MetricsURLs                                      []string
	MetricsInterval                                  time.Duration
	MetricsFile                                      string
	NoMetrics                                        bool
	MetricsMaxSeries                                 int
	MetricsMaxBytes                                  int64
	Seed                                             uint64
	Sim                                              bool
	SimConfig                                        string
	Segment, StartAt                                 string // scale-out
	Segments                                         int
	Stages, Sweep, SLO, Capacity                     string // stages and sweeps
	SweepStart, SweepMax, SweepUnsteady              float64
	SweepStages                                      int
	StageDuration, StageWarmup                       time.Duration
	ServedModel, StatsJSON, WarmupPct                string // vLLM's
	LimitMin, LimitMax                               int
	VLLMRequestTimeout                               time.Duration
	Excel, Verbose, NoEarlyStop, TrustRemoteCode     bool
	// Set once the flags are parsed: whether the flag bound to dst was
	// given (cliflag.Given), the name of the first of dsts given.
	Given      func(dst any) bool
	FirstGiven func(dsts ...any) string
}
