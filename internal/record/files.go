package record

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mtkit/mtkit/internal/iox"
	"github.com/mtkit/mtkit/internal/jsonl"
)

// Decoder is a record reader modeled on bufio.Scanner; JSONDecoder and
// ParquetDecoder implement it.
type Decoder interface {
	// Scan advances to the next record or per-record problem; it returns
	// false at the end of the input or on a fatal error.
	Scan() bool
	// Record is the record of the last Scan when Err is nil.
	Record() *Record
	// Err is a *SyntaxError for the last Scan (non-fatal) or, after Scan
	// returned false, the fatal error if any.
	Err() error
}

var (
	_ Decoder = (*JSONDecoder)(nil)
	_ Decoder = (*ParquetDecoder)(nil)
	_ Decoder = (*parallelJSONDecoder)(nil)
)

// Files reads records from a sequence of inputs, like
// golang.org/x/perf/benchfmt.Files. Each path is a file name, "-" for
// Stdin, or "label=path" to name the input in reports. With no paths it
// reads Stdin. The format of each input is sniffed from its first bytes:
// Parquet ("PAR1", files only), gzip or zstd compressed JSONL, or JSONL.
// Stdin and other pipes are decoded as they arrive, so live pipes work;
// regular JSONL files are decoded ahead on several goroutines, in chunks
// of lines, with the same results in the same order.
type Files struct {
	Paths []string
	// Stdin is read for "-"; nil means no stdin.
	Stdin io.Reader
	// Columns are the fields to read; the others stay zero. Nil reads
	// every field.
	Columns *Columns

	// sequential turns off parallel decoding of JSONL and decoding the
	// next Parquet inputs ahead (tests compare the two).
	sequential bool
	// chunkSize overrides parChunkSize (tests use small chunks).
	chunkSize int
	// maxAhead overrides how many Parquet row groups are decoded at once
	// (aheadLimit; tests).
	maxAhead int

	started bool
	idx     int
	queue   []Input // the parts of a directory input, still to read
	source          // the current input
	// ahead are the Parquet inputs after the current one, opened and
	// being decoded ahead (see prefetch); noAhead is an input that could
	// not be, left to open in turn.
	ahead   []source
	noAhead string
	bufs    groupBufs // row-group buffers shared by the Parquet inputs
	err     error
	fatal   error
}

// source is an open input.
type source struct {
	dec    Decoder
	closer func() error
	cut    func() error // the input's Cut, nil if not compressed
	path   string       // as given (Input.Path)
	file   string
	label  string
}

// Input is one parsed element of Files.Paths.
type Input struct {
	Label string
	Path  string
}

// ParseInput splits "label=path". A string that names an existing file is
// a path even if it contains "="; the label defaults to the path.
func ParseInput(s string) Input {
	if i := strings.IndexByte(s, '='); i > 0 {
		if _, err := os.Stat(s); err != nil {
			return Input{Label: s[:i], Path: s[i+1:]}
		}
	}
	return Input{Label: s, Path: s}
}

// Scan advances to the next record or per-record problem. It returns false
// when all inputs are exhausted or on a fatal error (see Err).
func (f *Files) Scan() bool {
	if f.fatal != nil {
		return false
	}
	if !f.started {
		f.started = true
		if len(f.Paths) == 0 {
			f.Paths = []string{"-"}
		}
	}
	for {
		if f.dec == nil {
			if len(f.queue) == 0 && f.idx >= len(f.Paths) {
				f.err = nil
				return false
			}
			in, err := f.nextInput()
			if errors.Is(err, errNoInput) {
				f.err = nil
				return false
			}
			if err == nil {
				if len(f.ahead) > 0 && f.ahead[0].path == in.Path {
					f.source, f.ahead = f.ahead[0], f.ahead[1:]
				} else {
					f.closeAhead()
					f.source, err = f.open(in)
				}
			}
			if err != nil {
				f.fatal, f.err = err, err
				f.closeAhead()
				return false
			}
		}
		if f.dec.Scan() {
			f.err = f.dec.Err()
			return true
		}
		err := f.dec.Err()
		if cut := f.cut; err == nil && cut != nil {
			f.cut = nil
			if cerr := cut(); cerr != nil {
				// One more problem: the input's end was cut off.
				f.err = &CutError{File: f.file, Err: cerr}
				return true
			}
		}
		cerr := f.closer()
		f.dec = nil
		if err == nil {
			err = cerr
		}
		if err != nil {
			f.fatal, f.err = err, err
			f.closeAhead()
			return false
		}
	}
}

