// Package iox opens inputs and creates outputs for the mtkit tools: "-" means
// stdin or stdout, input compression (gzip, zstd) is detected from magic bytes
// and output compression is chosen by file suffix (.gz, .zst).
package iox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Magic byte prefixes of the formats the tools sniff.
var (
	MagicGzip    = []byte{0x1f, 0x8b}
	MagicZstd    = []byte{0x28, 0xb5, 0x2f, 0xfd}
	MagicParquet = []byte("PAR1")
)

// Format is what Sniff found at the start of a stream.
type Format int

// Formats recognised by Sniff.
const (
	FormatPlain Format = iota
	FormatGzip
	FormatZstd
	FormatParquet
)

// Sniff reports the format of a stream from its first bytes.
func Sniff(head []byte) Format {
	switch {
	case bytes.HasPrefix(head, MagicGzip):
		return FormatGzip
	case bytes.HasPrefix(head, MagicZstd):
		return FormatZstd
	case bytes.HasPrefix(head, MagicParquet):
		return FormatParquet
	}
	return FormatPlain
}

// Decompress wraps r so that gzip or zstd input is transparently decoded.
// Plain input is returned buffered. The returned closer releases decoder
// resources; it does not close r. A compressed stream that ends before its
// end marker fails with io.ErrUnexpectedEOF (see DecompressToCut).
func Decompress(r io.Reader) (io.Reader, func(), error) {
	s, release, err := decompress(r, false)
	if err != nil {
		return nil, nil, err
	}
	return s.Reader, release, nil
}

// DecompressToCut is Decompress for inputs a killed writer may have cut
// short (record files): a gzip or zstd stream that ends before its end
// marker reads as everything decoded up to the cut, then io.EOF, and the
// returned Stream's Cut reports it. A *Stream, already decompressed (a
// caller that peeked at it), is returned as it is, with a release that
// does nothing: its own release stays its caller's.
func DecompressToCut(r io.Reader) (*Stream, func(), error) {
	if s, ok := r.(*Stream); ok {
		return s, func() {}, nil
	}
	return decompress(r, true)
}

// Stream is a decompressed input of DecompressToCut.
type Stream struct {
	*bufio.Reader
	cut *cutReader // nil for plain input
}

// Cut returns a *CutError once the end of a compressed stream that was cut
// short has been read, else nil.
func (s *Stream) Cut() error {
	if s.cut == nil || !s.cut.cut {
		return nil
	}
	return &CutError{Format: s.cut.format, Decoded: s.cut.n}
}

// CutError is a compressed stream that ends before its end marker, as a
// killed writer leaves it.
type CutError struct {
	Format  string // "gzip" or "zstd"
	Decoded int64  // bytes decoded before the cut
}

func (e *CutError) Error() string {
	return fmt.Sprintf("%s stream cut short after %d decoded bytes (was the writer killed?)", e.Format, e.Decoded)
}

// cutReader turns the io.ErrUnexpectedEOF of a decoder into io.EOF,
// counting the bytes decoded before it.
type cutReader struct {
	r      io.Reader
	format string
	n      int64
	cut    bool
}

func (c *cutReader) Read(p []byte) (int, error) {
	if c.cut {
		return 0, io.EOF
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		c.cut, err = true, io.EOF
	}
	return n, err
}

func decompress(r io.Reader, toCut bool) (*Stream, func(), error) {
	br := bufio.NewReaderSize(r, 1<<16)
	head, _ := br.Peek(4)
	var (
		zr      io.Reader
		release func()
		format  string
	)
	// cutEmpty is a stream cut before anything could be decoded.
	cutEmpty := func(format string) (*Stream, func(), error) {
		c := &cutReader{r: strings.NewReader(""), format: format, cut: true}
		return &Stream{Reader: bufio.NewReader(c), cut: c}, func() {}, nil
	}
	if toCut && len(head) < len(MagicZstd) && len(head) > 0 {
		// The whole input is shorter than a magic number it starts.
		switch {
		case bytes.HasPrefix(MagicZstd, head):
			return cutEmpty("zstd")
		case len(head) == 1 && head[0] == MagicGzip[0]:
			return cutEmpty("gzip")
		}
	}
	switch Sniff(head) {
	case FormatGzip:
		format = "gzip"
		gr, err := gzip.NewReader(br)
		if err != nil {
			if toCut && errors.Is(err, io.ErrUnexpectedEOF) {
				return cutEmpty(format) // cut inside the header
			}
			return nil, nil, fmt.Errorf("gzip: %w", err)
		}
		zr, release = gr, func() { gr.Close() }
	case FormatZstd:
		format = "zstd"
		d, err := zstd.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("zstd: %w", err)
		}
		zr, release = d, d.Close
	default:
		return &Stream{Reader: br}, func() {}, nil
	}
	if !toCut {
		return &Stream{Reader: bufio.NewReaderSize(zr, 1<<16)}, release, nil
	}
	c := &cutReader{r: zr, format: format}
	return &Stream{Reader: bufio.NewReaderSize(c, 1<<16), cut: c}, release, nil
}

