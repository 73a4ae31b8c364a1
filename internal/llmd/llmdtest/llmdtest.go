// Package llmdtest validates llm-d-benchmark reports in tests: against
// the schema's JSON Schema (internal/llmd/testdata, with its provenance)
// with a JSON Schema library, and against the units the schema's model
// validators allow, which a JSON Schema cannot express.
package llmdtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

var (
	once   sync.Once
	schema *jsonschema.Schema
	err    error
)

// Schema returns the compiled v0.2 schema.
func Schema() (*jsonschema.Schema, error) {
	once.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		path := filepath.Join(filepath.Dir(file), "..", "testdata", "br_v0_2_json_schema.json")
		c := jsonschema.NewCompiler()
		schema, err = c.Compile(path)
	})
	return schema, err
}

// Validate checks one report, given as JSON.
func Validate(doc []byte) error {
	s, err := Schema()
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return err
	}
	if err := s.Validate(inst); err != nil {
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		return err
	}
	return checkUnits(m)
}

// units are the units schema_v0_2.py's validators allow where mtkit
// writes statistics (UNITS_TIME, UNITS_GEN_LATENCY, ...).
var (
	timeUnits     = []string{"ms", "s"}
	genLatency    = []string{"ms/token", "s/token"}
	genThroughput = []string{"tokens/s"}
	reqThroughput = []string{"queries/s"}
	quantity      = []string{"count"}
	unitsAt       = map[string][]string{
		"results.request_performance.aggregate.requests.input_length":                    quantity,
		"results.request_performance.aggregate.requests.output_length":                   quantity,
		"results.request_performance.aggregate.latency.time_to_first_token":              timeUnits,
		"results.request_performance.aggregate.latency.normalized_time_per_output_token": genLatency,
		"results.request_performance.aggregate.latency.time_per_output_token":            genLatency,
		"results.request_performance.aggregate.latency.inter_token_latency":              genLatency,
		"results.request_performance.aggregate.latency.request_latency":                  timeUnits,
		"results.request_performance.aggregate.throughput.input_token_rate":              genThroughput,
		"results.request_performance.aggregate.throughput.output_token_rate":             genThroughput,
		"results.request_performance.aggregate.throughput.total_token_rate":              genThroughput,
		"results.request_performance.aggregate.throughput.request_rate":                  reqThroughput,
		"results.session_performance.sessions.session_duration":                          timeUnits,
		"results.session_performance.sessions.events_per_session":                        quantity,
	}
)

func checkUnits(doc map[string]any) error {
	for path, allowed := range unitsAt {
		v := lookup(doc, path)
		if v == nil {
			continue
		}
		u, _ := v["units"].(string)
		ok := false
		for _, a := range allowed {
			ok = ok || u == a
		}
		if !ok {
			return fmt.Errorf("%s: units %q, want one of %v (the schema's validators)", path, u, allowed)
		}
	}
	return nil
}

func lookup(m map[string]any, path string) map[string]any {
	cur := m
	for _, k := range strings.Split(path, ".") {
		next, ok := cur[k].(map[string]any)
		if !ok {
			return nil
		}
		cur = next
	}
	return cur
}
