package record

import (
	"fmt"
	"reflect"
	"strings"
	"unsafe"
)

// Columns is the set of record fields a reader needs. The decoders fill
// only those: Parquet column chunks of other fields are not read, JSON
// members of other fields are skipped without being decoded (an ITL gap
// list costs a scan for its closing bracket instead of a slice of
// numbers). The fields every record is checked with (run_id, start, end)
// are always read. A nil *Columns means every field.
type Columns struct {
	keep []bool // by schema index
	// typ is Record with the json tag of every field not kept set to "-":
	// the same memory layout, so a *Record can be decoded as a *typ.
	typ reflect.Type
}

// alwaysRead are the fields validate checks.
var alwaysRead = []string{"run_id", "start", "end"}

// NewColumns returns the set of the named fields (JSON names) and those
// always read; a name that is not a record field is an error.
func NewColumns(names ...string) (*Columns, error) {
	c := &Columns{keep: make([]bool, len(schema))}
	for _, n := range append(names, alwaysRead...) {
		f := fieldByName[n]
		if f == nil {
			return nil, fmt.Errorf("record: no field %q", n)
		}
		c.keep[f.Index] = true
	}
	t := reflect.TypeFor[Record]()
	fields := make([]reflect.StructField, t.NumField())
	for i := range fields {
		fields[i] = t.Field(i)
		if !c.keep[i] {
			fields[i].Tag = reflect.StructTag(strings.Replace(string(fields[i].Tag), `json:"`+schema[i].Name, `json:"-`, 1))
		}
	}
	c.typ = reflect.StructOf(fields)
	if c.typ.Size() != t.Size() {
		panic("record: projected type differs in layout")
	}
	return c, nil
}

// Has reports whether the field named name (JSON name) is read.
func (c *Columns) Has(name string) bool {
	if c == nil {
		return true
	}
	f := fieldByName[name]
	return f != nil && c.keep[f.Index]
}

// has reports whether schema field i is read.
func (c *Columns) has(i int) bool { return c == nil || c.keep[i] }

// target is what the JSON decoder decodes r as: r itself, or r seen as
// the projected type.
func (c *Columns) target(r *Record) any {
	if c == nil {
		return r
	}
	return reflect.NewAt(c.typ, unsafe.Pointer(r)).Interface()
}
