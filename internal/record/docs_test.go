package record

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestDocsListEveryField keeps docs/records.md in step with Record: every
// field has a row in its table, and every row names a field.
func TestDocsListEveryField(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/records.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	for _, line := range strings.Split(string(doc), "\n") {
		if name, ok := strings.CutPrefix(line, "| `"); ok {
			if i := strings.Index(name, "`"); i > 0 {
				rows[name[:i]] = true
			}
		}
	}
	typ := reflect.TypeOf(Record{})
	fields := map[string]bool{}
	for i := 0; i < typ.NumField(); i++ {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		fields[name] = true
		if !rows[name] {
			t.Errorf("docs/records.md has no row for field %q", name)
		}
	}
	for name := range rows {
		if !fields[name] {
			t.Errorf("docs/records.md documents %q, which Record does not have", name)
		}
	}
}
