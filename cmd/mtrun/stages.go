package main

import (
	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/judge"
	"github.com/mtkit/mtkit/internal/schedule"
	"github.com/mtkit/mtkit/internal/sweep"
)

// stageSettings are the settings of a staged run or a sweep.
type stageSettings struct {
	stages   []sweep.Stage // --stages
	sweep    *sweepFlags   // --sweep
	capacity string        // --capacity
}

// sweepFlags are the settings of --sweep.
type sweepFlags struct {
	planner    sweep.Planner
	objectives []judge.Objective
}

// stageSettings checks the stage flags.
func (v *flagValues) stageSettings() (stageSettings, error) {
	f := stageSettings{capacity: v.capacity}
	if v.given(&v.sweep) {
		return f, v.sweepSettings(&f)
	}
	if name := v.firstGiven(&v.slo, &v.capacity, &v.sweepStart, &v.sweepMax, &v.sweepStages, &v.sweepUnsteady, &v.stageDuration, &v.stageWarmup); name != "" {
		return f, command.Usagef("--%s needs --sweep", name)
	}
	if !v.given(&v.stages) {
		return f, nil
	}
	stages, err := sweep.ParseStages(v.stages)
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
	if err := v.excludeLoad("--stages"); err != nil {
		return f, err
	}
	if err := v.checkUserGap("--stages", stages[0].Kind); err != nil {
		return f, err
	}
	f.stages = stages
	return f, nil
}

// checkUserGap checks that --user-gap is given for users stages (the
// time between a user's turns) and only for them.
func (v *flagValues) checkUserGap(by string, kind sweep.Kind) error {
	switch {
	case kind == sweep.Users && !v.given(&v.userGap):
		return command.Usagef("%s users: give --user-gap, the time between a user's turns (e.g. 2s)", by)
	case kind != sweep.Users && v.given(&v.userGap):
		return command.Usagef("--user-gap is for users stages; %s %s does not use it", by, kind)
	}
	return nil
}

// excludeLoad refuses the flags a staged run or sweep (by) replaces;
// the flags of first are checked first.
func (v *flagValues) excludeLoad(by string, first ...any) error {
	if name := v.firstGiven(append(first, &v.clients, &v.active, &v.rate, &v.users, &v.timeScale, &v.duration, &v.maxRequests)...); name != "" {
		return command.Usagef("%s sets the load and the run's length; it excludes --%s", by, name)
	}
	return nil
}

// sweepSettings checks the --sweep flags.
func (v *flagValues) sweepSettings(f *stageSettings) error {
	kind := sweep.Kind(v.sweep)
	if kind != sweep.Clients && kind != sweep.Rate && kind != sweep.Users {
		return command.Usagef("--sweep %q: want clients, users or rate", kind)
	}
	if err := v.excludeLoad("--sweep", &v.stages); err != nil {
		return err
	}
	if v.given(&v.segment) || v.given(&v.segments) {
		// The planner chooses each level from the stages measured
		// before; split over processes that needs a coordinator to
		// gather their records, which mtrun has not.
		return command.Usagef("--sweep chooses each stage from the measurements of the stages before, which a process split with --segment/--segments cannot see; run the sweep in one process, or split a --stages list (e.g. around the capacity a sweep found)")
	}
	if err := v.checkUserGap("--sweep", kind); err != nil {
		return err
	}
	p := sweep.Planner{Kind: kind, Start: v.sweepStart, Max: v.sweepMax, MaxStages: v.sweepStages,
		Duration: v.stageDuration, Warmup: v.stageWarmup, Criteria: sweep.Criteria{Unsteady: v.sweepUnsteady}}
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
	objs, err := judge.ParseSLO(v.slo)
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
