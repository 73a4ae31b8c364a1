package sweep

import "testing"

func TestLoadRoundTrip(t *testing.T) {
	for _, st := range []Stage{{Kind: Clients, Level: 8}, {Kind: Rate, Level: 2.5}, {Kind: Users, Level: 40}, {Kind: Active, Level: 96}, {Kind: Requests, Level: 20}} {
		kind, level, err := ParseLoad(st.Load())
		if err != nil || kind != st.Kind || level != st.Level {
			t.Errorf("ParseLoad(%q) = %v %v %v", st.Load(), kind, level, err)
		}
	}
	for _, bad := range []string{"", "clients", "clients=", "clients=0", "clients=-1", "racks=3", "rate=x"} {
		if _, _, err := ParseLoad(bad); err == nil {
			t.Errorf("ParseLoad(%q) accepted", bad)
		}
	}
}
