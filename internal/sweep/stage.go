// Package sweep plans load stages and reads capacity from their results.
// A stage is one load level held for a while; a run of stages is a list
// given by the user (--stages) or chosen by a sweep (--sweep), which ramps
// the level up until the deployment saturates or misses its objectives,
// then bisects between the last level that held and the first that did
// not. Everything here is pure: the runner executes stages, mtstats
// measures them, and this package decides.
package sweep

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Kind is what a stage's level counts.
type Kind string

// Stage kinds.
const (
	// Clients is closed-loop users (mtrun --clients).
	Clients Kind = "clients"
	// Rate is new sessions per second (mtrun --rate).
	Rate Kind = "rate"
	// Users is user-centric users, each sending a turn every --user-gap
	// (mtrun --users).
	Users Kind = "users"
	// Active is active conversations shared by a fixed number of
	// closed-loop clients (mtrun --clients with --active): the working
	// set of the server's prefix cache.
	Active Kind = "active"
	// Requests is requests per second, dealt to user sessions (the
	// stages of an inference-perf config, mtrun --config); records carry
	// it, --stages does not take it.
	Requests Kind = "requests"
)

// known reports whether k is a stage kind.
func (k Kind) known() bool { return k == Clients || k == Rate || k == Users || k == Active }

// integral reports whether levels of k are whole numbers.
func (k Kind) integral() bool { return k != Rate && k != Requests }

// Stage is one load level held for Duration; the first Warmup of it is
// recorded with phase warmup and not measured.
type Stage struct {
	Kind     Kind
	Level    float64
	Duration time.Duration
	Warmup   time.Duration
}

// String renders the stage as ParseStages reads it.
func (s Stage) String() string {
	out := fmt.Sprintf("%s=%s:%s", s.Kind, strconv.FormatFloat(s.Level, 'g', -1, 64), s.Duration)
	if s.Warmup > 0 {
		out += ":" + s.Warmup.String()
	}
	return out
}

// ParseStages parses a comma-separated list of stages, each
// KIND=LEVEL:DURATION[:WARMUP], e.g. "clients=4:60s,clients=8:60s:10s".
// KIND is clients, rate, users or active; all but rate are whole numbers.
func ParseStages(s string) ([]Stage, error) {
	var out []Stage
	for i, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		st, err := parseStage(item)
		if err != nil {
			return nil, fmt.Errorf("stage %d %q: %w", i+1, item, err)
		}
		out = append(out, st)
	}
	return out, nil
}

func parseStage(item string) (Stage, error) {
	kind, rest, ok := strings.Cut(item, "=")
	if !ok {
		return Stage{}, fmt.Errorf("want KIND=LEVEL:DURATION[:WARMUP], e.g. clients=8:60s")
	}
	st := Stage{Kind: Kind(strings.TrimSpace(kind))}
	if !st.Kind.known() {
		return Stage{}, fmt.Errorf("kind %q is not clients, rate, users or active", kind)
	}
	parts := strings.Split(rest, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return Stage{}, fmt.Errorf("want KIND=LEVEL:DURATION[:WARMUP], e.g. %s=8:60s", st.Kind)
	}
	level, err := strconv.ParseFloat(parts[0], 64)
	switch {
	case err != nil || !(level > 0) || level > 1e9:
		return Stage{}, fmt.Errorf("level %q is not a positive number", parts[0])
	case st.Kind.integral() && level != float64(int(level)):
		return Stage{}, fmt.Errorf("level %q: %s is a whole number", parts[0], st.Kind)
	}
	st.Level = level
	if st.Duration, err = time.ParseDuration(parts[1]); err != nil || st.Duration <= 0 {
		return Stage{}, fmt.Errorf("duration %q is not a positive Go duration such as 60s", parts[1])
	}
	if len(parts) == 3 {
		if st.Warmup, err = time.ParseDuration(parts[2]); err != nil || st.Warmup < 0 {
			return Stage{}, fmt.Errorf("warmup %q is not a Go duration such as 10s", parts[2])
		}
		if st.Warmup >= st.Duration {
			return Stage{}, fmt.Errorf("warmup %s leaves nothing of the %s stage to measure", st.Warmup, st.Duration)
		}
	}
	return st, nil
}

// Load is the stage's level as KIND=LEVEL, e.g. clients=8: what records
// carry as their stage_load.
func (s Stage) Load() string {
	return fmt.Sprintf("%s=%s", s.Kind, strconv.FormatFloat(s.Level, 'g', -1, 64))
}

// ParseLoad reads a stage's KIND=LEVEL (Stage.Load) back.
func ParseLoad(s string) (Kind, float64, error) {
	kind, level, ok := strings.Cut(s, "=")
	k := Kind(kind)
	if !ok || !k.known() && k != Requests {
		return "", 0, fmt.Errorf("stage load %q: want KIND=LEVEL, KIND clients, rate, users, active or requests", s)
	}
	x, err := strconv.ParseFloat(level, 64)
	if err != nil || !(x > 0) {
		return "", 0, fmt.Errorf("stage load %q: level is not a positive number", s)
	}
	return k, x, nil
}