// open opens the input in and starts decoding it.
func (f *Files) open(in Input) (source, error) {
	s := source{path: in.Path, label: in.Label}
	err := f.openInto(&s, in)
	return s, err
}

func (f *Files) openInto(s *source, in Input) error {
	if in.Path == "-" || in.Path == "" {
		if f.Stdin == nil {
			return errors.New("stdin: not available")
		}
		if s.label == "-" || s.label == "" {
			s.label = "stdin"
		}
		s.file = "stdin"
		r, release, err := iox.DecompressToCut(f.Stdin)
		if err != nil {
			return fmt.Errorf("stdin: %w", err)
		}
		s.cut = r.Cut
		if isParquet(r) {
			release()
			return errors.New("stdin: Parquet cannot be read from a pipe (it needs random access); pass the file name")
		}
		s.dec = &JSONDecoder{name: "stdin", lines: jsonl.NewLines(r.Reader), cols: f.Columns}
		s.closer = func() error { release(); return nil }
		return nil
	}
	s.file = in.Path
	fh, err := os.Open(in.Path)
	if err != nil {
		return err
	}
	head := make([]byte, 4)
	n, _ := fh.ReadAt(head, 0)
	if iox.Sniff(head[:n]) == iox.FormatParquet {
		pd, err := f.parquetDecoder(fh, in.Path)
		if err != nil {
			fh.Close()
			return err
		}
		s.dec = pd
		s.closer = func() error { pd.Close(); return fh.Close() }
		return nil
	}
	r, release, err := iox.DecompressToCut(fh)
	if err != nil {
		fh.Close()
		return fmt.Errorf("%s: %w", in.Path, err)
	}
	s.cut = r.Cut
	if isParquet(r) {
		release()
		fh.Close()
		return fmt.Errorf("%s: compressed Parquet: decompress it first (Parquet compresses its own pages)", in.Path)
	}
	// Only a regular file is decoded ahead: a named pipe or /dev/fd/N
	// (a shell's <(...)) may be live, and each record must come as soon
	// as its line does.
	if st, err := fh.Stat(); f.sequential || err != nil || !st.Mode().IsRegular() {
		s.dec = &JSONDecoder{name: in.Path, lines: jsonl.NewLines(r.Reader), cols: f.Columns}
		s.closer = func() error { release(); return fh.Close() }
		return nil
	}
	pd := newParallelJSONDecoder(r.Reader, in.Path, f.chunkSize, f.Columns)
	s.dec = pd
	s.closer = func() error { pd.Close(); release(); return fh.Close() }
	return nil
}

// Record returns the current record (valid until the next Scan).
func (f *Files) Record() *Record { return f.dec.Record() }

// Err returns the current per-record problem (a *SyntaxError) after a
// successful Scan, or the fatal error after Scan returned false.
func (f *Files) Err() error { return f.err }

// File is the name of the current input ("stdin" for "-").
func (f *Files) File() string { return f.file }

// Label is the label of the current input: the "label=" prefix, else its
// path.
func (f *Files) Label() string { return f.label }

// Close closes the current input, for callers that stop early.
func (f *Files) Close() error {
	f.closeAhead()
	if f.dec == nil {
		return nil
	}
	f.dec = nil
	return f.closer()
}

// CutError is a compressed input (gzip, zstd) whose end was cut off, as a
// killed writer leaves it: the records before the cut were read. It is a
// per-input problem, like a *SyntaxError, and matches ErrTruncated.
type CutError struct {
	File string
	Err  error // an *iox.CutError
}

