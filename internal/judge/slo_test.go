package judge

import (
	"math"
	"testing"

	"github.com/mtkit/mtkit/internal/stats"
)

func TestParseSLOErrors(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"ttft<=2s", "foo_p95<=2s", "ttft_p95>=2s", "ttft_p101<=1s", "ttft_p95<=soon", "ttft_p95<=500", "e2e_p95<3000"} {
		if _, err := ParseSLO(s); err == nil {
			t.Errorf("ParseSLO(%q): no error", s)
		}
	}
	objs, err := ParseSLO("turn2:itl_p99.9<=50ms, e2e_p95<3s")
	if err != nil || len(objs) != 2 || objs[0].Turn != 2 || objs[0].Metric != stats.ITL || math.Abs(objs[0].P-0.999) > 1e-12 ||
		objs[0].Limit != 50 || objs[1].Metric != stats.Latency || !objs[1].Strict || objs[1].Limit != 3000 {
		t.Errorf("ParseSLO: %+v, %v", objs, err)
	}
}
