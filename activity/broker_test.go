package activity

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tuttid/ent"
	"tuttid/logtest"
)

func TestPublishAssignsSeqPerWorkspace(t *testing.T) {
	ctx := t.Context()
	b := New(Options{Logger: logtest.Discard()})
	defer b.Close()

	before := time.Now()
	for i, tc := range []struct {
		ws      string
		wantSeq int64
	}{{"a", 1}, {"a", 2}, {"b", 1}, {"a", 3}, {"b", 2}} {
		got := b.Publish(ctx, Event{Kind: MessageAdded, WorkspaceID: tc.ws, AgentSessionID: "s"})
		if got.Seq != tc.wantSeq || got.At.Before(before) {
			t.Errorf("#%d Publish(%s) = seq %d at %v, want seq %d after %v", i, tc.ws, got.Seq, got.At, tc.wantSeq, before)
		}
	}
}

func TestPublishTakesIDsFromSession(t *testing.T) {
	b := New(Options{Logger: logtest.Discard()})
	defer b.Close()
	ch := subscribe(t, t.Context(), b, Filter{WorkspaceID: "w", AgentSessionID: "s1"})

	e := b.Publish(t.Context(), Event{Kind: SessionCreated, Session: &ent.AgentSession{ID: "s1", WorkspaceID: "w"}})
	if e.WorkspaceID != "w" || e.AgentSessionID != "s1" || e.Seq != 1 {
		t.Fatalf("Publish = %+v, want IDs from Session and seq 1", e)
	}
	if got := recv(t, ch, 1)[0]; got.Session == nil || got.Seq != 1 {
		t.Fatalf("received %+v", got)
	}
}

func TestPublishRejects(t *testing.T) {
	logger, log := logtest.New(slog.LevelInfo)
	b := New(Options{Logger: logger})
	defer b.Close()
	for _, e := range []Event{
		{Kind: MessageAdded},                 // no workspace
		{Kind: Resync, WorkspaceID: "w"},     // reserved kind
		{Kind: Subscribed, WorkspaceID: "w"}, // reserved kind
	} {
		if got := b.Publish(t.Context(), e); got.Seq != 0 {
			t.Errorf("Publish(%+v) got seq %d, want 0 (rejected)", e, got.Seq)
		}
	}
	if !strings.Contains(log.String(), "event not published") {
		t.Errorf("rejections not logged: %q", log)
	}
}

// Many goroutines publish into a few workspaces: every subscriber sees its
// workspace's events in seq order 1..N, and each publisher's own events in
// the order it published them.
func TestConcurrentPublishOrder(t *testing.T) {
	const workspaces, publishers, perPublisher = 3, 8, 200
	ctx := t.Context()
	b := New(Options{Buffer: publishers * perPublisher, Logger: logtest.Discard()})
	defer b.Close()

	subs := make([]<-chan Event, workspaces)
	for w := range subs {
		subs[w] = subscribe(t, ctx, b, Filter{WorkspaceID: strconv.Itoa(w)})
	}
	var published [workspaces]atomic.Int64
	var wg sync.WaitGroup
	for p := range publishers {
		wg.Go(func() {
			var last [workspaces]int64
			for i := range perPublisher {
				w := (p + i) % workspaces
				e := b.Publish(ctx, Event{Kind: MessageDelta, WorkspaceID: strconv.Itoa(w), AgentSessionID: strconv.Itoa(p), Delta: strconv.Itoa(i)})
				if e.Seq <= last[w] {
					t.Errorf("publisher %d: seq %d after %d in workspace %d", p, e.Seq, last[w], w)
				}
				last[w] = e.Seq
				published[w].Add(1)
			}
		})
	}
	wg.Wait()

	for w, ch := range subs {
		n := published[w].Load()
		got := recv(t, ch, int(n))
		if !slices.Equal(seqs(got), span(1, n)) {
			t.Errorf("workspace %d: seqs %v, want 1..%d in order", w, seqs(got), n)
		}
		lastDelta := map[string]int{}
		for _, e := range got {
			d, _ := strconv.Atoi(e.Delta)
			if prev, ok := lastDelta[e.AgentSessionID]; ok && d <= prev {
				t.Errorf("workspace %d: publisher %s's event %d delivered after %d", w, e.AgentSessionID, d, prev)
			}
			lastDelta[e.AgentSessionID] = d
		}
	}
}

