package source

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/tokenize"
)

const bailianFixture = "testdata/traces/bailian_constructed.jsonl"

// TestBailian reads the constructed Bailian trace: one session per
// parent chain, turns in timestamp order, each a whole prompt (history
// "none") of exactly input_length tokens whose leading blocks equal the
// previous turn's where the hash ids do.
func TestBailian(t *testing.T) {
	data, err := os.ReadFile(bailianFixture)
	if err != nil {
		t.Fatal(err)
	}
	var lines []bailianLine
	for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var m bailianLine
		json.Unmarshal(l, &m)
		lines = append(lines, m)
	}
	// The expected sessions: chains followed from each root.
	rootOf := map[int64]int64{}
	var roots []int64
	for _, m := range lines {
		if *m.ParentChatID == -1 {
			rootOf[*m.ChatID] = *m.ChatID
			roots = append(roots, *m.ChatID)
		} else {
			rootOf[*m.ChatID] = rootOf[*m.ParentChatID]
		}
	}
	convs, err := drain(t, "bailian", data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(convs) != len(roots) {
		t.Fatalf("%d sessions, want %d (one per root)", len(convs), len(roots))
	}
	tok, _ := tokenize.Load("")
	first := *lines[0].Timestamp
	lastStart := -1.0
	for _, c := range convs {
		if c.History != conv.HistoryNone {
			t.Errorf("%s: history %q", c.ID, c.History)
		}
		var want []bailianLine
		for _, m := range lines {
			if "chat-"+jsonNum(float64(rootOf[*m.ChatID])) == c.ID {
				want = append(want, m)
			}
		}
		if len(c.Messages) != 2*len(want) {
			t.Fatalf("%s: %d messages, want %d", c.ID, len(c.Messages), 2*len(want))
		}
		var prevIDs []int
		for k, m := range want {
			u := c.Messages[2*k]
			got := tok.Encode(u.Content)
			if len(got) != *m.InputLength || u.Tokens != *m.InputLength {
				t.Errorf("%s turn %d: %d tokens, want %d", c.ID, k, len(got), *m.InputLength)
			}
			if at := (*m.Timestamp - first) * 1000; *u.TimestampMs < at-1e-6 || *u.TimestampMs > at+1e-6 {
				t.Errorf("%s turn %d: timestamp_ms %g, want %g", c.ID, k, *u.TimestampMs, at)
			}
			if c.Messages[2*k+1].OutputTokens != *m.OutputLength {
				t.Errorf("%s turn %d: output tokens %d, want %d", c.ID, k, c.Messages[2*k+1].OutputTokens, *m.OutputLength)
			}
			if k > 0 {
				// Shared leading hash ids: the same leading tokens.
				shared := 0
				prev := *want[k-1].HashIDs
				for shared < min(len(prev), len(*m.HashIDs)) && prev[shared] == (*m.HashIDs)[shared] {
					shared++
				}
				n := min(shared*BailianBlockSize, len(prevIDs), len(got))
				if !slices.Equal(got[:n], prevIDs[:n]) {
					t.Errorf("%s turn %d: the first %d tokens differ from the previous turn's", c.ID, k, n)
				}
			}
			prevIDs = got
		}
		if start := *c.Messages[0].TimestampMs; start < lastStart {
			t.Errorf("%s starts at %g, before the previous session (%g)", c.ID, start, lastStart)
		} else {
			lastStart = start
		}
	}
}

// TestBailianChains checks sessions from chains listed out of order, a
// parent missing from the file, and the errors.
func TestBailianChains(t *testing.T) {
	line := func(chat, parent int, ts float64) string {
		return `{"chat_id": ` + jsonNum(float64(chat)) + `, "parent_chat_id": ` + jsonNum(float64(parent)) + `, "timestamp": ` + jsonNum(ts) + `, "input_length": 20, "output_length": 3, "type": "text", "turn": 1, "hash_ids": [1, 2]}`
	}
	in := strings.Join([]string{line(3, 2, 9), line(2, 1, 5), line(1, -1, 1), line(7, 99, 2)}, "\n")
	convs, err := drain(t, "bailian", []byte(in), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(convs) != 2 || convs[0].ID != "chat-1" || len(convs[0].Messages) != 6 || convs[1].ID != "chat-7" || convs[1].Meta["parent_missing"] != int64(99) {
		t.Fatalf("sessions %v", convs)
	}
	if at := *convs[0].Messages[4].TimestampMs; at != 8000 {
		t.Errorf("third turn at %g ms, want 8000", at)
	}
	// Seconds with three decimals are whole milliseconds, not 61113.99999.
	one, err := drain(t, "bailian", []byte(line(1, -1, 0)+"\n"+line(2, 1, 61.114)), Options{})
	if err != nil || *one[0].Messages[2].TimestampMs != 61114 {
		t.Errorf("61.114 s after the first request: %v ms (%v)", *one[0].Messages[2].TimestampMs, err)
	}
	for _, tc := range []struct{ in, want string }{
		{line(1, -1, 1) + "\n" + line(1, -1, 2), "t.in:2: chat_id: 1 is also on line 1"},
		{line(1, 1, 1), "t.in:1: parent_chat_id: 1 is the request's own chat_id"},
		{line(1, 2, 1) + "\n" + line(2, 1, 1), "t.in:1: parent_chat_id: 2 leads to a cycle"},
		{`{"parent_chat_id": -1, "timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": [1]}`, "t.in:1: chat_id: missing"},
		{`{"chat_id": 1, "timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": [1]}`, "t.in:1: parent_chat_id: missing"},
		{`{"chat_id": 1, "parent_chat_id": -1, "timestamp": 1, "input_length": 40, "output_length": 1, "hash_ids": [1, 2]}`, "t.in:1: hash_ids: 2 blocks of 16 tokens do not hold input_length 40 (want 3 blocks)"},
	} {
		if _, err := drain(t, "bailian", []byte(tc.in), Options{}); err == nil || err.Error() != tc.want {
			t.Errorf("got %v\nwant %s", err, tc.want)
		}
	}
}

func FuzzBailian(f *testing.F) {
	f.Add(headLines(f, bailianFixture, 4))
	f.Add([]byte(`{"chat_id": 2, "parent_chat_id": 1, "timestamp": 1, "input_length": 5, "output_length": 1, "hash_ids": [3]}`))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzTrace(t, "bailian", data) })
}
