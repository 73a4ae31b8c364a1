// Package sharegpttest makes ShareGPT-shaped inputs for the tests and
// benchmarks of the converter and of the JSON library comparison
// (bench/jsonlibs, a module of its own): a generated dataset of any
// size, long non-ASCII records raw or escaped, and JSONL split into
// records.
package sharegpttest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// words is the vocabulary of generated ShareGPT text.
var words = strings.Fields(`the of and to in is you that it for was on are as with be at this have
from or one had by word but not what all were we when your can said there use an each which she do how their
if will up other about out many then them these so some her would make like him into time has look two more
write go see number no way could people my than first water been call who oil its now find long down day did
get come made may part function return const var import package error nil struct string int`)

// genText returns a message of about n bytes shaped like ShareGPT's
// Python-dumped text: \n escapes, quotes, code and \uXXXX escapes for
// non-ASCII characters (json.dump's default ensure_ascii).
func text(rng *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		switch k := rng.IntN(40); {
		case k == 0:
			b.WriteString(`\n\n`)
		case k == 1:
			b.WriteString(`\"`)
		case k == 2:
			b.WriteString(`\u4f60\u597d`)
		case k == 3:
			b.WriteString("```python\\nprint(\\\"hi\\\")\\n```")
		case k < 8:
			b.WriteString(`\n`)
		default:
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// Write writes a ShareGPT-shaped dataset of about size bytes to w:
// a JSON array indented like Python's json.dump(indent=2) (array=true) or
// JSONL. Conversations come in 1-3 adjacent parts "id_0", "id_1", ...;
// some start with gpt, some repeat a role, extra fields are present.
func Write(w io.Writer, size int64, seed uint64, array bool) (records int, err error) {
	rng := rand.New(rand.NewPCG(seed, 1))
	bw := bufio.NewWriterSize(w, 1<<20)
	var written int64
	if array {
		bw.WriteString("[\n")
	}
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	for conv := 0; written < size; conv++ {
		var id [7]byte
		for i := range id {
			id[i] = letters[rng.IntN(len(letters))]
		}
		parts := 1 + rng.IntN(3)
		for p := 0; p < parts && written < size; p++ {
			var sb strings.Builder
			if array {
				if records > 0 {
					sb.WriteString(",\n")
				}
				fmt.Fprintf(&sb, "  {\n    \"id\": \"%s_%d\",\n    \"conversations\": [\n", id[:], p)
			} else {
				fmt.Fprintf(&sb, `{"id": "%s_%d", "lang": "en", "conversations": [`, id[:], p)
			}
			turns := 2 + rng.IntN(8)
			start := 0
			if rng.IntN(4) == 0 {
				start = 1
			}
			for t := 0; t < turns; t++ {
				from, n := "human", 20+rng.IntN(400)
				if (t+start)%2 == 1 {
					from, n = "gpt", 200+rng.IntN(3000)
				}
				if t > 0 && rng.IntN(30) == 0 {
					from = "human"
				}
				if array {
					if t > 0 {
						sb.WriteString(",\n")
					}
					fmt.Fprintf(&sb, "      {\n        \"from\": \"%s\",\n        \"value\": \"%s\"\n      }", from, text(rng, n))
				} else {
					if t > 0 {
						sb.WriteString(", ")
					}
					fmt.Fprintf(&sb, `{"from": "%s", "value": "%s", "markdown": null}`, from, text(rng, n))
				}
			}
			if array {
				sb.WriteString("\n    ]\n  }")
			} else {
				sb.WriteString("]}\n")
			}
			k, err := bw.WriteString(sb.String())
			if err != nil {
				return records, err
			}
			written += int64(k)
			records++
		}
	}
	if array {
		bw.WriteString("\n]\n")
	}
	return records, bw.Flush()
}

// Lines splits JSONL into its non-empty lines.
func Lines(data []byte) [][]byte {
	var recs [][]byte
	for line := range bytes.Lines(data) {
		if line = bytes.TrimSpace(line); len(line) > 0 {
			recs = append(recs, line)
		}
	}
	return recs
}

// NonASCII returns ShareGPT records with long texts that are mostly
// not ASCII (Chinese with emoji, markdown and escaped quotes and newlines),
// written as raw UTF-8 or, when escaped, with \uXXXX escapes as Python's
// json.dump writes them (ShareGPT dumps come both ways).
func NonASCII(escaped bool) [][]byte {
	rng := rand.New(rand.NewPCG(4, 4))
	pieces := []string{"你好", "世界", "模型", "推理", "服务器", "请求", "数据", "😀", "🚀", "。", "，", "`code`", "\n", "\"quoted\"", " ", "é", "ü", "—"}
	var recs [][]byte
	for i := range 200 {
		rec := map[string]any{"id": fmt.Sprintf("zh%d_0", i)}
		var msgs []map[string]string
		for m := range 2 + rng.IntN(8) {
			var sb strings.Builder
			for range 100 + rng.IntN(1500) {
				sb.WriteString(pieces[rng.IntN(len(pieces))])
			}
			from := "human"
			if m%2 == 1 {
				from = "gpt"
			}
			msgs = append(msgs, map[string]string{"from": from, "value": sb.String()})
		}
		rec["conversations"] = msgs
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(rec); err != nil {
			panic(err) // maps of strings always encode
		}
		line := bytes.TrimSpace(buf.Bytes())
		if escaped {
			line = asciiEscape(line)
		}
		recs = append(recs, line)
	}
	return recs
}

// asciiEscape rewrites the non-ASCII characters of a JSON document as
// \uXXXX escapes (surrogate pairs above U+FFFF).
func asciiEscape(b []byte) []byte {
	var out []byte
	for _, r := range string(b) {
		switch {
		case r < utf8.RuneSelf:
			out = append(out, byte(r))
		case r > 0xFFFF:
			r1, r2 := utf16.EncodeRune(r)
			out = fmt.Appendf(out, "\\u%04x\\u%04x", r1, r2)
		default:
			out = fmt.Appendf(out, "\\u%04x", r)
		}
	}
	return out
}
