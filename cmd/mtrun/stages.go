package main

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mtkit/mtkit/internal/cliflag"
	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/schedule"
	"github.com/mtkit/mtkit/internal/stats"
	"github.com/mtkit/mtkit/internal/sweep"
)

// stageFlagList are the flags of staged runs and sweeps.
func stageFlagList() []cli.Flag {
	stageDuration, stageWarmup := 30*time.Second, 5*time.Second
	return []cli.Flag{
		&cli.StringFlag{Name: "stages", Usage: "several load levels in one run, without draining between them: `LIST` of KIND=LEVEL:DURATION[:WARMUP], KIND clients or rate (one kind per run), e.g. clients=4:60s,clients=8:60s:10s"},
		&cli.StringFlag{Name: "sweep", Usage: "search the load levels of `KIND` (clients or rate): ramp up by 2 from --sweep-start until a stage does not hold or saturates, then bisect (with --slo) or fill below the knee; one replay per stage"},
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
	objectives []stats.Objective
}

func (f *sweepFlags) objectiveTexts() []string {
	var out []string
	for _, o := range f.objectives {
		out = append(out, o.Text)
	}
	return out
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
		switch {
		case st.Kind == sweep.Users:
			return f, command.Usagef("--stages: stage %d %q: users stages are not supported yet; use clients or rate", i+1, st)
		case st.Kind != stages[0].Kind:
			return f, command.Usagef("--stages: stage %d %q: one kind per run (the first stage is %s)", i+1, st, stages[0].Kind)
		}
	}
	if err := excludeLoad(c, "--stages"); err != nil {
		return f, err
	}
	f.stages = stages
	return f, nil
}

// excludeLoad refuses the flags a staged run or sweep replaces.
func excludeLoad(c *cli.Context, by string) error {
	// --segment splits closed lanes or arrivals of one level; a staged
	// schedule's are not split (yet).
	for _, name := range []string{"stages", "clients", "active", "rate", "users", "time-scale", "duration", "max-requests", "segment", "segments"} {
		if c.IsSet(name) && "--"+name != by {
			return command.Usagef("%s sets the load and the run's length; it excludes --%s", by, name)
		}
	}
	return nil
}

// sweepFrom reads and checks the --sweep flags.
func (f *stageFlags) sweepFrom(c *cli.Context) error {
	kind := sweep.Kind(c.String("sweep"))
	if kind != sweep.Clients && kind != sweep.Rate {
		return command.Usagef("--sweep %q: want clients or rate", kind)
	}
	if err := excludeLoad(c, "--sweep"); err != nil {
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
	objs, err := stats.ParseSLO(c.String("slo"))
	if err != nil {
		return command.Usagef("--%v", err)
	}
	p.Objectives = len(objs) > 0
	f.sweep = &sweepFlags{planner: p, objectives: objs}
	return nil
}

// staged returns the schedule of stages numbered from first, with the
// run's arrival process and seed for rates.
func (o *options) staged(stages []sweep.Stage, first int) schedule.Staged {
	s := schedule.Staged{Rate: stages[0].Kind == sweep.Rate, Poisson: o.replay.Poisson, Seed: o.replay.RandSeed, First: first}
	for _, st := range stages {
		s.Levels = append(s.Levels, schedule.Level{Level: st.Level, Duration: st.Duration, Warmup: st.Warmup})
	}
	return s
}
