package mtstats

import (
	"fmt"

	"github.com/mtkit/mtkit/internal/judge"
)

// ErrCapacityNotReached is returned when --min-capacity was given and the sweep's
// capacity, judged from the records, is below it.
var ErrCapacityNotReached = fmt.Errorf("%w: capacity not reached", ErrCheckFailed)

// readCapacity reads the capacity JSON of o.Capacity, when given, and
// returns the objectives the stages are judged with: --slo, else the
// file's.
func readCapacity(o *Options, objs []judge.Objective) (*judge.CapacityFile, []judge.Objective, error) {
	switch {
	case o.Capacity == "" && o.MinCapacity != 0:
		return nil, nil, &UsageError{fmt.Errorf("--min-capacity needs --capacity FILE (the sweep's capacity JSON, for its stages' levels)")}
	case o.Capacity == "":
		return nil, objs, nil
	case o.MinCapacity < 0:
		return nil, nil, &UsageError{fmt.Errorf("--min-capacity %g is negative", o.MinCapacity)}
	}
	return judge.ReadCapacityFile(o.Capacity, objs)
}
