package record

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"time"
	"unsafe"

	"github.com/parquet-go/parquet-go"
)

// Parquet writer tuning: a row group is written every ParquetRowGroupRows
// records or every ParquetFlushInterval, whichever comes first, so memory
// stays bounded however long the run.
const (
	ParquetRowGroupRows  = 64 << 10
	ParquetFlushInterval = time.Second
	parquetBatch         = 1024
)

// ParquetEncoder writes records to a Parquet file (zstd, one row group per
// ParquetRowGroupRows records or ParquetFlushInterval). A Parquet file is
// readable only once Close has written its footer, so Close must be called
// on every exit path.
type ParquetEncoder struct {
	w       *parquet.GenericWriter[Record]
	dst     io.Writer
	batch   []Record
	pending int // records in the current row group
	// rowGroupRows caps a row group (ParquetRowGroupRows).
	rowGroupRows int
	// flushEvery ends a row group this long after the last (0: never).
	flushEvery time.Duration
	lastFlush  time.Time
	now        func() time.Time
	closed     bool
}

var _ Encoder = (*ParquetEncoder)(nil)

// NewParquetEncoder returns an encoder writing to w. Close writes the footer
// and flushes w if it has Flush() error; it does not close w.
func NewParquetEncoder(w io.Writer) *ParquetEncoder {
	return newParquetEncoder(w, ParquetRowGroupRows)
}

// newParquetEncoder is NewParquetEncoder with row groups of at most
// rowGroupRows records (tests use small groups).
func newParquetEncoder(w io.Writer, rowGroupRows int) *ParquetEncoder {
	pw := parquet.NewGenericWriter[Record](w,
		parquet.Compression(&parquet.Zstd),
		parquet.MaxRowsPerRowGroup(int64(rowGroupRows)),
		parquet.CreatedBy("mtkit", "", ""),
	)
	return &ParquetEncoder{w: pw, dst: w, now: time.Now, lastFlush: time.Now(), rowGroupRows: rowGroupRows, flushEvery: ParquetFlushInterval,
		batch: make([]Record, 0, min(parquetBatch, rowGroupRows))}
}

// reset makes e write a new file to w, reusing its buffers (building a
// writer is far dearer than resetting one).
func (e *ParquetEncoder) reset(w io.Writer) {
	e.w.Reset(w)
	e.dst, e.closed, e.pending, e.lastFlush = w, false, 0, e.now()
	clear(e.batch)
	e.batch = e.batch[:0]
}

// Encode buffers r; rows reach the file with the next row group.
func (e *ParquetEncoder) Encode(r *Record) error {
	if e.closed {
		return errors.New("parquet: encode after close")
	}
	e.batch = append(e.batch, *r)
	if len(e.batch) == cap(e.batch) {
		if err := e.writeBatch(); err != nil {
			return err
		}
	}
	if e.pending+len(e.batch) >= e.rowGroupRows || e.flushEvery > 0 && e.now().Sub(e.lastFlush) >= e.flushEvery {
		return e.Flush()
	}
	return nil
}

func (e *ParquetEncoder) writeBatch() error {
	if len(e.batch) == 0 {
		return nil
	}
	n, err := e.w.Write(e.batch)
	e.pending += n
	clear(e.batch) // drop references to strings and slices
	e.batch = e.batch[:0]
	if err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	return nil
}

// Flush ends the current row group and writes it out.
func (e *ParquetEncoder) Flush() error {
	e.lastFlush = e.now()
	if err := e.writeBatch(); err != nil {
		return err
	}
	if e.pending > 0 {
		if err := e.w.Flush(); err != nil {
			return fmt.Errorf("parquet: %w", err)
		}
		e.pending = 0
	}
	if f, ok := e.dst.(interface{ Flush() error }); ok {
		return f.Flush()
	}
	return nil
}

// Close writes the remaining rows and the footer. It is safe to call twice.
func (e *ParquetEncoder) Close() error {
	if e.closed {
		return nil
	}
	e.closed = true
	err := e.writeBatch()
	if cerr := e.w.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("parquet: %w", cerr)
	}
	if f, ok := e.dst.(interface{ Flush() error }); ok {
		if ferr := f.Flush(); ferr != nil && err == nil {
			err = ferr
		}
	}
	return err
}

