package record

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// docTypes are the types docs/records.md may give a field of each kind.
var docTypes = map[Kind][]string{
	KindString: {"string"}, KindInt: {"int"}, KindInt64: {"int"}, KindBool: {"bool"}, KindTime: {"time"},
	KindInt64Ptr: {"int", "int/null"}, KindFloat64Ptr: {"float", "float/null"}, KindBoolPtr: {"bool", "bool/null"},
	KindTimePtr: {"time", "time/null"}, KindInt64List: {"int list"},
}

// TestDocsListEveryField keeps docs/records.md in step with the schema:
// every field has a row in its table, with a type that fits, and every
// row names a field.
func TestDocsListEveryField(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/records.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{} // name → type
	for _, line := range strings.Split(string(doc), "\n") {
		if rest, ok := strings.CutPrefix(line, "| `"); ok {
			if name, rest, ok := strings.Cut(rest, "` | "); ok {
				typ, _, _ := strings.Cut(rest, " |")
				rows[name] = typ
			}
		}
	}
	for _, f := range Fields() {
		typ, ok := rows[f.Name]
		if !ok {
			t.Errorf("docs/records.md has no row for field %q", f.Name)
			continue
		}
		if !slices.Contains(docTypes[f.Kind], typ) {
			t.Errorf("docs/records.md gives %q the type %q, want one of %q", f.Name, typ, docTypes[f.Kind])
		}
	}
	for name := range rows {
		if fieldByName[name] == nil {
			t.Errorf("docs/records.md documents %q, which Record does not have", name)
		}
	}
}