// Input is an opened, decompressed input stream.
type Input struct {
	io.Reader
	// Name is the path, or "stdin" for "-".
	Name    string
	release func()
	file    *os.File
}

// Close releases the decoder and closes the underlying file (never stdin).
func (in *Input) Close() error {
	in.release()
	if in.file != nil {
		return in.file.Close()
	}
	return nil
}

// Open opens path ("-" is stdin) and decompresses it if needed.
func Open(path string, stdin io.Reader) (*Input, error) {
	var (
		r    io.Reader
		f    *os.File
		name = path
	)
	if path == "-" || path == "" {
		r, name = stdin, "stdin"
	} else {
		var err error
		if f, err = os.Open(path); err != nil {
			return nil, err
		}
		r = f
	}
	dr, release, err := Decompress(r)
	if err != nil {
		if f != nil {
			f.Close()
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &Input{Reader: dr, Name: name, release: release, file: f}, nil
}

// FrameInterval is the least time between two compressed frames ended by
// Flush: a kill loses at most what was written since the last frame ended.
const FrameInterval = time.Second

// Output is a buffered, optionally compressed output stream.
//
// Flush makes everything written so far readable by any reader even if the
// process is killed later: plain output is written to the file; compressed
// output ends its gzip member or zstd frame (a file of several members or
// frames is one valid stream to gzip, zstd and every reader built on them).
// Ending a frame costs a little compression, so a compressed Output ends
// one at most every FrameInterval; a Flush inside that interval only moves
// the buffered bytes into the compressor, and a later Flush (call Flush
// periodically) ends the frame.
type Output struct {
	w      *bufio.Writer
	frame  frameWriter // nil for plain output
	closer io.Closer
	base   io.Writer
	Name   string

	dirty     bool // compressed: bytes written since the frame began
	lastFrame time.Time
	now       func() time.Time
}

// frameWriter is a compressor whose stream can be ended and restarted on
// the same destination.
type frameWriter interface {
	io.WriteCloser
	Reset(io.Writer)
}

// Write implements io.Writer.
func (o *Output) Write(p []byte) (int, error) {
	if o.frame != nil && len(p) > 0 {
		o.dirty = true
	}
	return o.w.Write(p)
}

// Compressed reports whether the output is gzip or zstd.
func (o *Output) Compressed() bool { return o.frame != nil }

// Flush writes buffered data; see Output for compressed output.
func (o *Output) Flush() error {
	if err := o.w.Flush(); err != nil {
		return err
	}
	if o.frame == nil || !o.dirty || o.now().Sub(o.lastFrame) < FrameInterval {
		return nil
	}
	return o.endFrame()
}

// endFrame completes the current frame and starts the next one, which is
// written only if more data comes.
func (o *Output) endFrame() error {
	o.lastFrame, o.dirty = o.now(), false
	if err := o.frame.Close(); err != nil {
		return err
	}
	o.frame.Reset(o.base)
	return nil
}

// Close flushes, ends the last frame and closes the file, in that order.
// A compressed output that received no data still gets one (empty) frame,
// so it is a valid file.
func (o *Output) Close() error {
	err := o.w.Flush()
	if o.frame != nil && err == nil && (o.dirty || o.lastFrame.IsZero()) {
		err = o.frame.Close()
	}
	if cerr := o.closer.Close(); cerr != nil && err == nil {
		err = cerr
	}
	return err
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

// Create creates path ("-" or "" is stdout), compressing by suffix.
func Create(path string, stdout io.Writer) (*Output, error) {
	var (
		base   io.Writer = stdout
		closer io.Closer = nopCloser{}
		name             = "stdout"
	)
	if path != "-" && path != "" {
		f, err := os.Create(path)
		if err != nil {
			return nil, err
		}
		base, closer, name = f, f, path
	}
	o := &Output{Name: name, base: base, closer: closer, now: time.Now}
	switch {
	case strings.HasSuffix(path, ".gz"):
		o.frame = gzip.NewWriter(base)
	case strings.HasSuffix(path, ".zst"):
		zw, err := zstd.NewWriter(base)
		if err != nil {
			closer.Close()
			return nil, err
		}
		o.frame = zw
	}
	var w io.Writer = base
	if o.frame != nil {
		w = frameSink{o}
	}
	o.w = bufio.NewWriterSize(w, 1<<16)
	return o, nil
}

// frameSink feeds the current frame writer (which endFrame replaces).
type frameSink struct{ o *Output }

func (s frameSink) Write(p []byte) (int, error) { return s.o.frame.Write(p) }

// CheckDir fails, naming flag and path, when the directory of the output
// file path does not exist or is not a directory; "" and "-" (stdout)
// pass. Tools check before they start, so that a mistyped directory fails
// before the work rather than after it.
func CheckDir(flag, path string) error {
	if path == "" || path == "-" {
		return nil
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil {
		return fmt.Errorf("%s %s: %w", flag, path, err)
	} else if !st.IsDir() {
		return fmt.Errorf("%s %s: %s is not a directory", flag, path, dir)
	}
	return nil
}