// ParquetDecoder reads records from a Parquet file. Its API is that of
// JSONDecoder: Scan, Record, Err; a row that fails validation is reported
// as a *SyntaxError whose Line is the 1-based row number.
type ParquetDecoder struct {
	name string
	cols *Columns // nil: every field (columnar mode only)
	// optional are the fields of optional and list columns: a row group
	// sets them only in the rows that have a value (columnar mode).
	optional []*Field
	g        *genericReader // nil in columnar mode
	file     *parquet.File
	groups   []parquet.RowGroup  // columnar mode: row groups left to read
	ahead    []chan decodedGroup // columnar mode: row groups being decoded, in order
	bufs     *groupBufs          // columnar mode: consumed buffers, maybe shared with other decoders
	// idle, if set, is called when every row group of this file is being
	// decoded and fewer than parquetAhead are under way: Files starts
	// decoding the next part then (see Files.prefetch).
	idle  func()
	buf   []Record
	i, n  int
	row   int
	cur   *Record // in buf
	rec   Record  // zero: Record before the first Scan
	err   error
	done  bool
	total int64
}

// NewParquetDecoder opens the Parquet file r of the given size; name is
// used in errors. Columns missing from the file read as zero values.
func NewParquetDecoder(r io.ReaderAt, size int64, name string) (d *ParquetDecoder, err error) {
	defer func() {
		if p := recover(); p != nil { // parquet-go panics on some malformed files
			d, err = nil, fmt.Errorf("%s: parquet: %v", name, p)
		}
	}()
	f, err := parquet.OpenFile(r, size)
	if err != nil {
		return nil, fmt.Errorf("%s: parquet: %w", name, err)
	}
	d = &ParquetDecoder{name: name, total: f.NumRows(), bufs: &groupBufs{}}
	if columnarOK(f) {
		d.file, d.groups = f, f.RowGroups()
		schema := f.Schema()
		for _, path := range schema.Columns() {
			if leaf, ok := schema.Lookup(path...); ok && leaf.MaxDefinitionLevel > 0 {
				if fd := parquetColumns[path[0]]; fd != nil {
					d.optional = append(d.optional, fd)
				}
			}
		}
		return d, nil
	}
	if d.g, err = newGenericReader(f, name); err != nil { // see parquet_generic.go
		return nil, err
	}
	d.buf = make([]Record, parquetBatch)
	return d, nil
}

// NumRows is the number of rows the file holds.
func (d *ParquetDecoder) NumRows() int64 { return d.total }

// Scan advances to the next row; see JSONDecoder.Scan.
func (d *ParquetDecoder) Scan() bool {
	d.err = nil
	if d.i == d.n {
		if d.done {
			return false
		}
		if !d.fill() {
			return false
		}
	}
	d.cur = &d.buf[d.i] // valid until the next fill reuses the buffer
	d.i++
	d.row++
	if err := d.cur.validate(); err != nil {
		d.err = &SyntaxError{File: d.name, Line: d.row, Err: err}
	}
	return true
}

func (d *ParquetDecoder) fill() (ok bool) {
	defer func() {
		if p := recover(); p != nil {
			d.err, d.done, ok = fmt.Errorf("%s: parquet: row %d: %v", d.name, d.row+1, p), true, false
		}
	}()
	if d.g == nil {
		return d.fillColumnar()
	}
	n, err := d.g.read(d.buf)
	d.i, d.n = 0, n
	if err != nil {
		d.done = true
		if !errors.Is(err, io.EOF) {
			d.err = fmt.Errorf("%s: parquet: row %d: %w", d.name, d.row+n+1, err)
			return false
		}
	}
	return n > 0
}

// parquetAhead is how many row groups the columnar decoder decodes at
// once, in the background, the next one Scan takes included: while Scan
// hands out the rows of one group, the next is decoded, whether in the
// same file or in the next part of a directory (Files.prefetch).
const parquetAhead = 2

// decodedGroup is a row group decoded in the background.
type decodedGroup struct {
	recs []Record
	err  error
}

