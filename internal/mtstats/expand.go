package mtstats

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mtkit/mtkit/internal/iox"
	"github.com/mtkit/mtkit/internal/metrics"
	"github.com/mtkit/mtkit/internal/record"
)

// ExpandInputs expands directories and glob patterns among inputs into
// the record files they hold, in name order, and takes out the inputs
// that are server-metrics series files by their content (kindOf): those
// are returned as series, for the caller to read as --metrics-file. A directory of Parquet
// parts (mtrun --records DIR.parquet, record.IsPartsDir) stays one
// input; any other directory becomes its *.jsonl, *.jsonl.gz, *.jsonl.zst
// and *.parquet entries (run manifests, server-metrics series and other
// files are skipped). A pattern (with
// * ? or [) that names no existing file is matched with filepath.Glob.
// "label=dir" labels each file "label/NAME". A named file that is
// neither records nor a series is an error naming it.
func ExpandInputs(inputs []string) (out, series []string, err error) {
	for _, s := range inputs {
		if isStdin(s) {
			out = append(out, s)
			continue
		}
		in := record.ParseInput(s)
		labelled := in.Label != in.Path
		name := func(p string) string {
			if labelled {
				return in.Label + "/" + filepath.Base(p) + "=" + p
			}
			return p
		}
		st, err := os.Stat(in.Path)
		switch {
		case err != nil && strings.ContainsAny(in.Path, "*?["):
			matches, gerr := filepath.Glob(in.Path)
			if gerr != nil {
				return nil, nil, &UsageError{fmt.Errorf("%s: %v", in.Path, gerr)}
			}
			if len(matches) == 0 {
				return nil, nil, fmt.Errorf("%s: no file matches", in.Path)
			}
			for _, m := range matches {
				if !isSeries(m) {
					out = append(out, name(m))
				}
			}
		case err == nil && st.IsDir():
			files, err := recordFiles(in.Path)
			if err != nil {
				return nil, nil, err
			}
			if files == nil { // a parts directory, or empty: one input
				out = append(out, s)
			}
			for _, f := range files {
				out = append(out, name(f))
			}
		case err == nil && st.Mode().IsRegular():
			k, err := kindOf(in.Path)
			switch {
			case err != nil:
				return nil, nil, err
			case k == kindSeries:
				series = append(series, in.Path)
			default:
				out = append(out, s)
			}
		default:
			out = append(out, s) // a missing file, reported when opened
		}
	}
	return out, series, nil
}

// inputKind is what a named input file holds.
type inputKind int

const (
	kindRecords inputKind = iota
	kindSeries
)

// sniffLines is how many lines kindOf reads at most for a record.
const sniffLines = 100

// kindOf tells a records file from a server-metrics series file (one
// sample a line, metrics.Reader) by its content, whatever its name and
// compression: a series when its first line is a valid sample, records
// when it is Parquet, empty or unreadable here (the records reader
// reports that), or when one of its first sniffLines lines is a valid
// record; else an error naming the file and the first line's problem.
func kindOf(path string) (inputKind, error) {
	in, err := iox.Open(path, nil)
	if err != nil {
		return kindRecords, nil // reported when opened as records
	}
	defer in.Close()
	br := bufio.NewReader(in)
	if magic, _ := br.Peek(4); bytes.Equal(magic, []byte("PAR1")) {
		return kindRecords, nil
	}
	var head bytes.Buffer
	lines := 0
	for lines < sniffLines {
		b, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(b)) > 0 {
			head.Write(b)
			lines++
		}
		if err != nil {
			break
		}
	}
	if lines == 0 {
		return kindRecords, nil
	}
	if startsSeries(head.Bytes(), path) {
		return kindSeries, nil
	}
	d := record.NewJSONDecoder(bytes.NewReader(head.Bytes()), path)
	var first error
	for d.Scan() {
		if d.Err() == nil {
			return kindRecords, nil
		}
		if first == nil {
			first = d.Err()
		}
	}
	if first == nil || errors.Is(first, record.ErrTruncated) {
		return kindRecords, nil
	}
	var se *record.SyntaxError
	if errors.As(first, &se) {
		return kindRecords, fmt.Errorf("%s: neither records nor a server-metrics series (line %d: %w)", path, se.Line, se.Err)
	}
	return kindRecords, fmt.Errorf("%s: neither records nor a server-metrics series: %w", path, first)
}

