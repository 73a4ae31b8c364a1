package schedule

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Rate is open-loop arrivals: PerSecond new sessions a second, evenly
// spaced or (Poisson) with exponential gaps drawn from Seed. Each session
// is its own user; a later turn is ready its think time after the
// previous answer ended. Session i always gets the same start offset for
// the same seed, whichever sessions a run keeps.
type Rate struct {
	PerSecond float64 // > 0
	Poisson   bool
	Seed      uint64
}

// rateStream separates the arrival draws from every other use of the seed.
const rateStream = 0x6d746b6974

var _ Schedule = Rate{}

// Name implements Schedule.
func (Rate) Name() string { return "rate" }

// Validate implements Schedule.
func (r Rate) Validate() error {
	if !(r.PerSecond > 0) || math.IsInf(r.PerSecond, 0) {
		return fmt.Errorf("rate: %g sessions a second; want a number above 0", r.PerSecond)
	}
	return nil
}

// Users implements Schedule: sessions arrive.
func (Rate) Users() int { return 0 }

// Active implements Schedule: each session is its own user.
func (Rate) Active(int) int { return 1 }

// Arrivals implements Schedule.
func (r Rate) Arrivals() Arrivals {
	a := &rateArrivals{interval: float64(time.Second) / r.PerSecond, poisson: r.Poisson}
	if r.Poisson {
		a.rng = rand.New(rand.NewPCG(r.Seed, rateStream))
	}
	return a
}

// TurnAt implements Schedule.
func (Rate) TurnAt(t Turn) time.Duration { return afterThink(t) }

type rateArrivals struct {
	interval float64 // ns between arrivals (mean, for Poisson)
	poisson  bool
	rng      *rand.Rand
	i        int
	offset   float64
}

// Next implements Arrivals. The first session starts at 0; constant
// spacing computes session i's offset as i intervals, so no rounding
// error builds up.
func (a *rateArrivals) Next(Turn) (time.Duration, bool) {
	if a.i > 0 {
		if a.poisson {
			a.offset += a.rng.ExpFloat64() * a.interval
		} else {
			a.offset = float64(a.i) * a.interval
		}
	}
	a.i++
	return time.Duration(a.offset), true
}
