package judge

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/mtkit/mtkit/internal/sweep"
)

// CapacityFile is a sweep's capacity JSON (mtrun --capacity) read for its
// stages' levels.
type CapacityFile struct {
	path string
	c    sweep.Capacity
}

// Judge re-judges the sweep from the records' stages: each stage of the
// file that has records is measured here, at the file's level.
func (in *CapacityFile) Judge(s *Stages, objs []Objective) *sweep.Capacity {
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

// ReadCapacityFile reads the capacity JSON at path and returns the
// objectives the stages are judged with: objs, else the file's.
func ReadCapacityFile(path string, objs []Objective) (*CapacityFile, []Objective, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	in := &CapacityFile{path: path}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&in.c); err != nil {
		return nil, nil, fmt.Errorf("%s: %v", path, err)
	}
	if in.c.Schema != sweep.CapacitySchema {
		return nil, nil, fmt.Errorf("%s: schema: %q; want %q", path, in.c.Schema, sweep.CapacitySchema)
	}
	for i, j := range in.c.Stages {
		if j.Stage < 1 || !(j.Level > 0) {
			return nil, nil, fmt.Errorf("%s: stages[%d]: stage %d at level %g; want a stage from 1 and a level above 0", path, i, j.Stage, j.Level)
		}
	}
	if len(objs) == 0 {
		objs, err = ParseSLO(strings.Join(in.c.Objectives, ","))
		if err != nil {
			return nil, nil, fmt.Errorf("%s: objectives: %v", path, err)
		}
	}
	return in, objs, nil
}
