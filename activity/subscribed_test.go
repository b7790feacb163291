package activity

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"tuttid/logtest"
)

// TestSubscribedFirst: every subscription starts with a Subscribed event
// carrying the seq it continues after (the workspace's latest, or AfterSeq
// when resuming, before the replay), then the replay, then live events.
func TestSubscribedFirst(t *testing.T) {
	ptr := func(n int64) *int64 { return &n }
	tests := []struct {
		name      string
		firstSeq  int64
		published int64 // events before subscribing, sessions "even"/"odd" by seq
		f         Filter
		// Seqs counted from the first event (1) whatever FirstSeq: what
		// Subscribed carries, and what follows once one more is published.
		wantSeq int64
		want    []int64
	}{
		{"nothing published", 0, 0, Filter{}, 0, []int64{1}},
		{"nothing published, epoch", 1000, 0, Filter{}, 0, []int64{1}},
		{"live", 0, 5, Filter{}, 5, []int64{6}},
		{"live, epoch", 1000, 5, Filter{}, 5, []int64{6}},
		{"live, session filter: the workspace's seq", 0, 5, Filter{AgentSessionID: "even"}, 5, []int64{6}},
		{"live, other session's event not sent", 0, 5, Filter{AgentSessionID: "odd"}, 5, nil},
		{"resume: AfterSeq, then the replay", 0, 5, Filter{AfterSeq: ptr(2)}, 2, []int64{3, 4, 5, 6}},
		{"resume up to date", 0, 5, Filter{AfterSeq: ptr(5)}, 5, []int64{6}},
		{"resume a session", 0, 5, Filter{AgentSessionID: "odd", AfterSeq: ptr(0)}, 0, []int64{1, 3, 5}},
		{"resume before any event, epoch", 1000, 0, Filter{AfterSeq: ptr(999)}, 0, []int64{1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			b := New(Options{FirstSeq: tc.firstSeq, Logger: logtest.Discard()})
			base := max(tc.firstSeq, 1) - 1
			for i := int64(1); i <= tc.published; i++ {
				b.Publish(ctx, Event{Kind: MessageAdded, WorkspaceID: "w", AgentSessionID: parity(i)})
			}
			tc.f.WorkspaceID = "w"
			ch, err := b.Subscribe(ctx, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			first := recv(t, ch, 1)[0]
			if err := checkSubscribed(first, tc.f); err != nil {
				t.Fatal(err)
			}
			if first.Seq != base+tc.wantSeq {
				t.Fatalf("Subscribed seq %d, want %d", first.Seq, base+tc.wantSeq)
			}
			b.Publish(ctx, Event{Kind: MessageAdded, WorkspaceID: "w", AgentSessionID: parity(tc.published + 1)})
			b.Close() // closes the channel: draining shows nothing else came
			got := drain(t, ch)
			var want []int64
			for _, n := range tc.want {
				want = append(want, base+n)
			}
			if !slices.Equal(seqs(got), want) {
				t.Fatalf("after Subscribed: seqs %v, want %v", seqs(got), want)
			}
			for _, e := range got {
				if e.Kind == Subscribed {
					t.Fatalf("a second Subscribed event: %+v", e)
				}
			}
		})
	}
}

// TestSubscribedUnderConcurrentPublish: while publishers run, a subscriber's
// Subscribed seq S splits the workspace's events exactly: it then receives
// S+1, S+2, ... with no gap, every event up to S having been published
// before it subscribed (what a query made after Subscribed would see). And
// resuming with AfterSeq = S gives the same events.
func TestSubscribedUnderConcurrentPublish(t *testing.T) {
	const publishers, perPublisher, subscribers = 4, 300, 30
	const total = publishers * perPublisher
	ctx := t.Context()
	b := New(Options{Buffer: total, Window: total, Logger: logtest.Discard()})
	defer b.Close()

	var published atomic.Int64 // highest seq Publish has returned
	var pub sync.WaitGroup
	for range publishers {
		pub.Go(func() {
			for range perPublisher {
				storeMax(&published, b.Publish(ctx, Event{Kind: MessageDelta, WorkspaceID: "w"}).Seq)
			}
		})
	}
	type result struct {
		before, subscribed int64 // published before subscribing; Subscribed's seq
		live, resumed      []int64
	}
	results := make([]result, subscribers)
	var subs sync.WaitGroup
	for i := range results {
		subs.Go(func() {
			time.Sleep(time.Duration(i) * 100 * time.Microsecond) // spread over the publishing
			r := &results[i]
			r.before = published.Load()
			f := Filter{WorkspaceID: "w"}
			ch, err := b.Subscribe(ctx, f)
			if err != nil {
				t.Error(err)
				return
			}
			first := <-ch
			if err := checkSubscribed(first, f); err != nil {
				t.Error(err)
				return
			}
			r.subscribed = first.Seq
			after := first.Seq
			resumed, err := b.Subscribe(ctx, Filter{WorkspaceID: "w", AfterSeq: &after})
			if err != nil {
				t.Error(err)
				return
			}
			if err := checkSubscribed(<-resumed, Filter{WorkspaceID: "w", AfterSeq: &after}); err != nil {
				t.Error(err)
				return
			}
			for _, c := range []struct {
				ch  <-chan Event
				out *[]int64
			}{{ch, &r.live}, {resumed, &r.resumed}} {
				for seq := after; seq < total; {
					e := <-c.ch
					seq = e.Seq
					*c.out = append(*c.out, seq)
				}
			}
		})
	}
	pub.Wait()
	waitGroup(t, &subs)
	for i, r := range results {
		if r.subscribed < r.before {
			t.Errorf("subscriber %d: Subscribed seq %d, but %d was published before it subscribed", i, r.subscribed, r.before)
		}
		want := span(r.subscribed+1, total)
		if !slices.Equal(r.live, want) {
			t.Errorf("subscriber %d: Subscribed at %d, then %d events %v..., want %d..%d", i, r.subscribed, len(r.live), head(r.live), r.subscribed+1, total)
		}
		if !slices.Equal(r.resumed, want) {
			t.Errorf("subscriber %d: resumed after Subscribed's %d: %d events %v..., want %d..%d", i, r.subscribed, len(r.resumed), head(r.resumed), r.subscribed+1, total)
		}
	}
}

// TestSubscribedIsNotABufferSlot: the Subscribed event has room of its own:
// a subscriber that reads nothing still gets Buffer live events before it
// is dropped.
func TestSubscribedIsNotABufferSlot(t *testing.T) {
	const buffer = 8
	b := New(Options{Buffer: buffer, Logger: logtest.Discard()})
	defer b.Close()
	ch, err := b.Subscribe(t.Context(), Filter{WorkspaceID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	for range buffer + 1 {
		b.Publish(t.Context(), Event{Kind: MessageDelta, WorkspaceID: "w"})
	}
	got := drain(t, ch)
	if len(got) != buffer+2 || got[0].Kind != Subscribed || got[len(got)-1].Kind != Resync {
		t.Fatalf("got %d events (%v), want Subscribed, %d events, Resync", len(got), seqs(got), buffer)
	}
	if !slices.Equal(seqs(got[1:buffer+1]), span(1, buffer)) {
		t.Fatalf("seqs %v, want 1..%d", seqs(got[1:buffer+1]), buffer)
	}
}
