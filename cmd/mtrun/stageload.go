package main

import (
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/sweep"
)

// stageLoads sets each staged record's stage_load: stage n (from first)
// ran at stages[n-first].
type stageLoads struct {
	record.Encoder
	first  int
	stages []sweep.Stage
}

func (s stageLoads) Encode(r *record.Record) error {
	if i := r.Stage - s.first; r.Stage > 0 && i >= 0 && i < len(s.stages) {
		r.StageLoad = s.stages[i].Load()
	}
	return s.Encoder.Encode(r)
}
