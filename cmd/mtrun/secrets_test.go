package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mtkit/mtkit/internal/iox"
	"github.com/mtkit/mtkit/internal/mtstats"
)

// Secrets of TestNoSecretInOutputs.
const (
	secretKey    = "sk-live-5d4c3b2a1f"
	secretHeader = "hv-0a9b8c7d6e"
	secretOther  = "hv2-xyz-665544"
	secretUser   = "mtuser-7f3a"
	secretPass   = "pw-9c2e81d0"
	// secretQuote holds the characters that JSON and HTML escape.
	secretQuote = `hq3"q<&>'x-771`
)

// testSecrets are the secrets TestNoSecretInOutputs gives mtrun.
var testSecrets = []string{secretKey, secretHeader, secretOther, secretUser, secretPass, secretQuote}

// secretForms returns s and the encoded forms of it that an echoing
// server or an encoder on the way to an output gives: JSON-escaped once,
// twice and three times, HTML-escaped (Go's and Python's way), URL-escaped,
// as a Prometheus name, and base64 (both alphabets, padded or not) of s
// and of "Bearer "+s. Written here, apart from the redactor's own list.
func secretForms(s string) []string {
	plainJSON := func(s string) string {
		var b bytes.Buffer
		e := json.NewEncoder(&b)
		e.SetEscapeHTML(false)
		e.Encode(s)
		q := strings.TrimSpace(b.String())
		return q[1 : len(q)-1]
	}
	j1 := plainJSON(s)
	j2 := plainJSON(j1)
	forms := []string{s, j1, j2, plainJSON(j2), html.EscapeString(s), html.EscapeString(j1),
		strings.NewReplacer(`"`, "&quot;", "'", "&#x27;", "<", "&lt;", ">", "&gt;", "&", "&amp;").Replace(s),
		url.QueryEscape(s), regexp.MustCompile(`[^A-Za-z0-9_:]`).ReplaceAllString(s, "_")}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		forms = append(forms, enc.EncodeToString([]byte(s)), enc.EncodeToString([]byte("Bearer "+s)))
	}
	return forms
}

// base64Run is a run of base64 characters long enough to hide a secret.
var base64Run = regexp.MustCompile(`[A-Za-z0-9+/_-]{12,}`)

// decodedSecret decodes every base64 run of b at every alignment, in both
// alphabets, and returns the first secret found in what it decodes to.
func decodedSecret(b []byte) (string, bool) {
	for _, run := range base64Run.FindAll(b, -1) {
		for skip := range 4 {
			for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
				r := run[skip:]
				d, _ := enc.DecodeString(string(r[:len(r)/4*4]))
				for _, s := range testSecrets {
					if bytes.Contains(d, []byte(s)) {
						return fmt.Sprintf("%s (base64 %s)", s, run), true
					}
				}
			}
		}
	}
	return "", false
}

