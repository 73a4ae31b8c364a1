package record

import (
	"bytes"

	"github.com/parquet-go/parquet-go"
)

// Internals for the tests of package record_test (schema_test.go), which
// use recordtest and so cannot be in package record.

// NewGenericParquetDecoder reads data with the generic reader, even when
// the columnar one could.
func NewGenericParquetDecoder(data []byte, name string) (*ParquetDecoder, error) {
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, err
	}
	g, err := newGenericReader(f, name)
	if err != nil {
		return nil, err
	}
	return &ParquetDecoder{name: name, g: g, buf: make([]Record, 7), total: f.NumRows()}, nil
}

// IsColumnar reports whether the columnar reader reads data.
func IsColumnar(data []byte) bool {
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	return err == nil && columnarOK(f)
}

// NewChunkedFiles is Files with chunks of chunk bytes, decoded in parallel.
func NewChunkedFiles(paths []string, chunk int) *Files {
	return &Files{Paths: paths, chunkSize: chunk}
}

// UnmarshalLine is the JSON decoder of one line.
var UnmarshalLine = unmarshalRecord

// DecodeAll and EncodeAll are the helpers of record_test.go.
var (
	DecodeAll = decodeAll
	EncodeAll = encodeAll
)
