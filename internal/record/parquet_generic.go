package record

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// The generic decoder reads a Parquet file of records whatever wrote it
// (pyarrow, DuckDB, Spark, parquet-go): columns are matched to Record
// fields by name, in any order; extra columns are ignored and missing ones
// read as zero values (null for optional fields); values are converted
// from any compatible physical type (INT32 or INT64 for integers, any
// timestamp unit or INT96 for times, any encoding, dictionary included)
// and may be optional where ParquetEncoder writes them required. It reads
// rows through parquet-go's untyped rows of the file's row groups, so it is slower than the
// columnar decoder, which handles the files ParquetEncoder writes.

// genericReader reads records from rows of any record-like schema.
type genericReader struct {
	rows parquet.Rows
	cols []genericCol // by leaf column index; set == nil: ignored
	buf  []parquet.Row
}

// genericCol fills one Record field from the values of one leaf column.
type genericCol struct {
	name string
	set  func(r *Record, v parquet.Value) error // one value (nulls excluded)
	list bool                                   // values are appended (itl_ns)
}

// newGenericReader prepares the rows of f; name is used in errors. It fails
// when a column named like a Record field has a type that cannot hold it,
// or when the file has none of the identity columns.
func newGenericReader(f *parquet.File, name string) (*genericReader, error) {
	schema := f.Schema()
	paths := schema.Columns()
	g := &genericReader{cols: make([]genericCol, len(paths))}
	found := 0
	for _, path := range paths {
		leaf, ok := schema.Lookup(path...)
		if !ok {
			continue
		}
		sf, ok := fieldByName[path[0]]
		if !ok {
			continue // an extra column
		}
		i := sf.Index
		field := reflect.TypeFor[Record]().Field(i)
		nested := len(path) > 1
		if nested != (field.Type.Kind() == reflect.Slice) {
			return nil, fmt.Errorf("%s: parquet: column %s: a %s field cannot be read from %s", name, strings.Join(path, "."), field.Type, describe(leaf.Node))
		}
		set, err := setter(i, leaf.Node)
		if err != nil {
			return nil, fmt.Errorf("%s: parquet: column %s: %w", name, strings.Join(path, "."), err)
		}
		g.cols[leaf.ColumnIndex] = genericCol{name: strings.Join(path, "."), set: set, list: nested}
		if path[0] == "run_id" || path[0] == "start" {
			found++
		}
	}
	if found == 0 {
		return nil, fmt.Errorf("%s: parquet: no run_id or start column: not a file of records (columns: %s)", name, columnNames(paths))
	}
	g.rows = parquet.MultiRowGroup(f.RowGroups()...).Rows()
	return g, nil
}

// columnNames lists the top-level column names of paths.
func columnNames(paths [][]string) string {
	var names []string
	for _, p := range paths {
		if len(names) == 0 || names[len(names)-1] != p[0] {
			names = append(names, p[0])
		}
	}
	if len(names) > 12 {
		names = append(names[:12], "…")
	}
	return strings.Join(names, ", ")
}

// describe names the type of a leaf for errors.
func describe(n parquet.Node) string {
	if lt := n.Type().LogicalType(); lt != nil {
		return fmt.Sprintf("%s (%s)", n.Type().Kind(), lt)
	}
	return n.Type().Kind().String()
}

// read fills recs with the next rows and returns how many it filled.
func (g *genericReader) read(recs []Record) (int, error) {
	if cap(g.buf) < len(recs) {
		g.buf = make([]parquet.Row, len(recs))
	}
	rows := g.buf[:len(recs)]
	n, err := g.rows.ReadRows(rows)
	for k := range n {
		r := &recs[k]
		*r = Record{}
		for _, v := range rows[k] {
			c := &g.cols[v.Column()]
			if c.set == nil || v.IsNull() {
				continue
			}
			if serr := c.set(r, v); serr != nil {
				return k, fmt.Errorf("column %s: %w", c.name, serr)
			}
		}
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return n, err
	}
	return n, err
}

