package replay

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mtkit/mtkit/internal/conv"
	"github.com/mtkit/mtkit/internal/faultio"
	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/schedule"
	"github.com/mtkit/mtkit/internal/source"
)

// gatedRecords is a record output that is stuck (like a full pipe or a
// stalled disk) until release is closed; entered is closed when the first
// Encode starts waiting.
type gatedRecords struct {
	memRecords
	release chan struct{}
	entered chan struct{}
	once    sync.Once
}

func (g *gatedRecords) Encode(r *record.Record) error {
	g.once.Do(func() { close(g.entered) })
	<-g.release
	return g.memRecords.Encode(r)
}

// TestSlowOutput: a stuck record output does not hold up the sessions
// while the writer's queue has room; when it is full, the time sessions
// wait is reported; in the end every record is written, in seq order.
func TestSlowOutput(t *testing.T) {
	t.Parallel()
	const convs, turns = 4, 3
	for _, tc := range []struct {
		name        string
		buffer      int
		wantBlocked bool
	}{
		{"queue holds the run", 0, false},
		{"queue of one", 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			served := make(chan struct{}, convs*turns)
			fs := newFakeServer(t, func(fs *fakeServer) {
				fs.hook = func(http.ResponseWriter, *http.Request, *seenRequest) bool {
					served <- struct{}{}
					return false
				}
			})
			recs := &gatedRecords{release: make(chan struct{}), entered: make(chan struct{})}
			blocked := make(chan struct{})
			var blockOnce sync.Once
			sink := Sink{Records: recs, Buffer: tc.buffer, onBlocked: func() { blockOnce.Do(func() { close(blocked) }) }}
			o := Options{URL: fs.URL, Model: "fake-model", Stream: true, Schedule: schedule.Closed{Clients: 2}, RequestTimeout: 20 * time.Second}
			type ret struct {
				sum *Summary
				err error
			}
			done := make(chan ret, 1)
			go func() {
				sum, err := Run(context.Background(), context.Background(), o, source.Slice(simpleConvs(convs, turns)), sink)
				done <- ret{sum, err}
			}()
			<-recs.entered
			if tc.wantBlocked {
				select {
				case <-blocked:
				case <-time.After(20 * time.Second):
					t.Fatal("no session waited for a full queue")
				}
			} else {
				for i := range convs * turns {
					select {
					case <-served:
					case <-time.After(20 * time.Second):
						t.Fatalf("only %d of %d requests sent while the output was stuck: sessions wait for it", i, convs*turns)
					}
				}
			}
			close(recs.release)
			got := <-done
			if got.err != nil {
				t.Fatal(got.err)
			}
			all := recs.all()
			if len(all) != convs*turns || got.sum.Requests != convs*turns {
				t.Errorf("%d records written, %d requests; want %d", len(all), got.sum.Requests, convs*turns)
			}
			for i, r := range all {
				if r.Seq != int64(i) || !r.OK() {
					t.Errorf("record %d: seq %d, error %q", i, r.Seq, r.Error)
				}
			}
			if (got.sum.WriteBlocked > 0) != tc.wantBlocked {
				t.Errorf("WriteBlocked %v, want >0: %v", got.sum.WriteBlocked, tc.wantBlocked)
			}
		})
	}
}

