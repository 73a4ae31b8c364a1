package record

import (
	"fmt"
	"reflect"
	"strings"
	"time"
	"unsafe"
)

// The Record struct and its tags are the record schema: the JSON codec
// (goccy/go-json, from the json tags), the Parquet schema (parquet-go,
// from the parquet tags), the columnar and generic Parquet readers, the
// Excel columns of mtstats and the test generators all derive from it by
// reflection, once, at init. Adding a field is adding it to Record (with
// its json and parquet tags), to the code that fills it and to
// docs/records.md (TestDocsListEveryField checks the docs).

// Kind is the shape of a record field's Go type.
type Kind int

// The kinds of record fields. A field of any other type makes the
// package panic at init (a programming error, caught by every test).
const (
	KindString     Kind = iota // string
	KindInt                    // int
	KindInt64                  // int64
	KindBool                   // bool
	KindTime                   // time.Time
	KindInt64Ptr               // *int64
	KindFloat64Ptr             // *float64
	KindBoolPtr                // *bool
	KindTimePtr                // *time.Time
	KindInt64List              // []int64
)

// Field is one field of Record as the schema sees it.
type Field struct {
	Name   string // JSON key and Parquet column
	GoName string // Record's field name
	Kind   Kind
	Index  int // in reflect.TypeFor[Record]().Field
	offset uintptr
}

// ptr returns the address of the field in r.
func (f *Field) ptr(r *Record) unsafe.Pointer { return unsafe.Add(unsafe.Pointer(r), f.offset) }

// Value returns the field's value in r as a plain Go value for reports:
// string, int64, float64, bool, time.Time or []int64; nil for a nil
// pointer or an empty list.
func (f *Field) Value(r *Record) any {
	p := f.ptr(r)
	switch f.Kind {
	case KindString:
		return *(*string)(p)
	case KindInt:
		return int64(*(*int)(p))
	case KindInt64:
		return *(*int64)(p)
	case KindBool:
		return *(*bool)(p)
	case KindTime:
		return *(*time.Time)(p)
	case KindInt64Ptr:
		if v := *(**int64)(p); v != nil {
			return *v
		}
	case KindFloat64Ptr:
		if v := *(**float64)(p); v != nil {
			return *v
		}
	case KindBoolPtr:
		if v := *(**bool)(p); v != nil {
			return *v
		}
	case KindTimePtr:
		if v := *(**time.Time)(p); v != nil {
			return *v
		}
	case KindInt64List:
		if v := *(*[]int64)(p); len(v) > 0 {
			return v
		}
	}
	return nil
}

// Fields returns the record schema: every field of Record in declaration
// order. The slice is shared; do not modify it.
func Fields() []Field { return schema }

// schema is Fields, built from Record's type at init.
var schema = mustSchema(reflect.TypeFor[Record]())

// fieldByName maps the JSON name of each field to its Field.
var fieldByName = func() map[string]*Field {
	m := make(map[string]*Field, len(schema))
	for i := range schema {
		m[schema[i].Name] = &schema[i]
	}
	return m
}()

// kinds maps Go types to field kinds.
var kinds = map[reflect.Type]Kind{
	reflect.TypeFor[string]():     KindString,
	reflect.TypeFor[int]():        KindInt,
	reflect.TypeFor[int64]():      KindInt64,
	reflect.TypeFor[bool]():       KindBool,
	reflect.TypeFor[time.Time]():  KindTime,
	reflect.TypeFor[*int64]():     KindInt64Ptr,
	reflect.TypeFor[*float64]():   KindFloat64Ptr,
	reflect.TypeFor[*bool]():      KindBoolPtr,
	reflect.TypeFor[*time.Time](): KindTimePtr,
	reflect.TypeFor[[]int64]():    KindInt64List,
}

func mustSchema(t reflect.Type) []Field {
	fs, err := schemaOf(t)
	if err != nil {
		panic(err)
	}
	return fs
}

// schemaOf derives the schema of a record struct type: every field needs
// a kind, a json name and a parquet name equal to it.
func schemaOf(t reflect.Type) ([]Field, error) {
	out := make([]Field, 0, t.NumField())
	seen := map[string]bool{}
	for i := range t.NumField() {
		sf := t.Field(i)
		kind, ok := kinds[sf.Type]
		if !ok {
			return nil, fmt.Errorf("record: field %s: type %s has no schema kind (see record.Kind)", sf.Name, sf.Type)
		}
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		pq, _, _ := strings.Cut(sf.Tag.Get("parquet"), ",")
		if name == "" || name == "-" || pq != name {
			return nil, fmt.Errorf("record: field %s: json name %q and parquet name %q must be equal and set", sf.Name, name, pq)
		}
		if seen[name] {
			return nil, fmt.Errorf("record: field %s: name %q used twice", sf.Name, name)
		}
		seen[name] = true
		out = append(out, Field{Name: name, GoName: sf.Name, Kind: kind, Index: i, offset: sf.Offset})
	}
	return out, nil
}
