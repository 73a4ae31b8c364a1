package record

import (
	"io"
	"strings"

	"github.com/mtkit/mtkit/internal/iox"
)

// fileEncoder closes the file behind an encoder after the encoder.
type fileEncoder struct {
	Encoder
	out *iox.Output
}

func (f *fileEncoder) Close() error {
	err := f.Encoder.Close()
	if cerr := f.out.Close(); cerr != nil && err == nil {
		err = cerr
	}
	return err
}

// Create opens a record output: path "-" or "" is stdout (JSONL); a name
// ending in .parquet is Parquet; otherwise JSONL, compressed when the name
// ends in .gz or .zst. Close the encoder on every exit path.
func Create(path string, stdout io.Writer) (Encoder, error) {
	out, err := iox.Create(path, stdout)
	if err != nil {
		return nil, err
	}
	var enc Encoder = NewJSONEncoder(out)
	if strings.HasSuffix(path, ".parquet") {
		enc = NewParquetEncoder(out)
	}
	return &fileEncoder{Encoder: enc, out: out}, nil
}
