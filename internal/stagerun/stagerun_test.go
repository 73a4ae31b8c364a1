package stagerun

import (
	"slices"
	"testing"

	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/sweep"
)

// encoderFunc is a record.Encoder that calls itself per record.
type encoderFunc func(*record.Record) error

func (f encoderFunc) Encode(r *record.Record) error { return f(r) }
func (f encoderFunc) Flush() error                  { return nil }
func (f encoderFunc) Close() error                  { return nil }

// TestStageLoads: each staged record gets the load of its stage, counted
// from the first stage's number; others pass unchanged.
func TestStageLoads(t *testing.T) {
	t.Parallel()
	stages, err := sweep.ParseStages("clients=1:10s,clients=3:10s")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	enc := StageLoads{encoderFunc(func(r *record.Record) error { got = append(got, r.StageLoad); return nil }), 4, stages}
	for _, n := range []int{0, 3, 4, 5, 6} {
		if err := enc.Encode(&record.Record{Stage: n}); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"", "", "clients=1", "clients=3", ""}; !slices.Equal(got, want) {
		t.Errorf("stage loads %q, want %q", got, want)
	}
}