// fillColumnar makes the next non-empty row group d.buf. Up to
// parquetAhead row groups are decoded concurrently (columns and row groups
// are independent), the next one to hand over included; they are handed
// over in file order. Once the last row group is under way, the room left
// goes to the next inputs (idle).
func (d *ParquetDecoder) fillColumnar() bool {
	if d.buf != nil {
		d.bufs.put(d.buf)
		d.buf = nil
	}
	d.launch(parquetAhead - len(d.ahead))
	if len(d.groups) == 0 && len(d.ahead) < parquetAhead && d.idle != nil {
		d.idle()
	}
	if len(d.ahead) == 0 {
		d.done = true
		return false
	}
	g := <-d.ahead[0]
	d.ahead = d.ahead[1:]
	if errors.Is(g.err, errNotColumnar) {
		return d.fallBack() // see parquet_generic.go
	}
	if g.err != nil {
		d.err, d.done = fmt.Errorf("%s: parquet: row %d: %w", d.name, d.row+1, g.err), true
		return false
	}
	d.buf, d.i, d.n = g.recs, 0, len(g.recs)
	return true
}

// launch starts decoding up to room more row groups in the background and
// returns how many it started.
func (d *ParquetDecoder) launch(room int) int {
	started := 0
	for started < room && len(d.groups) > 0 {
		rg := d.groups[0]
		d.groups = d.groups[1:]
		n := int(rg.NumRows())
		if n == 0 {
			continue
		}
		recs, used := d.bufs.get(n)
		ch := make(chan decodedGroup, 1)
		d.ahead = append(d.ahead, ch)
		started++
		go func(f *parquet.File, cols *Columns) {
			defer func() {
				if p := recover(); p != nil { // parquet-go panics on some malformed files
					ch <- decodedGroup{err: fmt.Errorf("%v", p)}
				}
			}()
			if used {
				d.reset(recs) // a reused buffer holds the rows of an earlier group
			}
			err := readRowGroup(f, rg, recs, cols)
			ch <- decodedGroup{recs: recs, err: err}
		}(d.file, d.cols)
	}
	return started
}

// groupBufs keeps the buffers of consumed row groups for reuse, so that
// reading the parts of a directory does not allocate (and page-fault in)
// a new buffer per part. It is used only by the goroutine that calls Scan.
type groupBufs struct{ free [][]Record }

// get returns a buffer of n records: a kept one (used) or a new, zeroed one.
func (b *groupBufs) get(n int) (recs []Record, used bool) {
	for k := len(b.free) - 1; k >= 0; k-- {
		if cap(b.free[k]) >= n {
			recs = b.free[k][:n]
			b.free = slices.Delete(b.free, k, k+1)
			return recs, true
		}
	}
	return make([]Record, n), false
}

// put keeps a consumed buffer; at most parquetAhead+1 are kept, as many
// as are ever in use at once.
func (b *groupBufs) put(recs []Record) {
	if len(b.free) <= parquetAhead {
		b.free = append(b.free, recs[:0])
	}
}

// reset readies a buffer of records decoded before for the next row
// group. Only the fields of optional and list columns need zeroing: the
// fields of required columns are set in every row, those of unread
// columns never (clearing whole records was a sixth of the CPU time).
func (d *ParquetDecoder) reset(recs []Record) {
	for _, f := range d.optional {
		if !d.cols.has(f.Index) {
			continue
		}
		for i := range recs {
			p := f.ptr(&recs[i])
			switch f.Kind {
			case KindString:
				*(*string)(p) = ""
			case KindInt64List:
				*(*[]int64)(p) = nil
			case KindInt64Ptr, KindFloat64Ptr, KindBoolPtr, KindTimePtr:
				*(*unsafe.Pointer)(p) = nil
			default:
				clear(recs) // a kind not known to be optional: clear all
				return
			}
		}
	}
}

// Record returns the record of the last successful Scan.
func (d *ParquetDecoder) Record() *Record {
	if d.cur == nil {
		return &d.rec
	}
	return d.cur
}

// Err returns the problem with the last row, or a read error.
func (d *ParquetDecoder) Err() error { return d.err }

// Close releases the reader, after waiting for the row groups being
// decoded ahead; it does not close the file.
func (d *ParquetDecoder) Close() error {
	for _, ch := range d.ahead {
		if g := <-ch; g.recs != nil {
			d.bufs.put(g.recs)
		}
	}
	d.ahead, d.groups = nil, nil
	if d.buf != nil && d.g == nil {
		d.bufs.put(d.buf)
		d.buf, d.cur = nil, nil
	}
	if d.g == nil {
		return nil
	}
	return d.g.rows.Close()
}

