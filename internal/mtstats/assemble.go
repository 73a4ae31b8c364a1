package mtstats

import (
	"math"

	"github.com/mtkit/mtkit/internal/judge"
	"github.com/mtkit/mtkit/internal/report"
	"github.com/mtkit/mtkit/internal/stats"
	"github.com/mtkit/mtkit/internal/sweep"
	"github.com/mtkit/mtkit/internal/workbook"
)

// Report builds the report of what was read so far. It sorts samples in
// place, so the caller must hold c.mu.
func (c *collector) report(objs []judge.Objective, compare bool) *report.Report {
	rep := &report.Report{Schema: report.SchemaVersion, Inputs: c.in, By: c.opts.By}
	if c.opts.By != "" {
		rep.ByDetail = report.ByFull
		if c.liteGroups {
			rep.ByDetail = report.ByTable
		}
	}
	rep.Inputs.Files = make([]*stats.FileStats, len(c.in.Files))
	for i, f := range c.in.Files {
		cp := *f
		rep.Inputs.Files[i] = &cp
	}
	rep.Summary = c.all.Group("")
	if c.records != nil {
		rep.Records = *c.records
	}
	for _, m := range c.opts.only {
		rep.Only = append(rep.Only, stats.MetricNames[m])
	}
	if rep.Only == nil { // --only: the request counts and the metrics only
		rep.Affinity = c.aff.Report()
		rep.Segments = c.segs.Report()
	}
	rep.Series = c.all.Series()
	rep.Raw = c.raw
	if len(rep.Raw) > workbook.MaxRows {
		rep.Raw = rep.Raw[:workbook.MaxRows]
	}
	keys := make([]string, 0, len(c.groups))
	for k := range c.groups {
		keys = append(keys, k)
	}
	if c.opts.By == "file" || compare {
		keys = keys[:0]
		for _, f := range c.in.Files {
			if c.groups[f.Label] != nil {
				keys = append(keys, f.Label)
			}
		}
	} else {
		stats.SortKeys(keys)
	}
	for _, k := range keys {
		rep.Groups = append(rep.Groups, c.groups[k].Group(k))
	}
	if c.groupTurns != nil {
		rep.GroupTurns, rep.GroupSeries = map[string][]*stats.Group{}, map[string][]stats.Point{}
		for _, k := range keys {
			rep.GroupTurns[k] = stats.TurnGroups(c.groupTurns[k])
			rep.GroupSeries[k] = c.groups[k].Series()
		}
	}
	rep.Turns = stats.TurnGroups(c.turns)
	switch {
	case c.slo != nil && compare:
		// Issue 23: one verdict over the pooled inputs answered nothing;
		// each input gets its own, and its goodput.
		for _, g := range rep.Groups {
			g.SLO = sloOf(g, c.groups[g.Key], c.groupTurnAccs(g.Key), objs)
		}
	case c.slo != nil:
		rep.SLO = sloOf(rep.Summary, c.all, c.turns, objs)
	}
	if compare {
		rep.Compare = stats.Compare(rep.Groups, rep.Only)
	}
	if c.stagesBy != nil {
		for _, k := range keys {
			if s := c.stagesBy[k]; s != nil && s.Len() > 1 {
				rows := s.Rows()
				rep.StagedRuns = append(rep.StagedRuns, judge.StagedRun{Label: k, Stages: rows, Capacity: judge.JudgeLoads(rows, s.Objectives(), sweep.Criteria{})})
			}
		}
	} else if c.stages.Len() > 1 {
		rep.Stages = c.stages.Rows()
		rep.Capacity = judge.JudgeLoads(rep.Stages, c.stages.Objectives(), sweep.Criteria{})
	}
	if c.capacity != nil {
		rep.Capacity = c.capacity.Judge(c.stages, c.stages.Objectives())
	}
	return rep
}

// groupTurnAccs is the per-turn accumulators of the --compare input
// labelled key (nil when none were kept).
func (c *collector) groupTurnAccs(key string) map[int]*stats.Acc {
	if c.groupTurns == nil {
		return nil
	}
	return c.groupTurns[key]
}

// sloOf judges objs over the requests of a (summarised as g, whose
// goodput figures it sets), turn objectives over turns.
func sloOf(g *stats.Group, a *stats.Acc, turns map[int]*stats.Acc, objs []judge.Objective) *judge.SLOReport {
	s := &judge.SLOReport{Met: true}
	s.Requests, s.GoodRequests, s.Conversations, s.GoodConversations = a.SLOCounts()
	s.GoodRequestShare = stats.Ratio(float64(s.GoodRequests), float64(s.Requests))
	s.Goodput = stats.Num(math.NaN())
	if rt := float64(g.RuntimeSec); rt > 0 {
		s.Goodput = stats.Num(float64(s.GoodRequests) / rt)
	}
	s.GoodConversationShare = stats.Ratio(float64(s.GoodConversations), float64(s.Conversations))
	g.GoodRequests = &s.GoodRequests
	gp := s.Goodput
	g.Goodput = &gp
	g.Conversations.MetSLO = &s.GoodConversations
	for _, o := range objs {
		res := judge.Evaluate(o, a, turns)
		s.Met = s.Met && res.Met
		s.Objectives = append(s.Objectives, res)
	}
	return s
}
