// Package report renders what mtstats computed (Report): text tables,
// markdown, JSON, CSV, a self-contained HTML page with charts, and Excel
// workbooks (mtstats --xlsx).
package report

import (
	"github.com/mtkit/mtkit/internal/judge"
	"github.com/mtkit/mtkit/internal/retention"
	"github.com/mtkit/mtkit/internal/serverstats"
	"github.com/mtkit/mtkit/internal/stats"
	"github.com/mtkit/mtkit/internal/sweep"
)

// SchemaVersion is the "schema" value of the JSON report. It changes only
// when a field is removed or changes meaning; fields may be added.
const SchemaVersion = "mtstats/v1"

// Report is everything mtstats computed; every output format renders it.
type Report struct {
	Schema string `json:"schema"`
	// Partial: mtstats was interrupted before the end of its input.
	Partial bool `json:"partial"`
	// Live: a --every report, printed while the input is still being
	// read (nothing was interrupted).
	Live    bool         `json:"live,omitempty"`
	Inputs  stats.Inputs `json:"inputs"`
	Summary *stats.Group `json:"summary"`
	By      string       `json:"by,omitempty"`
	// ByDetail is how much each group shows: ByTable (the per-group
	// table's figures) or ByFull (the whole report).
	ByDetail string `json:"by_detail,omitempty"`
	// Only are the metrics of a report limited by --only.
	Only    []string            `json:"only,omitempty"`
	Groups  []*stats.Group      `json:"groups,omitempty"`
	SLO     *judge.SLOReport    `json:"slo,omitempty"`
	Compare *stats.Comparison   `json:"compare,omitempty"`
	Server  *serverstats.Server `json:"server,omitempty"` // server.go
	// Retention is the cache retention analysis of the records
	// (docs/mtstats.md, "Cache retention"); absent with --only and
	// --compare.
	Retention *retention.Result `json:"cache_retention,omitempty"`
	// RetentionByInput is each --compare input's cache retention.
	RetentionByInput []LabeledRetention `json:"cache_retention_by_input,omitempty"`
	// Affinity is present when records carry a backend.
	Affinity *stats.Affinity `json:"affinity,omitempty"`
	// Segments is the per-segment view of runs split over processes.
	Segments *stats.SegmentsReport `json:"segments,omitempty"`
	// Stages is one row per stage of a staged run or sweep, when the
	// records have more than one stage (stages.go).
	Stages []judge.StageRow `json:"stages,omitempty"`
	// Capacity is the sweep judged again from the records: at the levels
	// of its capacity file (--capacity), else at the records' stage loads.
	Capacity *sweep.Capacity `json:"capacity,omitempty"`
	// StagedRuns are the stages of each --compare input (two sweeps side
	// by side), instead of Stages.
	StagedRuns []judge.StagedRun `json:"staged_runs,omitempty"`

	// The fields below are not part of the JSON report: the collector
	// fills them for the HTML and XLSX reports.
	Turns  []*stats.Group `json:"-"` // per turn, for the HTML and XLSX reports
	Series []stats.Point  `json:"-"`
	// GroupTurns and GroupSeries are each --compare input's turns and
	// requests over time, for the HTML report.
	GroupTurns  map[string][]*stats.Group `json:"-"`
	GroupSeries map[string][]stats.Point  `json:"-"`
	Raw         [][]any                   `json:"-"` // rows of the XLSX "Raw data" sheet
	// Records is what the records say of their runs (llm-d's report).
	Records RecordInfo `json:"-"`
}

// LabeledRetention is the cache retention of one --compare input.
type LabeledRetention struct {
	Key string `json:"key"`
	*retention.Result
}

// Values of Options.ByDetail.
const (
	ByTable = "table"
	ByFull  = "full"
)

// SLOMet reports whether every SLO verdict of rep holds: the pooled one,
// or each --compare input's (true without --slo).
func (rep *Report) SLOMet() bool {
	if rep.SLO != nil && !rep.SLO.Met {
		return false
	}
	for _, g := range rep.Groups {
		if g.SLO != nil && !g.SLO.SLOMet() {
			return false
		}
	}
	return true
}
