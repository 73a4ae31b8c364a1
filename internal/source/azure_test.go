package source

import (
	"encoding/csv"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/tokenize"
)

const azureFixture = "testdata/traces/azure_llm_2023_code_head500.csv"

// TestAzure reads the first 30 rows of the real Azure 2023 code trace:
// one session per row, exactly ContextTokens tokens, GeneratedTokens
// asked for, TIMESTAMP relative to the first row in milliseconds.
func TestAzure(t *testing.T) {
	data := headLines(t, azureFixture, 31)
	convs, err := drain(t, "azure", data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(azureFixture)
	rows, _ := csv.NewReader(f).ReadAll()
	f.Close()
	rows = rows[1:31]
	if len(convs) != len(rows) {
		t.Fatalf("%d sessions, want %d", len(convs), len(rows))
	}
	tok, _ := tokenize.Load("")
	t0, _ := time.Parse("2006-01-02 15:04:05.999999999", rows[0][0])
	for i, c := range convs {
		r := rows[i]
		ts, _ := time.Parse("2006-01-02 15:04:05.999999999", r[0])
		in, _ := strconv.Atoi(r[1])
		out, _ := strconv.Atoi(r[2])
		u := c.Messages[0]
		if tok.Count(u.Content) != in || c.Messages[1].OutputTokens != out || c.ID != "line-"+strconv.Itoa(i+2) {
			t.Errorf("row %d: %s %d tokens, output %d; want %d, %d", i+2, c.ID, tok.Count(u.Content), c.Messages[1].OutputTokens, in, out)
		}
		if want := float64(ts.Sub(t0).Nanoseconds()) / 1e6; *u.TimestampMs < want-1e-3 || *u.TimestampMs > want+1e-3 {
			t.Errorf("row %d: timestamp_ms %g, want %g", i+2, *u.TimestampMs, want)
		}
	}
}

func TestAzureTimeLayouts(t *testing.T) {
	for _, s := range []string{"2023-11-16 18:17:03.9799600", "2024-05-10 00:00:00.009930+00:00", "2024-05-10T00:00:00.00993Z", "2023-11-16 18:17:03"} {
		if _, err := azureTime(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
}

func FuzzAzure(f *testing.F) {
	f.Add(headLines(f, azureFixture, 4))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzTrace(t, "azure", data) })
}
