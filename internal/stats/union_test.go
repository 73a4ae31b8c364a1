package stats

import (
	"math"
	"reflect"
	"testing"

	"github.com/mtkit/mtkit/internal/record"
)

// TestUnionDescribe: a set that is the union of parts describes as one
// set holding all their samples would, bit for bit: int32 parts (selected
// and sorted sizes), a part that went int64, float parts, empty parts.
func TestUnionDescribe(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		parts [][]int64
		float bool
	}{
		{"int32 small", [][]int64{{5, 1, 3}, {}, {2, 2, 9, -4}}, false},
		{"int32 selected", [][]int64{seq(70000, 7), seq(30000, 3), seq(1, 1)}, false},
		{"one int64 part", [][]int64{seq(5000, 11), {1 << 40, 3}, seq(90000, 5)}, false},
		{"floats", [][]int64{seq(3000, 13), {}, seq(2000, 17)}, true},
		{"all empty", [][]int64{{}, {}}, false},
	} {
		var whole sampleSet
		whole.scale = 1e6
		union := sampleSet{scale: 1e6, parts: []*sampleSet{}}
		for _, xs := range tc.parts {
			p := &sampleSet{scale: 1e6}
			for _, x := range xs {
				if tc.float {
					p.addFloat(float64(x) / 7)
					whole.addFloat(float64(x) / 7)
				} else {
					p.add(x)
					whole.add(x)
				}
			}
			union.parts = append(union.parts, p)
		}
		if union.Len() != whole.Len() {
			t.Errorf("%s: Len %d, want %d", tc.name, union.Len(), whole.Len())
		}
		got, want := union.describe(), whole.describe()
		got.quantile, want.quantile = nil, nil
		if !sameDescription(got, want) {
			t.Errorf("%s: union describes as\n%+v, want\n%+v", tc.name, got, want)
		}
		q, mean := union.sorted()
		wq, wmean := whole.sorted()
		if !sameFloat(mean, wmean) || !sameFloat(q(0.37), wq(0.37)) {
			t.Errorf("%s: sorted() gives mean %v Q(0.37) %v, want %v %v", tc.name, mean, q(0.37), wmean, wq(0.37))
		}
	}
}

// seq is n pseudo-random int32-sized values from seed.
func seq(n int, seed int64) []int64 {
	out := make([]int64, n)
	x := seed
	for i := range out {
		x = (x*6364136223846793005 + 1442695040888963407) & (1<<62 - 1)
		out[i] = x>>32 - 1<<29
	}
	return out
}

func sameFloat(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

// sameDescription compares every figure bit for bit (NaN equals NaN).
func sameDescription(a, b Description) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := range va.NumField() {
		if !va.Type().Field(i).IsExported() {
			continue
		}
		x, y := va.Field(i).Interface(), vb.Field(i).Interface()
		if f, ok := x.(float64); ok {
			if !sameFloat(f, y.(float64)) {
				return false
			}
		} else if x != y {
			return false
		}
	}
	return true
}

// TestDedupSeen: keys repeat only within their (run, shard), whatever
// the order the shards come in (the last shard's bitset is cached).
func TestDedupSeen(t *testing.T) {
	t.Parallel()
	var d Dedup
	for i, tc := range []struct {
		run   string
		shard int
		seq   int64
		want  bool
	}{
		{"a", 0, 1, false}, {"a", 0, 2, false}, {"a", 0, 1, true},
		{"a", 1, 1, false}, {"a", 0, 2, true}, {"b", 0, 2, false},
		{"a", 1, 1, true}, {"b", 0, 1000, false}, {"a", 0, 1000, false},
		{"b", 0, 1000, true}, {"a", 0, -5, false}, {"a", 0, -5, true},
		{"a", 0, 1 << 40, false}, {"a", 1, 1 << 40, false}, {"a", 0, 1 << 40, true},
	} {
		if got := d.Seen(record.Key{RunID: tc.run, Shard: tc.shard, Seq: tc.seq}); got != tc.want {
			t.Errorf("%d: seen(%s, %d, %d) = %v, want %v", i, tc.run, tc.shard, tc.seq, got, tc.want)
		}
	}
}
