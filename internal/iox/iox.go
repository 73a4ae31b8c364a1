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

// Output is a buffered, optionally compressed output stream. Flush pushes
// everything written so far through the compressor to the file, so a reader
// sees complete lines even if the process dies later.
type Output struct {
	w       *bufio.Writer
	flusher interface{ Flush() error }
	closers []io.Closer
	Name    string
}

// Write implements io.Writer.
func (o *Output) Write(p []byte) (int, error) { return o.w.Write(p) }

// Flush writes buffered data and flushes the compressor.
func (o *Output) Flush() error {
	if err := o.w.Flush(); err != nil {
		return err
	}
	if o.flusher != nil {
		return o.flusher.Flush()
	}
	return nil
}

// Close flushes and closes the compressor and the file, in that order.
func (o *Output) Close() error {
	err := o.w.Flush()
	for _, c := range o.closers {
		if cerr := c.Close(); cerr != nil && err == nil {
			err = cerr
		}
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
	o := &Output{Name: name}
	switch {
	case strings.HasSuffix(path, ".gz"):
		zw := gzip.NewWriter(base)
		o.w, o.flusher, o.closers = bufio.NewWriterSize(zw, 1<<16), zw, []io.Closer{zw, closer}
	case strings.HasSuffix(path, ".zst"):
		zw, err := zstd.NewWriter(base)
		if err != nil {
			closer.Close()
			return nil, err
		}
		o.w, o.flusher, o.closers = bufio.NewWriterSize(zw, 1<<16), zw, []io.Closer{zw, closer}
	default:
		o.w, o.closers = bufio.NewWriterSize(base, 1<<16), []io.Closer{closer}
	}
	return o, nil
}
