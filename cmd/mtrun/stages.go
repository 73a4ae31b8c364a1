package main

import (
	"github.com/urfave/cli/v2"

	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/schedule"
	"github.com/mtkit/mtkit/internal/sweep"
)

// stageFlagList are the flags of staged runs and sweeps.
func stageFlagList() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "stages", Usage: "several load levels in one run, without draining between them: `LIST` of KIND=LEVEL:DURATION[:WARMUP], KIND clients or rate (one kind per run), e.g. clients=4:60s,clients=8:60s:10s"},
	}
}

// stageFlags are the settings of a staged run.
type stageFlags struct {
	stages []sweep.Stage // --stages
}

// stageFlagsFrom reads and checks the stage flags.
func stageFlagsFrom(c *cli.Context) (stageFlags, error) {
	var f stageFlags
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
	for _, name := range []string{"clients", "active", "rate", "users", "time-scale", "duration"} {
		if c.IsSet(name) {
			return f, command.Usagef("--stages sets the load and the run's length; it excludes --%s", name)
		}
	}
	f.stages = stages
	return f, nil
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
