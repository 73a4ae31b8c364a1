package sweep

import (
	"strings"
	"testing"
)

// FuzzParseStages checks that ParseStages never panics, that what it
// accepts is valid (a known kind, a positive level, whole for clients
// users and active, a warmup shorter than the stage), and that a stage's String
// parses back to the same stage.
func FuzzParseStages(f *testing.F) {
	for _, s := range []string{"clients=4:60s", "clients=4:60s,clients=8:60s:10s", "rate=0.5:1m:5s", "users=3:10s",
		"clients=1.5:10s", "rate=-1:10s", "clients=2:10s:20s", "x=1:1s", "clients=2", "", ",", "rate=1e9:1ns",
		"active=8:60s:10s", "active=2.5:1s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		stages, err := ParseStages(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "stage ") {
				t.Errorf("error %q does not name the stage", err)
			}
			return
		}
		for _, st := range stages {
			switch {
			case st.Kind != Clients && st.Kind != Rate && st.Kind != Users && st.Kind != Active:
				t.Fatalf("%q: kind %q", s, st.Kind)
			case !(st.Level > 0), st.Kind.integral() && st.Level != float64(int(st.Level)):
				t.Fatalf("%q: level %g of %s", s, st.Level, st.Kind)
			case st.Duration <= 0, st.Warmup < 0, st.Warmup >= st.Duration:
				t.Fatalf("%q: duration %s, warmup %s", s, st.Duration, st.Warmup)
			}
			back, err := ParseStages(st.String())
			if err != nil || len(back) != 1 || back[0] != st {
				t.Fatalf("%q: stage %+v renders as %q, which parses to %+v, %v", s, st, st.String(), back, err)
			}
		}
	})
}