func TestFilter(t *testing.T) {
	ctx := t.Context()
	b := New(Options{Logger: logtest.Discard()})
	published := []Event{
		{Kind: SessionCreated, WorkspaceID: "A", AgentSessionID: "s1"}, // A seq 1
		{Kind: SessionCreated, WorkspaceID: "A", AgentSessionID: "s2"}, // A seq 2
		{Kind: SessionCreated, WorkspaceID: "B", AgentSessionID: "s1"}, // B seq 1: same session ID, other workspace
		{Kind: TurnStarted, WorkspaceID: "A", AgentSessionID: "s1"},    // A seq 3
		{Kind: MessageAdded, WorkspaceID: "A", AgentSessionID: "s2"},   // A seq 4
		{Kind: SessionDeleted, WorkspaceID: "A", AgentSessionID: "s1"}, // A seq 5
	}
	tests := []struct {
		name   string
		filter Filter
		want   []int64
	}{
		{"workspace", Filter{WorkspaceID: "A"}, []int64{1, 2, 3, 4, 5}},
		{"session", Filter{WorkspaceID: "A", AgentSessionID: "s1"}, []int64{1, 3, 5}},
		{"other session", Filter{WorkspaceID: "A", AgentSessionID: "s2"}, []int64{2, 4}},
		{"other workspace", Filter{WorkspaceID: "B"}, []int64{1}},
		{"same session ID in other workspace", Filter{WorkspaceID: "B", AgentSessionID: "s1"}, []int64{1}},
		{"unknown session", Filter{WorkspaceID: "A", AgentSessionID: "s3"}, nil},
		{"unknown workspace", Filter{WorkspaceID: "C"}, nil},
	}
	chans := make([]<-chan Event, len(tests))
	for i, tc := range tests {
		chans[i] = subscribe(t, ctx, b, tc.filter)
	}
	for _, e := range published {
		b.Publish(ctx, e)
	}
	b.Close() // closes every channel, so draining shows nothing extra arrived
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := drain(t, chans[i])
			if !slices.Equal(seqs(got), tc.want) {
				t.Fatalf("seqs = %v, want %v", seqs(got), tc.want)
			}
			for _, e := range got {
				if e.WorkspaceID != tc.filter.WorkspaceID || tc.filter.AgentSessionID != "" && e.AgentSessionID != tc.filter.AgentSessionID {
					t.Errorf("event %+v does not match filter", e)
				}
			}
		})
	}
}

func TestSubscribeErrors(t *testing.T) {
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	closed := New(Options{})
	closed.Close()
	closed.Close() // idempotent
	open := New(Options{})
	defer open.Close()

	tests := []struct {
		name string
		b    *Broker
		ctx  context.Context
		f    Filter
		want error
	}{
		{"no workspace", open, t.Context(), Filter{}, ErrNoWorkspace},
		{"cancelled context", open, cancelled, Filter{WorkspaceID: "w"}, context.Canceled},
		{"closed broker", closed, t.Context(), Filter{WorkspaceID: "w"}, ErrClosed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.b.Subscribe(tc.ctx, tc.f); !errors.Is(err, tc.want) {
				t.Fatalf("Subscribe = %v, want %v", err, tc.want)
			}
		})
	}
	if e := closed.Publish(t.Context(), Event{Kind: MessageAdded, WorkspaceID: "w"}); e.Seq != 0 {
		t.Errorf("Publish after Close got seq %d, want 0", e.Seq)
	}
}

// 500 subscribers each receive every event of a 1000-event burst, in order.
func TestManySubscribers(t *testing.T) {
	const subscribers, burst = 500, 1000
	ctx := t.Context()
	// The buffer holds the whole burst: this test is about fan-out
	// completeness; falling behind is TestStalledSubscriber's.
	b := New(Options{Buffer: burst, Logger: logtest.Discard()})
	defer b.Close()

	var wg sync.WaitGroup
	var bad atomic.Int64
	for range subscribers {
		ch := subscribe(t, ctx, b, Filter{WorkspaceID: "w"})
		wg.Go(func() {
			want := int64(1)
			for e := range ch {
				if e.Seq != want {
					bad.Add(1)
					return
				}
				if want++; want > burst {
					return
				}
			}
			bad.Add(1) // closed early
		})
	}
	for i := range burst {
		b.Publish(ctx, Event{Kind: MessageDelta, WorkspaceID: "w", AgentSessionID: strconv.Itoa(i % 7)})
	}
	waitGroup(t, &wg)
	if n := bad.Load(); n != 0 {
		t.Fatalf("%d of %d subscribers missed or misordered events", n, subscribers)
	}
}

