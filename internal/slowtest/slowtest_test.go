package slowtest

import "testing"

func TestEnabled(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want bool
	}{{"", false}, {"0", false}, {"yes", false}, {"1", true}} {
		t.Setenv(Env, tc.env)
		if got := Enabled(); got != tc.want {
			t.Errorf("%s=%q: Enabled() = %v, want %v", Env, tc.env, got, tc.want)
		}
	}
}
