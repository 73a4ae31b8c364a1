package stats

import (
	"testing"

	"github.com/mtkit/mtkit/internal/manifest"
)

// TestSegmentSettings: the segment view takes settings.segment and
// start_at from a manifest when they are text, and says when they are not.
func TestSegmentSettings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		settings          map[string]any
		seg, startAt, err string
	}{
		{nil, "", "", ""},
		{map[string]any{"segment": "0/2", "start_at": "2026-11-23T10:00:00Z"}, "0/2", "2026-11-23T10:00:00Z", ""},
		{map[string]any{"segment": nil}, "", "", ""},
		{map[string]any{"segment": 2.0}, "", "", "settings.segment: 2, want a string"},
	} {
		seg, startAt, err := segmentSettings(&manifest.Manifest{Settings: tc.settings})
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if seg != tc.seg || startAt != tc.startAt || msg != tc.err {
			t.Errorf("%v: %q %q %q, want %q %q %q", tc.settings, seg, startAt, msg, tc.seg, tc.startAt, tc.err)
		}
	}
}
