package mtrun

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
func (v *Flags) scheduleFlags() (scheduleFlags, error) {
	f := scheduleFlags{clients: v.Clients, active: v.Active, rate: v.Rate, users: v.Users, userGap: v.UserGap, timeScale: v.TimeScale}
	rate, clients, scaled := v.Given(&v.Rate), v.Given(&v.Clients) || v.Given(&v.Active), v.Given(&v.TimeScale)
	f.explicit = rate || clients || v.Given(&v.Users)
	switch {
	case f.rate < 0:
		return f, command.Usagef("--rate %g is negative", f.rate)
	case f.users < 0:
		return f, command.Usagef("--users %d is negative", f.users)
	case f.userGap < 0:
		return f, command.Usagef("--user-gap %s is negative", f.userGap)
	case v.Given(&v.Users) && f.users == 0:
		return f, command.Usagef("--users 0: give at least one user")
	case f.users > 0 && f.userGap == 0:
		return f, command.Usagef("--users needs --user-gap (the time between a user's turns, e.g. 2s)")
	case f.users == 0 && v.Given(&v.UserGap) && !v.Given(&v.Stages) && !v.Given(&v.Sweep):
		return f, command.Usagef("--user-gap needs --users (or users stages)")
	case f.users > 0 && rate:
		return f, command.Usagef("--users and --rate exclude each other (user-centric gaps or open-loop arrivals)")
	case f.users > 0 && clients:
		return f, command.Usagef("--users and --clients/--active exclude each other (each of --users users works on one conversation at a time)")
	case f.users > 0 && (v.Given(&v.ThinkTime) || v.Given(&v.RequestRate)):
		return f, command.Usagef("--users sends each user's turns --user-gap apart; --think-time and --request-rate do not apply")
	case scaled && f.timeScale <= 0:
		return f, command.Usagef("--time-scale %g: want a factor above 0 (0.1 replays ten times faster)", f.timeScale)
	case scaled && f.explicit:
		return f, command.Usagef("--time-scale scales the trace clock; it excludes --rate, --users and --clients, which replace it")
	}
	return f, nil
}

// Plan plans the run once the input is known (Timed, an inference-perf
// config's plan): it chooses the replay's schedule (chooseSchedule) and
// hands the replay this segment's part of it (applySegment), in
// o.Replay's Schedule, Loop, Start, Lanes and Owns. Run replays what it
// planned; the manifest names the schedule (scheduleName).
func (o *Options) Plan() error {
	if err := o.chooseSchedule(); err != nil {
		return err
	}
	return o.applySegment()
}

// chooseSchedule sets the replay's schedule once the input is known:
// --users gives user-centric gaps; a timed input (trace timestamps) is
// replayed on the trace clock unless --rate, --users or --clients was
// given; otherwise --rate gives open-loop arrivals and --clients and
// --active closed-loop users (also a sweep's, whose stages replace it).
func (o *Options) chooseSchedule() error {
	f := o.sched
	switch {
	case o.cfg.plan != nil:
		o.Replay.Schedule = o.cfg.plan.Schedule // an inference-perf config's (config.go)
	case o.Stage.Sweep != nil:
		// replayLoad gives each stage its schedule (sweep.go).
	case len(o.Stage.Stages) > 0:
		o.Replay.Schedule = o.staged(o.Stage.Stages, 1)
		o.Replay.Loop = true // conversations recycle until the last stage ends
	case f.users > 0:
		o.Replay.Schedule = schedule.UserGap{N: f.users, Gap: f.userGap}
	case o.Timed && !f.explicit:
		if o.Replay.Loop {
			return command.Usagef("--loop: the trace clock replays the trace once; give --rate or --clients to loop over a trace's sessions")
		}
		o.Replay.Schedule = schedule.Trace{Scale: max(f.timeScale, 0)}
	case f.timeScale > 0:
		return command.Usagef("--time-scale: %s has no trace timestamps (it is for timed inputs such as production traces)", o.input)
	}
	if o.Replay.Schedule == nil {
		o.Replay.Schedule = f.closed()
		if f.rate > 0 {
			o.Replay.Schedule = schedule.Rate{PerSecond: f.rate, Poisson: f.poisson, Seed: o.Replay.RandSeed}
		}
	}
	return nil
}

// closed is the closed loop of --clients and --active.
func (f scheduleFlags) closed() schedule.Closed {
	return schedule.Closed{Clients: f.clients, Sessions: f.active}
}

// scheduleName names the run's schedule in the manifest: a sweep's is
// "sweep" (each stage replaces the run's), else the schedule's own name.
func (o *Options) scheduleName() string {
	if o.Stage.Sweep != nil {
		return "sweep"
	}
	return o.Replay.Shape().Name()
}
