package main

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mtkit/mtkit/internal/cliflag"
	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/judge"
	"github.com/mtkit/mtkit/internal/schedule"
	"github.com/mtkit/mtkit/internal/sweep"
)

// stageFlagList are the flags of staged runs and sweeps.
func stageFlagList() []cli.Flag {
	stageDuration, stageWarmup := 30*time.Second, 5*time.Second
	return []cli.Flag{
		&cli.StringFlag{Name: "stages", Usage: "several load levels in one run, without draining between them: `LIST` of KIND=LEVEL:DURATION[:WARMUP], KIND clients, users (with --user-gap) or rate (one kind per run), e.g. clients=4:60s,clients=8:60s:10s"},
		&cli.StringFlag{Name: "sweep", Usage: "search the load levels of `KIND` (clients, users with --user-gap, or rate): ramp up by 2 from --sweep-start until a stage does not hold or saturates, then bisect (with --slo) or fill below the knee; one replay per stage"},
		&cli.Float64Flag{Name: "sweep-start", Value: 1, Usage: "first level `N` of --sweep"},
		&cli.Float64Flag{Name: "sweep-max", Usage: "highest level `N` --sweep tries (0: no limit)"},
		&cli.IntFlag{Name: "sweep-stages", Value: 12, Usage: "at most `N` stages in a --sweep"},
		cliflag.Duration("stage-duration", &stageDuration, "length `DURATION` of each --sweep stage, warmup included"),
		cliflag.Duration("stage-warmup", &stageWarmup, "`WARMUP` at the start of each --sweep stage (recorded with phase warmup, not judged)"),
		&cli.Float64Flag{Name: "sweep-unsteady", Value: 0.15, Usage: "a --sweep stage is steady when the throughputs of its two halves differ by at most `F` of their mean"},
		cliflag.SLO(nil),
		cliflag.Capacity(nil),
	}
}

// stageFlags are the settings of a staged run or a sweep.
type stageFlags struct {
	stages   []sweep.Stage // --stages
	sweep    *sweepFlags   // --sweep
	capacity string        // --capacity
}

// sweepFlags are the settings of --sweep.
type sweepFlags struct {
	planner    sweep.Planner
	objectives []judge.Objective
}

// stageFlagsFrom reads and checks the stage flags.
func stageFlagsFrom(c *cli.Context) (stageFlags, error) {
	f := stageFlags{capacity: c.String("capacity")}
	if c.IsSet("sweep") {
		return f, f.sweepFrom(c)
	}
	for _, name := range []string{"slo", "capacity", "sweep-start", "sweep-max", "sweep-stages", "sweep-unsteady", "stage-duration", "stage-warmup"} {
		if c.IsSet(name) {
			return f, command.Usagef("--%s needs --sweep", name)
		}
	}
	if !c.IsSet("stages") {
		return f, nil
	}
	stages, err := sweep.ParseStages(c.String("stages"))
	if err != nil {
		return f, command.Usagef("--stages: %v", err)
	}
	for i, st := range stages {
		if st.Kind != stages[0].Kind {
			// Each kind paces a session its own way (think times, a gap,
			// arrivals); the sessions in flight at a boundary between
			// kinds would go on under the old one, so the stage after it
			// would measure a blend of two load models.
			return f, command.Usagef("--stages: stage %d %q: one kind per run (the first stage is %s): a session keeps its kind's pacing across a boundary, so a stage after a change of kind would measure two load models at once; run one mtrun per kind", i+1, st, stages[0].Kind)
		}
	}
	if err := excludeLoad(c, "--stages"); err != nil {
		return f, err
	}
	if err := checkUserGap(c, "--stages", stages[0].Kind); err != nil {
		return f, err
	}
	f.stages = stages
	return f, nil
}

