// Package iox opens inputs and creates outputs for the mtkit tools: "-" means
// stdin or stdout, input compression (gzip, zstd) is detected from magic bytes
// and output compression is chosen by file suffix (.gz, .zst).
package iox

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
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
// resources; it does not close r.
func Decompress(r io.Reader) (io.Reader, func(), error) {
	br := bufio.NewReaderSize(r, 1<<16)
	head, _ := br.Peek(4)
	switch Sniff(head) {
	case FormatGzip:
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("gzip: %w", err)
		}
		return bufio.NewReaderSize(zr, 1<<16), func() { zr.Close() }, nil
	case FormatZstd:
		zr, err := zstd.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("zstd: %w", err)
		}
		return bufio.NewReaderSize(zr, 1<<16), zr.Close, nil
	}
	return br, func() {}, nil
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
