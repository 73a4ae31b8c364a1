package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
)

// Secrets of TestNoSecretInOutputs.
const (
	secretKey    = "sk-live-5d4c3b2a1f"
	secretHeader = "hv-0a9b8c7d6e"
	secretOther  = "hv2-xyz-665544"
	secretUser   = "mtuser-7f3a"
	secretPass   = "pw-9c2e81d0"
)

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
		if r.URL.Path == "/v1/models" {
			json.NewEncoder(w).Encode(map[string]any{"data": []any{map[string]any{"id": "model " + r.Header.Get("Authorization")}}})
			return
		}
		echo := dump(r)
		switch n.Add(1) % 4 {
		case 1:
			w.WriteHeader(http.StatusInternalServerError)
			json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": "upstream failed for " + echo}})
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
			sse(w, map[string]any{"echo": echo, "choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": "stop " + auth}}})
			fmt.Fprint(w, "data: [DONE]\n\n")
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestNoSecretInOutputs runs whole mtrun invocations against echoServer
// and looks for every secret in every byte written: records (JSONL on
// stdout and in a file, Parquet), conversations (-o, file and stdout), the
// manifest, stderr (with --print-content and the summary).
func TestNoSecretInOutputs(t *testing.T) {
	t.Parallel()
	srv := echoServer(t)
	url := strings.Replace(srv.URL, "http://", "http://"+secretUser+":"+secretPass+"@", 1)
	secrets := []string{secretKey, secretHeader, secretOther, secretUser, secretPass}
	for _, tc := range []struct {
		name string
		args []string // relative paths are under the test's directory
	}{
		{"jsonl files", []string{"--records", "r.jsonl", "-o", "c.jsonl", "--manifest", "m.json", "--print-content"}},
		{"parquet, conversations on stdout", []string{"--records", "r.parquet", "-o", "-"}},
		{"stdout", []string{"--manifest", "-"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			args := []string{"--url", url, "--api-key", secretKey, "--header", "X-Api-Key: " + secretHeader,
				"--header", "X-Other=" + secretOther, "--max-retries", "1", "--tokenizer", "none", "--clients", "2"}
			for _, a := range tc.args {
				if strings.Contains(a, ".") && !strings.HasPrefix(a, "-") {
					a = filepath.Join(dir, a)
				}
				args = append(args, a)
			}
			got := mtrun(t, convJSONL(4, 3, 8), nil, args...)
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
			if !strings.Contains(string(bytes.Join(maps(outputs), nil)), "[REDACTED]") {
				t.Errorf("nothing was redacted: the server's echoes did not reach the outputs")
			}
			for name, b := range outputs {
				for _, s := range secrets {
					if i := bytes.Index(b, []byte(s)); i >= 0 {
						lo, hi := max(0, i-80), min(len(b), i+len(s)+40)
						t.Errorf("%s holds secret %q: ...%s...", name, s, b[lo:hi])
					}
				}
			}
		})
	}
}

func maps(m map[string][]byte) [][]byte {
	var out [][]byte
	for _, b := range m {
		out = append(out, b)
	}
	return out
}
