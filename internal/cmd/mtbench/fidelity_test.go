package main

import (
	"bufio"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/sim"
)

// TestMatchStampsAttribution checks the split of each chunk's delivery
// delay at the server's flush: a chunk read before its flush returned was
// held by the server, the time after it by the client.
func TestMatchStampsAttribution(t *testing.T) {
	t.Parallel()
	const ms = int64(time.Millisecond)
	start := time.Unix(100, 0)
	s0 := start.UnixNano()
	// The server gets the request 0.5 ms after the client's start, stamps
	// chunks at +20, +40 and +60 ms.
	stamps := []int64{s0 + 20*ms, s0 + 40*ms, s0 + 60*ms}
	for _, tc := range []struct {
		name string
		// reads are the client's read times of the three chunks, as offsets
		// from their stamps; flushed the flush returns likewise.
		reads, flushed       []int64
		srv, cli             []float64 // want, sorted
		lateSrv, lateCli     int
		noFlush, wantNoSplit bool
		// shared chunks came in one read with the next; cliLast is the
		// cli part of the others (nil: all of cli).
		shared  int
		cliLast []float64
	}{
		{name: "on time", reads: []int64{ms / 5, ms / 5, ms / 5}, flushed: []int64{ms / 10, ms / 10, ms / 10},
			srv: []float64{0.1, 0.1, 0.1}, cli: []float64{0.1, 0.1, 0.1}},
		{name: "client reads late", reads: []int64{ms / 5, 3 * ms, ms / 5}, flushed: []int64{ms / 10, ms / 10, ms / 10},
			srv: []float64{0.1, 0.1, 0.1}, cli: []float64{0.1, 0.1, 2.9}, lateCli: 1},
		{name: "server holds a chunk", reads: []int64{ms / 5, 3 * ms, ms / 5}, flushed: []int64{ms / 10, 4 * ms, ms / 10},
			// read 1 ms before the flush returned: all 3 ms were the server's
			srv: []float64{0.1, 0.1, 3}, cli: []float64{0, 0.1, 0.1}, lateSrv: 1},
		{name: "two chunks in one read", reads: []int64{ms / 5, 20*ms + ms/5, ms / 5}, flushed: []int64{ms / 10, ms / 10, ms / 10},
			// chunk 1 was read with chunk 2, 20 ms after its stamp
			srv: []float64{0.1, 0.1, 0.1}, cli: []float64{0.1, 0.1, 20.1}, lateCli: 1, shared: 1, cliLast: []float64{0.1, 0.1}},
		{name: "no flush times", reads: []int64{ms / 5, ms / 5, ms / 5}, noFlush: true, wantNoSplit: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ttft := stamps[0] + tc.reads[0] - s0
			itl := []int64{stamps[1] + tc.reads[1] - (stamps[0] + tc.reads[0]), stamps[2] + tc.reads[2] - (stamps[1] + tc.reads[1])}
			rec := &record.Record{ConversationID: "a", Start: start, TTFTNs: &ttft, ITLNs: itl, Chunks: 3, Phase: record.PhaseMeasure}
			// The request reached the server's socket 0.1 ms after the
			// start: 0.4 ms of the transit is the server's wake-up.
			sv := &served{arrived: s0 + ms/10, recv: s0 + ms/2, stamps: stamps}
			if !tc.noFlush {
				for j, f := range tc.flushed {
					sv.flushed = append(sv.flushed, stamps[j]+f)
				}
			}
			m := matchStamps([]*record.Record{rec}, map[string][]*served{"a": {sv}}, fidTTFT, fidDecode)
			if m.requests != 1 {
				t.Fatalf("requests %d, want 1", m.requests)
			}
			if tc.wantNoSplit {
				if len(m.transit)+len(m.srv)+len(m.cli) != 0 {
					t.Fatalf("split without flush times: transit %v srv %v cli %v", m.transit, m.srv, m.cli)
				}
				return
			}
			if len(m.transit) != 1 || !near(m.transit[0], 0.5) {
				t.Errorf("transit %v, want [0.5]", m.transit)
			}
			if !allNear(m.srv, tc.srv) || !allNear(m.cli, tc.cli) {
				t.Errorf("srv %v cli %v, want %v and %v", m.srv, m.cli, tc.srv, tc.cli)
			}
			wantLast := tc.cliLast
			if wantLast == nil {
				wantLast = tc.cli
			}
			if m.sharedStamp != tc.shared || !allNear(m.cliLast, wantLast) {
				t.Errorf("shared %d, cli of the last of each read %v, want %d and %v", m.sharedStamp, m.cliLast, tc.shared, wantLast)
			}
			if m.lateSrv != tc.lateSrv || m.lateCli != tc.lateCli {
				t.Errorf("late srv %d cli %d, want %d and %d", m.lateSrv, m.lateCli, tc.lateSrv, tc.lateCli)
			}
			if len(m.sendCli) != 1 || !near(m.sendCli[0], 0.1) || len(m.sendSrv) != 1 || !near(m.sendSrv[0], 0.4) {
				t.Errorf("transit split %v + %v, want [0.1] + [0.4]", m.sendCli, m.sendSrv)
			}
			// The parts add up to the errors: TTFT = transit + first delay;
			// from the arrival, mtrun's side + first delay.
			if want := m.transit[0] + float64(tc.reads[0])/1e6; len(m.ttft) != 1 || !near(m.ttft[0], want) {
				t.Errorf("ttft %v, want [%v]", m.ttft, want)
			}
			if want := 0.1 + float64(tc.reads[0])/1e6; len(m.ttftArr) != 1 || !near(m.ttftArr[0], want) {
				t.Errorf("ttft from the arrival %v, want [%v]", m.ttftArr, want)
			}
		})
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func allNear(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !near(a[i], b[i]) {
			return false
		}
	}
	return true
}

