package stats

import ()

// Inputs describes what was read.
type Inputs struct {
	Files       []*FileStats `json:"files"`
	Records     int          `json:"records"`
	Malformed   int          `json:"malformed"`
	Truncated   int          `json:"truncated"`
	Duplicates  int          `json:"duplicates"`
	Warmup      int          `json:"warmup_skipped"`
	FilteredOut int          `json:"filtered_out"`
}

// FileStats counts the valid records of one input.
type FileStats struct {
	Label   string `json:"label"`
	Path    string `json:"path"`
	Records int    `json:"records"`
}
