package pgfeed

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"tuttid/activity"
	"tuttid/store/pgtest"
)

// Publishers on two instances at once: the subscribers of both get every
// event, numbered without gap, in the same order, and each publisher's
// events in the order it published them.
func TestOneOrderAcrossInstances(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	opts := activity.Options{Buffer: 1 << 14}
	a, b := instance(t, url, opts, 0), instance(t, url, opts, 0)
	ctx := t.Context()
	onA, firstA := sub(t, ctx, a, activity.Filter{WorkspaceID: "w"})
	onB, firstB := sub(t, ctx, b, activity.Filter{WorkspaceID: "w"})
	if firstA != firstB {
		t.Fatalf("Subscribed seq %d on A, %d on B: want one sequence", firstA, firstB)
	}
	const publishers, each = 3, 150
	var wg sync.WaitGroup
	for _, f := range []*Feed{a, b} {
		for p := range publishers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				name := fmt.Sprintf("%p/%d", f, p)
				for i := range each {
					f.Publish(ctx, delta("w", name+" "+strconv.Itoa(i)))
				}
			}()
		}
	}
	wg.Wait()
	total := 2 * publishers * each
	gotA, errA := collect(onA, total)
	gotB, errB := collect(onB, total)
	if err := errors.Join(errA, errB); err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string][]activity.Event{"A": gotA, "B": gotB} {
		if err := contiguous(got, firstA+1); err != nil {
			t.Errorf("on %s: %v", name, err)
		}
		last := map[string]int{}
		for _, e := range got {
			pub, i, _ := strings.Cut(e.Delta, " ")
			n, _ := strconv.Atoi(i)
			if prev, ok := last[pub]; ok && n != prev+1 {
				t.Errorf("on %s: publisher %s's event %d after its %d", name, pub, n, prev)
			}
			last[pub] = n
		}
	}
	if !slices.EqualFunc(gotA, gotB, func(x, y activity.Event) bool { return x.Seq == y.Seq && x.Delta == y.Delta }) {
		t.Error("A and B received different sequences")
	}
}

