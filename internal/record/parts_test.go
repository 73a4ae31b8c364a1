package record

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/faultio"
)

// readDir reads every record of a parts directory through Files, as
// mtstats does.
func readDir(t *testing.T, dir string) []Record {
	t.Helper()
	f := &Files{Paths: []string{dir}}
	defer f.Close()
	return decodeAll(t, f)
}

// partNames lists the files of dir.
func partNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// TestPartsEncoder: records are readable (from closed parts) once their
// part is PartInterval old and flushed, without Close, as after a kill;
// a full part closes at once; Close closes the last part.
func TestPartsEncoder(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "x.parquet")
	enc, err := CreateParts(dir)
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Unix(1000, 0)
	enc.now = func() time.Time { return clock }
	enc.maxRows = 4
	recs := genRecords(7, 11)
	encode := func(rs []Record) {
		t.Helper()
		for i := range rs {
			if err := enc.Encode(&rs[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	flushAt := func(d time.Duration) {
		t.Helper()
		clock = clock.Add(d)
		if err := enc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		do        func()
		readable  int
		filenames string
	}{
		{func() { encode(recs[:2]); flushAt(PartInterval / 2) }, 0, ".part-000000.parquet.tmp"},
		{func() { flushAt(PartInterval / 2) }, 2, "part-000000.parquet"},
		{func() { encode(recs[2:7]) }, 6, ".part-000002.parquet.tmp part-000000.parquet part-000001.parquet"}, // 4 rows: full
		{func() { flushAt(PartInterval - 1) }, 6, ".part-000002.parquet.tmp part-000000.parquet part-000001.parquet"},
		{func() { flushAt(1) }, 7, "part-000000.parquet part-000001.parquet part-000002.parquet"},
		{func() { flushAt(time.Hour) }, 7, "part-000000.parquet part-000001.parquet part-000002.parquet"}, // no empty part
		{func() {
			encode(recs[7:])
			if err := enc.Close(); err != nil {
				t.Fatal(err)
			}
		}, 11, "part-000000.parquet part-000001.parquet part-000002.parquet part-000003.parquet"},
	}
	for i, st := range steps {
		st.do()
		if got := strings.Join(partNames(t, dir), " "); got != st.filenames {
			t.Errorf("step %d: files %q, want %q", i, got, st.filenames)
		}
		if st.readable == 0 {
			continue // no part yet: Files says so (TestFilesEmptyDir)
		}
		got := readDir(t, dir)
		if d := diffRecords(recs[:st.readable], got); d != "" || len(got) != st.readable {
			t.Errorf("step %d: read %d records, want %d; diff %s", i, len(got), st.readable, d)
		}
	}
	if err := enc.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestCreatePartsReplaces: a file of the directory's name and the parts of
// an earlier run are replaced; an empty run leaves one empty part.
func TestCreatePartsReplaces(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	dir := filepath.Join(base, "x.parquet")
	if err := os.WriteFile(dir, []byte("old single file"), 0o644); err != nil {
		t.Fatal(err)
	}
	enc, err := CreateParts(dir)
	if err != nil {
		t.Fatal(err)
	}
	encodeAll(t, enc, genRecords(1, 3))
	enc, err = CreateParts(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(partNames(t, dir), " "); got != "part-000000.parquet" {
		t.Errorf("files %q, want one empty part", got)
	}
	if got := readDir(t, dir); len(got) != 0 {
		t.Errorf("%d records from an empty run", len(got))
	}
}

type failingFile struct {
	*faultio.FullDisk
	f *os.File
}

func (f failingFile) Close() error { return f.f.Close() }

// TestPartsEncoderDiskFull: the first write error is returned (by the
// Encode or Flush that closes the part) and by every later call; the
// parts closed before stay readable and the broken one is removed.
func TestPartsEncoderDiskFull(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "x.parquet")
	if _, err := CreateParts(dir); err != nil {
		t.Fatal(err)
	}
	budget := 1 << 30
	enc := newPartsEncoder(dir, func(name string) (io.WriteCloser, error) {
		f, err := os.Create(name)
		return failingFile{&faultio.FullDisk{W: f, N: budget}, f}, err
	})
	enc.maxRows = 3
	recs := genRecords(3, 9)
	encodeAll(t, &noClose{enc}, recs[:3]) // one full part
	budget = 100                          // the next part does not fit
	var err error
	for i := 3; i < 9 && err == nil; i++ {
		err = enc.Encode(&recs[i])
	}
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("err %v, want ENOSPC", err)
	}
	if err2 := enc.Flush(); !errors.Is(err2, syscall.ENOSPC) {
		t.Errorf("Flush after the error: %v", err2)
	}
	if err2 := enc.Close(); !errors.Is(err2, syscall.ENOSPC) {
		t.Errorf("Close after the error: %v", err2)
	}
	if got := strings.Join(partNames(t, dir), " "); got != "part-000000.parquet" {
		t.Errorf("files %q, want the one complete part", got)
	}
	if d := diffRecords(recs[:3], readDir(t, dir)); d != "" {
		t.Error(d)
	}
}

// noClose hides Close, so encodeAll leaves the encoder open.
type noClose struct{ Encoder }

func (noClose) Close() error { return nil }

// TestFilesEmptyDir: a directory without parts is an error naming it.
func TestFilesEmptyDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := &Files{Paths: []string{dir}}
	if f.Scan() {
		t.Fatal("Scan true")
	}
	if err := f.Err(); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("err %v", err)
	}
}
