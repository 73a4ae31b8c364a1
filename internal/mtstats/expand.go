package mtstats

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
		in := record.ParseInput(s)
		if in.Path == "-" || in.Path == "" {
			out = append(out, s)
			continue
		}
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
	if m := metrics.NewReader(bytes.NewReader(head.Bytes()), path); m.Scan() {
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
