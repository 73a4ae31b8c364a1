package replay

import (
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/mtkit/mtkit/internal/manifest"
	"github.com/mtkit/mtkit/internal/schedule"
)

// The run manifest's schema and file name are internal/manifest's; what
// of a replay's options and summary goes into it is said here.

// NewManifest is the manifest of a run of r started at started, before it ends:
// the software, the host and the settings of r that apply to the run
// (issue 23: a closed-loop run showed poisson: true). extra adds settings
// that are not replay options; those with a zero value ("", 0, false,
// "0s", nil) did not apply and are left out.
func NewManifest(r *Options, started time.Time, version string, extra map[string]any) *manifest.Manifest {
	// The settings are those the run applies: its options with the
	// defaults it fills in (withDefaults), its schedule's lanes and
	// sessions as the schedule counts them.
	d := r.withDefaults()
	r = &d
	host, _ := os.Hostname()
	m := &manifest.Manifest{
		RunID: r.RunID, Started: started.UTC(), Version: version, GoVersion: runtime.Version(),
		Host: host, OS: runtime.GOOS + "/" + runtime.GOARCH, CPUs: runtime.NumCPU(),
		URL: r.URL, Model: r.Model, MaxModel: r.MaxModelLen,
		Settings: map[string]any{
			"api": r.API, "stream": r.Stream, "n": r.N,
			"max_retries": r.MaxRetries, "on_failure": r.OnFailure,
		},
	}
	set := func(k string, v any) {
		if !zeroSetting(v) {
			m.Settings[k] = v
		}
	}
	if r.Stream {
		set("include_usage", r.IncludeUsage)
	}
	switch s := r.Shape().(type) {
	case schedule.Rate:
		m.Settings["rate"], m.Settings["poisson"] = s.PerSecond, s.Poisson
		set("max_concurrency", r.MaxInFlight)
	case schedule.Closed:
		m.Settings["clients"], m.Settings["active"], m.Settings["sampling"] = s.Users(), s.Total(), r.Sampling
	default: // its own settings come in extra
	}
	// max_user_turns is r.MaxTurns, user turns; "max_turns" is its old
	// name, kept for the manifest's readers (deprecated): it is not
	// mtrun --max-turns, which counts messages (issue 23).
	for k, v := range map[string]any{
		"loop": r.Loop, "max_requests": r.MaxRequests, "duration": r.Duration.String(),
		"max_user_turns": r.MaxTurns, "max_turns": r.MaxTurns,
		"warmup_turns": r.WarmupTurns, "max_tokens": r.FixedMaxTokens,
		"limit_min_tokens": r.LimitMinTokens, "limit_max_tokens": r.LimitMaxTokens,
		"request_timeout": r.RequestTimeout.String(), "headers": headerNames(r),
	} {
		set(k, v)
	}
	if len(r.ExtraBody) > 0 {
		m.Settings["extra_body"] = r.ExtraBody
	}
	for k, v := range extra {
		set(k, v)
	}
	return m
}

// zeroSetting reports whether a setting's value is its type's zero (or "0s"):
// a setting not given.
func zeroSetting(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == "" || x == "0s"
	case bool:
		return !x
	case int:
		return x == 0
	case int64:
		return x == 0
	case float64:
		return x == 0
	case []string:
		return len(x) == 0
	}
	return false
}

// FinishManifest adds to m what is known once the run of sum is over.
func FinishManifest(m *manifest.Manifest, sum *Summary) {
	end := m.Started.Add(sum.Elapsed).UTC()
	m.RunID, m.Model, m.MaxModel, m.Ended = sum.RunID, sum.Model, sum.MaxModelLen, &end
	m.Summary = &manifest.Summary{
		Requests: sum.Requests, Attempts: sum.Attempts, FailedRequests: sum.Failed, Retries: sum.Retries,
		Conversations: manifest.Conversations{
			Started: sum.Started, Finished: sum.Finished, Failed: sum.FailedConversations,
			Abandoned: sum.Abandoned, Unfinished: sum.Unfinished,
		},
		ElapsedS: sum.Elapsed.Seconds(), WriteBlockedS: sum.WriteBlocked.Seconds(), NextSeq: sum.NextSeq,
	}
	if sum.Verified > 0 {
		v := &manifest.VerifyOutput{Compared: sum.Verified, Mismatched: sum.Mismatched}
		if f := sum.FirstMismatch; f != nil {
			v.FirstMismatch = &manifest.TurnRef{Conversation: f.Conversation, Turn: f.Turn}
		}
		m.Summary.VerifyOutput = v
	}
}

// headerNames lists the extra headers sent, without their values, sorted.
func headerNames(r *Options) []string {
	var names []string
	for k := range r.Headers {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}
