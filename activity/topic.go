package activity

import (
	"slices"
	"sync"
)

// topic is the state of one workspace: its sequence counter, replay window
// and subscribers, all guarded by mu.
type topic struct {
	id       string
	window   int
	maxBytes int // bound of bytes, see Options.WindowBytes

	// base is the seq before this topic's first event: the broker's epoch,
	// so that numbers from an earlier process are never mistaken for ours.
	base int64

	mu        sync.Mutex
	last      int64   // seq of the latest published event; base = none yet
	ring      []Event // replay window, see store
	floor     int64   // events up to this seq were evicted for their bytes
	bytes     int     // payloadBytes of the events retained in ring
	all       []*subscriber
	bySession map[string][]*subscriber
	closed    bool // Broker.Close ran
	dead      bool // removed from Broker.topics (was empty); look up again
	// started: Start or Deliver numbered this topic from a shared feed
	// (external.go); it is then kept like a topic with events.
	started bool
}

type subscriber struct {
	session string
	ch      chan Event // cap = 1 Subscribed + replayed + buffer + 1 reserved for the Resync event
	idx     int        // position in topic.all or topic.bySession[session]; -1 once removed
	stop    func() bool
}

// store keeps e (whose Seq is t.last) in the window. The ring grows up to
// the window size and then wraps, so seq s always sits at (s-base-1) % window.
// Then the oldest events go until the window holds at most maxBytes of
// payload (their slots are cleared so that the payload can be freed), the
// newest excepted.
func (t *topic) store(e Event) {
	switch {
	case t.window <= 0:
		return
	case len(t.ring) < t.window:
		t.ring = append(t.ring, e)
	default:
		i := t.slot(e.Seq)
		if t.ring[i].Seq > t.floor { // still retained: it leaves now
			t.bytes -= payloadBytes(t.ring[i])
		}
		t.ring[i] = e
	}
	t.bytes += payloadBytes(e)
	for t.bytes > t.maxBytes {
		lo := t.oldest()
		if lo >= e.Seq {
			break
		}
		i := t.slot(lo)
		t.bytes -= payloadBytes(t.ring[i])
		t.ring[i] = Event{}
		t.floor = lo
	}
}

func (t *topic) slot(seq int64) int64 { return (seq - t.base - 1) % int64(t.window) }

// payloadBytes is what an event keeps alive beyond its fixed fields: the
// texts that grow with what the agent writes.
func payloadBytes(e Event) int {
	n := len(e.Delta)
	if m := e.Message; m != nil {
		n += len(m.Text) + len(m.Content)
	}
	if a := e.Approval; a != nil {
		n += len(a.Command) + len(a.Reason) + len(a.Details)
	}
	return n
}

// oldest is the smallest retained seq; oldest > t.last when none is.
func (t *topic) oldest() int64 { return max(t.last-int64(len(t.ring))+1, t.floor+1) }

// replay checks that a subscriber who saw everything up to after can be
// brought up to date, and returns the retained events after it that match
// session ("" = all).
func (t *topic) replay(after int64, session string) ([]Event, error) {
	oldest := t.oldest()
	resync := func(r Reason) error {
		return &ResyncError{Reason: r, WorkspaceID: t.id, AfterSeq: after, Oldest: oldest, Latest: t.last}
	}
	switch {
	case after < 0 || after > t.last:
		return nil, resync(ReasonUnknownSeq)
	case after < oldest-1:
		// Some event after `after` is no longer retained.
		return nil, resync(ReasonTooOld)
	}
	var out []Event
	for seq := after + 1; seq <= t.last; seq++ {
		e := t.ring[t.slot(seq)]
		if session == "" || e.AgentSessionID == session || e.AgentSessionID == "" {
			out = append(out, e)
		}
	}
	return out, nil
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
			Seq: e.Seq - 1, Kind: Resync, WorkspaceID: t.id, AgentSessionID: s.session, At: e.At,
			err: &ResyncError{Reason: ReasonDropped, WorkspaceID: t.id, AfterSeq: e.Seq - 1, Oldest: t.oldest(), Latest: t.last},
		}:
		default:
		}
		dropped = append(dropped, s)
	}
	return dropped
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
// already gone (drop, cancellation and Close may race).
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
	switch {
	case s.session == "":
		t.all = subs
	case len(subs) == 0:
		delete(t.bySession, s.session)
	default:
		t.bySession[s.session] = subs
	}
	s.idx = -1
	close(s.ch)
	if s.stop != nil {
		s.stop() // a dropped or closed subscriber no longer needs its AfterFunc
	}
}

// removeAll ends every subscription (Close).
func (t *topic) removeAll() {
	for _, s := range slices.Clone(t.all) {
		t.remove(s)
	}
	for _, subs := range t.bySession {
		for _, s := range slices.Clone(subs) {
			t.remove(s)
		}
	}
}