// setter returns the function that stores a value of leaf n into field i
// of a Record, or an error when n's type cannot hold the field.
func setter(i int, n parquet.Node) (func(*Record, parquet.Value) error, error) {
	f := reflect.TypeFor[Record]().Field(i)
	t := f.Type
	kind := n.Type().Kind()
	field := func(r *Record) reflect.Value { return reflect.ValueOf(r).Elem().Field(i) }
	mismatch := fmt.Errorf("a %s field cannot be read from %s", t, describe(n))
	switch {
	case t == reflect.TypeFor[time.Time]() || t == reflect.TypeFor[*time.Time]():
		conv, err := timeOf(n)
		if err != nil {
			return nil, err
		}
		ptr := t.Kind() == reflect.Pointer
		return func(r *Record, v parquet.Value) error {
			tm, err := conv(v)
			if err != nil {
				return err
			}
			if ptr {
				field(r).Set(reflect.ValueOf(&tm))
			} else {
				field(r).Set(reflect.ValueOf(tm))
			}
			return nil
		}, nil
	}
	elem := t
	if t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		elem = t.Elem()
	}
	var get func(parquet.Value) (reflect.Value, error)
	switch elem.Kind() {
	case reflect.String:
		if kind != parquet.ByteArray && kind != parquet.FixedLenByteArray {
			return nil, mismatch
		}
		get = func(v parquet.Value) (reflect.Value, error) { return reflect.ValueOf(string(v.ByteArray())), nil }
	case reflect.Int, reflect.Int64:
		if kind != parquet.Int32 && kind != parquet.Int64 {
			return nil, mismatch
		}
		get = func(v parquet.Value) (reflect.Value, error) {
			return reflect.ValueOf(v.Int64()).Convert(elem), nil
		}
	case reflect.Float64:
		switch kind {
		case parquet.Float, parquet.Double:
			get = func(v parquet.Value) (reflect.Value, error) { return reflect.ValueOf(v.Double()), nil }
		case parquet.Int32, parquet.Int64:
			get = func(v parquet.Value) (reflect.Value, error) { return reflect.ValueOf(float64(v.Int64())), nil }
		default:
			return nil, mismatch
		}
	case reflect.Bool:
		if kind != parquet.Boolean {
			return nil, mismatch
		}
		get = func(v parquet.Value) (reflect.Value, error) { return reflect.ValueOf(v.Boolean()), nil }
	default:
		return nil, mismatch
	}
	switch t.Kind() {
	case reflect.Pointer:
		return func(r *Record, v parquet.Value) error {
			x, err := get(v)
			if err != nil {
				return err
			}
			p := reflect.New(elem)
			p.Elem().Set(x)
			field(r).Set(p)
			return nil
		}, nil
	case reflect.Slice:
		return func(r *Record, v parquet.Value) error {
			x, err := get(v)
			if err != nil {
				return err
			}
			fv := field(r)
			fv.Set(reflect.Append(fv, x))
			return nil
		}, nil
	}
	return func(r *Record, v parquet.Value) error {
		x, err := get(v)
		if err != nil {
			return err
		}
		field(r).Set(x)
		return nil
	}, nil
}

// timeOf returns the conversion of leaf n's values to times: INT64 with a
// TIMESTAMP logical (or legacy converted) type of any unit, INT64 without
// one as nanoseconds (as ParquetEncoder writes), INT96 (Impala, Spark,
// older pyarrow), or RFC 3339 strings.
func timeOf(n parquet.Node) (func(parquet.Value) (time.Time, error), error) {
	switch n.Type().Kind() {
	case parquet.Int64:
		unit := time.Nanosecond
		if lt := n.Type().LogicalType(); lt != nil {
			if ts, ok := lt.Value.(*format.TimestampType); ok && ts.Unit.Value != nil {
				unit = ts.Unit.Value.Duration()
			}
		} else if ct := n.Type().ConvertedType(); ct != nil {
			switch *ct {
			case deprecated.TimestampMillis:
				unit = time.Millisecond
			case deprecated.TimestampMicros:
				unit = time.Microsecond
			}
		}
		return func(v parquet.Value) (time.Time, error) {
			x := v.Int64()
			return time.Unix(0, 0).Add(time.Duration(x) * unit).UTC(), nil
		}, nil
	case parquet.Int96:
		return func(v parquet.Value) (time.Time, error) {
			// Nanoseconds of the day (low 8 bytes), then the Julian day.
			i := v.Int96()
			nanos := int64(i[1])<<32 | int64(i[0])
			const unixEpochJulianDay = 2440588
			days := int64(i[2]) - unixEpochJulianDay
			return time.Unix(days*86400, nanos).UTC(), nil
		}, nil
	case parquet.ByteArray:
		return func(v parquet.Value) (time.Time, error) {
			t, err := time.Parse(time.RFC3339Nano, string(v.ByteArray()))
			if err != nil {
				return time.Time{}, fmt.Errorf("%q is not an RFC 3339 time", v.ByteArray())
			}
			return t, nil
		}, nil
	}
	return nil, fmt.Errorf("a timestamp cannot be read from %s", describe(n))
}

// fallBack switches a columnar decoder to the generic reader from the
// current row on, when a row group of a file with ParquetEncoder's schema
// is encoded in a way the columnar decoder does not read (dictionary-
// encoded integers, as pyarrow writes them). Row groups decoded ahead are
// waited for (they read the same file) and dropped.
func (d *ParquetDecoder) fallBack() bool {
	for _, ch := range d.ahead {
		<-ch
	}
	g, err := newGenericReader(d.file, d.name)
	if err == nil {
		err = g.rows.SeekToRow(int64(d.row))
	}
	if err != nil {
		d.err, d.done = fmt.Errorf("%s: parquet: row %d: %w", d.name, d.row+1, err), true
		return false
	}
	d.g, d.groups, d.ahead = g, nil, nil
	d.buf = make([]Record, parquetBatch)
	return d.fill()
}