// echoServer is hostile: it lists a model named after the request's
// headers, and answers each completion request in turn with an error body
// echoing every request header and the URL (500, 401), a stream that
// splits the secrets across chunks and ends in an error event echoing the
// headers, or a stream with the secrets in the answer, in an extra field
// and in the response headers.
func echoServer(t *testing.T) *httptest.Server {
	var n atomic.Int64
	dump := func(r *http.Request) string {
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s user=%v;", r.Method, r.URL, r.URL.User)
		keys := make([]string, 0, len(r.Header))
		for k := range r.Header {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, " %s: %s;", k, strings.Join(r.Header[k], ","))
		}
		return b.String()
	}
	sse := func(w http.ResponseWriter, v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		w.(http.Flusher).Flush()
	}
	delta := func(s string) map[string]any {
		return map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": s}}}}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, vs := range r.Header {
			w.Header()["X-Echo-"+k] = vs
		}
		if r.URL.Path == "/metrics" {
			metricsEcho(w, r)
			return
		}
		if r.URL.Path == "/v1/models" {
			json.NewEncoder(w).Encode(map[string]any{"data": []any{map[string]any{"id": "model " + r.Header.Get("Authorization")}}})
			return
		}
		echo := dump(r)
		var enc []string // the headers' values base64-encoded
		for _, k := range []string{"Authorization", "X-Api-Key", "X-Other", "X-Quote"} {
			v := r.Header.Get(k)
			for _, e := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding} {
				enc = append(enc, e.EncodeToString([]byte(v)), e.EncodeToString([]byte("token="+v)))
			}
			enc = append(enc, base64.RawURLEncoding.EncodeToString([]byte(strings.TrimPrefix(v, "Bearer "))))
		}
		switch n.Add(1) % 5 {
		case 1:
			w.WriteHeader(http.StatusInternalServerError)
			json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": "upstream failed for " + echo + " encoded " + strings.Join(enc, " ")}})
		case 4:
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprintf(w, "<html><body><pre>%s</pre><p>%s</p></body></html>", html.EscapeString(echo), strings.Join(enc, ","))
		case 2:
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, "denied: "+echo)
		case 3:
			w.Header().Set("Content-Type", "text/event-stream")
			k := r.Header.Get("X-Api-Key")
			sse(w, delta("key "+k[:5]))
			sse(w, delta(k[5:]+" and "))
			sse(w, map[string]any{"error": map[string]any{"message": "stream broke: " + echo}})
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			auth := r.Header.Get("Authorization")
			sse(w, delta(auth[:12]))
			sse(w, delta(auth[12:]+" "+r.Header.Get("X-Other")))
			once, _ := json.Marshal(map[string]any{"headers": echo})
			twice, _ := json.Marshal(string(once))
			sse(w, map[string]any{"echo": echo, "echo_json": string(twice), "echo_b64": enc, "choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": "stop " + auth}}})
			fmt.Fprint(w, "data: [DONE]\n\n")
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// metricsEcho is a hostile /metrics endpoint: it writes the request's
// Authorization and X-Api-Key values into label values, a label name, a
// metric name (as a name-safe form, as issue 24's endpoint did), HELP
// text and a quoted UTF-8 name, beside the real vLLM series.
func metricsEcho(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	auth, key, quote := r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"), r.Header.Get("X-Quote")
	name := "vllm:echo_" + regexp.MustCompile(`[^A-Za-z0-9_:]`).ReplaceAllString(auth, "_")
	label := regexp.MustCompile(`[^A-Za-z0-9_]`).ReplaceAllString(key, "_")
	fmt.Fprintf(w, "# HELP %s echoes %s and %s\n# TYPE %s gauge\n", name, auth, key, name)
	fmt.Fprintf(w, "%s{auth=%q,key=%q,quote=%q,b64=%q,%s=\"1\"} 1\n", name, auth, key, quote, base64.StdEncoding.EncodeToString([]byte(auth)), label)
	fmt.Fprintf(w, "{%q,a=\"b\"} 2\n", "vllm:utf8 "+auth)
	fmt.Fprint(w, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 1\n")
}

// TestNoSecretInOutputs runs whole mtrun invocations against echoServer
// and looks for every form of every secret (secretForms, and base64 at
// any alignment) in every byte written: records (JSONL on stdout and in a
// file, Parquet), conversations (-o, file and stdout), the manifest, the
// server-metrics series (JSONL and zstd), stderr (with --print-content
// and the summary), and mtstats' outputs from the records (JSON report,
// --to Parquet and JSONL, --xlsx). Issue 24: the series file, base64 and
// nested JSON escaping were not covered.
func TestNoSecretInOutputs(t *testing.T) {
	t.Parallel()
	noSecretInOutputs(t, true)
}

// TestNoSecretFromEnvKey: the API key taken from OPENAI_API_KEY is a
// secret like --api-key's. Not parallel: it sets the environment.
func TestNoSecretFromEnvKey(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", secretKey)
	noSecretInOutputs(t, false)
}

func noSecretInOutputs(t *testing.T, keyFlag bool) {
	srv := echoServer(t)
	url := strings.Replace(srv.URL, "http://", "http://"+secretUser+":"+secretPass+"@", 1)
	var forms []string
	for _, s := range testSecrets {
		forms = append(forms, secretForms(s)...)
	}
	for _, tc := range []struct {
		name string
		args []string // relative paths are under the test's directory
	}{
		{"jsonl files", []string{"--records", "r.jsonl", "-o", "c.jsonl", "--manifest", "m.json", "--print-content"}},
		{"parquet, conversations on stdout", []string{"--records", "r.parquet", "-o", "-"}},
		{"stdout", []string{"--manifest", "-"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if keyFlag {
				t.Parallel()
			}
			dir := t.TempDir()
			args := []string{"--url", url, "--header", "X-Api-Key: " + secretHeader,
				"--header", "X-Other=" + secretOther, "--header", "X-Quote: " + secretQuote, "--max-retries", "1", "--tokenizer", "none", "--clients", "2"}
			if keyFlag {
				args = append(args, "--api-key", secretKey)
			}
			for _, a := range tc.args {
				if strings.Contains(a, ".") && !strings.HasPrefix(a, "-") {
					a = filepath.Join(dir, a)
				}
				args = append(args, a)
			}
			got := runMtrun(t, convJSONL(4, 3, 8), nil, args...)
			outputs := map[string][]byte{"stdout": got.stdoutBytes, "stderr": []byte(got.stderr)}
			var files []string // every file, the parts of r.parquet/ included
			filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
				if err == nil && d.Type().IsRegular() {
					files = append(files, path)
				}
				return err
			})
			for _, f := range files {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				name, _ := filepath.Rel(dir, f)
				outputs[name] = b
				if strings.HasSuffix(f, ".zst") {
					outputs[name+" decoded"] = decodeFile(t, f)
				}
				if strings.HasSuffix(f, ".parquet") {
					// Pages may be compressed: look in the decoded values too.
					for _, r := range readFiles(t, f) {
						v := reflect.ValueOf(r)
						for i := range v.NumField() {
							if v.Field(i).Kind() == reflect.String {
								outputs[name] = append(outputs[name], v.Field(i).String()+"\n"...)
							}
						}
					}
				}
			}
			if len(outputs["stdout"])+len(outputs["r.jsonl"])+len(outputs[filepath.Join("r.parquet", "part-000000.parquet")]) == 0 {
				t.Fatalf("no records written; stderr: %s", got.stderr)
			}
			var series []byte
			for name, b := range outputs {
				if strings.Contains(name, ".metrics.jsonl") {
					series = append(series, b...)
				}
			}
			if slices.Contains(tc.args, "--records") && !bytes.Contains(series, []byte("vllm:echo_Bearer_[REDACTED]")) {
				t.Errorf("the echoing series are not in the series file")
			}
			for _, rec := range []string{"r.jsonl", "r.parquet"} {
				if _, err := os.Stat(filepath.Join(dir, rec)); err == nil {
					for k, v := range statsOutputs(t, filepath.Join(dir, rec)) {
						outputs[k] = v
					}
				}
			}
			if !strings.Contains(string(bytes.Join(maps(outputs), nil)), "[REDACTED]") {
				t.Errorf("nothing was redacted: the server's echoes did not reach the outputs")
			}
			for name, b := range outputs {
				for _, s := range forms {
					if i := bytes.Index(b, []byte(s)); i >= 0 {
						lo, hi := max(0, i-80), min(len(b), i+len(s)+40)
						t.Errorf("%s holds secret form %q: ...%s...", name, s, b[lo:hi])
					}
				}
				if s, ok := decodedSecret(b); ok {
					t.Errorf("%s holds secret %s", name, s)
				}
			}
		})
	}
}

