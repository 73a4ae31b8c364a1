// Package deepeq tells whether two values are equal as
// cmp.Equal(a, b, cmpopts.EquateEmpty()) tells it for plain data
// (structs, pointers, slices, maps, times), many times faster: tests
// compare with Equal first and call cmp.Diff only on a mismatch, for
// the message (cmp.Diff took most of internal/record's test time).
package deepeq

import (
	"reflect"
	"time"
)

// Equal reports whether a and b are deeply equal, where times are equal
// when they are the same instant (time.Time.Equal: location and
// monotonic reading ignored), a nil and an empty slice or map are equal,
// and NaN equals nothing. Values it cannot read (unexported fields of
// kinds other than plain numbers, strings and bools; funcs; channels)
// make it report false, so that the caller's cmp.Diff decides.
func Equal(a, b any) bool { return equal(reflect.ValueOf(a), reflect.ValueOf(b)) }

var timeType = reflect.TypeFor[time.Time]()

func equal(a, b reflect.Value) bool {
	if !a.IsValid() || !b.IsValid() {
		return a.IsValid() == b.IsValid()
	}
	if a.Type() != b.Type() {
		return false
	}
	if a.Type() == timeType {
		if !a.CanInterface() || !b.CanInterface() {
			return false
		}
		return a.Interface().(time.Time).Equal(b.Interface().(time.Time))
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return equal(a.Elem(), b.Elem())
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !equal(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.Len() != b.Len() {
			return false
		}
		for it := a.MapRange(); it.Next(); {
			bv := b.MapIndex(it.Key())
			if !bv.IsValid() || !equal(it.Value(), bv) {
				return false
			}
		}
		return true
	case reflect.Struct:
		for i := range a.NumField() {
			if !equal(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint()
	case reflect.Float32, reflect.Float64:
		return a.Float() == b.Float()
	case reflect.Complex64, reflect.Complex128:
		return a.Complex() == b.Complex()
	case reflect.String:
		return a.String() == b.String()
	}
	return false // funcs, channels, unsafe pointers: cmp decides
}
