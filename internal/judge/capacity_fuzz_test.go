package judge

import (
	"os"
	"strings"
	"testing"

	"github.com/mtkit/mtkit/internal/sweep"
)

// FuzzReadCapacity checks that reading a capacity JSON never panics,
// that an error names the file, and that an accepted file has the schema
// and valid stages.
func FuzzReadCapacity(f *testing.F) {
	for _, s := range []string{
		`{"schema":"mtkit.capacity/v1","kind":"clients","capacity":4,"objectives":["ttft_p95<=100ms"],"stages":[{"stage":1,"kind":"clients","level":2}]}`,
		`{"schema":"mtkit.capacity/v1","objectives":["bogus"]}`, `{"schema":"other"}`, `[]`, `{`, ``,
		`{"schema":"mtkit.capacity/v1","stages":[{"stage":0,"level":1}]}`,
	} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data string) {
		fh, err := os.CreateTemp(dir, "cap*.json") // fuzz workers share dir
		if err != nil {
			t.Fatal(err)
		}
		p := fh.Name()
		defer os.Remove(p)
		_, werr := fh.WriteString(data)
		if cerr := fh.Close(); werr != nil || cerr != nil {
			t.Fatal(werr, cerr)
		}
		in, _, err := ReadCapacityFile(p, nil)
		if err != nil {
			if !strings.Contains(err.Error(), p) {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if in.c.Schema != sweep.CapacitySchema {
			t.Fatalf("accepted schema %q", in.c.Schema)
		}
		for _, j := range in.c.Stages {
			if j.Stage < 1 || !(j.Level > 0) {
				t.Fatalf("accepted stage %+v", j)
			}
		}
	})
}
