package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"time"

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
	name   string
	cols   *Columns       // nil: every field (columnar mode only)
	g      *genericReader // nil in columnar mode
	file   *parquet.File
	groups []parquet.RowGroup  // columnar mode: row groups left to read
	ahead  []chan decodedGroup // columnar mode: row groups being decoded, in order
	bufs   *groupBufs          // columnar mode: consumed columns, maybe shared with other decoders
	// grp is the row group whose rows Scan hands out, grpRow the first
	// row not yet copied into buf (columnar mode).
	grp    *groupColumns
	grpRow int
	block  int // rows per block; 0: parquetBlock (tests set others)
	// idle, if set, is called when every row group of this file is being
	// decoded and fewer than aheadLimit are under way: Files starts
	// decoding the next part then (see Files.prefetch).
	idle func()
	// maxAhead overrides aheadLimit's choice (tests).
	maxAhead int
	buf      []Record
	i, n     int
	row      int
	cur      *Record // in buf
	rec      Record  // zero: Record before the first Scan
	err      error
	done     bool
	total    int64
}

// NewParquetDecoder opens the Parquet file r of the given size; name is
// used in errors. Columns missing from the file read as zero values.
func NewParquetDecoder(r io.ReaderAt, size int64, name string) (d *ParquetDecoder, err error) {
	defer func() {
		if p := recover(); p != nil { // parquet-go panics on some malformed files
			d, err = nil, fmt.Errorf("%s: parquet: %v", name, p)
		}
	}()
	if err := checkFooterLength(r, size); err != nil {
		return nil, fmt.Errorf("%s: parquet: %w", name, err)
	}
	f, err := parquet.OpenFile(r, size)
	if err != nil {
		return nil, fmt.Errorf("%s: parquet: %w", name, err)
	}
	d = &ParquetDecoder{name: name, total: f.NumRows(), bufs: &groupBufs{}}
	if columnarOK(f) {
		d.file, d.groups = f, f.RowGroups()
		return d, nil
	}
	if d.g, err = newGenericReader(f, name); err != nil { // see parquet_generic.go
		return nil, err
	}
	d.buf = make([]Record, parquetBatch)
	return d, nil
}

// checkFooterLength checks the footer length a Parquet file's last eight
// bytes give against the file's size. parquet-go makes room for the
// length it reads before reading: a damaged length (up to 4 GB) in a
// small file cost that much memory and seconds of clearing it.
func checkFooterLength(r io.ReaderAt, size int64) error {
	if size < 8 {
		return nil // parquet-go reports the missing header or footer
	}
	var tail [8]byte
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return nil // parquet-go reports it
	}
	if string(tail[4:]) != "PAR1" {
		return nil
	}
	if n := int64(binary.LittleEndian.Uint32(tail[:4])); n > size-12 {
		return fmt.Errorf("footer of %d bytes in a file of %d bytes (damaged or cut short)", n, size)
	}
	return nil
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

// aheadLimit is how many row groups are decoded at once: limit if set (by
// tests), else parquetAhead, or one when Go runs on a single processor,
// where decoding a second group ahead gains nothing and holds its columns
// in memory (29 MB more at the peak of a default summary of 2 M records).
func aheadLimit(limit int) int {
	switch {
	case limit > 0:
		return limit
	case runtime.GOMAXPROCS(0) == 1:
		return 1
	}
	return parquetAhead
}

// parquetBlock is how many rows of a decoded row group Scan copies into
// records at once, column after column: few enough that the block of
// records stays in the processor's cache meanwhile (a record is about
// 520 bytes; filling the records of a whole row group one column at a
// time cost a pass over memory per column).
const parquetBlock = 256

// decodedGroup is a row group decoded in the background.
type decodedGroup struct {
	cols *groupColumns
	err  error
}

