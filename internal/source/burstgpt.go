package source

import (
	"io"
)

func init() {
	Register(Format{
		Name:  "burstgpt",
		Doc:   "BurstGPT trace CSV: Timestamp (s), Session ID, Model, Request tokens, Response tokens, Log Type; one session per Session ID",
		Timed: true,
		Detect: func(_ string, head []byte) bool {
			return csvHeaderHas(head, "Timestamp", "Request tokens", "Response tokens")
		},
		Open: openBurstGPT,
	})
}

// burstFields are BurstGPT's column names.
var burstFields = traceFields{"Timestamp", "Request tokens", "Response tokens"}

// openBurstGPT reads a BurstGPT trace (HPMLL/BurstGPT: `Timestamp,Model,
// Request tokens,Response tokens,Total tokens,Log Type`, and in the newer
// release `Timestamp,Session ID,Elapsed time,Model,...`). Rows with the
// same Session ID are one session, in timestamp order; a row without one
// (API log) is a session of its own. The trace has no hash ids: each
// request gets a prompt of its own, whole (the request tokens of a
// conversation turn hold its context).
func openBurstGPT(r io.Reader, name string, o Options) (Source, error) {
	t, err := newCSVTable(r, name, burstFields.timestamp, burstFields.input, burstFields.output)
	if err != nil {
		return nil, err
	}
	var sessions []traceSession
	bySession := map[string]int{}
	shared := map[[2]string]map[string]any{}
	var arena reqArena
	err = t.each(func(line int, rec []string) error {
		ts, in, out, err := t.numbers(rec, burstFields)
		if err != nil {
			return err
		}
		req, err := traceLine(burstFields, line, ts, 1000, in, out, nil, 0)
		if err != nil {
			return err
		}
		sid := t.get(rec, "Session ID")
		i, ok := bySession[sid]
		if !ok || sid == "" {
			i = len(sessions)
			model, logType := t.get(rec, "Model"), t.get(rec, "Log Type")
			var ts traceSession
			if sid != "" {
				ts.id = "session-" + sid
				ts.extra = burstMeta(model, logType)
				ts.extra["session_id"] = sid
				bySession[sid] = i
			} else {
				// One map per (model, log type), shared by the rows
				// without a session: a 5-million-row file holds a few.
				key := [2]string{model, logType}
				if shared[key] == nil {
					shared[key] = burstMeta(model, logType)
				}
				ts.extra = shared[key]
			}
			sessions = append(sessions, ts)
		}
		if sessions[i].reqs == nil {
			sessions[i].reqs = arena.one(req)
		} else {
			sessions[i].reqs = append(sessions[i].reqs, req)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return newTraceSource("burstgpt", name, sessions, 0, o)
}

// burstMeta is the metadata of a BurstGPT session.
func burstMeta(model, logType string) map[string]any {
	m := map[string]any{}
	if model != "" {
		m["model"] = model
	}
	if logType != "" {
		m["log_type"] = logType
	}
	return m
}
