package stats

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/mtkit/mtkit/internal/sweep"
)

// ErrCapacityNotReached is returned when --min-capacity was given and the sweep's
// capacity, judged from the records, is below it.
var ErrCapacityNotReached = fmt.Errorf("%w: capacity not reached", ErrCheckFailed)

// capacityIn is a sweep's capacity JSON (mtrun --capacity) read for its
// stages' levels.
type capacityIn struct {
	path string
	c    sweep.Capacity
}

// readCapacity reads the capacity JSON of o.Capacity, when given, and
// returns the objectives the stages are judged with: --slo, else the
// file's.
func readCapacity(o *Options, objs []Objective) (*capacityIn, []Objective, error) {
	switch {
	case o.Capacity == "" && o.MinCapacity != 0:
		return nil, nil, &UsageError{fmt.Errorf("--min-capacity needs --capacity FILE (the sweep's capacity JSON, for its stages' levels)")}
	case o.Capacity == "":
		return nil, objs, nil
	case o.MinCapacity < 0:
		return nil, nil, &UsageError{fmt.Errorf("--min-capacity %g is negative", o.MinCapacity)}
	}
	data, err := os.ReadFile(o.Capacity)
	if err != nil {
		return nil, nil, err
	}
	in := &capacityIn{path: o.Capacity}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&in.c); err != nil {
		return nil, nil, fmt.Errorf("%s: %v", o.Capacity, err)
	}
	if in.c.Schema != sweep.CapacitySchema {
		return nil, nil, fmt.Errorf("%s: schema: %q; want %q", o.Capacity, in.c.Schema, sweep.CapacitySchema)
	}
	for i, j := range in.c.Stages {
		if j.Stage < 1 || !(j.Level > 0) {
			return nil, nil, fmt.Errorf("%s: stages[%d]: stage %d at level %g; want a stage from 1 and a level above 0", o.Capacity, i, j.Stage, j.Level)
		}
	}
	if len(objs) == 0 {
		objs, err = ParseSLO(strings.Join(in.c.Objectives, ","))
		if err != nil {
			return nil, nil, fmt.Errorf("%s: objectives: %v", o.Capacity, err)
		}
	}
	return in, objs, nil
}

// judge re-judges the sweep from the records' stages: each stage of the
// file that has records is measured here, at the file's level.
func (in *capacityIn) judge(s *Stages, objs []Objective) *sweep.Capacity {
	levels := map[int]sweep.Stage{}
	for _, j := range in.c.Stages {
		levels[j.Stage] = sweep.Stage{Kind: j.Kind, Level: j.Level}
	}
	var rs []sweep.Result
	for _, row := range s.Rows() {
		if st, ok := levels[row.Stage]; ok {
			rs = append(rs, row.Result(st))
		}
	}
	c := sweep.Criteria{Unsteady: in.c.Unsteady}.Judge(in.c.Kind, ObjectiveTexts(objs), rs)
	return &c
}
