package activity

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"tuttid/ent"
	"tuttid/logtest"
)

// The replay window keeps at most WindowBytes of payload: big messages push
// out the oldest events (whose payload is then released), the newest stays
// whatever its size, and resuming from an evicted seq asks for a resync.
func TestWindowBytes(t *testing.T) {
	big := func(n int) *ent.Message { return &ent.Message{Text: strings.Repeat("x", n), Content: []byte(`{}`)} }
	tests := []struct {
		name    string
		publish []Event // in order, seq 1..n
		after   int64
		want    []int64 // replayed seqs, nil with reason
		reason  Reason
	}{
		{
			name: "small events all kept",
			publish: []Event{
				{Kind: MessageDelta, Delta: "ab"}, {Kind: MessageDelta, Delta: "cd"}, {Kind: MessageAdded, Message: big(10)},
			},
			after: 0, want: []int64{1, 2, 3},
		},
		{
			name: "big messages push the oldest out",
			publish: []Event{
				{Kind: MessageAdded, Message: big(400)}, {Kind: MessageUpdated, Message: big(400)},
				{Kind: MessageUpdated, Message: big(400)},
			},
			after: 1, want: []int64{2, 3},
		},
		{
			name: "evicted for its bytes: resync",
			publish: []Event{
				{Kind: MessageAdded, Message: big(400)}, {Kind: MessageUpdated, Message: big(400)},
				{Kind: MessageUpdated, Message: big(400)},
			},
			after: 0, reason: ReasonTooOld,
		},
		{
			name: "one event over the bound is kept",
			publish: []Event{
				{Kind: MessageDelta, Delta: "a"}, {Kind: MessageUpdated, Message: big(5000)},
			},
			after: 1, want: []int64{2},
		},
		{
			name:    "the count bound still applies (wrap) with bytes to spare",
			publish: slices.Repeat([]Event{{Kind: MessageDelta, Delta: "a"}}, 6),
			after:   2, want: []int64{3, 4, 5, 6},
		},
		{
			name: "wrap after a byte eviction",
			publish: []Event{
				{Kind: MessageAdded, Message: big(900)}, {Kind: MessageUpdated, Message: big(900)},
				{Kind: MessageDelta, Delta: "a"}, {Kind: MessageDelta, Delta: "b"},
				{Kind: MessageDelta, Delta: "c"}, {Kind: MessageDelta, Delta: "d"},
			},
			after: 2, want: []int64{3, 4, 5, 6},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			b := New(Options{Window: 4, WindowBytes: 1000, Logger: logtest.Discard()})
			defer b.Close()
			for _, e := range tc.publish {
				e.WorkspaceID = "w"
				b.Publish(ctx, e)
			}
			tp := b.lookup("w")
			tp.mu.Lock()
			var held int
			for _, e := range tp.ring {
				held += payloadBytes(e)
			}
			if held != tp.bytes {
				t.Errorf("ring holds %d payload bytes, counted %d", held, tp.bytes)
			}
			if tp.bytes > 1000 && tp.oldest() != tp.last {
				t.Errorf("%d bytes held with %d events", tp.bytes, tp.last-tp.oldest()+1)
			}
			tp.mu.Unlock()

			ch, err := b.Subscribe(ctx, Filter{WorkspaceID: "w", AfterSeq: &tc.after})
			if tc.reason != "" {
				var rerr *ResyncError
				if !errors.As(err, &rerr) || rerr.Reason != tc.reason {
					t.Fatalf("Subscribe = %v, want ResyncError %s", err, tc.reason)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := recv(t, ch, 1+len(tc.want))[1:]
			if !slices.Equal(seqs(got), tc.want) {
				t.Fatalf("replayed %v, want %v", seqs(got), tc.want)
			}
		})
	}
}
