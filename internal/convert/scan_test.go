package convert

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mtkit/mtkit/internal/conv"
)

func TestScannerStrings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		wantErr  bool
	}{
		{"plain", `"hello"`, false},
		{"escapes", `"a\"b\\c\/d\b\f\n\r\t"`, false},
		{"unicode escape", `"\u4f60\u597d"`, false},
		{"surrogate pair", `"\ud83d\ude00"`, false},
		{"lone surrogate", `"\ud83d x"`, false},
		{"bad pair", `"\ud83d\u0041"`, false},
		{"raw utf8", `"héllo 你好"`, false},
		{"invalid utf8", "\"a\xffb\xc3\"", false},
		{"control char", "\"a\nb\"", true},
		{"bad escape", `"\x"`, true},
		{"short unicode", `"\u12"`, true},
		{"unterminated", `"abc`, true},
		{"backslash at end", `"abc\`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var s scanner
			s.reset([]byte(tc.in))
			got, err := s.str()
			if err == nil {
				err = s.end()
			}
			var want string
			werr := json.Unmarshal([]byte(tc.in), &want)
			if (err != nil) != tc.wantErr || (werr != nil) != tc.wantErr {
				t.Fatalf("err = %v, encoding/json err = %v, want error %v", err, werr, tc.wantErr)
			}
			if err == nil && got != want {
				t.Errorf("got %q, want %q (encoding/json)", got, want)
			}
		})
	}
}

func TestScannerSkip(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`0`, `-0`, `1.5e+10`, `-12.25E-3`, `true`, `false`, `null`, `[]`, `{}`,
		`[1,[2,{"a":[null]}]]`, `{"a":{"b":"c\"}"}}`, ` [ 1 , 2 ] `,
		`01`, `1.`, `.5`, `-`, `1e`, `tru`, `nul`, `[1,]`, `{"a":1,}`, `{"a"}`, `{1:2}`, `[1 2]`, `"a`, ``,
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	} {
		var s scanner
		s.reset([]byte(in))
		err := s.skip()
		if err == nil {
			err = s.end()
		}
		if valid := json.Valid([]byte(in)); valid != (err == nil) {
			t.Errorf("skip(%.40q): err = %v, json.Valid = %v", in, err, valid)
		}
	}
}

// refDecode is the reference decoder of the fuzz test: encoding/json into
// generic values, then the documented mapping rules.
func refDecode(data []byte) (id string, msgs []conv.Message, ok bool) {
	var top map[string]any
	if err := json.Unmarshal(data, &top); err != nil {
		return "", nil, false
	}
	key := "conversations"
	list, found := top["conversations"]
	if !found {
		if list, found = top["conversation"]; found {
			key = "conversation"
		}
	}
	if !found {
		if list, found = top["messages"]; !found {
			return "", nil, false
		}
		key = "messages"
	}
	_ = key
	switch v := top["id"].(type) {
	case string:
		id = v
	case float64, nil:
		if v != nil {
			id = string(mustJSON(v))
		}
	default:
		return "", nil, false
	}
	arr, isArr := list.([]any)
	if list != nil && !isArr {
		return "", nil, false
	}
	for _, e := range arr {
		obj, isObj := e.(map[string]any)
		if !isObj {
			return "", nil, false
		}
		rv, has := obj["from"]
		if !has {
			rv, has = obj["role"]
		}
		role, isStr := rv.(string)
		if !has || !isStr {
			return "", nil, false
		}
		r, known := mapRole(role)
		if !known {
			return "", nil, false
		}
		cv, has := obj["value"]
		if !has {
			cv = obj["content"]
		}
		var text string
		switch c := cv.(type) {
		case nil:
		case string:
			text = c
		case []any:
			var texts []string
			for _, p := range c {
				po, isObj := p.(map[string]any)
				if !isObj {
					return "", nil, false
				}
				typ, _ := po["type"].(string)
				if tv, has := po["type"]; has && tv != nil {
					if _, isStr := tv.(string); !isStr {
						return "", nil, false
					}
				}
				tx, hasText := po["text"]
				if tx != nil {
					if _, isStr := tx.(string); !isStr {
						return "", nil, false
					}
				}
				if s, isStr := tx.(string); hasText && isStr && (typ == "" || typ == "text" || typ == "input_text" || typ == "output_text") {
					texts = append(texts, s)
				}
			}
			text = strings.Join(texts, "\n")
		default:
			return "", nil, false
		}
		if r == roleTool {
			continue
		}
		msgs = append(msgs, conv.Message{Role: r, Content: text})
	}
	return id, msgs, true
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// FuzzDecodeRecord checks the scanner-based record decoder against
// encoding/json: invalid JSON is always rejected, valid JSON never gets a
// syntax error, and an accepted record decodes exactly like the reference.
func FuzzDecodeRecord(f *testing.F) {
	for _, s := range []string{
		`{"id":"abc_1","conversations":[{"from":"human","value":"hi"},{"from":"gpt","value":"hello","x":[1,{"y":null}]}]}`,
		`{"messages":[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"b"}]}]}`,
		`{"id":7,"messages":[{"role":"tool","content":"{}"},{"role":"assistant","content":null}]}`,
		`{"id":"x","conversations":[{"from":"bing","value":"\u4f60\ud83d\ude00\"\n"}],"extra":{"a":[true,false,-1.5e3]}}`,
		`{"conversations":[{"from":"human","value":"q"},{"from":"function_call","value":"{\"name\":\"f\",\"arguments\":{\"a\":[1]}}"},{"from":"observation","value":"r"}],"tools":"[{\"name\":\"f\"}]","system":"s"}`,
		`{"messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c"}],"tools":[{"type":"function"}],"system_prompt":null}`,
		`{"conversations":null}`, `[]`, `{"conversations":[{"from":"alien","value":"x"}]}`, `{"id":{}}`,
		"{\"id\":\"x\",\"conversations\":[{\"from\":\"human\",\"value\":\"你\xff好 é\xe4\xb8\\n\xed\xa0\x80 z\"}]}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var d decoder
		var rec record
		err := d.decode(data, &rec)
		valid := json.Valid(data)
		if !valid && err == nil {
			t.Fatalf("accepted invalid JSON %q", data)
		}
		if valid && errors.Is(err, errSyntax) {
			t.Fatalf("syntax error on valid JSON %q: %v", data, err)
		}
		if err != nil {
			return
		}
		id, msgs, ok := refDecode(data)
		if !ok {
			t.Fatalf("accepted %q, reference rejects it", data)
		}
		if rec.id != id {
			t.Errorf("id = %q, reference %q", rec.id, id)
		}
		// The reference knows no tool calls (tools_test.go tests them).
		toolShapes := bytes.Contains(data, []byte("tool_call"))
		for _, m := range msgs {
			// Roles match case-insensitively and may be written with escapes.
			switch strings.ToLower(m.Role) {
			case "function_call", "observation", "tool":
				toolShapes = true
			}
		}
		if diff := cmp.Diff(msgs, rec.msgs); diff != "" && !(len(msgs) == 0 && len(rec.msgs) == 0) && !toolShapes {
			t.Errorf("messages differ from the reference (-ref +got):\n%s", diff)
		}
	})
}
