package activity

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Defaults for the zero Options.
const (
	DefaultBuffer      = 256
	DefaultWindow      = 1024
	DefaultWindowBytes = 32 << 20
)

// Options configures a Broker; the zero value is usable.
type Options struct {
	// Buffer is how many live events a subscriber may lag behind before it
	// is dropped (0 = DefaultBuffer).
	Buffer int
	// Window is how many recent events per workspace are kept for resuming
	// (0 = DefaultWindow, negative = none: only AfterSeq = latest resumes).
	Window int
	// WindowBytes bounds the payload the window holds per workspace, as
	// counted by payloadBytes (0 = DefaultWindowBytes): without it a
	// workspace whose messages are megabytes each (long replies, big tool
	// output) would keep Window of them alive. The newest event is kept
	// whatever its size.
	WindowBytes int
	// Logger receives the drops of slow subscribers (nil = slog.Default()).
	Logger *slog.Logger
	// FirstSeq is the first sequence number of every workspace (0 = 1).
	// Servers pass an epoch (see EpochSeq) so that a client resuming with a
	// number from before a restart is told to resync instead of silently
	// missing the events it never saw.
	FirstSeq int64
}

// EpochSeq is a FirstSeq that grows with wall time: 1024 numbers per
// millisecond, far above any real event rate, and below 2^53 (the largest
// integer a JavaScript client reads exactly) until the year 2248.
func EpochSeq(now time.Time) int64 { return now.UnixMilli() << 10 }

// Broker fans out published events to the subscribers of their workspace.
// Publish never blocks on subscribers and is safe from many goroutines;
// each subscriber receives its workspace's events in sequence order.
//
// A subscription resolver calls Subscribe with the request's context and
// returns its error as is (a *ResyncError explains itself), then ranges over
// the channel (whose first event is a Subscribed one), forwarding each event until the channel is closed, stopping
// early on ctx.Done(); a Resync event (the last one before a drop) reaches
// the client as kind RESYNC_REQUIRED, with the seq to resume after.
type Broker struct {
	buffer, window int
	windowBytes    int
	base           int64 // FirstSeq - 1
	log            *slog.Logger

	mu     sync.RWMutex
	topics map[string]*topic // by workspace ID
	closed bool
}

// New returns a ready Broker.
func New(opts Options) *Broker {
	b := &Broker{buffer: opts.Buffer, window: opts.Window, windowBytes: opts.WindowBytes, log: opts.Logger, topics: map[string]*topic{}}
	if b.buffer <= 0 {
		b.buffer = DefaultBuffer
	}
	if b.window == 0 {
		b.window = DefaultWindow
	}
	if b.windowBytes <= 0 {
		b.windowBytes = DefaultWindowBytes
	}
	if b.log == nil {
		b.log = slog.Default()
	}
	if opts.FirstSeq > 0 {
		b.base = opts.FirstSeq - 1
	}
	return b
}

// Publish assigns the next sequence number of e's workspace and the time,
// keeps e in the replay window and hands it to the matching subscribers
// without waiting for them; it returns the event as stored. Call it after
// the store committed the change, and do not modify e afterwards. ctx only
// carries log attributes: Publish does not block.
//
// An empty WorkspaceID (or AgentSessionID) is taken from e.Session. An event
// still without workspace, of a reserved Kind (Resync, Subscribed), or
// published after Close is logged and dropped (the first two logged), and
// returned with Seq 0.
func (b *Broker) Publish(ctx context.Context, e Event) Event {
	if e.Session != nil {
		if e.WorkspaceID == "" {
			e.WorkspaceID = e.Session.WorkspaceID
		}
		if e.AgentSessionID == "" {
			e.AgentSessionID = e.Session.ID
		}
	}
	e.Seq, e.err = 0, nil
	if e.WorkspaceID == "" || e.Kind == Resync || e.Kind == Subscribed {
		b.log.ErrorContext(ctx, "activity: event not published: no workspace ID or reserved kind", "kind", e.Kind, "session", e.AgentSessionID)
		return e
	}
	for {
		t := b.lookup(e.WorkspaceID)
		if t == nil {
			return e // closed
		}
		t.mu.Lock()
		if t.dead {
			t.mu.Unlock()
			continue
		}
		if t.closed {
			t.mu.Unlock()
			return e
		}
		t.last++
		e.Seq = t.last
		e.At = time.Now() // under the lock so At is ordered like Seq
		t.store(e)
		dropped := t.fanout(e)
		t.mu.Unlock()
		b.logDropped(ctx, e, dropped)
		return e
	}
}

// fanout hands e (already stored as t.last) to the matching subscribers and
// removes those that fell behind, returning them. Runs under t.mu.
func (t *topic) fanout(e Event) []*subscriber {
	var dropped []*subscriber
	dropped = t.deliver(t.all, e, dropped)
	if e.AgentSessionID != "" {
		dropped = t.deliver(t.bySession[e.AgentSessionID], e, dropped)
	} else {
		// A workspace-wide event (ACCOUNT_UPDATED) reaches every subscription.
		for _, subs := range t.bySession {
			dropped = t.deliver(subs, e, dropped)
		}
	}
	for _, s := range dropped {
		t.remove(s)
	}
	return dropped
}

// logDropped logs outside the topic's lock: a slow log sink must not stall
// the workspace.
func (b *Broker) logDropped(ctx context.Context, e Event, dropped []*subscriber) {
	for _, s := range dropped {
		b.log.WarnContext(ctx, "activity: dropped slow subscriber",
			"workspace", e.WorkspaceID, "session", s.session, "seq", e.Seq, "buffer", b.buffer)
	}
}

// Close closes every subscription channel; later Subscribe calls fail with
// ErrClosed and later Publish calls are ignored. It is idempotent.
func (b *Broker) Close() {
	b.mu.Lock()
	topics := b.topics
	b.topics, b.closed = nil, true
	b.mu.Unlock()

	for _, t := range topics {
		t.mu.Lock()
		t.closed = true
		t.removeAll()
		t.mu.Unlock()
	}
}

// lookup returns the topic of a workspace, creating it; nil after Close.
func (b *Broker) lookup(ws string) *topic {
	b.mu.RLock()
	t, closed := b.topics[ws], b.closed
	b.mu.RUnlock()
	if t != nil || closed {
		return t
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	if t = b.topics[ws]; t == nil {
		t = &topic{id: ws, window: b.window, maxBytes: b.windowBytes, base: b.base, last: b.base, floor: b.base, bySession: map[string][]*subscriber{}}
		b.topics[ws] = t
	}
	return t
}

// reap forgets a topic that never had an event and has no subscriber, so
// subscriptions to arbitrary IDs leave nothing behind. Topics with events
// are kept: their sequence must keep increasing. Runs under t.mu (lock
// order: topic, then broker).
func (b *Broker) reap(t *topic) {
	if t.last != t.base || t.started || len(t.all) != 0 || len(t.bySession) != 0 || t.dead || t.closed {
		return
	}
	t.dead = true
	b.mu.Lock()
	if b.topics[t.id] == t {
		delete(b.topics, t.id)
	}
	b.mu.Unlock()
}
