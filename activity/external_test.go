package activity

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

func delivered(seq int64) Event {
	return Event{Seq: seq, Kind: MessageDelta, WorkspaceID: "w", AgentSessionID: "s", At: time.Now()}
}

func TestDeliverNumberedElsewhere(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	b := New(Options{Window: 4})
	if _, ok := b.Latest("w"); ok {
		t.Fatal("a workspace never started is started")
	}
	if !b.Start("w", 100) || b.Start("w", 7) {
		t.Fatal("Start: want true the first time only")
	}
	if seq, ok := b.Latest("w"); !ok || seq != 100 {
		t.Fatalf("Latest = %d, %v; want 100, true", seq, ok)
	}
	ch := subscribe(t, ctx, b, Filter{WorkspaceID: "w"})
	for _, tc := range []struct {
		seq  int64
		want bool
	}{{101, true}, {102, true}, {102, false}, {101, false}, {103, true}} {
		if got := b.Deliver(ctx, delivered(tc.seq)); got != tc.want {
			t.Errorf("Deliver(%d) = %v, want %v", tc.seq, got, tc.want)
		}
	}
	if got := seqs(recv(t, ch, 3)); !slices.Equal(got, span(101, 103)) {
		t.Errorf("received %v, want 101..103", got)
	}
	// Resuming works on delivered numbers as on published ones.
	after := int64(101)
	resumed := subscribe(t, ctx, b, Filter{WorkspaceID: "w", AfterSeq: &after})
	if got := seqs(recv(t, resumed, 2)); !slices.Equal(got, span(102, 103)) {
		t.Errorf("resumed %v, want 102..103", got)
	}
}

func TestDeliverAfterGapEndsSubscriptions(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	b := New(Options{})
	b.Start("w", 10)
	ch := subscribe(t, ctx, b, Filter{WorkspaceID: "w"})
	b.Deliver(ctx, delivered(11))
	b.Deliver(ctx, delivered(15)) // 12..14 never reached this broker
	got := drain(t, ch)
	if len(got) != 2 || got[0].Seq != 11 || got[1].Kind != Resync || got[1].Seq != 11 {
		t.Fatalf("received %+v, want 11 then a Resync after 11", got)
	}
	var re *ResyncError
	if !errors.As(got[1].Err(), &re) || re.Reason != ReasonMissed || !errors.Is(re, ErrResyncRequired) {
		t.Fatalf("Resync error %v, want ReasonMissed", got[1].Err())
	}
	// The window restarts at the event after the gap.
	if seq, _ := b.Latest("w"); seq != 15 {
		t.Errorf("Latest = %d, want 15", seq)
	}
	after := int64(11)
	if _, err := b.Subscribe(ctx, Filter{WorkspaceID: "w", AfterSeq: &after}); !errors.Is(err, ErrResyncRequired) {
		t.Errorf("resume after 11: %v, want resync required", err)
	}
	after = 14
	live := subscribe(t, ctx, b, Filter{WorkspaceID: "w", AfterSeq: &after})
	if e := recv(t, live, 1)[0]; e.Seq != 15 {
		t.Errorf("resume after 14 got %d, want 15", e.Seq)
	}
}

func TestStartedWorkspaceOutlivesItsSubscribers(t *testing.T) {
	t.Parallel()
	b := New(Options{})
	b.Start("w", 41)
	ctx, cancel := context.WithCancel(t.Context())
	subscribe(t, ctx, b, Filter{WorkspaceID: "w"})
	cancel()
	eventually(t, "the subscriber to leave", func() bool {
		b.mu.RLock()
		defer b.mu.RUnlock()
		tp := b.topics["w"]
		tp.mu.Lock()
		defer tp.mu.Unlock()
		return len(tp.all) == 0
	})
	if seq, ok := b.Latest("w"); !ok || seq != 41 {
		t.Errorf("Latest = %d, %v after the last subscriber left; want 41, true (not reaped)", seq, ok)
	}
}
