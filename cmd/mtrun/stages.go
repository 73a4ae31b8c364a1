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
	if stages[0].Kind == sweep.Active {
		if err := v.checkActive("--stages", stages...); err != nil {
			return f, err
		}
	} else if err := v.excludeLoad("--stages"); err != nil {
		return f, err
	}
	if err := v.checkUserGap("--stages", stages[0].Kind); err != nil {
		return f, err
	}
	f.stages = stages
	return f, nil
}

// checkActive checks the flags of active stages (by): the clients are
// fixed by --clients, and every level has at least one conversation per
// client; the other load flags are refused as for any staged run.
func (v *flagValues) checkActive(by string, stages ...sweep.Stage) error {
	if name := v.firstGiven(&v.active, &v.rate, &v.users, &v.timeScale, &v.duration, &v.maxRequests); name != "" {
		return command.Usagef("%s active sets the active conversations and the run's length; it excludes --%s", by, name)
	}
	if !v.given(&v.clients) {
		return command.Usagef("%s active: give --clients, the fixed number of clients that share the active conversations", by)
	}
	for i, st := range stages {
		if st.Level < float64(v.clients) {
			return command.Usagef("%s: stage %d %q: %g active conversations for %d clients; want at least one per client", by, i+1, st, st.Level, v.clients)
		}
	}
	return nil
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
	if kind != sweep.Clients && kind != sweep.Rate && kind != sweep.Users && kind != sweep.Active {
		return command.Usagef("--sweep %q: want clients, users, rate or active", kind)
	}
	if kind == sweep.Active {
		if name := v.firstGiven(&v.stages); name != "" {
			return command.Usagef("--sweep sets the load and the run's length; it excludes --%s", name)
		}
		start := sweep.Stage{Kind: kind, Level: v.sweepStart}
		if !v.given(&v.sweepStart) {
			start.Level = float64(v.clients)
		}
		if err := v.checkActive("--sweep", start); err != nil {
			return err
		}
	} else if err := v.excludeLoad("--sweep", &v.stages); err != nil {
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
	if kind == sweep.Active {
		p.Clients = v.clients
		if !v.given(&v.sweepStart) {
			p.Start = float64(v.clients) // one conversation per client
		}
	}
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
	if kind == sweep.Active && v.given(&v.slo) {
		return command.Usagef("--slo: --sweep active is judged on how much of each stage's working set the server kept in cache, not on objectives; use --sweep clients or users for a capacity under objectives")
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
	s := schedule.Staged{Rate: stages[0].Kind == sweep.Rate, Poisson: o.sched.poisson, Seed: o.replay.RandSeed, First: first}
	switch stages[0].Kind {
	case sweep.Users:
		s.Gap = o.sched.userGap
	case sweep.Active:
		s.Lanes = o.sched.clients
	}
	for _, st := range stages {
		s.Levels = append(s.Levels, schedule.Level{Level: st.Level, Duration: st.Duration, Warmup: st.Warmup})
	}
	return s
}
