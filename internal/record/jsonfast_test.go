package record

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFastDecoderEnabled(t *testing.T) {
	t.Parallel()
	if !fastDecoderOK {
		t.Fatal("Record's JSON fields differ from fastFields: teach jsonfast.go the new fields")
	}
}

// checkFast asserts that the fast decoder, when it accepts a line, decodes
// it exactly as encoding/json does.
func checkFast(t *testing.T, line []byte) {
	t.Helper()
	var fast, std Record
	var cache decodeCache
	ok := fastUnmarshal(line, &fast, &cache)
	err := json.Unmarshal(line, &std)
	if !ok {
		return
	}
	if err != nil {
		t.Fatalf("fast decoder accepted what encoding/json rejects (%v): %q", err, line)
	}
	if d := cmp.Diff(std, fast); d != "" {
		t.Fatalf("%q: fast decoder differs (-std +fast):\n%s", line, d)
	}
	if (std.ITLNs == nil) != (fast.ITLNs == nil) {
		t.Fatalf("%q: itl_ns nil-ness differs", line)
	}
}

func TestFastDecoder(t *testing.T) {
	t.Parallel()
	for _, line := range []string{
		`{}`, ` { } `, `{"run_id":"a\"b\u00e9","turn":3,"itl_ns":[],"ttft_ns":null,"x":{"y":[1,{"z":null}],"w":"é"}}`,
		`{"itl_ns":[1,2],"itl_ns":null}`, `{"itl_ns":null,"itl_ns":[]}`, `{"tpot_ns":1e3,"seq":-0}`,
		`{"turn":1.0}`, `{"turn":"1"}`, `{"RUN_ID":"x"}`, `{"run_id":"x",}`, `{"start":"2026-01-02T03:04:05.123456789+02:00"}`,
		`{"start":"2026-13-02T03:04:05Z"}`, `{"first_token":null,"verify_mismatch":false,"retried":null}`,
		`{"seq":9223372036854775808}`, `{"status":01}`, `[]`, `null`, `{"a":tru}`, "{\"run_id\":\"a\tb\"}",
	} {
		checkFast(t, []byte(line))
	}
	var ok int
	for _, r := range genRecords(21, 500) {
		line := encodeJSONL(t, []Record{r})
		checkFast(t, line)
		var x Record
		if fastUnmarshal(line, &x, nil) {
			ok++
		}
	}
	if ok != 500 {
		t.Errorf("fast path taken for %d of 500 ordinary records", ok)
	}
}

func FuzzFastDecoder(f *testing.F) {
	for _, r := range genRecords(22, 5) {
		f.Add(encodeJSONL(f, []Record{r}))
	}
	f.Add([]byte(`{"run_id":"a\"b\u00e9","itl_ns":[],"x":{"y":[1,{"z":null}]}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		checkFast(t, line)
	})
}
