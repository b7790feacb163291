package activity

import "context"

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

// Subscribe returns a channel of the events matching f: first those after
// f.AfterSeq if set, then live ones. The channel is closed when ctx is done,
// after a Resync event when the subscriber fell more than Options.Buffer
// events behind, or on Close.
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
	// The replay gets room of its own so a long catch-up is not a drop.
	s := &subscriber{session: f.AgentSessionID, ch: make(chan Event, len(replay)+b.buffer+1)}
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
