package activity

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"tuttid/logtest"
)

func TestResume(t *testing.T) {
	const window = 16
	ptr := func(n int64) *int64 { return &n }

	tests := []struct {
		name      string
		published int64 // events, alternating sessions "even"/"odd" by seq
		window    int
		f         Filter
		want      []int64 // replayed seqs, if no error
		reason    Reason  // expected resync reason, if any
	}{
		{"within window", 20, window, Filter{AfterSeq: ptr(10)}, span(11, 20), ""},
		{"oldest retained", 20, window, Filter{AfterSeq: ptr(4)}, span(5, 20), ""},
		{"up to date", 20, window, Filter{AfterSeq: ptr(20)}, nil, ""},
		{"from start, nothing evicted", 10, window, Filter{AfterSeq: ptr(0)}, span(1, 10), ""},
		{"nothing published yet", 0, window, Filter{AfterSeq: ptr(0)}, nil, ""},
		{"session filter", 20, window, Filter{AgentSessionID: "odd", AfterSeq: ptr(10)}, []int64{11, 13, 15, 17, 19}, ""},
		{"just evicted", 20, window, Filter{AfterSeq: ptr(3)}, nil, ReasonTooOld},
		{"from start, evicted", 20, window, Filter{AfterSeq: ptr(0)}, nil, ReasonTooOld},
		{"future (server restarted)", 20, window, Filter{AfterSeq: ptr(21)}, nil, ReasonUnknownSeq},
		{"before any event", 0, window, Filter{AfterSeq: ptr(1)}, nil, ReasonUnknownSeq},
		{"negative", 20, window, Filter{AfterSeq: ptr(-1)}, nil, ReasonUnknownSeq},
		{"no window, up to date", 20, -1, Filter{AfterSeq: ptr(20)}, nil, ""},
		{"no window, behind", 20, -1, Filter{AfterSeq: ptr(19)}, nil, ReasonTooOld},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			b := New(Options{Window: tc.window, Logger: logtest.Discard()})
			defer b.Close()
			for seq := int64(1); seq <= tc.published; seq++ {
				b.Publish(ctx, Event{Kind: MessageAdded, WorkspaceID: "w", AgentSessionID: parity(seq)})
			}
			tc.f.WorkspaceID = "w"
			ch, err := b.Subscribe(ctx, tc.f)
			if tc.reason != "" {
				var rerr *ResyncError
				if !errors.As(err, &rerr) || !errors.Is(err, ErrResyncRequired) || rerr.Reason != tc.reason {
					t.Fatalf("Subscribe = %v, want ResyncError %s", err, tc.reason)
				}
				if rerr.AfterSeq != *tc.f.AfterSeq || rerr.Latest != tc.published || rerr.Error() == "" {
					t.Errorf("ResyncError = %+v", rerr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Subscribe: %v", err)
			}
			if err := checkSubscribed(recv(t, ch, 1)[0], tc.f); err != nil {
				t.Fatal(err)
			}
			// Live events follow the replay directly.
			live := b.Publish(ctx, Event{Kind: MessageAdded, WorkspaceID: "w", AgentSessionID: parity(tc.published + 1)})
			want := tc.want
			if tc.f.AgentSessionID == "" || tc.f.AgentSessionID == live.AgentSessionID {
				want = append(want, live.Seq)
			}
			if got := recv(t, ch, len(want)); !slices.Equal(seqs(got), want) {
				t.Fatalf("seqs = %v, want %v", seqs(got), want)
			}
		})
	}
}

// Subscribers resuming from a seq they saw while publishers keep going get
// exactly every later event: no gap, no duplicate at the replay/live seam.
func TestResumeUnderConcurrentPublish(t *testing.T) {
	const publishers, perPublisher, resumers = 4, 500, 40
	const total = publishers * perPublisher
	ctx := t.Context()
	// Window and buffer hold everything so only the seam is under test.
	b := New(Options{Buffer: total, Window: total, Logger: logtest.Discard()})
	defer b.Close()

	reference := subscribe(t, ctx, b, Filter{WorkspaceID: "w"})
	var latest atomic.Int64
	var pub sync.WaitGroup
	for range publishers {
		pub.Go(func() {
			for range perPublisher {
				e := b.Publish(ctx, Event{Kind: MessageDelta, WorkspaceID: "w"})
				storeMax(&latest, e.Seq)
			}
		})
	}

	type result struct {
		f   Filter
		got []Event
		err error
	}
	results := make([]result, resumers)
	var res sync.WaitGroup
	for i := range results {
		res.Go(func() {
			after := max(latest.Load()-int64(i%7), 0)
			f := Filter{WorkspaceID: "w", AfterSeq: &after}
			results[i].f = f
			ch, err := b.Subscribe(ctx, f)
			if err != nil {
				results[i].err = err
				return
			}
			if err := checkSubscribed(<-ch, f); err != nil {
				results[i].err = err
				return
			}
			if after == total { // subscribed after the last publish: nothing due
				return
			}
			for e := range ch {
				results[i].got = append(results[i].got, e)
				if e.Seq == total {
					return
				}
			}
		})
	}
	pub.Wait()
	waitGroup(t, &res)

	all := recv(t, reference, total)
	if !slices.Equal(seqs(all), span(1, total)) {
		t.Fatal("reference subscriber did not get 1..total")
	}
	for i, r := range results {
		if r.err != nil {
			t.Errorf("resumer %d: %v", i, r.err)
			continue
		}
		if want := span(*r.f.AfterSeq+1, total); !slices.Equal(seqs(r.got), want) {
			t.Errorf("resumer %d after %d: got %d events %v..., want %d from %d", i, *r.f.AfterSeq, len(r.got), head(seqs(r.got)), len(want), *r.f.AfterSeq+1)
		}
	}
}

// Same seam with a session filter: the resumed stream equals the reference
// stream's events of that session after the resume point.
func TestResumeSessionUnderConcurrentPublish(t *testing.T) {
	const total = 2000
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	b := New(Options{Buffer: total, Window: total, Logger: logtest.Discard()})
	defer b.Close()
	reference := subscribe(t, ctx, b, Filter{WorkspaceID: "w", AgentSessionID: "odd"})

	var latest atomic.Int64
	var pub sync.WaitGroup
	for p := range 2 {
		pub.Go(func() {
			for i := range total / 2 {
				e := b.Publish(ctx, Event{Kind: MessageDelta, WorkspaceID: "w", AgentSessionID: parity(int64(p + i))})
				storeMax(&latest, e.Seq)
			}
		})
	}
	eventually(t, "publishing to be under way", func() bool { return latest.Load() >= total/4 })
	after := latest.Load()
	ch := subscribe(t, ctx, b, Filter{WorkspaceID: "w", AgentSessionID: "odd", AfterSeq: &after})
	pub.Wait()
	cancel() // ends both subscriptions once everything is queued
	ref, got := drain(t, reference), drain(t, ch)

	var want []int64
	for _, e := range ref {
		if e.Seq > after {
			want = append(want, e.Seq)
		}
	}
	if !slices.Equal(seqs(got), want) {
		t.Fatalf("resumed after %d: got %d events, want %d", after, len(got), len(want))
	}
}

func parity(seq int64) string {
	if seq%2 == 0 {
		return "even"
	}
	return "odd"
}

// storeMax records the highest seq published so far: what a client could
// have seen.
func storeMax(v *atomic.Int64, seq int64) {
	for old := v.Load(); seq > old && !v.CompareAndSwap(old, seq); old = v.Load() {
	}
}

func head(s []int64) []int64 { return s[:min(len(s), 5)] }
