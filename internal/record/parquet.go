package record

import (
	"errors"
	"fmt"
	"io"
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
	w         *parquet.GenericWriter[Record]
	dst       io.Writer
	batch     []Record
	pending   int // records in the current row group
	lastFlush time.Time
	now       func() time.Time
	closed    bool
}

var _ Encoder = (*ParquetEncoder)(nil)

// NewParquetEncoder returns an encoder writing to w. Close writes the footer
// and flushes w if it has Flush() error; it does not close w.
func NewParquetEncoder(w io.Writer) *ParquetEncoder {
	pw := parquet.NewGenericWriter[Record](w,
		parquet.Compression(&parquet.Zstd),
		parquet.MaxRowsPerRowGroup(ParquetRowGroupRows),
		parquet.CreatedBy("mtkit", "", ""),
	)
	return &ParquetEncoder{w: pw, dst: w, now: time.Now, lastFlush: time.Now(), batch: make([]Record, 0, parquetBatch)}
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
	if now := e.now(); e.pending+len(e.batch) >= ParquetRowGroupRows || now.Sub(e.lastFlush) >= ParquetFlushInterval {
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
	name  string
	r     *parquet.GenericReader[Record]
	buf   []Record
	i, n  int
	row   int
	rec   Record
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
	gr := parquet.NewGenericReader[Record](f)
	return &ParquetDecoder{name: name, r: gr, buf: make([]Record, parquetBatch), total: f.NumRows()}, nil
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
	d.rec = d.buf[d.i]
	d.buf[d.i] = Record{}
	d.i++
	d.row++
	if err := d.rec.validate(); err != nil {
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
	n, err := d.r.Read(d.buf)
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

// Record returns the record of the last successful Scan.
func (d *ParquetDecoder) Record() *Record { return &d.rec }

// Err returns the problem with the last row, or a read error.
func (d *ParquetDecoder) Err() error { return d.err }

// Close releases the reader; it does not close the file.
func (d *ParquetDecoder) Close() error { return d.r.Close() }
