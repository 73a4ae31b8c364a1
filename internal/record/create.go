package record

import (
	"io"
	"strings"

	"github.com/mtkit/mtkit/internal/iox"
)

// fileEncoder is a JSONL encoder on an iox.Output: records are buffered
// until Flush, which also ends the compressed frame (see iox.Output), and
// Close closes the file after the encoder.
type fileEncoder struct {
	*JSONEncoder
	out *iox.Output
}

// Flush makes every record encoded so far readable by other processes:
// it writes plain JSONL out at once and ends a compressed frame at most
// every iox.FrameInterval (call it again later for the rest).
func (f *fileEncoder) Flush() error {
	if err := f.JSONEncoder.Flush(); err != nil {
		return err
	}
	return f.out.Flush()
}

func (f *fileEncoder) Close() error {
	err := f.JSONEncoder.Close()
	if cerr := f.out.Close(); cerr != nil && err == nil {
		err = cerr
	}
	return err
}

// Create opens a record output: path "-" or "" is stdout (JSONL); a name
// ending in .parquet is a directory of Parquet part files (see
// CreateParts); otherwise JSONL, compressed when the name ends in .gz or
// .zst. Records reach the output when the encoder's Flush is called (the
// replay calls it whenever its queue is empty and at least twice a
// second); close the encoder on every exit path.
func Create(path string, stdout io.Writer) (Encoder, error) {
	if strings.HasSuffix(path, ".parquet") {
		return CreateParts(path)
	}
	out, err := iox.Create(path, stdout)
	if err != nil {
		return nil, err
	}
	// The encoder must not flush per record: the caller decides when.
	return &fileEncoder{JSONEncoder: NewJSONEncoder(struct{ io.Writer }{out}), out: out}, nil
}
