package replay

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/record"
)

// Redacted replaces a secret in every output.
const Redacted = "[REDACTED]"

// MinSecretLen is the length below which a header value or URL user name
// is not treated as a secret: "X-Trace: 1" cannot be told apart from the
// digits of every number.
const MinSecretLen = 4

// Redactor removes the secrets of a run (the API key, every extra header
// value, the user name and password of the URL) from text before it is
// written anywhere. It is the one place where server-provided text (error
// bodies, stream errors, answers, extra fields, model names) and text
// derived from the options (URLs in errors, the command line) is cleaned
// on its way to an output. A nil *Redactor redacts nothing.
type Redactor struct {
	r *strings.Replacer
}

// NewRedactor returns the redactor for o's secrets; nil when o has none.
func NewRedactor(o *Options) *Redactor {
	var secrets []string
	if o.APIKey != "" {
		secrets = append(secrets, o.APIKey)
	}
	for _, vs := range o.Headers {
		secrets = append(secrets, vs...)
	}
	if us := URLSecrets(o.URL); len(us) > 0 {
		// Go sends the userinfo as basic auth when no Authorization is set.
		secrets = append(secrets, us...)
		secrets = append(secrets, base64.StdEncoding.EncodeToString([]byte(us[len(us)-2]+":"+us[len(us)-1])))
	}
	return newRedactor(secrets)
}

// URLSecrets returns the user name and password of u's userinfo, as
// written and percent-decoded.
func URLSecrets(u string) []string {
	_, rest, ok := strings.Cut(strings.TrimSpace(u), "://")
	if !ok {
		return nil
	}
	authority, _, _ := strings.Cut(rest, "/")
	at := strings.LastIndex(authority, "@")
	if at < 0 {
		return nil
	}
	user, pass, _ := strings.Cut(authority[:at], ":")
	out := []string{user, pass}
	for _, s := range []string{user, pass} {
		if d, err := url.PathUnescape(s); err == nil {
			out = append(out, d)
		}
	}
	return out
}

func newRedactor(secrets []string) *Redactor {
	var forms []string
	for _, s := range secrets {
		s = strings.TrimSpace(s)
		if len(s) < MinSecretLen {
			continue
		}
		forms = append(forms, Forms(s)...)
	}
	if len(forms) == 0 {
		return nil
	}
	// Longest first, so that a secret containing another is replaced whole.
	slices.SortFunc(forms, func(a, b string) int { return len(b) - len(a) })
	forms = slices.Compact(forms)
	pairs := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		if f != "" && !strings.Contains(Redacted, f) {
			pairs = append(pairs, f, Redacted)
		}
	}
	if len(pairs) == 0 {
		return nil
	}
	return &Redactor{r: strings.NewReplacer(pairs...)}
}

// MinCoreLen is the shortest piece of a base64 encoding, taken inside a
// longer encoded text, that is treated as a secret's: shorter pieces would
// match ordinary words.
const MinCoreLen = 8

// Forms returns secret s as written and in every encoded form the
// redactor replaces, which are the forms a server or an encoder on the
// way to an output can give it:
//   - JSON string escaping, once, twice and three times nested, each as
//     Go writes it (<, > and & as \u003c…), as most other encoders do
//     (them unescaped) and with non-ASCII as \uXXXX (Python's default);
//   - Go quoting (strconv.Quote);
//   - URL escaping (query and path) and the URL userinfo form;
//   - HTML escaping, Go's (&#34; &#39;) and Python's (&quot; &#x27;), of
//     the secret and of its JSON-escaped form;
//   - the Prometheus name forms (every character outside [A-Za-z0-9_:],
//     or [A-Za-z0-9_], turned into _), as an endpoint writes a value
//     into a metric or label name;
//   - base64, standard and URL alphabets, padded and not, of the secret
//     and of "Bearer " and "Basic " followed by it, whole; and the part
//     of the encoding that depends only on the secret's bytes at each of
//     the three alignments (at least MinCoreLen characters), which is in
//     every base64 text that encodes the secret anywhere in its input.
func Forms(s string) []string {
	forms := []string{s, strings.Trim(strconv.Quote(s), `"`), url.QueryEscape(s), url.PathEscape(s), url.User(s).String(), promName(s, true), promName(s, false)}
	for _, esc := range []func(string) string{jsonGo, jsonPlain, jsonASCII} {
		e := s
		for range 3 {
			e = esc(e)
			forms = append(forms, e)
		}
	}
	for _, t := range []string{s, jsonPlain(s)} {
		forms = append(forms, html.EscapeString(t), htmlPython(t))
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		for _, prefix := range []string{"", "Bearer ", "Basic "} {
			forms = append(forms, enc.EncodeToString([]byte(prefix+s)))
		}
	}
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for align := range 3 {
			b := make([]byte, align, align+len(s))
			e := enc.EncodeToString(append(b, s...))
			lo, hi := (8*align+5)/6, 8*(align+len(s))/6
			if hi-lo >= MinCoreLen {
				forms = append(forms, e[lo:hi])
			}
		}
	}
	return forms
}