// A subscriber that never reads is dropped and told so, without delaying
// the publisher or the other subscribers.
func TestStalledSubscriber(t *testing.T) {
	const buffer, active, total, batch = 64, 20, 1000, 32
	ctx := t.Context()
	logger, log := logtest.New(slog.LevelInfo)
	b := New(Options{Buffer: buffer, Logger: logger})
	defer b.Close()

	// It does not even read its Subscribed event.
	stalled, err := b.Subscribe(ctx, Filter{WorkspaceID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	progress := make([]atomic.Int64, active)
	var wg sync.WaitGroup
	for i := range progress {
		ch := subscribe(t, ctx, b, Filter{WorkspaceID: "w"})
		wg.Go(func() {
			for e := range ch {
				if e.Seq != progress[i].Load()+1 {
					t.Errorf("active subscriber %d: seq %d after %d", i, e.Seq, progress[i].Load())
					return
				}
				progress[i].Store(e.Seq)
				if e.Seq == total {
					return
				}
			}
		})
	}

	var slowest time.Duration
	for seq := int64(1); seq <= total; seq++ {
		start := time.Now()
		b.Publish(ctx, Event{Kind: MessageDelta, WorkspaceID: "w", AgentSessionID: "s"})
		slowest = max(slowest, time.Since(start))
		// Let the active readers catch up every batch (< buffer) so only the
		// stalled one can be dropped, whatever the scheduler does.
		if seq%batch == 0 || seq == total {
			eventually(t, "active subscribers to catch up", func() bool {
				for i := range progress {
					if progress[i].Load() < seq {
						return false
					}
				}
				return true
			})
		}
	}
	waitGroup(t, &wg)
	if slowest > time.Second {
		t.Errorf("slowest Publish took %v", slowest)
	}

	got := drain(t, stalled) // closed by the broker, not by us
	if len(got) == 0 || got[0].Kind != Subscribed || got[0].Seq != 0 {
		t.Fatalf("stalled subscriber's first event %+v, want Subscribed at 0", got)
	}
	got = got[1:]
	if len(got) != buffer+1 {
		t.Fatalf("stalled subscriber got %d events, want %d then Resync", len(got), buffer)
	}
	if !slices.Equal(seqs(got[:buffer]), span(1, buffer)) {
		t.Errorf("stalled subscriber seqs %v, want 1..%d", seqs(got[:buffer]), buffer)
	}
	last := got[buffer]
	var rerr *ResyncError
	if last.Kind != Resync || last.Seq != buffer || !errors.As(last.Err(), &rerr) || !errors.Is(last.Err(), ErrResyncRequired) {
		t.Fatalf("last event = %+v (err %v), want Resync after seq %d", last, last.Err(), buffer)
	}
	if rerr.Reason != ReasonDropped || rerr.AfterSeq != buffer || rerr.WorkspaceID != "w" || !strings.Contains(rerr.Error(), "dropped") {
		t.Errorf("ResyncError = %+v", rerr)
	}
	if !strings.Contains(log.String(), "dropped slow subscriber") {
		t.Errorf("drop not logged: %q", log)
	}
	for _, e := range got[:buffer] {
		if e.Err() != nil {
			t.Errorf("ordinary event seq %d has Err %v", e.Seq, e.Err())
		}
	}

	// Resuming from the Resync event's seq replays exactly what was missed.
	resumed := subscribe(t, ctx, b, Filter{WorkspaceID: "w", AfterSeq: &last.Seq})
	if got := recv(t, resumed, total-buffer); !slices.Equal(seqs(got), span(buffer+1, total)) {
		t.Errorf("resumed after drop: seqs %v..., want %d..%d", head(seqs(got)), buffer+1, total)
	}
}

// Cancelling subscriptions closes their channels and leaves no goroutine:
// the broker starts none per subscriber, and the cancellation callbacks end.
func TestCancelLeavesNoGoroutines(t *testing.T) {
	const subscribers = 200
	before := runtime.NumGoroutine()
	b := New(Options{Buffer: 8, Logger: logtest.Discard()})

	var wg sync.WaitGroup
	cancels := make([]context.CancelFunc, subscribers)
	for i := range cancels {
		ctx, cancel := context.WithCancel(t.Context())
		cancels[i] = cancel
		f := Filter{WorkspaceID: "w"}
		if i%2 == 1 {
			f.AgentSessionID = "s"
		}
		ch := subscribe(t, ctx, b, f)
		wg.Go(func() {
			for range ch { // ends when the broker closes ch
			}
		})
	}
	// Only the readers above exist; the broker added none.
	if n := runtime.NumGoroutine(); n > before+subscribers {
		t.Errorf("%d goroutines with %d subscribers, started from %d", n, subscribers, before)
	}
	for range 50 {
		b.Publish(t.Context(), Event{Kind: MessageDelta, WorkspaceID: "w", AgentSessionID: "s"})
	}
	for _, cancel := range cancels {
		cancel()
	}
	waitGroup(t, &wg)
	eventually(t, "goroutines to exit", func() bool { return runtime.NumGoroutine() <= before })

	// Everything was unregistered: publishing still works and reaches nobody.
	b.mu.RLock()
	tp := b.topics["w"]
	b.mu.RUnlock()
	tp.mu.Lock()
	left := len(tp.all) + len(tp.bySession)
	tp.mu.Unlock()
	if left != 0 {
		t.Errorf("%d subscribers still registered", left)
	}
	b.Close()
}

// Subscriptions to workspaces that never had an event leave nothing behind.
func TestUnusedTopicIsForgotten(t *testing.T) {
	b := New(Options{Logger: logtest.Discard()})
	defer b.Close()
	ctx, cancel := context.WithCancel(t.Context())
	ch := subscribe(t, ctx, b, Filter{WorkspaceID: "ghost"})
	after := int64(7)
	if _, err := b.Subscribe(t.Context(), Filter{WorkspaceID: "ghost2", AfterSeq: &after}); !errors.Is(err, ErrResyncRequired) {
		t.Fatalf("Subscribe after unknown seq = %v", err)
	}
	cancel()
	drain(t, ch)
	eventually(t, "topics to be forgotten", func() bool {
		b.mu.RLock()
		defer b.mu.RUnlock()
		return len(b.topics) == 0
	})
	// A forgotten topic is recreated transparently.
	ch = subscribe(t, t.Context(), b, Filter{WorkspaceID: "ghost"})
	b.Publish(t.Context(), Event{Kind: SessionCreated, WorkspaceID: "ghost", AgentSessionID: "s"})
	if got := recv(t, ch, 1); got[0].Seq != 1 {
		t.Fatalf("got seq %d, want 1", got[0].Seq)
	}
}

// Reaping empty topics races with Publish and Subscribe on the same
// workspace: no event may land in a forgotten topic.
func TestReapRacesPublish(t *testing.T) {
	const rounds = 200
	b := New(Options{Logger: logtest.Discard()})
	defer b.Close()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range rounds {
				ctx, cancel := context.WithCancel(t.Context())
				if _, err := b.Subscribe(ctx, Filter{WorkspaceID: "w", AgentSessionID: "s"}); err != nil {
					t.Error(err)
				}
				cancel()
			}
		})
	}
	for range rounds / 10 {
		b.Publish(t.Context(), Event{Kind: MessageAdded, WorkspaceID: "w", AgentSessionID: "s"})
	}
	wg.Wait()
	from := int64(0)
	ch := subscribe(t, t.Context(), b, Filter{WorkspaceID: "w", AfterSeq: &from})
	if got := recv(t, ch, rounds/10); !slices.Equal(seqs(got), span(1, rounds/10)) {
		t.Fatalf("replayed %v, want 1..%d", seqs(got), rounds/10)
	}
}

func TestCloseEndsSubscriptions(t *testing.T) {
	b := New(Options{Logger: logtest.Discard()})
	a := subscribe(t, t.Context(), b, Filter{WorkspaceID: "w"})
	s := subscribe(t, t.Context(), b, Filter{WorkspaceID: "w", AgentSessionID: "s"})
	b.Publish(t.Context(), Event{Kind: SessionCreated, WorkspaceID: "w", AgentSessionID: "s"})
	b.Close()
	for _, ch := range []<-chan Event{a, s} {
		if got := drain(t, ch); len(got) != 1 {
			t.Errorf("got %d events before close, want 1", len(got))
		}
	}
}

func waitGroup(t testing.TB, wg *sync.WaitGroup) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(wait):
		t.Fatal("timed out waiting for subscribers")
	}
}
