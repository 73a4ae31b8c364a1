// Package recordtest makes records for tests of every package that reads
// or writes them. Its generator fills each field of the record schema
// (record.Fields) by reflection, from the field's type alone, so a field
// added to record.Record is covered by every round-trip test at once.
package recordtest

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"time"

	"github.com/mtkit/mtkit/internal/record"
)

// Random returns a record whose every field holds a random non-zero value
// of its type: strings (mixing ASCII, escapes and multi-byte runes),
// integers over their whole range, finite floats, true, times with
// nanoseconds, lists of 1–20 integers. Each pointer field and list is nil
// with probability nilProb (0: all set). Start and End are ordered as a
// valid record needs (End not before Start).
func Random(rng *rand.Rand, nilProb float64) record.Record {
	var r record.Record
	v := reflect.ValueOf(&r).Elem()
	for _, f := range record.Fields() {
		fv := v.Field(f.Index)
		if k := fv.Kind(); (k == reflect.Pointer || k == reflect.Slice) && rng.Float64() < nilProb {
			continue
		}
		if err := fill(rng, fv); err != nil {
			panic(fmt.Sprintf("recordtest: field %s: %v", f.Name, err))
		}
	}
	if r.End.Before(r.Start) {
		r.Start, r.End = r.End, r.Start
	}
	return r
}

// Records returns n records of Random, with ascending Seq so that they
// are distinct records of one run.
func Records(seed uint64, n int, nilProb float64) []record.Record {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	out := make([]record.Record, n)
	for i := range out {
		out[i] = Random(rng, nilProb)
		out[i].Seq = int64(i + 1)
	}
	return out
}

var timeType = reflect.TypeFor[time.Time]()

// pieces are the parts of random strings.
var pieces = []string{"a", "run-1", " ", "\"", "\\", "\n", "\t", "\x00", "\x1f", "<&>", "é", "日本", "🙂", "\u2028", "{\"k\":1}"}

// fill sets v to a random non-zero value.
func fill(rng *rand.Rand, v reflect.Value) error {
	if v.Type() == timeType {
		// 1970 to 2100, nanosecond precision, UTC (Parquet keeps no zone).
		v.Set(reflect.ValueOf(time.Unix(0, 1+rng.Int64N(4102444800e9)).UTC()))
		return nil
	}
	switch v.Kind() {
	case reflect.String:
		var sb strings.Builder
		for sb.Len() == 0 || rng.IntN(3) > 0 {
			sb.WriteString(pieces[rng.IntN(len(pieces))])
		}
		v.SetString(sb.String())
	case reflect.Int, reflect.Int64, reflect.Int32:
		x := int64(rng.Uint64())
		if x == 0 {
			x = 1
		}
		v.SetInt(x)
	case reflect.Float64:
		x := rng.NormFloat64() * 1e9
		if x == 0 {
			x = 0.5
		}
		v.SetFloat(x)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		if err := fill(rng, p.Elem()); err != nil {
			return err
		}
		v.Set(p)
	case reflect.Slice:
		n := 1 + rng.IntN(20)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range s.Len() {
			if err := fill(rng, s.Index(i)); err != nil {
				return err
			}
		}
		v.Set(s)
	default:
		return fmt.Errorf("no random value for type %s: teach recordtest.fill", v.Type())
	}
	return nil
}
