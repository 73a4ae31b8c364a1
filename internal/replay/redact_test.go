package replay

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"html"
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/record"
)

func testRedactor() *Redactor {
	return NewRedactor(&Options{
		URL:     "http://alice%40corp:p%40ss-word@127.0.0.1:8000/v1",
		APIKey:  "sk-key-0123456789",
		Headers: http.Header{"X-Api-Key": {"hdr-<&>\"secret"}},
	})
}

func TestRedactorString(t *testing.T) {
	t.Parallel()
	x := testRedactor()
	jsonQuoted := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	for _, tc := range []struct{ in, want string }{
		{"no secret here", "no secret here"},
		{"Authorization: Bearer sk-key-0123456789 rejected", "Authorization: Bearer [REDACTED] rejected"},
		{"header " + jsonQuoted("hdr-<&>\"secret"), `header "[REDACTED]"`},
		{"chunk " + strconv.Quote("hdr-<&>\"secret"), `chunk "[REDACTED]"`},
		{`Post "http://alice%40corp:***@127.0.0.1:8000/v1": refused`, `Post "http://[REDACTED]:***@127.0.0.1:8000/v1": refused`},
		{"user alice@corp password p@ss-word", "user [REDACTED] password [REDACTED]"},
		{"sk-key-0123456789sk-key-0123456789", "[REDACTED][REDACTED]"},
	} {
		if got := x.String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	var none *Redactor
	if got := none.String("sk-key-0123456789"); got != "sk-key-0123456789" {
		t.Errorf("nil redactor changed the text: %q", got)
	}
	if NewRedactor(&Options{URL: "http://127.0.0.1:1"}) != nil {
		t.Error("options without secrets gave a redactor")
	}
}

func TestRedactorValues(t *testing.T) {
	t.Parallel()
	// A secret that is also the text of numbers and ids, to show that
	// only text is redacted, never structure or identity.
	x := NewRedactor(&Options{APIKey: "1234", Headers: http.Header{"X-Trace": {"1"}}})
	rec := &record.Record{Error: "HTTP 403: key 1234 rejected", Model: "m1234", ConversationID: "c1234", Turn: 1234}
	x.Record(rec)
	if rec.Error != "HTTP 403: key [REDACTED] rejected" || rec.Model != "m[REDACTED]" || rec.ConversationID != "c1234" || rec.Turn != 1234 {
		t.Errorf("record: %+v", rec)
	}
	b, err := x.JSON([]byte(`{"n": 1234, "s": "v1234", "l": [1234, "1234"]}`))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("redacted JSON is not valid: %v\n%s", err, b)
	}
	if v["n"] != 1234.0 || v["s"] != "v[REDACTED]" || v["l"].([]any)[1] != Redacted {
		t.Errorf("JSON: %s", b)
	}
	c := &conv.Conversation{ID: "c1234", Messages: []conv.Message{{Role: "user", Content: "say 1234", OutputTokens: 1234}}}
	got := x.Conversation(c)
	if got.ID != "c1234" || got.Messages[0].Content != "say [REDACTED]" || got.Messages[0].OutputTokens != 1234 || got.Messages[0].Role != "user" {
		t.Errorf("conversation: %+v", got)
	}
	if c.Messages[0].Content != "say 1234" {
		t.Error("Conversation modified its argument")
	}
	var buf bytes.Buffer
	w := x.Writer(&buf)
	if n, err := w.Write([]byte("attempt 1234\n")); n != 13 || err != nil {
		t.Errorf("Write = %d, %v", n, err)
	}
	if buf.String() != "attempt [REDACTED]\n" {
		t.Errorf("writer: %q", buf.String())
	}
	base := errors.New("base")
	err = x.Error(&wrapErr{"failed with 1234", base})
	if err.Error() != "failed with [REDACTED]" || !errors.Is(err, base) {
		t.Errorf("Error: %v (Is base: %v)", err, errors.Is(err, base))
	}
}

