package activity

import (
	"context"
	"time"
)

// Filter selects the events of a subscription.
type Filter struct {
	WorkspaceID string // required
	// AgentSessionID, if set, keeps only the events whose AgentSessionID
	// equals it.
	AgentSessionID string
	// AfterSeq, if set, is the last sequence the client saw: the retained
	// events after it are delivered first, then live ones, with no gap and
	// no duplicate. Nil means live events only.
	AfterSeq *int64
}

// Subscribe returns a channel of the events matching f: first a Subscribed
// event (the subscription is registered: nothing published from then on is
// missed), then those after f.AfterSeq if set, then live ones. The channel
// is closed when ctx is done, after a Resync event when the subscriber fell
// more than Options.Buffer events behind, or on Close.
//
// Errors: ErrNoWorkspace, ErrClosed, ctx.Err(), or a *ResyncError when
// f.AfterSeq cannot be resumed from the window.
func (b *Broker) Subscribe(ctx context.Context, f Filter) (<-chan Event, error) {
	if f.WorkspaceID == "" {
		return nil, ErrNoWorkspace
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for {
		t := b.lookup(f.WorkspaceID)
		if t == nil {
			return nil, ErrClosed
		}
		t.mu.Lock()
		if t.dead {
			t.mu.Unlock()
			continue
		}
		ch, err := b.subscribe(ctx, t, f)
		t.mu.Unlock()
		return ch, err
	}
}

// subscribe runs under t.mu: snapshotting the window and registering in the
// same critical section is what makes replay + live gapless and duplicate
// free.
func (b *Broker) subscribe(ctx context.Context, t *topic, f Filter) (<-chan Event, error) {
	if t.closed {
		return nil, ErrClosed
	}
	var replay []Event
	if f.AfterSeq != nil {
		var err error
		if replay, err = t.replay(*f.AfterSeq, f.AgentSessionID); err != nil {
			b.reap(t)
			return nil, err
		}
	}
	// Subscribed continues after the latest seq, or after the client's own
	// (then the replay), so that seqs never go back within a subscription.
	after := t.last
	if f.AfterSeq != nil {
		after = *f.AfterSeq
	}
	// Subscribed and the replay get room of their own so a long catch-up is
	// not a drop.
	s := &subscriber{session: f.AgentSessionID, ch: make(chan Event, 1+len(replay)+b.buffer+1)}
	s.ch <- Event{Seq: after, Kind: Subscribed, WorkspaceID: t.id, AgentSessionID: f.AgentSessionID, At: time.Now()}
	for _, e := range replay {
		s.ch <- e
	}
	t.add(s)
	// No goroutine per subscriber: the cleanup runs only once ctx is done.
	s.stop = context.AfterFunc(ctx, func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.remove(s)
		b.reap(t)
	})
	return s.ch, nil
}
