package mtrun

import (
	"io"
	"time"

	"github.com/mtkit/mtkit/internal/command"
	"github.com/mtkit/mtkit/internal/manifest"
	"github.com/mtkit/mtkit/internal/metrics"
	"github.com/mtkit/mtkit/internal/replay"
	"github.com/mtkit/mtkit/internal/schedule"
)

// argRedactions say how the manifest's command line shows the values of
// flags that may hold secrets: not at all, or a URL without its user name
// and password.
var argRedactions = map[string]func(string) string{
	"api-key": manifest.Hide, "header": manifest.Hide, "session-header": manifest.Hide,
	"metrics-url": metrics.Display,
}

// writeManifest writes the run's manifest (internal/manifest); sum is nil
// for the one written before the run (no summary, no end time), which
// also checks that the path can be written.
func writeManifest(o *Options, sum *replay.Summary, digest string, started time.Time, stdout io.Writer) error {
	path := manifest.Path(o.manifest, o.records)
	if path == "" || path == "-" && sum == nil {
		return nil
	}
	r := o.Replay
	if o.Stage.Sweep != nil {
		r.Schedule = perStage{r.Schedule}
	}
	m := replay.NewManifest(&r, started, command.Version(), map[string]any{
		"warmup_step": o.warmupStep, "sim_config": o.simSpec,
		"schedule": o.scheduleName(), "users": o.sched.users, "user_gap": o.sched.userGap.String(), "time_scale": o.sched.timeScale,
		"segment": o.Scale.Seg.String(), "start_at": o.Scale.Start.String(),
	})
	m.Args, m.Input, m.InputHash, m.Tokenizer = o.args, o.input, digest, o.tokenizer
	m.Simulated, m.Records, m.ConvOutput = o.sim, o.records, o.convOut
	if mi := o.metrics.manifest(); mi != nil {
		m.Metrics = mi
	}
	if sum != nil {
		replay.FinishManifest(m, sum)
	}
	return m.Write(path, stdout, replay.NewRedactor(&o.Replay).JSON) // the URL's userinfo, echoed model names
}

// perStage is a sweep's run schedule as the manifest sees it: each stage
// replaces it (stagerun.Sweep), so none of its closed-loop or rate
// settings (clients, active, sampling, rate, poisson) applied to the
// run, as none does to a --stages run; the records' stage_load and the
// capacity JSON give each stage's.
type perStage struct{ schedule.Schedule }