// afterSeq resumes on the other instance: right after the event was made
// (before the notification reached it), from further back within the
// window, and too far back is activity.resync_required.
func TestResumeOnOtherInstance(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	opts := activity.Options{Window: 16}
	a, b := instance(t, url, opts, 16), instance(t, url, opts, 16)
	ctx := t.Context()
	onA, first := sub(t, ctx, a, activity.Filter{WorkspaceID: "w"})
	for i := range 10 {
		a.Publish(ctx, delta("w", strconv.Itoa(i)))
	}
	got, err := collect(onA, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, after := range []int64{got[9].Seq, got[4].Seq, first} {
		ch, subscribed := sub(t, ctx, b, activity.Filter{WorkspaceID: "w", AfterSeq: &after})
		if subscribed != after {
			t.Errorf("Subscribed seq %d, want %d", subscribed, after)
		}
		replayed, err := collect(ch, int(got[9].Seq-after))
		if err != nil {
			t.Fatalf("resume after %d: %v", after, err)
		}
		if err := contiguous(replayed, after+1); err != nil {
			t.Errorf("resume after %d: %v", after, err)
		}
	}
	for i := range 40 {
		a.Publish(ctx, delta("w", strconv.Itoa(i)))
	}
	more, err := collect(onA, 40)
	if err != nil {
		t.Fatal(err)
	}
	// Once B delivered them (before, its window still held got[0]'s
	// successors and resuming there was right).
	deadline := time.Now().Add(wait)
	for seq, _ := b.local.Latest("w"); seq != more[39].Seq; seq, _ = b.local.Latest("w") {
		if time.Now().After(deadline) {
			t.Fatalf("B at %d, never reached %d", seq, more[39].Seq)
		}
		time.Sleep(5 * time.Millisecond)
	}
	old := got[0].Seq
	_, err = b.Subscribe(ctx, activity.Filter{WorkspaceID: "w", AfterSeq: &old})
	var re *activity.ResyncError
	if !errors.As(err, &re) || re.Reason != activity.ReasonTooOld {
		t.Errorf("resume after %d, 40 events and a window of 16 ago: %v, want too_old", old, err)
	}
}

// The instance that produced the events restarts, after a clean stop or
// killed with events still queued (those never got a number: they are
// lost, as on SQLite, but no subscriber sees a gap): B's subscriber
// misses no numbered event and sees none twice, and a subscriber of the
// new A resumes from a seq of the old one.
func TestProducerRestarts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		stop func(*Feed)
	}{
		{"closed", (*Feed).Close},
		{"killed", kill},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url := pgtest.URL(t)
			a := instance(t, url, activity.Options{}, 0)
			b := instance(t, url, activity.Options{}, 0)
			ctx := t.Context()
			onB, first := sub(t, ctx, b, activity.Filter{WorkspaceID: "w"})
			for i := range 50 {
				a.Publish(ctx, delta("w", strconv.Itoa(i)))
			}
			if _, err := a.PublishWait(ctx, delta("w", "stored")); err != nil {
				t.Fatal(err)
			}
			for i := range 50 {
				a.Publish(ctx, delta("w", strconv.Itoa(i)))
			}
			tc.stop(a)
			a2 := instance(t, url, activity.Options{}, 0)
			marker, err := a2.PublishWait(ctx, delta("w", "restarted"))
			if err != nil {
				t.Fatal(err)
			}
			n := int(marker.Seq - first)
			if tc.name == "closed" && n != 102 {
				t.Errorf("after a clean stop, %d events stored, want 102", n)
			}
			got, err := collect(onB, n)
			if err != nil {
				t.Fatal(err)
			}
			if err := contiguous(got, first+1); err != nil {
				t.Errorf("on B: %v", err)
			}
			if got[n-1].Delta != "restarted" || got[50].Delta != "stored" {
				t.Errorf("on B: events 51 and %d are %q and %q", n, got[50].Delta, got[n-1].Delta)
			}
			after := got[24].Seq
			resumed, _ := sub(t, ctx, a2, activity.Filter{WorkspaceID: "w", AfterSeq: &after})
			again, err := collect(resumed, n-25)
			if err != nil {
				t.Fatal(err)
			}
			if err := contiguous(again, after+1); err != nil {
				t.Errorf("on the restarted A: %v", err)
			}
		})
	}
}

// kill stops f as a kill -9 would: what it queued is not written.
func kill(f *Feed) {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	f.stop()
	f.wg.Wait()
	f.local.Close()
}

