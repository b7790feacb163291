package activity

// topic is the per-workspace state: the sequence counter, the replay window
// and the subscribers. All fields are guarded by the mutex of the topic
// (Broker.topics owns the pointer).

// store keeps e (whose Seq is t.last) in the window. The ring grows up to
// the window size and then wraps, so seq s always sits at (s-1) % window.
func (t *topic) store(e Event) {
	switch {
	case t.window <= 0:
	case len(t.ring) < t.window:
		t.ring = append(t.ring, e)
	default:
		t.ring[(e.Seq-1)%int64(t.window)] = e
	}
}

// oldest is the smallest retained seq; oldest > t.last when none is.
func (t *topic) oldest() int64 { return t.last - int64(len(t.ring)) + 1 }

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
		e := t.ring[(seq-1)%int64(t.window)]
		if session == "" || e.AgentSessionID == session {
			out = append(out, e)
		}
	}
	return out, nil
}