// fillColumnar makes the next block of rows of the current row group, or
// else of the next non-empty one, d.buf. Up to aheadLimit row groups
// are decoded concurrently (columns and row groups are independent), the
// next one to hand over included; they are handed over in file order.
// Once the last row group is under way, the room left goes to the next
// inputs (idle).
func (d *ParquetDecoder) fillColumnar() bool {
	if d.grp != nil && d.grpRow < d.grp.n {
		d.fillBlock()
		return true
	}
	if d.grp != nil {
		d.bufs.put(d.grp)
		d.grp = nil
	}
	n := aheadLimit(d.maxAhead)
	d.launch(n - len(d.ahead))
	if len(d.groups) == 0 && len(d.ahead) < n && d.idle != nil {
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
	d.grp, d.grpRow = g.cols, 0
	d.fillBlock()
	return true
}

// fillBlock copies the next rows of the current row group into d.buf.
func (d *ParquetDecoder) fillBlock() {
	if d.block == 0 {
		d.block = parquetBlock
	}
	n := min(d.block, d.grp.n-d.grpRow)
	if len(d.buf) < n { // no larger than needed: a small file has few rows
		d.buf = make([]Record, min(d.block, d.grp.n))
	}
	d.grp.fill(d.buf[:n], d.grpRow)
	d.grpRow += n
	d.i, d.n = 0, n
}

// launch starts decoding up to room more row groups in the background and
// returns how many it started.
func (d *ParquetDecoder) launch(room int) int {
	started := 0
	for started < room && len(d.groups) > 0 {
		rg := d.groups[0]
		d.groups = d.groups[1:]
		if rg.NumRows() == 0 {
			continue
		}
		g := d.bufs.get()
		ch := make(chan decodedGroup, 1)
		d.ahead = append(d.ahead, ch)
		started++
		go func(f *parquet.File, cols *Columns) {
			defer func() {
				if p := recover(); p != nil { // parquet-go panics on some malformed files
					ch <- decodedGroup{err: fmt.Errorf("%v", p)}
				}
			}()
			err := readRowGroup(f, rg, g, cols)
			ch <- decodedGroup{cols: g, err: err}
		}(d.file, d.cols)
	}
	return started
}

// groupBufs keeps the columns of consumed row groups for reuse, so that
// reading the parts of a directory does not allocate (and page-fault in)
// new ones per part. It is used only by the goroutine that calls Scan.
type groupBufs struct{ free []*groupColumns }

// get returns a kept groupColumns, or a new one.
func (b *groupBufs) get() *groupColumns {
	if k := len(b.free) - 1; k >= 0 {
		g := b.free[k]
		b.free = b.free[:k]
		return g
	}
	return &groupColumns{}
}

// put keeps consumed columns; at most parquetAhead+1 are kept, as many as
// are ever in use at once.
func (b *groupBufs) put(g *groupColumns) {
	if len(b.free) <= parquetAhead {
		b.free = append(b.free, g)
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
		if g := <-ch; g.cols != nil {
			d.bufs.put(g.cols)
		}
	}
	d.ahead, d.groups = nil, nil
	if d.grp != nil {
		d.bufs.put(d.grp)
		d.grp = nil
	}
	if d.g == nil {
		d.buf, d.cur = nil, nil
	}
	if d.g == nil {
		return nil
	}
	return d.g.rows.Close()
}

// The columnar decoder reads a row group column by column, straight from
// the typed page data, instead of reconstructing each row through
// reflection, into a slice per column indexed by row (groupColumns); Scan
// then copies blocks of rows into records (groupColumns.fill). Strings of
// dictionary columns are shared, and the optional values and ITL lists of
// a row group share backing arrays, so a record costs no allocation of its
// own. It handles the schema that ParquetEncoder writes; any other file
// (older or newer columns, other types or encodings) is read by
// parquet-go's generic reader instead.

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

// groupColumns is a row group decoded: the values of each column read,
// by row.
type groupColumns struct {
	n    int // rows
	cols []colValues
}

// colValues are the values of one column of a row group, by row, in the
// slice of its field's kind. Every row is set, to the zero value where
// the column has none, so the slices of a consumed group can be reused;
// the values that records point to (the pointer kinds' values) and the
// elements of lists are in new arrays for every group, as records may be
// kept after the next Scan.
type colValues struct {
	f       colSpec
	present []bool      // pointer kinds: whether the row has a value
	ints    []int64     // KindInt, KindInt64, KindInt64Ptr; ns of KindTime, KindTimePtr
	floats  []float64   // KindFloat64Ptr
	bools   []bool      // KindBool, KindBoolPtr
	strs    []string    // KindString
	times   []time.Time // KindTimePtr
	lists   [][]int64   // KindInt64List
}

// presize bounds the rows a column's slices get room for before its
// pages are read. A row group's row count is the footer's claim: a
// damaged footer can claim billions of rows, and room made for them at
// once would end the process (a fatal out-of-memory error, which no
// recover catches). Past presize (the row groups mtrun writes fit) the
// slices grow with the rows the pages actually hold.
const presize = ParquetRowGroupRows

// extend returns s lengthened to n (never shortened), growing its array
// (amortized, as append does) when it has no room.
func extend[T any](s []T, n int) []T {
	switch {
	case n <= len(s):
		return s
	case n <= cap(s):
		return s[:n]
	}
	return append(s[:cap(s)], make([]T, n-cap(s))...)
}

// fresh returns an empty slice with room for n values in a new array.
func fresh[T any](n int) []T { return make([]T, 0, n) }

// size readies c for a row group of n rows: its slices are emptied, with
// room for min(n, presize) rows; grow lengthens them as pages are read.
func (c *colValues) size(n int) {
	room := min(n, presize)
	switch c.f.Kind {
	case KindInt, KindInt64, KindTime:
		c.ints = c.ints[:0]
	case KindInt64Ptr:
		c.present, c.ints = c.present[:0], fresh[int64](room)
	case KindTimePtr:
		c.present, c.ints, c.times = c.present[:0], c.ints[:0], fresh[time.Time](room)
	case KindFloat64Ptr:
		c.present, c.floats = c.present[:0], fresh[float64](room)
	case KindBool:
		c.bools = c.bools[:0]
	case KindBoolPtr:
		c.present, c.bools = c.present[:0], fresh[bool](room)
	case KindString:
		c.strs = c.strs[:0]
	case KindInt64List:
		c.lists = c.lists[:0]
	}
	c.grow(room)
}

// grow lengthens c's slices of its kind to n rows.
func (c *colValues) grow(n int) {
	switch c.f.Kind {
	case KindInt, KindInt64, KindTime:
		c.ints = extend(c.ints, n)
	case KindInt64Ptr:
		c.present, c.ints = extend(c.present, n), extend(c.ints, n)
	case KindTimePtr:
		c.present, c.ints, c.times = extend(c.present, n), extend(c.ints, n), extend(c.times, n)
	case KindFloat64Ptr:
		c.present, c.floats = extend(c.present, n), extend(c.floats, n)
	case KindBool:
		c.bools = extend(c.bools, n)
	case KindBoolPtr:
		c.present, c.bools = extend(c.present, n), extend(c.bools, n)
	case KindString:
		c.strs = extend(c.strs, n)
	case KindInt64List:
		c.lists = extend(c.lists, n)
	}
}

// fill sets the fields read of the records blk to the values of rows
// from, from+1, ... of g.
func (g *groupColumns) fill(blk []Record, from int) {
	to := from + len(blk)
	for ci := range g.cols {
		c := &g.cols[ci]
		f := c.f
		switch f.Kind {
		case KindInt:
			for k, v := range c.ints[from:to] {
				*at[int](f, &blk[k]) = int(v)
			}
		case KindInt64:
			fillVal(f, blk, c.ints[from:to])
		case KindTime:
			for k, v := range c.ints[from:to] {
				*at[time.Time](f, &blk[k]) = time.Unix(0, v).UTC()
			}
		case KindString:
			fillVal(f, blk, c.strs[from:to])
		case KindBool:
			fillVal(f, blk, c.bools[from:to])
		case KindInt64List:
			fillVal(f, blk, c.lists[from:to])
		case KindInt64Ptr:
			fillPtr(f, blk, c.present[from:to], c.ints[from:to])
		case KindFloat64Ptr:
			fillPtr(f, blk, c.present[from:to], c.floats[from:to])
		case KindBoolPtr:
			fillPtr(f, blk, c.present[from:to], c.bools[from:to])
		case KindTimePtr:
			fillPtr(f, blk, c.present[from:to], c.times[from:to])
		}
	}
}

// fillVal sets field f of each record of blk to its row's value.
func fillVal[T any](f *Field, blk []Record, v []T) {
	for k := range v {
		*at[T](f, &blk[k]) = v[k]
	}
}

// fillPtr points field f of each record of blk at its row's value, or
// sets it nil where the row has none.
func fillPtr[T any](f *Field, blk []Record, present []bool, v []T) {
	for k, ok := range present {
		var p *T
		if ok {
			p = &v[k]
		}
		*at[*T](f, &blk[k]) = p
	}
}

// columnReader decodes one column chunk of a row group into col.
type columnReader struct {
	col  *colValues
	leaf parquet.LeafColumn
	n    int // rows of the row group
	row  int // next row to fill
	strs []string
	dict parquet.Dictionary
}

// readRowGroup decodes all rows of rg into g. Only the columns of cols
// are read.
func readRowGroup(f *parquet.File, rg parquet.RowGroup, g *groupColumns, cols *Columns) error {
	schema := f.Schema()
	g.n = int(rg.NumRows())
	k := 0
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
		if k == len(g.cols) {
			g.cols = append(g.cols, colValues{f: spec})
		} else if g.cols[k].f != spec {
			g.cols[k] = colValues{f: spec}
		}
		col := &g.cols[k]
		k++
		col.size(g.n)
		cr := &columnReader{col: col, leaf: leaf, n: g.n}
		if err := cr.read(rg.ColumnChunks()[i]); err != nil {
			return err
		}
		if cr.row != g.n {
			return fmt.Errorf("column %s: %d of %d rows", name, cr.row, g.n)
		}
		if spec.Kind == KindTimePtr {
			for r, ok := range col.present {
				if ok {
					col.times[r] = time.Unix(0, col.ints[r]).UTC()
				}
			}
		}
	}
	g.cols = g.cols[:k]
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

// page decodes the values of page p into the rows it holds.
func (c *columnReader) page(p parquet.Page) error {
	defs := p.DefinitionLevels()
	maxDef := byte(c.leaf.MaxDefinitionLevel)
	col := c.col
	if col.f.Kind == KindInt64List {
		return c.listPage(p, defs, p.RepetitionLevels(), maxDef)
	}
	n := int(p.NumValues())
	if c.row+n > c.n {
		return fmt.Errorf("column %s: more values than rows", c.leaf.Path)
	}
	if defs != nil && len(defs) != n {
		return c.disagree()
	}
	lo, hi := c.row, c.row+n
	c.row = hi
	col.grow(hi)
	var present []bool
	if col.present != nil {
		present = col.present[lo:hi]
	}
	var ok bool
	switch col.f.Kind {
	case KindString:
		return c.strings(p, col.strs[lo:hi], defs, maxDef)
	case KindBool, KindBoolPtr:
		data := p.Data()
		ok = scatterBits(col.bools[lo:hi], present, defs, maxDef, data.Boolean())
	default:
		if p.Dictionary() != nil {
			return errNotColumnar
		}
		data := p.Data()
		switch col.f.Kind {
		case KindInt, KindInt64, KindTime, KindInt64Ptr, KindTimePtr:
			ok = scatter(col.ints[lo:hi], present, defs, maxDef, data.Int64())
		case KindFloat64Ptr:
			ok = scatter(col.floats[lo:hi], present, defs, maxDef, data.Double())
		default:
			return errNotColumnar
		}
	}
	if !ok {
		return c.disagree()
	}
	return nil
}

func (c *columnReader) disagree() error {
	return fmt.Errorf("column %s: levels and values disagree", c.leaf.Path)
}

// scatter sets the rows dst of a page from its values v, one per row whose
// definition level is maxDef (every row when defs is nil), and the zero
// value elsewhere; present, if not nil, records which rows have one. It
// reports false when there are fewer values than that.
func scatter[T any](dst []T, present []bool, defs []byte, maxDef byte, v []T) bool {
	if defs == nil {
		if len(v) < len(dst) {
			return false
		}
		copy(dst, v)
		for k := range present {
			present[k] = true
		}
		return true
	}
	var zero T
	j := 0
	for k, d := range defs {
		has := d == maxDef
		if has {
			if j >= len(v) {
				return false
			}
			dst[k] = v[j]
			j++
		} else {
			dst[k] = zero
		}
		if present != nil {
			present[k] = has
		}
	}
	return true
}

// scatterBits is scatter for booleans, whose values are packed eight to a
// byte, least significant bit first.
func scatterBits(dst []bool, present []bool, defs []byte, maxDef byte, bits []byte) bool {
	j := 0
	for k := range dst {
		has := defs == nil || defs[k] == maxDef
		if has {
			if j>>3 >= len(bits) {
				return false
			}
			dst[k] = bits[j>>3]>>(j&7)&1 != 0
			j++
		} else {
			dst[k] = false
		}
		if present != nil {
			present[k] = has
		}
	}
	return true
}

// strings decodes a page of a string column, dictionary-encoded or plain,
// into its rows dst.
func (c *columnReader) strings(p parquet.Page, dst []string, defs []byte, maxDef byte) error {
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
		j := 0
		for k := range dst {
			if defs != nil && defs[k] != maxDef {
				dst[k] = ""
				continue
			}
			if j >= len(idx) {
				return c.disagree()
			}
			x := int(idx[j])
			j++
			if x < 0 || x >= len(c.strs) {
				return fmt.Errorf("column %s: dictionary index out of range", c.leaf.Path)
			}
			dst[k] = c.strs[x]
		}
		return nil
	}
	pv := p.Data()
	data, off := pv.ByteArray()
	j := 0
	for k := range dst {
		if defs != nil && defs[k] != maxDef {
			dst[k] = ""
			continue
		}
		if j+1 >= len(off) {
			return c.disagree()
		}
		dst[k] = string(data[off[j]:off[j+1]])
		j++
	}
	return nil
}

// listPage decodes a page of an int64 list column: levels with
// repetition level 0 start a row.
func (c *columnReader) listPage(p parquet.Page, defs, reps []byte, maxDef byte) error {
	if p.Dictionary() != nil {
		return errNotColumnar
	}
	pv := p.Data()
	v := pv.Int64()
	buf := slices.Clone(v)                // the page's memory is released
	c.col.grow(min(c.row+len(defs), c.n)) // a page holds at most one row per level
	lists := c.col.lists
	j, start := 0, -1 // start: index in buf of the current row's first element
	for k := range defs {
		if reps == nil || reps[k] == 0 {
			c.row++
			start = -1
			if c.row > c.n {
				return fmt.Errorf("column %s: more lists than rows", c.leaf.Path)
			}
			lists[c.row-1] = nil
		}
		if defs[k] != maxDef {
			continue
		}
		if j >= len(buf) || c.row == 0 {
			return c.disagree()
		}
		l := &lists[c.row-1]
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