// The table keeps Keep events a workspace (plus up to pruneEvery), by seq.
func TestPruneKeepsTheWindow(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	a := instance(t, url, activity.Options{Window: 8}, 10)
	ctx := t.Context()
	ch, _ := sub(t, ctx, a, activity.Filter{WorkspaceID: "w"})
	for i := range 300 {
		a.Publish(ctx, delta("w", strconv.Itoa(i)))
	}
	got, err := collect(ch, 300)
	if err != nil {
		t.Fatal(err)
	}
	// The writer prunes after it delivered: wait for it.
	var n, lo, hi int64
	deadline := time.Now().Add(wait)
	for {
		if err := a.db.QueryRowContext(ctx, `SELECT count(*), min(seq), max(seq) FROM activity_events WHERE workspace_id = 'w'`).Scan(&n, &lo, &hi); err != nil {
			t.Fatal(err)
		}
		if n <= 10+pruneEvery || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n > 10+pruneEvery || n < 10 || hi != got[299].Seq || hi-lo+1 != n {
		t.Errorf("table holds %d events (%d..%d), want 10..%d contiguous ending at %d", n, lo, hi, 10+pruneEvery, got[299].Seq)
	}
}

// A small event reaches B inside its notification, a large one through the
// table; both arrive whole, in order, with the time A stored.
func TestLargeAndSmallEventsReachTheOtherInstance(t *testing.T) {
	t.Parallel()
	if !strings.Contains(insert, "<= "+strconv.Itoa(inlineMax)+" THEN") {
		t.Fatalf("insert does not inline up to inlineMax (%d) bytes", inlineMax)
	}
	url := pgtest.URL(t)
	a, b := instance(t, url, activity.Options{}, 0), instance(t, url, activity.Options{}, 0)
	ctx := t.Context()
	onA, _ := sub(t, ctx, a, activity.Filter{WorkspaceID: "w"})
	onB, _ := sub(t, ctx, b, activity.Filter{WorkspaceID: "w"})
	texts := []string{"small", strings.Repeat("é", inlineMax), "small again \u0000", strings.Repeat("x", inlineMax-100)}
	for _, text := range texts {
		a.Publish(ctx, delta("w", text))
	}
	gotA, errA := collect(onA, len(texts))
	gotB, errB := collect(onB, len(texts))
	if err := errors.Join(errA, errB); err != nil {
		t.Fatal(err)
	}
	for i := range texts {
		if gotB[i].Delta != texts[i] || gotB[i].Seq != gotA[i].Seq || !gotB[i].At.Equal(gotA[i].At) || gotB[i].ItemID != "m1" {
			t.Errorf("event %d on B: seq %d at %v %d bytes, want seq %d at %v %d bytes", i,
				gotB[i].Seq, gotB[i].At, len(gotB[i].Delta), gotA[i].Seq, gotA[i].At, len(texts[i]))
		}
	}
}

// An instance that could not read a workspace's events before they were
// pruned (here: B listens only after A published more than Keep, as after
// a long disconnection) ends its subscriptions with a Resync (missed) when
// it catches up, never a silent gap; a new subscription there starts from
// what is kept.
func TestCutOffLongerThanKeepIsResync(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	opts := activity.Options{Window: 8}
	a := instance(t, url, opts, 10)
	b, err := open(t.Context(), Config{DB: openDB(t, url), URL: url, Options: opts, Keep: 10})
	if err != nil {
		t.Fatal(err)
	}
	b.run(t.Context(), false) // no LISTEN until the test reconnects it
	t.Cleanup(b.Close)
	ctx := t.Context()
	onA, first := sub(t, ctx, a, activity.Filter{WorkspaceID: "w"})
	onB, _ := sub(t, ctx, b, activity.Filter{WorkspaceID: "w"})
	for i := range 200 {
		a.Publish(ctx, delta("w", strconv.Itoa(i)))
	}
	got, err := collect(onA, 200)
	if err != nil {
		t.Fatal(err)
	}
	// A prunes after it delivered: wait until B's next event is gone.
	deadline := time.Now().Add(wait)
	for {
		var lo int64
		if err := a.db.QueryRowContext(ctx, `SELECT min(seq) FROM activity_events WHERE workspace_id = 'w'`).Scan(&lo); err != nil {
			t.Fatal(err)
		}
		if lo > first+1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("A never pruned")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// What the listener does when it (re)connects.
	if err := b.advance(ctx, "w", 1<<62, nil); err != nil {
		t.Fatal(err)
	}
	var last activity.Event
	for timeout, live := time.After(wait), true; live; {
		select {
		case e, ok := <-onB:
			switch {
			case !ok:
				live = false
			case e.Kind == activity.Resync:
				last = e // the channel closes next
			default:
				t.Fatalf("B delivered %d after a gap", e.Seq)
			}
		case <-timeout:
			t.Fatal("B's subscription was not ended")
		}
	}
	var re *activity.ResyncError
	if last.Kind != activity.Resync || !errors.As(last.Err(), &re) || re.Reason != activity.ReasonMissed || last.Seq != first {
		t.Fatalf("B's subscription ended with %+v, want a Resync (missed) after %d", last, first)
	}
	ch, latest := sub(t, ctx, b, activity.Filter{WorkspaceID: "w"})
	if latest != got[199].Seq {
		t.Errorf("new subscription on B starts after %d, want %d", latest, got[199].Seq)
	}
	if _, err := a.PublishWait(ctx, delta("w", "next")); err != nil {
		t.Fatal(err)
	}
	if err := b.advance(ctx, "w", 1<<62, nil); err != nil {
		t.Fatal(err)
	}
	if next, err := collect(ch, 1); err != nil || next[0].Seq != latest+1 {
		t.Errorf("next on B: %v %v, want seq %d", next, err, latest+1)
	}
}
