package activity

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestFirstSeqEpoch: numbering starts at FirstSeq, resuming inside the
// window works from there, and a number from an earlier process (below
// the epoch) is told to resync rather than being taken as current.
func TestFirstSeqEpoch(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := EpochSeq(time.Unix(1_800_000_000, 0))
	b := New(Options{FirstSeq: first, Window: 4})
	defer b.Close()
	var seqs []int64
	for i := 0; i < 6; i++ {
		seqs = append(seqs, b.Publish(ctx, Event{Kind: SessionUpdated, WorkspaceID: "w", AgentSessionID: "s"}).Seq)
	}
	if seqs[0] != first || seqs[5] != first+5 {
		t.Fatalf("seqs = %v, want %d..%d", seqs, first, first+5)
	}
	after := seqs[3]
	ch, err := b.Subscribe(ctx, Filter{WorkspaceID: "w", AfterSeq: &after})
	if err != nil {
		t.Fatal(err)
	}
	if e := <-ch; e.Kind != Subscribed || e.Seq != after {
		t.Fatalf("first event %+v, want Subscribed after %d", e, after)
	}
	for _, want := range seqs[4:] {
		if e := <-ch; e.Seq != want {
			t.Fatalf("replayed seq %d, want %d", e.Seq, want)
		}
	}
	for _, old := range []int64{0, 5, first - 2} {
		if _, err := b.Subscribe(ctx, Filter{WorkspaceID: "w", AfterSeq: &old}); !errors.Is(err, ErrResyncRequired) {
			t.Errorf("AfterSeq %d from before the epoch: err = %v, want resync", old, err)
		}
	}
	if got := EpochSeq(time.Date(2248, 1, 1, 0, 0, 0, 0, time.UTC)); got >= 1<<53 {
		t.Errorf("EpochSeq in 2248 = %d, not below 2^53", got)
	}
}