// The columnar decoder reads a row group column by column, straight from
// the typed page data, instead of reconstructing each row through
// reflection: strings of dictionary columns are shared, and the optional
// values and ITL lists of a row group share backing arrays, so a record
// costs no allocation of its own. It handles the schema that
// ParquetEncoder writes; any other file (older or newer columns, other
// types or encodings) is read by parquet-go's generic reader instead.

// errNotColumnar makes the decoder fall back to the generic reader.
var errNotColumnar = errors.New("parquet: not the columnar layout")

// colSpec says how one leaf column fills a Record: the schema's field.
type colSpec = *Field

// at returns the address of field f of r as a *T; f's kind must be T's.
func at[T any](f *Field, r *Record) *T { return (*T)(f.ptr(r)) }

// parquetColumns maps column names to the fields they fill.
var parquetColumns = fieldByName

// columnarOK reports whether the file has exactly the schema this version
// of ParquetEncoder writes, so that every Record field has its column.
func columnarOK(f *parquet.File) bool {
	want := parquet.SchemaOf(Record{})
	return parquet.EqualNodes(f.Schema(), want)
}

// columnReader fills the records of a row group from one column chunk.
type columnReader struct {
	recs []Record
	leaf parquet.LeafColumn
	spec colSpec
	row  int // next row to fill
	strs []string
	dict parquet.Dictionary
	vals []parquet.Value
}

// readRowGroup decodes all rows of rg into recs (len = rg.NumRows()).
// Only the columns of cols are read.
func readRowGroup(f *parquet.File, rg parquet.RowGroup, recs []Record, cols *Columns) error {
	schema := f.Schema()
	for i, path := range schema.Columns() {
		name := path[0]
		spec, ok := parquetColumns[name]
		if !ok {
			return errNotColumnar
		}
		leaf, ok := schema.Lookup(path...)
		if !ok || leaf.ColumnIndex != i {
			return errNotColumnar
		}
		if !cols.has(spec.Index) {
			continue
		}
		cr := &columnReader{recs: recs, leaf: leaf, spec: spec}
		if err := cr.read(rg.ColumnChunks()[i]); err != nil {
			return err
		}
		if cr.row != len(recs) {
			return fmt.Errorf("column %s: %d of %d rows", name, cr.row, len(recs))
		}
	}
	return nil
}

func (c *columnReader) read(cc parquet.ColumnChunk) error {
	pages := cc.Pages()
	defer pages.Close()
	for {
		p, err := pages.ReadPage()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		err = c.page(p)
		parquet.Release(p)
		if err != nil {
			return err
		}
	}
}

// present returns, for each level of the page, whether it carries a value;
// nil means every row has one (a required column).
func (c *columnReader) page(p parquet.Page) error {
	defs := p.DefinitionLevels()
	maxDef := byte(c.leaf.MaxDefinitionLevel)
	n := int(p.NumValues())
	if c.spec.Kind == KindInt64List {
		return c.listPage(p, defs, p.RepetitionLevels(), maxDef)
	}
	if c.row+n > len(c.recs) {
		return fmt.Errorf("column %s: more values than rows", c.leaf.Path)
	}
	// next yields the row of each present value in order.
	rows := c.recs[c.row : c.row+n]
	c.row += n
	each := func(fn func(r *Record, j int)) {
		j := 0
		for k := range rows {
			if defs == nil || defs[k] == maxDef {
				fn(&rows[k], j)
				j++
			}
		}
	}
	switch c.spec.Kind {
	case KindString:
		return c.strings(p, each)
	case KindBool, KindBoolPtr:
		return c.bools(p, rows)
	}
	if p.Dictionary() != nil {
		return errNotColumnar
	}
	data := p.Data()
	f := c.spec
	switch f.Kind {
	case KindInt:
		v := data.Int64()
		if defs == nil { // required: one value per row
			for k := range rows {
				*at[int](f, &rows[k]) = int(v[k])
			}
			break
		}
		each(func(r *Record, j int) { *at[int](f, r) = int(v[j]) })
	case KindInt64:
		v := data.Int64()
		if defs == nil {
			for k := range rows {
				*at[int64](f, &rows[k]) = v[k]
			}
			break
		}
		each(func(r *Record, j int) { *at[int64](f, r) = v[j] })
	case KindInt64Ptr:
		v := data.Int64()
		buf := slices.Clone(v) // a copy not zeroed first
		each(func(r *Record, j int) { *at[*int64](f, r) = &buf[j] })
	case KindFloat64Ptr:
		v := data.Double()
		buf := slices.Clone(v)
		each(func(r *Record, j int) { *at[*float64](f, r) = &buf[j] })
	case KindTime:
		v := data.Int64()
		if defs == nil {
			for k := range rows {
				*at[time.Time](f, &rows[k]) = time.Unix(0, v[k]).UTC()
			}
			break
		}
		each(func(r *Record, j int) { *at[time.Time](f, r) = time.Unix(0, v[j]).UTC() })
	case KindTimePtr:
		v := data.Int64()
		buf := make([]time.Time, len(v))
		for j := range v {
			buf[j] = time.Unix(0, v[j]).UTC()
		}
		each(func(r *Record, j int) { *at[*time.Time](f, r) = &buf[j] })
	default:
		return errNotColumnar
	}
	return nil
}

