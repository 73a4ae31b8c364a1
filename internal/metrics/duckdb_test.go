package metrics

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/duckdbtest"
	"github.com/mtkit/mtkit/internal/iox"
)

// TestSeriesFromDuckDB: a series file as mtrun writes it (plain and zstd)
// reads in DuckDB with typed columns: time a TIMESTAMP, value a DOUBLE
// (null for NaN), labels a struct, and the canonical rows sum as they do
// here.
func TestSeriesFromDuckDB(t *testing.T) {
	t.Parallel()
	expo, err := os.ReadFile(filepath.Join("testdata", "vllm.prom"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write(append(expo, "nan_gauge NaN\n"...))
	}))
	defer srv.Close()
	dir := t.TempDir()
	var paths []string
	for _, name := range []string{"s.metrics.jsonl", "s.metrics.jsonl.zst"} {
		path := filepath.Join(dir, name)
		out, err := iox.Create(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		ticks := make(chan time.Time)
		s := Start(Options{Targets: []Target{{URL: srv.URL}}, RunID: "run-d", Ticker: manualTicker(ticks)}, NewWriter(out))
		ticks <- time.Now()
		s.Stop()
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, "'"+path+"'")
	}
	// One DuckDB process for both files: starting it takes seconds.
	rows := duckdbtest.Query(t, fmt.Sprintf(`SELECT any_value(typeof(time)) tt, any_value(typeof(value)) tv, any_value(typeof(labels)) LIKE 'STRUCT(%%engine VARCHAR%%' tl,
		count(*) n, count(DISTINCT time) scrapes,
		sum(value) FILTER (WHERE canonical = 'prefix_cache_queries') queries,
		count(*) FILTER (WHERE name = 'nan_gauge' AND value IS NULL AND nonfinite = 'NaN') nan,
		max(value) FILTER (WHERE name = 'vllm:num_requests_running' AND labels.engine = '1') running1
		FROM read_json_auto([%s], filename = true) GROUP BY filename ORDER BY filename`, strings.Join(paths, ", ")))
	one := map[string]any{"tt": "TIMESTAMP", "tv": "DOUBLE", "tl": true, "n": "210", "scrapes": "3", "queries": float64(3 * 5120), "nan": "3", "running1": float64(2)}
	if got, want := fmt.Sprint(rows), fmt.Sprint([]map[string]any{one, one}); got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
}