// jsonGo is s JSON-escaped as encoding/json writes it, without quotes.
func jsonGo(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// jsonPlain is s JSON-escaped without HTML escaping, without quotes.
func jsonPlain(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	e := strings.TrimSuffix(b.String(), "\n")
	return e[1 : len(e)-1]
}

// jsonASCII is s JSON-escaped as Python's json.dumps writes it: non-ASCII
// as \uXXXX (surrogate pairs beyond the BMP), without quotes.
func jsonASCII(s string) string {
	var b strings.Builder
	for _, r := range jsonPlain(s) {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, "\\u%04x\\u%04x", r1, r2)
		default:
			fmt.Fprintf(&b, "\\u%04x", r)
		}
	}
	return b.String()
}

// htmlPython is s HTML-escaped as Python's html.escape does.
var htmlPython = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#x27;").Replace

// promName is s with every character that a Prometheus metric name (with
// colons) or label name (without) cannot hold replaced by _.
func promName(s string, colon bool) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || colon && r == ':' || r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return r
		}
		return '_'
	}, s)
}

// String returns s without secrets.
func (x *Redactor) String(s string) string {
	if x == nil || s == "" {
		return s
	}
	return x.r.Replace(s)
}

// Error returns err with its message redacted; errors.Is and errors.As
// still see the original chain (exit codes survive).
func (x *Redactor) Error(err error) error {
	if x == nil || err == nil {
		return err
	}
	msg := x.String(err.Error())
	if msg == err.Error() {
		return err
	}
	return &redactedError{msg: msg, err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// Record redacts in place the fields of rec that hold server-provided or
// option-derived text. The identity fields (run id, conversation id,
// phase, error class) come from the options, the dataset or mtkit itself
// and are left alone, so a short secret cannot split a conversation.
func (x *Redactor) Record(rec *record.Record) {
	if x == nil {
		return
	}
	rec.Model = x.String(rec.Model)
	rec.FinishReason = x.String(rec.FinishReason)
	rec.Error = x.String(rec.Error)
	rec.ServerExtra = x.String(rec.ServerExtra)
	rec.Backend = x.String(rec.Backend)
	rec.Host = x.String(rec.Host)
}

// Conversation returns c with every string of its messages (texts, tool
// calls; not the roles) and metadata redacted: a redacted copy when c
// holds a secret, else c itself. c is never modified; its id is kept.
func (x *Redactor) Conversation(c *conv.Conversation) *conv.Conversation {
	if x == nil {
		return c
	}
	b, err := json.Marshal(c)
	if err != nil || x.String(string(b)) == string(b) {
		return c
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	out := &conv.Conversation{}
	if d.Decode(&v) != nil {
		return c
	}
	if m, ok := v.(map[string]any); ok {
		for k, e := range m {
			if k != "id" {
				m[k] = x.value(e)
			}
		}
	}
	if b, err = json.Marshal(v); err != nil || json.Unmarshal(b, out) != nil {
		// Cannot happen for a conversation that marshalled; never write
		// the unredacted one.
		return &conv.Conversation{ID: Redacted}
	}
	return out
}

// JSON returns the JSON document b with every string in it (keys and
// values) redacted, indented as json.MarshalIndent does with two spaces.
// Redacting values rather than bytes keeps the document valid whatever
// the secrets are.
func (x *Redactor) JSON(b []byte) ([]byte, error) {
	if x == nil {
		return b, nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return json.MarshalIndent(x.value(v), "", "  ")
}

func (x *Redactor) value(v any) any {
	switch t := v.(type) {
	case string:
		return x.String(t)
	case []any:
		for i := range t {
			t[i] = x.value(t[i])
		}
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			if k == "role" {
				m[k] = e
			} else {
				m[x.String(k)] = x.value(e)
			}
		}
		return m
	}
	return v
}

// Writer returns a writer that redacts each Write (one message: the
// tools write each line or status update with one call) before passing
// it to w.
func (x *Redactor) Writer(w io.Writer) io.Writer {
	if x == nil || w == nil {
		return w
	}
	if rw, ok := w.(*redactWriter); ok && rw.x == x {
		return w
	}
	return &redactWriter{x: x, w: w}
}

type redactWriter struct {
	x *Redactor
	w io.Writer
}

func (rw *redactWriter) Write(p []byte) (int, error) {
	s := rw.x.String(string(p))
	if _, err := io.WriteString(rw.w, s); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Encoder returns an encoder that redacts each record before enc writes it.
func (x *Redactor) Encoder(enc record.Encoder) record.Encoder {
	if x == nil || enc == nil {
		return enc
	}
	return &redactEncoder{x: x, enc: enc}
}

type redactEncoder struct {
	x   *Redactor
	enc record.Encoder
}

func (e *redactEncoder) Encode(r *record.Record) error {
	c := *r
	e.x.Record(&c)
	return e.enc.Encode(&c)
}

func (e *redactEncoder) Close() error { return e.enc.Close() }

func (e *redactEncoder) Flush() error { return e.enc.Flush() }
