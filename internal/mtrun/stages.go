package mtrun

import (
	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/judge"
	"github.com/mtkit/mtkit/internal/schedule"
	"github.com/mtkit/mtkit/internal/sweep"
)

// StageSettings are the settings of a staged run or a sweep.
type StageSettings struct {
	Stages   []sweep.Stage  // --stages
	Sweep    *SweepSettings // --sweep
	Capacity string         // --capacity
}

// SweepSettings are the settings of --sweep.
type SweepSettings struct {
	Planner    sweep.Planner
	Objectives []judge.Objective
}

// stageSettings checks the stage flags.
func (v *Flags) stageSettings() (StageSettings, error) {
	f := StageSettings{Capacity: v.Capacity}
	if v.Given(&v.Sweep) {
		return f, v.sweepSettings(&f)
	}
	if name := v.FirstGiven(&v.SLO, &v.Capacity, &v.SweepStart, &v.SweepMax, &v.SweepStages, &v.SweepUnsteady, &v.StageDuration, &v.StageWarmup); name != "" {
		return f, command.Usagef("--%s needs --sweep", name)
	}
	if !v.Given(&v.Stages) {
		return f, nil
	}
	stages, err := sweep.ParseStages(v.Stages)
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
	f.Stages = stages
	return f, nil
}

// checkActive checks the flags of active stages (by): the clients are
// fixed by --clients, and every level has at least one conversation per
// client; the other load flags are refused as for any staged run.
func (v *Flags) checkActive(by string, stages ...sweep.Stage) error {
	if name := v.FirstGiven(&v.Active, &v.Rate, &v.Users, &v.TimeScale, &v.Duration, &v.MaxRequests); name != "" {
		return command.Usagef("%s active sets the active conversations and the run's length; it excludes --%s", by, name)
	}
	if !v.Given(&v.Clients) {
		return command.Usagef("%s active: give --clients, the fixed number of clients that share the active conversations", by)
	}
	for i, st := range stages {
		if st.Level < float64(v.Clients) {
			return command.Usagef("%s: stage %d %q: %g active conversations for %d clients; want at least one per client", by, i+1, st, st.Level, v.Clients)
		}
	}
	return nil
}

// checkUserGap checks that --user-gap is given for users stages (the
// time between a user's turns) and only for them.
func (v *Flags) checkUserGap(by string, kind sweep.Kind) error {
	switch {
	case kind == sweep.Users && !v.Given(&v.UserGap):
		return command.Usagef("%s users: give --user-gap, the time between a user's turns (e.g. 2s)", by)
	case kind != sweep.Users && v.Given(&v.UserGap):
		return command.Usagef("--user-gap is for users stages; %s %s does not use it", by, kind)
	}
	return nil
}

// excludeLoad refuses the flags a staged run or sweep (by) replaces;
// the flags of first are checked first.
func (v *Flags) excludeLoad(by string, first ...any) error {
	if name := v.FirstGiven(append(first, &v.Clients, &v.Active, &v.Rate, &v.Users, &v.TimeScale, &v.Duration, &v.MaxRequests)...); name != "" {
		return command.Usagef("%s sets the load and the run's length; it excludes --%s", by, name)
	}
	return nil
}

// sweepSettings checks the --sweep flags.
func (v *Flags) sweepSettings(f *StageSettings) error {
	kind := sweep.Kind(v.Sweep)
	if kind != sweep.Clients && kind != sweep.Rate && kind != sweep.Users && kind != sweep.Active {
		return command.Usagef("--sweep %q: want clients, users, rate or active", kind)
	}
	if kind == sweep.Active {
		if name := v.FirstGiven(&v.Stages); name != "" {
			return command.Usagef("--sweep sets the load and the run's length; it excludes --%s", name)
		}
		start := sweep.Stage{Kind: kind, Level: v.SweepStart}
		if !v.Given(&v.SweepStart) {
			start.Level = float64(v.Clients)
		}
		if err := v.checkActive("--sweep", start); err != nil {
			return err
		}
	} else if err := v.excludeLoad("--sweep", &v.Stages); err != nil {
		return err
	}
	if v.Given(&v.Segment) || v.Given(&v.Segments) {
		// The planner chooses each level from the stages measured
		// before; split over processes that needs a coordinator to
		// gather their records, which mtrun has not.
		return command.Usagef("--sweep chooses each stage from the measurements of the stages before, which a process split with --segment/--segments cannot see; run the sweep in one process, or split a --stages list (e.g. around the capacity a sweep found)")
	}
	if err := v.checkUserGap("--sweep", kind); err != nil {
		return err
	}
	p := sweep.Planner{Kind: kind, Start: v.SweepStart, Max: v.SweepMax, MaxStages: v.SweepStages,
		Duration: v.StageDuration, Warmup: v.StageWarmup, Criteria: sweep.Criteria{Unsteady: v.SweepUnsteady}}
	if kind == sweep.Active {
		p.Clients = v.Clients
		if !v.Given(&v.SweepStart) {
			p.Start = float64(v.Clients) // one conversation per client
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
	if kind == sweep.Active && v.Given(&v.SLO) {
		return command.Usagef("--slo: --sweep active is judged on how much of each stage's working set the server kept in cache, not on objectives; use --sweep clients or users for a capacity under objectives")
	}
	objs, err := judge.ParseSLO(v.SLO)
	if err != nil {
		return command.Usagef("--%v", err)
	}
	p.Objectives = len(objs) > 0
	f.Sweep = &SweepSettings{Planner: p, Objectives: objs}
	return nil
}

// staged returns the schedule of stages numbered from first, with the
// run's arrival process and seed for rates and --user-gap for users.
func (o *Options) staged(stages []sweep.Stage, first int) schedule.Staged {
	s := schedule.Staged{Rate: stages[0].Kind == sweep.Rate, Poisson: o.sched.poisson, Seed: o.Replay.RandSeed, First: first}
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
