package main

import (
	"time"

	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/schedule"
)

// scheduleFlags are the load-shape flags: the closed loop's (--clients,
// --active), the open loop's (--rate, --arrival), and --users,
// --user-gap and --time-scale.
type scheduleFlags struct {
	clients   int
	active    int // 0: --clients
	rate      float64
	poisson   bool // --arrival poisson
	users     int
	userGap   time.Duration
	timeScale float64 // 0: not given
	// explicit is set when --rate, --users or --clients was given: the
	// run then does not follow a timed input's trace clock.
	explicit bool
}

// scheduleFlags checks the schedule flags.
func (v *flagValues) scheduleFlags() (scheduleFlags, error) {
	f := scheduleFlags{clients: v.clients, active: v.active, rate: v.rate, users: v.users, userGap: v.userGap, timeScale: v.timeScale}
	rate, clients, scaled := v.given(&v.rate), v.given(&v.clients) || v.given(&v.active), v.given(&v.timeScale)
	f.explicit = rate || clients || v.given(&v.users)
	switch {
	case f.rate < 0:
		return f, command.Usagef("--rate %g is negative", f.rate)
	case f.users < 0:
		return f, command.Usagef("--users %d is negative", f.users)
	case f.userGap < 0:
		return f, command.Usagef("--user-gap %s is negative", f.userGap)
	case v.given(&v.users) && f.users == 0:
		return f, command.Usagef("--users 0: give at least one user")
	case f.users > 0 && f.userGap == 0:
		return f, command.Usagef("--users needs --user-gap (the time between a user's turns, e.g. 2s)")
	case f.users == 0 && v.given(&v.userGap) && !v.given(&v.stages) && !v.given(&v.sweep):
		return f, command.Usagef("--user-gap needs --users (or users stages)")
	case f.users > 0 && rate:
		return f, command.Usagef("--users and --rate exclude each other (user-centric gaps or open-loop arrivals)")
	case f.users > 0 && clients:
		return f, command.Usagef("--users and --clients/--active exclude each other (each of --users users works on one conversation at a time)")
	case f.users > 0 && (v.given(&v.thinkTime) || v.given(&v.requestRate)):
		return f, command.Usagef("--users sends each user's turns --user-gap apart; --think-time and --request-rate do not apply")
	case scaled && f.timeScale <= 0:
		return f, command.Usagef("--time-scale %g: want a factor above 0 (0.1 replays ten times faster)", f.timeScale)
	case scaled && f.explicit:
		return f, command.Usagef("--time-scale scales the trace clock; it excludes --rate, --users and --clients, which replace it")
	}
	return f, nil
}

// chooseSchedule sets the replay's schedule once the input is known:
// --users gives user-centric gaps; a timed input (trace timestamps) is
// replayed on the trace clock unless --rate, --users or --clients was
// given; otherwise --rate gives open-loop arrivals and --clients and
// --active closed-loop users (also a sweep's, whose stages replace it).
func (o *options) chooseSchedule() error {
	f := o.sched
	switch {
	case o.cfg.plan != nil:
		o.replay.Schedule = o.cfg.plan.Schedule // an inference-perf config's (config.go)
	case o.stage.sweep != nil:
		// replayLoad gives each stage its schedule (sweep.go).
	case len(o.stage.stages) > 0:
		o.replay.Schedule = o.staged(o.stage.stages, 1)
		o.replay.Loop = true // conversations recycle until the last stage ends
	case f.users > 0:
		o.replay.Schedule = schedule.UserGap{N: f.users, Gap: f.userGap}
	case o.timed && !f.explicit:
		if o.replay.Loop {
			return command.Usagef("--loop: the trace clock replays the trace once; give --rate or --clients to loop over a trace's sessions")
		}
		o.replay.Schedule = schedule.Trace{Scale: max(f.timeScale, 0)}
	case f.timeScale > 0:
		return command.Usagef("--time-scale: %s has no trace timestamps (it is for timed inputs such as production traces)", o.input)
	}
	if o.replay.Schedule == nil {
		o.replay.Schedule = f.closed()
		if f.rate > 0 {
			o.replay.Schedule = schedule.Rate{PerSecond: f.rate, Poisson: f.poisson, Seed: o.replay.RandSeed}
		}
	}
	return nil
}

// closed is the closed loop of --clients and --active.
func (f scheduleFlags) closed() schedule.Closed {
	return schedule.Closed{Clients: f.clients, Sessions: f.active}
}

// scheduleName names the run's schedule in the manifest.
func (o *options) scheduleName() string {
	if o.stage.sweep != nil {
		return "sweep"
	}
	return o.replay.Shape().Name()
}
