package replay

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mtkit/mtkit/internal/record"
	"github.com/mtkit/mtkit/internal/schedule"
)

// TestStagedClients replays, on synctest's clock, two stages of closed
// lanes without draining: one client, then three with a warmup. Every
// record carries its stage, in order of intended send time; the first
// stage uses lane 0 only, the second all three; the second stage's
// warmup records come before its measured ones; the run ends with the
// last stage. A request lasts 6 ms (3 tokens 2 ms apart) and lanes do not
// think, so each lane sends a turn every 6 ms of each stage it is in.
func TestStagedClients(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		fs, dial := newPipeServer(t, func(fs *fakeServer) { fs.tokenDelay = 2 * time.Millisecond })
		sched := schedule.Staged{Levels: []schedule.Level{
			{Level: 1, Duration: 300 * time.Millisecond},
			{Level: 3, Duration: 300 * time.Millisecond, Warmup: 100 * time.Millisecond},
		}}
		res := replayT(t, Options{URL: fs.URL, Stream: true, Schedule: sched, Loop: true, dial: dial}, simpleConvs(4, 2))
		recs := res.final()
		slices.SortFunc(recs, func(a, b *record.Record) int { return a.Scheduled.Compare(b.Scheduled) })
		type key struct{ stage, client int }
		turns, warm := map[key]int{}, map[key]int{}
		var lastWarm, firstMeasured time.Time
		prev := 0
		for _, r := range recs {
			if r.Stage < prev || r.Stage < 1 || r.Stage > 2 {
				t.Fatalf("record %d (scheduled %v) in stage %d after stage %d", r.Seq, r.Scheduled, r.Stage, prev)
			}
			prev = r.Stage
			turns[key{r.Stage, r.Client}]++
			switch {
			case r.Stage == 1 && !r.Measured():
				t.Errorf("record %d of stage 1 (no warmup) is %s", r.Seq, r.Phase)
			case r.Stage == 2 && !r.Measured():
				warm[key{r.Stage, r.Client}]++
				lastWarm = r.Scheduled
			case r.Stage == 2 && firstMeasured.IsZero():
				firstMeasured = r.Scheduled
			}
		}
		// 300 ms / 6 ms = 50 turns per lane and stage, 17 of them (at
		// 0, 6, ..., 96 ms) in the 100 ms warmup.
		want, wantWarm := map[key]int{{1, 0}: 50, {2, 0}: 50, {2, 1}: 50, {2, 2}: 50}, map[key]int{{2, 0}: 17, {2, 1}: 17, {2, 2}: 17}
		if fmt.Sprint(turns, warm) != fmt.Sprint(want, wantWarm) {
			t.Errorf("turns by stage and client %v (warmup %v), want %v (warmup %v)", turns, warm, want, wantWarm)
		}
		if lastWarm.IsZero() || firstMeasured.IsZero() || !lastWarm.Before(firstMeasured) {
			t.Errorf("stage 2: last warmup record at %v, first measured at %v; want warmup first", lastWarm, firstMeasured)
		}
	})
}

// TestStagedRate replays two stages of constant arrivals, 20/s for
// 300 ms then 40/s for 300 ms: the sessions start at exactly the
// schedule's arrivals, in order and none skipped, each stamped with its
// stage. The last arrivals may be missing: the run ends 600 ms after its
// start on the real clock, and on a loaded machine an arrival can come
// due after that (how many a run fires on time is mtbench's figure).
func TestStagedRate(t *testing.T) {
	t.Parallel()
	fs := newFakeServer(t, nil)
	sched := schedule.Staged{Rate: true, Levels: []schedule.Level{
		{Level: 20, Duration: 300 * time.Millisecond},
		{Level: 40, Duration: 300 * time.Millisecond},
	}}
	var want []time.Duration // the arrivals: 6 in stage 1, 12 in stage 2
	for k := range 6 {
		want = append(want, time.Duration(k)*50*time.Millisecond)
	}
	for k := range 12 {
		want = append(want, 300*time.Millisecond+time.Duration(k)*25*time.Millisecond)
	}
	res := replayT(t, Options{URL: fs.URL, Stream: true, Schedule: sched, Loop: true}, simpleConvs(3, 1))
	start := runStart(res.final())
	var got []time.Duration
	for _, r := range res.final() {
		if r.Turn != 0 {
			continue
		}
		at := r.Scheduled.Sub(start)
		got = append(got, at)
		if want, _ := sched.StageAt(at); r.Stage != want {
			t.Errorf("session %s arrived at %v in stage %d, want %d", r.ConversationID, at, r.Stage, want)
		}
	}
	slices.Sort(got)
	if len(got) == 0 || len(got) > len(want) || !slices.Equal(got, want[:len(got)]) {
		t.Errorf("arrivals at %v, want the first ones of %v", got, want)
	}
}

