package source

import (
	"fmt"
	"io"
	"time"
)

func init() {
	Register(Format{
		Name:  "azure",
		Doc:   "Azure LLM inference trace CSV: TIMESTAMP, ContextTokens, GeneratedTokens; no sessions",
		Timed: true,
		Detect: func(_ string, head []byte) bool {
			return csvHeaderHas(head, "TIMESTAMP", "ContextTokens", "GeneratedTokens")
		},
		Open: openAzure,
	})
}

// azureFields are the Azure trace's column names.
var azureFields = traceFields{"TIMESTAMP", "ContextTokens", "GeneratedTokens"}

// azureTimeLayouts are the TIMESTAMP forms of the 2023 and 2024 traces
// ("2023-11-16 18:17:03.9799600"; with a zone offset or RFC 3339).
var azureTimeLayouts = []string{"2006-01-02 15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", time.RFC3339Nano}

// openAzure reads an Azure LLM inference trace (Azure/AzurePublicDataset
// AzureLLMInferenceTrace_{code,conv}.csv): one request per row, each its
// own session with a prompt of its own.
func openAzure(r io.Reader, name string, o Options) (Source, error) {
	t, err := newCSVTable(r, name, azureFields.timestamp, azureFields.input, azureFields.output)
	if err != nil {
		return nil, err
	}
	var sessions []traceSession
	var arena reqArena
	err = t.each(func(line int, rec []string) error {
		ms, err := azureTime(t.get(rec, azureFields.timestamp))
		if err != nil {
			return err
		}
		in, err := t.count(rec, azureFields.input)
		if err != nil {
			return err
		}
		out, err := t.count(rec, azureFields.output)
		if err != nil {
			return err
		}
		req, err := traceLine(azureFields, line, &ms, 1, in, out, nil, 0)
		if err == nil {
			sessions = append(sessions, traceSession{reqs: arena.one(req)})
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return newTraceSource("azure", name, sessions, 0, o)
}

// azureTime parses a TIMESTAMP into milliseconds since the Unix epoch.
func azureTime(s string) (float64, error) {
	for _, l := range azureTimeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return float64(t.UnixNano()) / 1e6, nil
		}
	}
	return 0, fmt.Errorf("%s: %q is not a time like 2023-11-16 18:17:03.9799600", azureFields.timestamp, s)
}
