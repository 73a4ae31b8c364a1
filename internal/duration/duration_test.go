package duration

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in      string
		want    time.Duration
		wantErr string // a part of the error; "" means no error
	}{
		{"500ms", 500 * time.Millisecond, ""},
		{"2s", 2 * time.Second, ""},
		{"1m30s", 90 * time.Second, ""},
		{" 1h ", time.Hour, ""},
		{"0", 0, ""},
		{"600", 600 * time.Second, ""}, // a bare number is seconds
		{"0.5", 500 * time.Millisecond, ""},
		{"1e-3", time.Millisecond, ""},
		{"-1", 0, "negative"},
		{"-2s", 0, "negative"},
		{"NaN", 0, "finite"},
		{"inf", 0, "finite"},
		{"1e300", 0, "too long"},
		{"", 0, "empty"},
		{"2 s", 0, "not a duration"},
		{"soon", 0, "not a duration"},
		{"5parsecs", 0, "not a duration"},
	} {
		got, err := Parse(tc.in)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("Parse(%q): %v", tc.in, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("Parse(%q) = %v, %v; want an error with %q", tc.in, got, err, tc.wantErr)
		case got != tc.want:
			t.Errorf("Parse(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestIsBareNumber(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{"500": true, " 0.5 ": true, "500ms": false, "2s": false, "": false, "x": false} {
		if got := IsBareNumber(in); got != want {
			t.Errorf("IsBareNumber(%q) = %v, want %v", in, got, want)
		}
	}
}

// FuzzParse checks that Parse never panics, never returns a negative
// duration, and reads a bare number as that many seconds.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"500ms", "2", "0.25", "-1", "1e9", "1h2m3.5s", "NaN", "0x10", "1_0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := Parse(s)
		if err != nil {
			return
		}
		if d < 0 {
			t.Fatalf("Parse(%q) = %v < 0", s, d)
		}
		if IsBareNumber(s) {
			if back, err := time.ParseDuration(strings.TrimSpace(s) + "s"); err == nil && absDiff(back, d) > time.Microsecond {
				t.Fatalf("Parse(%q) = %v, but %ss is %v", s, d, s, back)
			}
		}
	})
}

func absDiff(a, b time.Duration) time.Duration {
	if a > b {
		return a - b
	}
	return b - a
}