// tappedSim serves a fast simulator with the tap for one test.
func tappedSim(t *testing.T) *simHost {
	t.Helper()
	h, err := startSim(sim.Config{TTFTBase: time.Millisecond, DecodePerToken: time.Millisecond}, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.close)
	return h
}

// TestTapFlushTimes runs one streamed request through the tapped
// simulator: every token chunk has a stamp and a flush time, in order,
// the flush after the stamp.
func TestTapFlushTimes(t *testing.T) {
	t.Parallel()
	h := tappedSim(t)
	body := `{"model":"mtkit-sim","stream":true,"max_tokens":5,"messages":[{"role":"user","content":"hello there"}]}`
	req, err := http.NewRequest(http.MethodPost, h.URL+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Session-ID", "s1")
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, %v: %s", resp.StatusCode, err, b)
	}
	got := h.tap.take()["s1"]
	if len(got) != 1 {
		t.Fatalf("%d requests tapped for s1, want 1", len(got))
	}
	sv := got[0]
	if len(sv.stamps) != 5 || len(sv.flushed) != len(sv.stamps) || sv.bad != 0 {
		t.Fatalf("stamps %v flushed %v bad %d, want 5 of each", sv.stamps, sv.flushed, sv.bad)
	}
	for j := range sv.stamps {
		if sv.flushed[j] < sv.stamps[j] || (j > 0 && sv.stamps[j] < sv.flushed[j-1]) {
			t.Errorf("chunk %d: stamp %d flushed %d (previous flush %d): out of order", j, sv.stamps[j], sv.flushed[j], sv.flushed[max(j-1, 0)])
		}
	}
}

// TestTapArrivalIsLastByte sends a request whose body follows its head
// only once the handler asked for it (Expect: 100-continue): the tapped
// arrival is the body's, after the handler started, not the head's.
func TestTapArrivalIsLastByte(t *testing.T) {
	t.Parallel()
	h := tappedSim(t)
	c, err := net.Dial("tcp", strings.TrimPrefix(h.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	body := `{"model":"mtkit-sim","stream":true,"max_tokens":3,"messages":[{"role":"user","content":"hello there"}]}`
	head := "POST /v1/chat/completions HTTP/1.1\r\nHost: sim\r\nContent-Type: application/json\r\nX-Session-ID: s1\r\n" +
		"Connection: close\r\nExpect: 100-continue\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	// The server answers 100 Continue when the handler first reads the body.
	for _, want := range []string{"HTTP/1.1 100 Continue\r\n", "\r\n"} {
		line, err := br.ReadString('\n')
		if err != nil || line != want {
			t.Fatalf("got %q (%v), want %q", line, err, want)
		}
	}
	sent := time.Now()
	if _, err := io.WriteString(c, body); err != nil {
		t.Fatal(err)
	}
	resp, err := io.ReadAll(br)
	if err != nil || !strings.HasPrefix(string(resp), "HTTP/1.1 200") {
		t.Fatalf("response %q, %v", resp, err)
	}
	got := h.tap.take()["s1"]
	if len(got) != 1 {
		t.Fatalf("%d requests tapped for s1, want 1", len(got))
	}
	sv := got[0]
	if sv.arrived < sent.UnixNano() || sv.arrived <= sv.recv {
		t.Errorf("arrived %d, want after the body was sent (%d) and the handler started (%d)", sv.arrived, sent.UnixNano(), sv.recv)
	}
}
