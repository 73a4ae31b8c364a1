package record

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// PartInterval is the longest a record waits in an open Parquet part
// before Flush closes the part (PartsEncoder).
const PartInterval = time.Second

// partPattern matches the closed parts of a PartsEncoder. A part being
// written is ".part-N.parquet.tmp": hidden (pyarrow and Spark skip names
// starting with a dot) and matched neither by this nor by "*.parquet".
const partPattern = "part-*.parquet"

// PartsEncoder writes records to a directory of Parquet files, each a
// complete file with its own footer: part-000000.parquet,
// part-000001.parquet, … A part is written as .part-N.parquet.tmp and
// renamed when closed, so the directory only ever holds readable parts
// (the layout Spark, pyarrow and DuckDB's globs read). A part is closed
// when it holds ParquetRowGroupRows records, and by the first Flush at
// least PartInterval after its first record; so a killed process loses
// only the records of its last PartInterval (plus the caller's flush
// period), never the earlier ones.
type PartsEncoder struct {
	dir     string
	next    int             // number of the next part
	enc     *ParquetEncoder // reused for every part
	cur     *ParquetEncoder // enc while a part is open, else nil
	file    io.WriteCloser
	tmp     string
	rows    int
	opened  time.Time
	maxRows int
	now     func() time.Time
	create  func(name string) (io.WriteCloser, error)
	err     error // first error; every later call returns it
	closed  bool
}

var _ Encoder = (*PartsEncoder)(nil)

// CreateParts makes dir (replacing a file of that name, and the parts of
// an earlier run in it, as os.Create would truncate a file) and returns an
// encoder writing parts into it.
func CreateParts(dir string) (*PartsEncoder, error) {
	if st, err := os.Lstat(dir); err == nil && !st.IsDir() {
		if err := os.Remove(dir); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	for _, pat := range []string{partPattern, "." + partPattern + ".tmp"} {
		old, _ := filepath.Glob(filepath.Join(dir, pat))
		for _, p := range old {
			if err := os.Remove(p); err != nil {
				return nil, err
			}
		}
	}
	return newPartsEncoder(dir, func(name string) (io.WriteCloser, error) { return os.Create(name) }), nil
}

func newPartsEncoder(dir string, create func(string) (io.WriteCloser, error)) *PartsEncoder {
	return &PartsEncoder{dir: dir, maxRows: ParquetRowGroupRows, now: time.Now, create: create}
}

// bufferedFile gives a part file a write buffer that ParquetEncoder's
// Close flushes.
type bufferedFile struct {
	*bufio.Writer
}

func (e *PartsEncoder) open() error {
	e.tmp = filepath.Join(e.dir, fmt.Sprintf(".part-%06d.parquet.tmp", e.next))
	f, err := e.create(e.tmp)
	if err != nil {
		return err
	}
	e.file = f
	dst := bufferedFile{bufio.NewWriterSize(f, 1<<16)}
	if e.enc == nil {
		e.enc = newParquetEncoder(dst, e.maxRows)
		e.enc.flushEvery = 0 // the part is closed instead
	} else {
		e.enc.reset(dst)
	}
	e.cur = e.enc
	e.opened, e.rows = e.now(), 0
	return nil
}

// Encode adds r to the open part, opening one if needed.
func (e *PartsEncoder) Encode(r *Record) error {
	if e.err != nil {
		return e.err
	}
	if e.closed {
		return errors.New("parquet: encode after close")
	}
	if e.cur == nil {
		if e.err = e.open(); e.err != nil {
			return e.err
		}
	}
	if e.err = e.cur.Encode(r); e.err != nil {
		return e.err
	}
	if e.rows++; e.rows >= e.maxRows {
		return e.closePart()
	}
	return nil
}

// Flush closes the open part if its first record is PartInterval old.
func (e *PartsEncoder) Flush() error {
	if e.err != nil || e.cur == nil || e.now().Sub(e.opened) < PartInterval {
		return e.err
	}
	return e.closePart()
}

// closePart writes the footer and renames the part into place; on error
// the partial part is removed.
func (e *PartsEncoder) closePart() error {
	err := e.cur.Close()
	if cerr := e.file.Close(); cerr != nil && err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(e.tmp, filepath.Join(e.dir, fmt.Sprintf("part-%06d.parquet", e.next)))
	}
	e.cur, e.file = nil, nil
	if err != nil {
		os.Remove(e.tmp)
		e.err = fmt.Errorf("%s: %w", e.tmp, err)
		return e.err
	}
	e.next++
	return nil
}

// Close closes the open part; a run without records still leaves one
// (empty) part, so readers find the schema. It is safe to call twice.
func (e *PartsEncoder) Close() error {
	if e.closed {
		return e.err
	}
	e.closed = true
	if e.err != nil {
		if e.cur != nil {
			e.file.Close()
			os.Remove(e.tmp)
		}
		return e.err
	}
	if e.cur == nil && e.next == 0 {
		if e.err = e.open(); e.err != nil {
			return e.err
		}
	}
	if e.cur != nil {
		return e.closePart()
	}
	return nil
}

// IsPartsDir reports whether dir is a PartsEncoder's directory: it holds
// a closed part, or a part being written (.part-N.parquet.tmp), or is
// named *.parquet (a run killed before its first part was written).
func IsPartsDir(dir string) bool {
	if !isDir(dir) {
		return false
	}
	if strings.HasSuffix(strings.TrimRight(dir, `/\`), ".parquet") {
		return true
	}
	for _, pat := range []string{partPattern, ".part-*.parquet.tmp"} {
		if m, _ := filepath.Glob(filepath.Join(dir, pat)); len(m) > 0 {
			return true
		}
	}
	return false
}

// Parts lists the closed part files of a PartsEncoder's directory (every
// *.parquet in it), in name order; none, without an error, for a parts
// directory that has no closed part yet (IsPartsDir): it holds 0
// records, as an empty JSONL file does.
func Parts(dir string) ([]string, error) {
	parts, err := filepath.Glob(filepath.Join(dir, "*.parquet"))
	if err != nil {
		return nil, err
	}
	var files []string
	for _, p := range parts {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			files = append(files, p)
		}
	}
	if len(files) == 0 && !IsPartsDir(dir) {
		return nil, fmt.Errorf("%s: directory holds no Parquet files (*.parquet)", dir)
	}
	slices.Sort(files)
	return files, nil
}

// isDir reports whether path names a directory.
func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// nextInput is the next input of f: a queued part, or the next path; a
// directory (as CreateParts writes) is read as its parts, in name order,
// under the directory's label.
// errNoInput is nextInput's answer when no input is left (the last
// paths were parts directories without parts).
var errNoInput = errors.New("no input left")

func (f *Files) nextInput() (Input, error) {
	for len(f.queue) == 0 {
		if f.idx >= len(f.Paths) {
			return Input{}, errNoInput
		}
		in := ParseInput(f.Paths[f.idx])
		f.idx++
		if in.Path == "-" || in.Path == "" || !isDir(in.Path) {
			return in, nil
		}
		parts, err := Parts(in.Path)
		if err != nil {
			return Input{}, err
		}
		for _, p := range parts {
			f.queue = append(f.queue, Input{Label: in.Label, Path: p})
		}
	}
	in := f.queue[0]
	f.queue = f.queue[1:]
	return in, nil
}
