package source

import (
	"encoding/csv"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/tokenize"
)

const burstFixture = "testdata/traces/burstgpt_constructed.csv"

// TestBurstGPT reads the constructed BurstGPT file (the newer release's
// header): rows sharing a Session ID are one session in timestamp order,
// others one each; every prompt has exactly the request tokens, no two
// prompts share a first block, and timestamps are relative to the first
// row in milliseconds.
func TestBurstGPT(t *testing.T) {
	f, err := os.Open(burstFixture)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	rows = rows[1:]
	data, _ := os.ReadFile(burstFixture)
	convs, err := drain(t, "burstgpt", data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sessions := map[string]bool{}
	api := 0
	for _, r := range rows {
		if r[1] == "" {
			api++
		} else {
			sessions[r[1]] = true
		}
	}
	if len(convs) != len(sessions)+api {
		t.Fatalf("%d sessions, want %d + %d", len(convs), len(sessions), api)
	}
	tok, _ := tokenize.Load("")
	t0, _ := strconv.ParseFloat(rows[0][0], 64)
	firsts := map[string]bool{}
	turns := 0
	for _, c := range convs {
		if c.History != conv.HistoryNone {
			t.Errorf("%s: history %q", c.ID, c.History)
		}
		// Find this session's rows, in file order (the file is in time order).
		var want [][]string
		for i, r := range rows {
			if (r[1] != "" && c.ID == "session-"+r[1]) || (r[1] == "" && c.ID == "line-"+strconv.Itoa(i+2)) {
				want = append(want, r)
			}
		}
		if len(c.Messages) != 2*len(want) {
			t.Fatalf("%s: %d messages for %d rows", c.ID, len(c.Messages), len(want))
		}
		for k, r := range want {
			u, a := c.Messages[2*k], c.Messages[2*k+1]
			in, _ := strconv.Atoi(r[4])
			out, _ := strconv.Atoi(r[5])
			ts, _ := strconv.ParseFloat(r[0], 64)
			if tok.Count(u.Content) != in || u.Tokens != in {
				t.Errorf("%s turn %d: %d tokens, want %d", c.ID, k, tok.Count(u.Content), in)
			}
			if d := *u.TimestampMs - (ts-t0)*1000; d < -1e-3 || d > 1e-3 {
				t.Errorf("%s turn %d: timestamp_ms %g, want %g", c.ID, k, *u.TimestampMs, (ts-t0)*1000)
			}
			if a.OutputTokens != max(out, 1) {
				t.Errorf("%s turn %d: output %d, want %d", c.ID, k, a.OutputTokens, max(out, 1))
			}
			head := u.Content[:strings.IndexByte(u.Content, ' ')]
			if firsts[head] {
				t.Errorf("%s turn %d: prompt starts like another: %q", c.ID, k, head)
			}
			firsts[head] = true
			turns++
		}
	}
	if turns != len(rows) {
		t.Errorf("%d turns, want %d rows", turns, len(rows))
	}
}

// TestBurstGPTOldHeader reads the first release's header (no Session ID):
// one session per row.
func TestBurstGPTOldHeader(t *testing.T) {
	in := "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,472,18,490,Conversation log\n2.5,GPT-4,17,0,17,API log\n"
	convs, err := drain(t, "burstgpt", []byte(in), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(convs) != 2 || convs[0].ID != "line-3" || convs[0].Meta["model"] != "GPT-4" || *convs[1].Messages[0].TimestampMs != 2500 {
		t.Errorf("sessions %+v", convs)
	}
}

func TestCSVTraceErrors(t *testing.T) {
	const head = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
	for _, tc := range []struct{ format, in, want string }{
		{"burstgpt", "", "t.in:1: header: missing (empty file)"},
		{"burstgpt", "Timestamp,Model,Request tokens\n", `t.in:1: header: no "Response tokens" column`},
		{"burstgpt", head + "x,ChatGPT,1,2,3,API log\n", `t.in:2: Timestamp: "x" is not a number of seconds`},
		{"burstgpt", head + "1e15,ChatGPT,1,2,3,API log\n", `t.in:2: Timestamp: 1e+15 is past the trace clock's range (6.31152e+12 ms, 200 years)`},
		{"burstgpt", head + "1,ChatGPT,1.5,2,3,API log\n", `t.in:2: Request tokens: "1.5" is not a whole number`},
		{"burstgpt", head + "1,ChatGPT,0,2,3,API log\n", "t.in:2: Request tokens: 0: a prompt needs at least one token"},
		{"burstgpt", head + "1,ChatGPT,4,-2,3,API log\n", "t.in:2: Response tokens: -2 is negative"},
		{"burstgpt", head + "1,ChatGPT,4,2,3,API log\n2,ChatGPT,4\n", "t.in:3: column 1: wrong number of fields"},
		{"burstgpt", head + "1,\"Chat\"GPT,4,2,3,API log\n", "t.in:2: column 8: extraneous or missing \" in quoted-field"},
		{"azure", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.97,ten,10\n", `t.in:2: ContextTokens: "ten" is not a whole number`},
		{"azure", "TIMESTAMP,ContextTokens,GeneratedTokens\nyesterday,10,10\n", `t.in:2: TIMESTAMP: "yesterday" is not a time like 2023-11-16 18:17:03.9799600`},
		{"azure", "TIMESTAMP,ContextTokens\n", `t.in:1: header: no "GeneratedTokens" column`},
	} {
		if _, err := drain(t, tc.format, []byte(tc.in), Options{}); err == nil || err.Error() != tc.want {
			t.Errorf("%s %q:\n got %v\nwant %s", tc.format, tc.in, err, tc.want)
		}
	}
}

func FuzzBurstGPT(f *testing.F) {
	f.Add(headLines(f, burstFixture, 4))
	f.Add([]byte("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,472,18,490,Conversation log\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzTrace(t, "burstgpt", data) })
}