func (c *columnReader) strings(p parquet.Page, each func(func(*Record, int))) error {
	if d := p.Dictionary(); d != nil {
		if d != c.dict {
			c.dict = d
			dv := d.Page().Data()
			data, off := dv.ByteArray()
			c.strs = c.strs[:0]
			for k := 0; k+1 < len(off); k++ {
				c.strs = append(c.strs, string(data[off[k]:off[k+1]]))
			}
		}
		iv := p.Data()
		idx := iv.Int32()
		var bad bool
		each(func(r *Record, j int) {
			if x := int(idx[j]); x < len(c.strs) && x >= 0 {
				*at[string](c.spec, r) = c.strs[x]
			} else {
				bad = true
			}
		})
		if bad {
			return fmt.Errorf("column %s: dictionary index out of range", c.leaf.Path)
		}
		return nil
	}
	pv := p.Data()
	data, off := pv.ByteArray()
	if len(off) == 0 {
		each(func(*Record, int) {})
		return nil
	}
	each(func(r *Record, j int) {
		if j+1 < len(off) {
			*at[string](c.spec, r) = string(data[off[j]:off[j+1]])
		}
	})
	return nil
}

func (c *columnReader) bools(p parquet.Page, rows []Record) error {
	if cap(c.vals) < len(rows) {
		c.vals = make([]parquet.Value, len(rows))
	}
	vals := c.vals[:len(rows)]
	n, err := p.Values().ReadValues(vals)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if n != len(rows) {
		return fmt.Errorf("column %s: %d of %d values", c.leaf.Path, n, len(rows))
	}
	for k, v := range vals {
		if v.IsNull() {
			continue
		}
		if c.spec.Kind == KindBool {
			*at[bool](c.spec, &rows[k]) = v.Boolean()
		} else {
			b := v.Boolean()
			*at[*bool](c.spec, &rows[k]) = &b
		}
	}
	return nil
}

func (c *columnReader) listPage(p parquet.Page, defs, reps []byte, maxDef byte) error {
	if p.Dictionary() != nil {
		return errNotColumnar
	}
	pv := p.Data()
	v := pv.Int64()
	buf := slices.Clone(v) // the page's memory is released
	j, start := 0, -1      // start: index in buf of the current row's first element
	for k := range defs {
		if reps == nil || reps[k] == 0 {
			c.row++
			start = -1
			if c.row > len(c.recs) {
				return fmt.Errorf("column %s: more lists than rows", c.leaf.Path)
			}
		}
		if defs[k] != maxDef {
			continue
		}
		if j >= len(buf) || c.row == 0 {
			return fmt.Errorf("column %s: levels and values disagree", c.leaf.Path)
		}
		l := at[[]int64](c.spec, &c.recs[c.row-1])
		switch {
		case start >= 0:
			*l = buf[start : j+1 : j+1]
		case *l == nil:
			start = j
			*l = buf[j : j+1 : j+1]
		default: // a list continued from the previous page
			*l = append(*l, buf[j])
		}
		j++
	}
	return nil
}
