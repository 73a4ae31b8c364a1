package conv

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestDocsListEveryField keeps docs/conversations.md in step with the
// types: every JSON field of Conversation and Message has a table row.
func TestDocsListEveryField(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/conversations.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		typ    reflect.Type
		prefix string
	}{
		{reflect.TypeOf(Conversation{}), ""},
		{reflect.TypeOf(Message{}), "messages[]."},
	} {
		for i := 0; i < tc.typ.NumField(); i++ {
			name, _, _ := strings.Cut(tc.typ.Field(i).Tag.Get("json"), ",")
			if row := "| `" + tc.prefix + name + "` |"; !strings.Contains(string(doc), row) {
				t.Errorf("docs/conversations.md has no row %q", row)
			}
		}
	}
}
