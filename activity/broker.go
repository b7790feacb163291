package activity

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Defaults for the zero Options.
const (
	DefaultBuffer = 256
	DefaultWindow = 1024
)

// Options configures a Broker; the zero value is usable.
type Options struct {
	// Buffer is how many live events a subscriber may lag behind before it
	// is dropped (0 = DefaultBuffer).
	Buffer int
	// Window is how many recent events per workspace are kept for resuming
	// (0 = DefaultWindow, negative = none: only AfterSeq = latest resumes).
	Window int
	// Logger receives the drops of slow subscribers (nil = slog.Default()).
	Logger *slog.Logger
}

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

// Broker fans out published events to the subscribers of their workspace.
// Publish never blocks on subscribers and is safe from many goroutines;
// each subscriber receives its workspace's events in sequence order.
//
// A subscription resolver calls Subscribe with the request context, returns
// a *ResyncError (errors.Is ErrResyncRequired) to the client as is, then
// ranges over the channel forwarding events until it is closed or ctx is
// done; a Resync event (last before close) is reported to the client as
// its Err(). Cancelling ctx closes the channel and frees everything.
type Broker struct {
	buffer, window int
	log            *slog.Logger

	mu     sync.RWMutex
	topics map[string]*topic // by workspace ID
	closed bool
}

type topic struct {
	id     string
	window int

	mu        sync.Mutex
	last      int64   // seq of the latest published event; 0 = none yet
	ring      []Event // replay window, see store
	all       []*subscriber
	bySession map[string][]*subscriber
	closed    bool // Broker.Close ran
	dead      bool // removed from Broker.topics (was empty); look up again
}

type subscriber struct {
	session string
	ch      chan Event // cap = replayed + buffer + 1 reserved for the Resync event
	idx     int        // position in topic.all or topic.bySession[session]
	stop    func() bool
}

// New returns a running Broker.
func New(opts Options) *Broker {
	b := &Broker{buffer: opts.Buffer, window: opts.Window, log: opts.Logger, topics: map[string]*topic{}}
	if b.buffer <= 0 {
		b.buffer = DefaultBuffer
	}
	if b.window == 0 {
		b.window = DefaultWindow
	}
	if b.log == nil {
		b.log = slog.Default()
	}
	return b
}

// Publish assigns the next sequence number of e's workspace and the time,
// keeps e in the replay window and hands it to the matching subscribers
// without waiting for them; it returns the event as stored. Call it after
// the store committed the change; e must not be modified afterwards.
//
// If WorkspaceID (or AgentSessionID) is empty it is taken from e.Session.
// An event without workspace, or published after Close, is not delivered
// and is returned with Seq 0.
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
	if e.WorkspaceID == "" || e.Kind == Resync {
		b.log.ErrorContext(ctx, "activity: event not published", "kind", e.Kind, "reason", "no workspace ID or reserved kind")
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
		var dropped []*subscriber
		dropped = t.deliver(t.all, e, dropped)
		if e.AgentSessionID != "" {
			dropped = t.deliver(t.bySession[e.AgentSessionID], e, dropped)
		}
		for _, s := range dropped {
			t.remove(s)
		}
		t.mu.Unlock()

		// Log outside the lock: a slow log sink must not stall the workspace.
		for _, s := range dropped {
			b.log.WarnContext(ctx, "activity: dropped slow subscriber",
				"workspace", e.WorkspaceID, "session", s.session, "seq", e.Seq, "buffer", b.buffer)
		}
		return e
	}
}

// deliver sends e to each of subs without blocking. A subscriber whose
// buffer is full gets the Resync event in its reserved slot instead and is
// appended to dropped, for removal once the iteration is over.
func (t *topic) deliver(subs []*subscriber, e Event, dropped []*subscriber) []*subscriber {
	for _, s := range subs {
		// Only this goroutine sends (under t.mu) and readers only shrink the
		// queue, so a free slot seen here is still free at the send.
		if len(s.ch) < cap(s.ch)-1 {
			s.ch <- e
			continue
		}
		select { // cannot block: the reserved slot is still free
		case s.ch <- Event{
			Seq: e.Seq, Kind: Resync, WorkspaceID: t.id, AgentSessionID: s.session, At: e.At,
			err: &ResyncError{Reason: ReasonDropped, WorkspaceID: t.id, AfterSeq: e.Seq - 1, Oldest: t.oldest(), Latest: t.last},
		}:
		default:
		}
		dropped = append(dropped, s)
	}
	return dropped
}

// Subscribe returns a channel of the events matching f, first those after
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
			t.reap(b)
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
		t.reap(b)
	})
	return s.ch, nil
}

// Close closes every subscription channel; later Subscribe calls fail with
// ErrClosed and later Publish calls are ignored. It is idempotent.
func (b *Broker) Close() {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.closed = true
	topics := b.topics
	b.topics = nil
	b.mu.Unlock()

	for _, t := range topics {
		t.mu.Lock()
		t.closed = true
		for _, s := range append([]*subscriber(nil), t.all...) {
			t.remove(s)
		}
		for _, subs := range t.bySession {
			for _, s := range append([]*subscriber(nil), subs...) {
				t.remove(s)
			}
		}
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
		t = &topic{id: ws, window: b.window, bySession: map[string][]*subscriber{}}
		b.topics[ws] = t
	}
	return t
}

// reap forgets a topic that never had an event and has no subscriber, so
// subscriptions to arbitrary IDs leave nothing behind. Topics with events
// are kept: their sequence must keep increasing. Runs under t.mu (lock
// order: topic, then broker).
func (t *topic) reap(b *Broker) {
	if t.last != 0 || len(t.all) != 0 || len(t.bySession) != 0 || t.dead || t.closed {
		return
	}
	t.dead = true
	b.mu.Lock()
	if b.topics[t.id] == t {
		delete(b.topics, t.id)
	}
	b.mu.Unlock()
}

func (t *topic) add(s *subscriber) {
	if s.session == "" {
		s.idx = len(t.all)
		t.all = append(t.all, s)
		return
	}
	subs := t.bySession[s.session]
	s.idx = len(subs)
	t.bySession[s.session] = append(subs, s)
}

// remove unregisters s and closes its channel; it is a no-op if s is
// already gone (drop, cancellation and Close may race). Runs under t.mu.
func (t *topic) remove(s *subscriber) {
	if s.idx < 0 {
		return
	}
	subs := t.all
	if s.session != "" {
		subs = t.bySession[s.session]
	}
	last := len(subs) - 1
	subs[s.idx] = subs[last]
	subs[s.idx].idx = s.idx
	subs[last] = nil
	subs = subs[:last]
	if s.session == "" {
		t.all = subs
	} else if len(subs) == 0 {
		delete(t.bySession, s.session)
	} else {
		t.bySession[s.session] = subs
	}
	s.idx = -1
	close(s.ch)
	if s.stop != nil {
		s.stop() // a dropped or closed subscriber no longer needs its AfterFunc
	}
}