func (e *CutError) Error() string {
	return fmt.Sprintf("%s: %v: read up to the last complete record", e.File, e.Err)
}
func (e *CutError) Unwrap() error        { return e.Err }
func (e *CutError) Is(target error) bool { return target == ErrTruncated }

// isParquet peeks at the start of a decompressed stream.
func isParquet(r io.Reader) bool {
	p, ok := r.(interface{ Peek(int) ([]byte, error) })
	if !ok {
		return false
	}
	head, _ := p.Peek(4)
	return iox.Sniff(head) == iox.FormatParquet
}

// prefetch opens the Parquet inputs that follow the current one (and
// those already opened ahead) and starts decoding their row groups, so
// that decoding runs on while the current input is consumed: a part of a
// directory holds a single row group, and without this each part's group
// would be decoded while Scan waits. At most aheadLimit row groups are
// under way across all inputs. An input that is not a regular Parquet
// file, or fails to open, stops it; that input is opened in turn, its
// errors reported then.
func (f *Files) prefetch() {
	if f.sequential {
		return
	}
	room := aheadLimit(f.maxAhead)
	if pd, ok := f.dec.(*ParquetDecoder); ok {
		room -= len(pd.ahead)
	}
	for _, s := range f.ahead {
		pd := s.dec.(*ParquetDecoder)
		room -= len(pd.ahead)
		if len(pd.groups) > 0 {
			return // that input has groups still to start: it goes first
		}
	}
	for room > 0 {
		in, ok := f.peekInput(len(f.ahead))
		if !ok || in.Path == f.noAhead {
			return
		}
		pd, closer := f.openParquet(in.Path)
		if pd == nil {
			f.noAhead = in.Path
			return
		}
		f.ahead = append(f.ahead, source{dec: pd, closer: closer, path: in.Path, file: in.Path, label: in.Label})
		room -= pd.launch(room)
		if len(pd.groups) > 0 {
			return
		}
	}
}

// peekInput returns the input k places after the current one without
// consuming it, if it is known yet: a queued part, or the next path when
// the queue is exhausted and that path is not a directory or stdin.
func (f *Files) peekInput(k int) (Input, bool) {
	if k < len(f.queue) {
		return f.queue[k], true
	}
	if k > len(f.queue) || f.idx >= len(f.Paths) {
		return Input{}, false
	}
	in := ParseInput(f.Paths[f.idx])
	if in.Path == "-" || in.Path == "" || isDir(in.Path) {
		return Input{}, false
	}
	return in, true
}

// openParquet opens path as a columnar Parquet file for prefetch; nil if
// it is anything else or does not open.
func (f *Files) openParquet(path string) (*ParquetDecoder, func() error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, nil
	}
	head := make([]byte, 4)
	n, _ := fh.ReadAt(head, 0)
	var pd *ParquetDecoder
	if iox.Sniff(head[:n]) == iox.FormatParquet {
		pd, err = f.parquetDecoder(fh, path)
	}
	if pd == nil || err != nil || pd.g != nil {
		if pd != nil {
			pd.Close()
		}
		fh.Close()
		return nil, nil
	}
	return pd, func() error { pd.Close(); return fh.Close() }
}

// parquetDecoder returns a decoder of the Parquet file fh that reads
// f.Columns into f's shared buffers and prefetches the inputs after it.
func (f *Files) parquetDecoder(fh *os.File, path string) (*ParquetDecoder, error) {
	st, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	pd, err := NewParquetDecoder(fh, st.Size(), path)
	if err != nil {
		return nil, err
	}
	pd.cols, pd.bufs, pd.idle, pd.maxAhead = f.Columns, &f.bufs, f.prefetch, f.maxAhead
	return pd, nil
}

// closeAhead closes the inputs opened ahead.
func (f *Files) closeAhead() {
	for _, s := range f.ahead {
		s.closer()
	}
	f.ahead = nil
}