// decodeFile returns the decompressed content of a .zst or .gz file.
func decodeFile(t *testing.T, path string) []byte {
	t.Helper()
	in, err := iox.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	b, err := io.ReadAll(in)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// statsOutputs runs mtstats over records and returns what it writes: the
// JSON report and stderr, --to Parquet and JSONL, and the text of every
// part of the --xlsx workbook.
func statsOutputs(t *testing.T, records string) map[string][]byte {
	t.Helper()
	dir := t.TempDir()
	out := map[string][]byte{}
	for _, to := range []string{"to.parquet", "to.jsonl", "w.xlsx"} {
		var stdout, stderr bytes.Buffer
		o := mtstats.Options{Inputs: []string{records}, Out: &stdout, Err: &stderr, Format: "json", To: filepath.Join(dir, to)}
		if to == "w.xlsx" {
			o.To, o.XLSX = "", filepath.Join(dir, to)
		}
		if err := mtstats.Run(context.Background(), o); err != nil {
			t.Fatalf("mtstats %s: %v\n%s", records, err, stderr.String())
		}
		out["mtstats stdout "+to], out["mtstats stderr "+to] = stdout.Bytes(), stderr.Bytes()
		switch to {
		case "w.xlsx":
			unzipInto(t, filepath.Join(dir, to), "mtstats --xlsx ", out)
		case "to.parquet":
			for _, r := range readFiles(t, filepath.Join(dir, to)) {
				v := reflect.ValueOf(r)
				for i := range v.NumField() {
					if v.Field(i).Kind() == reflect.String {
						out["mtstats --to "+to] = append(out["mtstats --to "+to], v.Field(i).String()+"\n"...)
					}
				}
			}
		default:
			b, err := os.ReadFile(filepath.Join(dir, to))
			if err != nil {
				t.Fatal(err)
			}
			out["mtstats --to "+to] = b
		}
	}
	return out
}

func maps(m map[string][]byte) [][]byte {
	var out [][]byte
	for _, b := range m {
		out = append(out, b)
	}
	return out
}

// TestNoSecretExcelOutput: with -e, no secret reaches the workbook
// mtstats writes, the records' temporary copy, or mtstats' arguments; a
// wrapper in place of mtstats records them. --model carries the API key
// here, as a model name echoed by a server may. Not parallel: the
// workbook goes to the working directory.
func TestNoSecretExcelOutput(t *testing.T) {
	real := filepath.Join(filepath.Dir(buildMtstats(t)), "mtstats")
	dir, wrap := t.TempDir(), t.TempDir()
	t.Chdir(dir)
	t.Setenv("TMPDIR", dir)
	script := "#!/bin/sh\nfor a; do printf '%s\\n' \"$a\"; last=$a; done >" + filepath.Join(dir, "argv.txt") +
		"\ncp \"$last\" " + filepath.Join(dir, "copy.jsonl.zst") + "\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(wrap, "mtstats"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	srv := echoServer(t)
	url := strings.Replace(srv.URL, "http://", "http://"+secretUser+":"+secretPass+"@", 1)
	got := mtrunBeside(t, filepath.Join(wrap, "mtrun"), "--url", url, "--api-key", secretKey, "--header", "X-Api-Key: "+secretHeader,
		"--max-retries", "1", "--tokenizer", "none", "-p", "2", "-e", "--model", "m-"+secretKey, "-i", vllmList(t, 4, 3))
	if got.code != 0 {
		t.Fatalf("mtrun -e: exit %d\n%s", got.code, got.stderr)
	}
	outputs := map[string][]byte{"stdout": got.stdoutBytes, "stderr": []byte(got.stderr)}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	var books int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		outputs[filepath.Base(f)] = b
		switch {
		case strings.HasSuffix(f, ".zst"):
			outputs[filepath.Base(f)+" decoded"] = decodeFile(t, f)
		case strings.HasSuffix(f, ".xlsx"):
			books++
			unzipInto(t, f, "workbook ", outputs)
		}
	}
	if books != 1 || len(outputs["argv.txt"]) == 0 || len(outputs["copy.jsonl.zst decoded"]) == 0 {
		t.Fatalf("%d workbooks, argv %q, copy of %d bytes: want one of each", books, outputs["argv.txt"], len(outputs["copy.jsonl.zst decoded"]))
	}
	if !bytes.Contains(outputs["argv.txt"], []byte(`model="m-[REDACTED]"`)) {
		t.Errorf("mtstats' arguments do not hold the redacted model:\n%s", outputs["argv.txt"])
	}
	for name, b := range outputs {
		for _, s := range secretForms(secretKey) {
			if i := bytes.Index(b, []byte(s)); i >= 0 {
				lo, hi := max(0, i-80), min(len(b), i+len(s)+40)
				t.Errorf("%s holds secret form %q: ...%s...", name, s, b[lo:hi])
			}
		}
		if s, ok := decodedSecret(b); ok {
			t.Errorf("%s holds secret %s", name, s)
		}
	}
}

// unzipInto puts every part of the zip file path (a workbook) in out,
// under prefix and the part's name.
func unzipInto(t *testing.T, path, prefix string, out map[string][]byte) {
	t.Helper()
	z, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	for _, f := range z.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		out[prefix+f.Name], err = io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
}