// TestWriteError: the first write error ends the run and is the error
// returned; the other output, on a healthy disk, still gets everything:
// every measured request when conversations fail, every conversation
// with an answer when records fail.
func TestWriteError(t *testing.T) {
	t.Parallel()
	for _, failing := range []string{"records", "conversations"} {
		t.Run(failing, func(t *testing.T) {
			t.Parallel()
			fs := newFakeServer(t, nil)
			var recBuf, convBuf bytes.Buffer
			var recW, convW io.Writer = &recBuf, &convBuf
			if failing == "records" {
				recW = &faultio.FullDisk{W: &recBuf}
			} else {
				convW = &faultio.FullDisk{W: &convBuf}
			}
			sink := Sink{Records: record.NewJSONEncoder(recW), Conversations: conv.NewWriter(convW)}
			o := Options{URL: fs.URL, Model: "fake-model", Stream: true, Schedule: schedule.Closed{Clients: 2}, RequestTimeout: 20 * time.Second}
			sum, err := Run(context.Background(), context.Background(), o, source.Slice(simpleConvs(50, 4)), sink)
			if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "writing "+failing) {
				t.Fatalf("err %v, want the %s write error", err, failing)
			}
			if sum.Requests >= 200 {
				t.Errorf("%d requests: the run went on after the write error", sum.Requests)
			}
			convs, _ := conv.ReadAll(&convBuf, "conversations") // the last line may be cut by the failure
			d := record.NewJSONDecoder(&recBuf, "records")
			var recs []record.Record
			for d.Scan() {
				recs = append(recs, *d.Record())
			}
			switch failing {
			case "conversations":
				if int64(len(recs)) != sum.Attempts || int64(len(recs)) != fs.n.Load() {
					t.Errorf("%d records of %d attempts (%d requests served): records lost on the healthy output", len(recs), sum.Attempts, fs.n.Load())
				}
			case "records":
				written := map[string]bool{}
				for _, c := range convs {
					written[c.ID] = true
				}
				for _, req := range fs.requests() {
					if id := strings.Fields(req.lastUser())[0]; !written[id] {
						t.Errorf("conversation %s sent a request but was not written", id)
					}
				}
				if len(convs) == 0 || int64(len(convs)) > sum.Started {
					t.Errorf("%d conversations written, %d started", len(convs), sum.Started)
				}
			}
		})
	}
}

// flushCounter is a record output that counts flushes.
type flushCounter struct {
	memRecords
	flushes atomic.Int64
}

func (f *flushCounter) Flush() error {
	f.flushes.Add(1)
	return nil
}

// TestFlushCoalesced runs the writer on synctest's clock: records that
// come one at a time, each finding the queue empty, are not flushed one
// by one (a write system call each) but at most once per flushGap, and a
// record is flushed at once when the last flush is flushGap old, else
// exactly flushGap after it, never by the 500 ms tick.
func TestFlushCoalesced(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		out := &flushCounter{}
		w := newWriter(Sink{Records: out}, func(bool, error) {})
		seq := int64(0)
		send := func() {
			w.send(item{recs: []*record.Record{{Seq: seq}}})
			seq++
			synctest.Wait() // the writer took it and waits again
		}
		// 500 records 1 ms apart: a flush every flushGap, not 500.
		const n = 500
		start := time.Now()
		for range n {
			send()
			time.Sleep(time.Millisecond)
		}
		elapsed := time.Since(start)
		if f, most := out.flushes.Load(), int64(elapsed/flushGap+elapsed/flushTick+1); f > most || f < most/2 {
			t.Errorf("%d flushes for %d records 1 ms apart over %v, want at most %d (one per %v and tick)", f, n, elapsed, most, flushGap)
		}
		// A lone record after a quiet second: flushed at once.
		time.Sleep(time.Second + flushTick/2) // off the tick: it fires at 2 s, 2.5 s, ...
		before := out.flushes.Load()
		send()
		if f := out.flushes.Load(); f != before+1 {
			t.Errorf("a lone record after a quiet second: %d flushes without any time passing, want 1", f-before)
		}
		// One right after that flush: flushed exactly flushGap later.
		send()
		if f := out.flushes.Load(); f != before+1 {
			t.Errorf("a record within flushGap of the last flush was flushed at once (%d flushes)", f-before)
		}
		time.Sleep(flushGap - time.Nanosecond)
		if f := out.flushes.Load(); f != before+1 {
			t.Errorf("a record within flushGap of the last flush was flushed before the gap ended (%d flushes)", f-before)
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		if f := out.flushes.Load(); f != before+2 {
			t.Errorf("a record within flushGap of the last flush: %d flushes flushGap later, want 2", f-before)
		}
		w.close()
		if got := len(out.all()); got != int(seq) {
			t.Errorf("%d records written, want %d", got, seq)
		}
	})
}