// checkUserGap checks that --user-gap is given for users stages (the
// time between a user's turns) and only for them.
func checkUserGap(c *cli.Context, by string, kind sweep.Kind) error {
	switch {
	case kind == sweep.Users && !c.IsSet("user-gap"):
		return command.Usagef("%s users: give --user-gap, the time between a user's turns (e.g. 2s)", by)
	case kind != sweep.Users && c.IsSet("user-gap"):
		return command.Usagef("--user-gap is for users stages; %s %s does not use it", by, kind)
	}
	return nil
}

// excludeLoad refuses the flags a staged run or sweep replaces.
func excludeLoad(c *cli.Context, by string) error {
	for _, name := range []string{"stages", "clients", "active", "rate", "users", "time-scale", "duration", "max-requests"} {
		if c.IsSet(name) && "--"+name != by {
			return command.Usagef("%s sets the load and the run's length; it excludes --%s", by, name)
		}
	}
	return nil
}

// sweepFrom reads and checks the --sweep flags.
func (f *stageFlags) sweepFrom(c *cli.Context) error {
	kind := sweep.Kind(c.String("sweep"))
	if kind != sweep.Clients && kind != sweep.Rate && kind != sweep.Users {
		return command.Usagef("--sweep %q: want clients, users or rate", kind)
	}
	if err := excludeLoad(c, "--sweep"); err != nil {
		return err
	}
	if c.IsSet("segment") || c.IsSet("segments") {
		// The planner chooses each level from the stages measured
		// before; split over processes that needs a coordinator to
		// gather their records, which mtrun has not.
		return command.Usagef("--sweep chooses each stage from the measurements of the stages before, which a process split with --segment/--segments cannot see; run the sweep in one process, or split a --stages list (e.g. around the capacity a sweep found)")
	}
	if err := checkUserGap(c, "--sweep", kind); err != nil {
		return err
	}
	p := sweep.Planner{Kind: kind, Start: c.Float64("sweep-start"), Max: c.Float64("sweep-max"), MaxStages: c.Int("sweep-stages"),
		Duration: c.Duration("stage-duration"), Warmup: c.Duration("stage-warmup"),
		Criteria: sweep.Criteria{Unsteady: c.Float64("sweep-unsteady")}}
	// Checked as the stage the planner would make of them.
	first := sweep.Stage{Kind: kind, Level: p.Start, Duration: p.Duration, Warmup: p.Warmup}
	switch _, err := sweep.ParseStages(first.String()); {
	case err != nil:
		return command.Usagef("--sweep-start, --stage-duration, --stage-warmup: %v", err)
	case p.Max < 0 || p.Max > 0 && p.Max < p.Start:
		return command.Usagef("--sweep-max %g: want 0 (no limit) or at least --sweep-start %g", p.Max, p.Start)
	case !(p.Criteria.Unsteady > 0):
		return command.Usagef("--sweep-unsteady %g: want a share above 0, e.g. 0.15", p.Criteria.Unsteady)
	case p.MaxStages < 1:
		return command.Usagef("--sweep-stages %d: want at least 1", p.MaxStages)
	}
	objs, err := judge.ParseSLO(c.String("slo"))
	if err != nil {
		return command.Usagef("--%v", err)
	}
	p.Objectives = len(objs) > 0
	f.sweep = &sweepFlags{planner: p, objectives: objs}
	return nil
}

// staged returns the schedule of stages numbered from first, with the
// run's arrival process and seed for rates and --user-gap for users.
func (o *options) staged(stages []sweep.Stage, first int) schedule.Staged {
	s := schedule.Staged{Rate: stages[0].Kind == sweep.Rate, Poisson: o.replay.Poisson, Seed: o.replay.RandSeed, First: first}
	if stages[0].Kind == sweep.Users {
		s.Gap = o.sched.userGap
	}
	for _, st := range stages {
		s.Levels = append(s.Levels, schedule.Level{Level: st.Level, Duration: st.Duration, Warmup: st.Warmup})
	}
	return s
}
