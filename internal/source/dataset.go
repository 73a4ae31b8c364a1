package source

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/mtkit/mtkit/internal/convert"
)

// openDataset returns an opener of datasets in format from, converted on
// the fly by internal/convert with mtconvert's defaults: ShareGPT parts
// merged when adjacent, roles repaired, duplicate ids dropped, malformed
// records skipped with a warning (to Options.Log). What was skipped or
// dropped is summed up on Options.Log at the end, so nothing is dropped
// silently. Conversion streams: records are read as the replay asks.
func openDataset(from convert.Schema) func(r io.Reader, name string, o Options) (Source, error) {
	return func(r io.Reader, name string, o Options) (Source, error) {
		opts := convert.Options{
			Inputs: []string{name},
			Open: func(string) (io.ReadCloser, string, error) {
				return io.NopCloser(r), name, nil
			},
			From:   from,
			Dedupe: true,
			Log:    o.Log,
		}
		if err := opts.Validate(); err != nil {
			return nil, err
		}
		return pull(func(w writerFunc) error {
			sum, err := convert.Run(context.Background(), opts, w)
			if err == nil && o.Log != nil {
				logDrops(o.Log, name, from, sum)
			}
			return err
		}), nil
	}
}

// logDrops writes one line about what a conversion skipped or dropped, if
// anything.
func logDrops(w io.Writer, name string, from convert.Schema, s *convert.Summary) {
	if s.Malformed == 0 && s.DroppedTotal() == 0 {
		return
	}
	var reasons []string
	for _, r := range convert.Reasons {
		if n := s.Dropped[r]; n > 0 {
			reasons = append(reasons, fmt.Sprintf("%s %d", r, n))
		}
	}
	msg := fmt.Sprintf("warning: %s: converted from %s: %d conversations kept, %d malformed records skipped", name, from, s.Written, s.Malformed)
	if len(reasons) > 0 {
		msg += fmt.Sprintf(", %d conversations dropped (%s)", s.DroppedTotal(), strings.Join(reasons, ", "))
	}
	fmt.Fprintln(w, msg)
}