// TestRedactorRecordFields fails when record.Record gains a string field
// that is neither redacted nor known to hold only mtkit's own text.
func TestRedactorRecordFields(t *testing.T) {
	t.Parallel()
	identity := map[string]bool{"RunID": true, "ConversationID": true, "Phase": true, "ErrorClass": true, "StageLoad": true, "ConversationEnd": true}
	const secret = "sk-field-secret"
	x := NewRedactor(&Options{APIKey: secret})
	rec := &record.Record{}
	v := reflect.ValueOf(rec).Elem()
	for i := range v.NumField() {
		if v.Field(i).Kind() == reflect.String {
			v.Field(i).SetString(secret)
		}
	}
	x.Record(rec)
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		if v.Field(i).Kind() == reflect.String && !identity[name] && strings.Contains(v.Field(i).String(), secret) {
			t.Errorf("record field %s is not redacted", name)
		}
	}
}

type wrapErr struct {
	msg string
	err error
}

func (e *wrapErr) Error() string { return e.msg }
func (e *wrapErr) Unwrap() error { return e.err }

// FuzzRedactor: whatever the text, no secret (without the marker's
// brackets) survives String.
func FuzzRedactor(f *testing.F) {
	f.Add("sk-abc123", "x sk-abc123 y", "user", "pass")
	f.Add("aaaa", "aaaaaaa", "u", "")
	f.Add("k%20k", "k k k%20k k+k", "a:b", "c@d")
	f.Fuzz(func(t *testing.T, key, text, user, pass string) {
		url := "http://" + user + ":" + pass + "@127.0.0.1/"
		x := NewRedactor(&Options{APIKey: key, URL: url})
		got := x.String(text)
		for _, s := range append([]string{key}, URLSecrets(url)...) {
			s = strings.TrimSpace(s)
			if len(s) < MinSecretLen || strings.ContainsAny(s, "[]") || strings.Contains(Redacted, s) {
				continue
			}
			if strings.Contains(got, s) {
				t.Fatalf("secret %q survives in %q (from %q)", s, got, text)
			}
		}
	})
}

// TestRedactorEncodedForms: a secret base64-encoded (both alphabets,
// padded or not, with "Bearer " before it or inside any longer text),
// JSON-escaped up to three times, HTML-escaped or written as a
// Prometheus name is replaced. Issue 24: the base64 of "Bearer <key>" in
// an error body and a header value JSON-encoded twice got through.
func TestRedactorEncodedForms(t *testing.T) {
	t.Parallel()
	const key, hdr = "sk-live-5d4c3b2a1f", `hv3"q<&>'x-771`
	x := NewRedactor(&Options{APIKey: key, Headers: http.Header{"X-H": {hdr}}})
	plainJSON := func(s string) string {
		var b bytes.Buffer
		e := json.NewEncoder(&b)
		e.SetEscapeHTML(false)
		e.Encode(s)
		return strings.TrimSpace(b.String())[1 : len(strings.TrimSpace(b.String()))-1]
	}
	var cases []string
	for _, s := range []string{key, hdr} {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
			for _, text := range []string{s, "Bearer " + s, "a" + s, "ab" + s + "c", `{"Authorization": "Bearer ` + s + `", "n": 1}`} {
				cases = append(cases, "got "+enc.EncodeToString([]byte(text))+" back")
			}
		}
		j1 := plainJSON(s)
		j2 := plainJSON(j1)
		cases = append(cases, j1, j2, plainJSON(j2), strings.Trim(strconv.Quote(s), `"`),
			"<p>"+html.EscapeString(s)+"</p>", strings.NewReplacer(`"`, "&quot;", "'", "&#x27;", "<", "&lt;", ">", "&gt;", "&", "&amp;").Replace(s),
			"vllm:echo_"+regexp.MustCompile(`[^A-Za-z0-9_:]`).ReplaceAllString("Bearer "+s, "_")+"_total")
	}
	for _, c := range cases {
		got := x.String(c)
		if !strings.Contains(got, Redacted) {
			t.Errorf("String(%q) = %q: nothing redacted", c, got)
			continue
		}
		// What is left must not decode to the secret either.
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			for _, part := range strings.FieldsFunc(got, func(r rune) bool { return strings.ContainsRune(" []", r) }) {
				b, _ := enc.DecodeString(strings.TrimRight(part, "="))
				if strings.Contains(string(b), key) {
					t.Errorf("String(%q) = %q: %q still decodes to the key", c, got, part)
				}
			}
		}
	}
	// Short secrets get no base64 pieces: ordinary text stays.
	y := NewRedactor(&Options{APIKey: "abcd"})
	if got := y.String("YWJj ZGVm bm9ybWFs"); got != "YWJj ZGVm bm9ybWFs" {
		t.Errorf("short secret redacted ordinary base64: %q", got)
	}
}