// startsSeries reports whether the first non-blank line of b is a valid
// server-metrics sample (metrics.Reader).
func startsSeries(b []byte, name string) bool {
	return metrics.NewReader(bytes.NewReader(b), name).Scan()
}

// readsStdin reports whether inputs read stdin: none, or "-".
func readsStdin(inputs []string) bool {
	return len(inputs) == 0 || slices.ContainsFunc(inputs, isStdin)
}

// isStdin reports whether the input s is stdin ("-", or "label=-").
func isStdin(s string) bool {
	in := record.ParseInput(s)
	return in.Path == "-" || in.Path == ""
}

// peekStdin decompresses stdin and tells a server-metrics series from
// records by its first non-blank line, as kindOf does for a file: a
// series when that line is a valid sample, else records (whose reader
// reports a bad line as for any input). It peeks and reads nothing, and
// only as far as that first line, so records piped live (mtrun ... |
// mtstats --every) are still read as they come; the stream it returns
// (a *iox.Stream, which record.Files takes as is) starts at stdin's
// first byte. Release frees the decompressor.
func peekStdin(stdin io.Reader) (in *iox.Stream, release func(), k inputKind, err error) {
	in, release, err = iox.DecompressToCut(stdin)
	if err != nil {
		return nil, nil, kindRecords, fmt.Errorf("stdin: %w", err)
	}
	line := firstLine(in.Reader)
	if line != nil && startsSeries(line, "stdin") {
		return in, release, kindSeries, nil
	}
	return in, release, kindRecords, nil
}

// peekStdinCtx is peekStdin, given up when ctx ends first (an interrupt
// before stdin's first line): then it returns ErrInterrupted.
func peekStdinCtx(ctx context.Context, stdin io.Reader) (*iox.Stream, func(), inputKind, error) {
	ch := make(chan peeked, 1)
	go func() {
		in, release, k, err := peekStdin(stdin)
		ch <- peeked{in, release, k, err}
	}()
	select {
	case p := <-ch:
		return p.in, p.release, p.k, p.err
	case <-ctx.Done():
		go releaseLater(ch)
		return nil, nil, kindRecords, ErrInterrupted
	}
}

// peeked is what peekStdin returned.
type peeked struct {
	in      *iox.Stream
	release func()
	k       inputKind
	err     error
}

// releaseLater waits for a peek given up on and releases its
// decompressor, if any.
func releaseLater(ch <-chan peeked) {
	if p := <-ch; p.release != nil {
		p.release()
	}
}

// firstLine returns the first non-blank line of br without consuming
// it, waiting for no more input than that line; nil when br ends first or
// the line does not fit br's buffer (no series sample is that long).
func firstLine(br *bufio.Reader) []byte {
	n := 1
	for {
		b, err := br.Peek(n)
		for rest := b; ; {
			i := bytes.IndexByte(rest, '\n')
			if i < 0 {
				if errors.Is(err, io.EOF) && len(bytes.TrimSpace(rest)) > 0 {
					return rest // the last line, without its newline
				}
				break
			}
			if line := rest[:i+1]; len(bytes.TrimSpace(line)) > 0 {
				return line
			}
			rest = rest[i+1:]
		}
		if err != nil {
			return nil
		}
		n = max(len(b)+1, br.Buffered())
	}
}

// isSeries reports whether name is a server-metrics series file that
// mtrun writes next to its records (RUN.metrics.jsonl[.gz|.zst]): never
// records. The series of a directory's one run is still read, as the
// series next to its records file (pairSeries).
func isSeries(name string) bool {
	for _, ext := range []string{".metrics.jsonl", ".metrics.jsonl.gz", ".metrics.jsonl.zst"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

// recordFiles lists the record inputs of dir; nil when dir holds Parquet
// parts itself (it is one input) or nothing.
func recordFiles(dir string) ([]string, error) {
	if record.IsPartsDir(dir) {
		return nil, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		n := e.Name()
		if strings.HasPrefix(n, ".") || isSeries(n) {
			continue
		}
		for _, ext := range []string{".jsonl", ".jsonl.gz", ".jsonl.zst", ".parquet"} {
			if strings.HasSuffix(n, ext) {
				files = append(files, filepath.Join(dir, n))
				break
			}
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no record files (*.jsonl, *.jsonl.gz, *.jsonl.zst, *.parquet) in the directory", dir)
	}
	return files, nil
}