// TestStagedUsers replays, on synctest's clock, two stages of
// user-centric users, one user then three, a turn every 60 ms: every turn
// is at its user's slot of the stage it falls in (the stage's start +
// u·gap/N + k·gap), stamped with that stage, and every slot is used.
func TestStagedUsers(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		fs, dial := newPipeServer(t, nil)
		const gap = 60 * time.Millisecond
		sched := schedule.Staged{Gap: gap, Levels: []schedule.Level{
			{Level: 1, Duration: 300 * time.Millisecond},
			{Level: 3, Duration: 400 * time.Millisecond},
		}}
		type slot struct {
			stage, user int
			at          time.Duration
		}
		want := map[slot]bool{}
		var stageStart time.Duration
		for k, l := range sched.Levels {
			for u := range int(l.Level) {
				for at := stageStart + time.Duration(u)*gap/time.Duration(l.Level); at < stageStart+l.Duration; at += gap {
					want[slot{k + 1, u, at}] = true
				}
			}
			stageStart += l.Duration
		}
		start := time.Now().Add(50 * time.Millisecond)
		res := replayT(t, Options{URL: fs.URL, Stream: true, Schedule: sched, Loop: true, Start: start, dial: dial}, simpleConvs(4, 3))
		for _, r := range res.final() {
			s := slot{r.Stage, r.Client, r.Scheduled.Sub(start)}
			if !want[s] {
				t.Errorf("record %d: user %d at +%v in stage %d: not a slot of the schedule", r.Seq, s.user, s.at, s.stage)
			}
			delete(want, s)
		}
		for s := range want {
			t.Errorf("no turn of user %d at +%v in stage %d", s.user, s.at, s.stage)
		}
	})
}

// TestStagedActive replays two stages of active sessions over the same
// two clients, 2 then 6: in the first each client works on one
// conversation at a time (a conversation's turns are not interleaved with
// another's), in the second a client alternates between its three, and
// both stages use both clients. It runs on synctest's clock.
func TestStagedActive(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) { stagedActive(t) })
}

func stagedActive(t *testing.T) {
	fs, dial := newPipeServer(t, func(fs *fakeServer) { fs.tokenDelay = 2 * time.Millisecond })
	sched := schedule.Staged{Lanes: 2, Levels: []schedule.Level{
		{Level: 2, Duration: 300 * time.Millisecond},
		{Level: 6, Duration: 300 * time.Millisecond},
	}}
	res := replayT(t, Options{URL: fs.URL, Stream: true, Schedule: sched, Loop: true, dial: dial}, simpleConvs(8, 6))
	recs := res.final()
	slices.SortFunc(recs, func(a, b *record.Record) int { return a.Scheduled.Compare(b.Scheduled) })
	type key struct{ stage, client int }
	seq := map[key][]string{} // conversation of each turn, in order
	for _, r := range recs {
		k := key{r.Stage, r.Client}
		seq[k] = append(seq[k], r.ConversationID)
	}
	// interleaved reports whether a conversation comes back after another
	// one's turn.
	interleaved := func(ids []string) bool {
		done := map[string]bool{}
		for i, id := range ids {
			if done[id] {
				return true
			}
			if i > 0 && ids[i-1] != id {
				done[ids[i-1]] = true
			}
		}
		return false
	}
	for client := range 2 {
		s1, s2 := seq[key{1, client}], seq[key{2, client}]
		if len(s1) == 0 || len(s2) == 0 {
			t.Fatalf("client %d: %d turns in stage 1, %d in stage 2; want both", client, len(s1), len(s2))
		}
		if interleaved(s1) {
			t.Errorf("client %d in stage 1 (one session per client) interleaved conversations: %v", client, s1)
		}
		if !interleaved(s2) {
			t.Errorf("client %d in stage 2 (three sessions per client) did not alternate: %v", client, s2)
		}
	}
	if len(seq) != 4 {
		t.Errorf("turns by stage and client %v; want clients 0 and 1 in stages 1 and 2", seq)
	}
}
