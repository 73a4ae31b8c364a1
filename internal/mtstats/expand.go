package mtstats

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mtkit/mtkit/internal/record"
)

// ExpandInputs expands directories and glob patterns among inputs into
// the record files they hold, in name order. A directory of Parquet
// parts (mtrun --records DIR.parquet, record.IsPartsDir) stays one
// input; any other directory becomes its *.jsonl, *.jsonl.gz, *.jsonl.zst
// and *.parquet entries (run manifests, server-metrics series and other
// files are skipped). A pattern (with
// * ? or [) that names no existing file is matched with filepath.Glob.
// "label=dir" labels each file "label/NAME".
func ExpandInputs(inputs []string) ([]string, error) {
	var out []string
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
				return nil, &UsageError{fmt.Errorf("%s: %v", in.Path, gerr)}
			}
			if len(matches) == 0 {
				return nil, fmt.Errorf("%s: no file matches", in.Path)
			}
			for _, m := range matches {
				if !isSeries(m) {
					out = append(out, name(m))
				}
			}
		case err == nil && st.IsDir():
			files, err := recordFiles(in.Path)
			if err != nil {
				return nil, err
			}
			if files == nil { // a parts directory, or empty: one input
				out = append(out, s)
			}
			for _, f := range files {
				out = append(out, name(f))
			}
		default:
			out = append(out, s) // a file, or a missing one (reported when opened)
		}
	}
	return out, nil
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
