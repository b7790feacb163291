package activity

import (
	"context"
	"database/sql"
	"time"
)

// A Broker whose events are numbered elsewhere (a feed shared by several
// instances, activity/pgfeed) is fed with Start and Deliver instead of
// Publish: the numbering is the shared one, the window, the subscribers
// and the drops stay this broker's. Use one or the other for a workspace,
// never both.

// Feed is what the server needs of an activity feed: the in-process
// Broker, or a shared one built on it.
type Feed interface {
	Publish(ctx context.Context, e Event) Event
	Subscribe(ctx context.Context, f Filter) (<-chan Event, error)
	Close()
}

// Execer runs a statement: a database transaction (*ent.Tx, *sql.Tx) or a
// client bound to one.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Outbox is a feed that keeps an event with the state change it announces
// (activity/pgfeed, several instances on PostgreSQL): Stage writes the
// events through the transaction that makes the change, so they commit or
// roll back with it, and a process killed after the commit leaves them for
// the next one to publish; Committed, called once the transaction
// committed, publishes them now (in the order of the calls, among this
// instance's Publish calls). Without an outbox (the in-process Broker)
// events are published after the commit and die with the process, as the
// process's subscribers do.
type Outbox interface {
	// Stage stores events through tx and returns their keys, for
	// Committed. It takes no lock but the rows it inserts.
	Stage(ctx context.Context, tx Execer, events ...Event) ([]string, error)
	// Committed publishes the staged events of a committed transaction;
	// like Publish it never waits for the database.
	Committed(ctx context.Context, keys []string)
}

// Latest returns the seq of the latest event of workspace ws this broker
// holds, and whether the workspace was started (Start or Deliver).
func (b *Broker) Latest(ws string) (seq int64, started bool) {
	b.mu.RLock()
	t := b.topics[ws]
	b.mu.RUnlock()
	if t == nil {
		return 0, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.last, t.started && !t.dead
}

// Start makes after the latest seq of workspace ws when it was not started
// yet (a subscriber then starts from it, and the next Deliver must be
// after+1); it reports whether it did. A started workspace is kept.
func (b *Broker) Start(ws string, after int64) bool {
	for {
		t := b.lookup(ws)
		if t == nil {
			return false
		}
		t.mu.Lock()
		if t.dead {
			t.mu.Unlock()
			continue
		}
		defer t.mu.Unlock()
		if t.started || t.closed {
			return false
		}
		t.reset(after)
		return true
	}
}

// Deliver hands out e, numbered elsewhere (e.Seq > 0, e.At set by the
// caller), and reports whether it did. Events of a workspace must come in
// seq order: one at or below the latest is a duplicate and is ignored; one
// after a gap (its predecessors were never delivered here) ends every
// subscription of the workspace with a Resync event (ReasonMissed) and
// restarts its window at e, since no subscriber could be brought up to
// date. Like Publish it never blocks on subscribers.
func (b *Broker) Deliver(ctx context.Context, e Event) bool {
	if e.Session != nil {
		if e.WorkspaceID == "" {
			e.WorkspaceID = e.Session.WorkspaceID
		}
		if e.AgentSessionID == "" {
			e.AgentSessionID = e.Session.ID
		}
	}
	e.err = nil
	if e.WorkspaceID == "" || e.Seq <= 0 || e.Kind == Resync || e.Kind == Subscribed {
		b.log.ErrorContext(ctx, "activity: event not delivered: no workspace ID, no seq or reserved kind", "kind", e.Kind, "seq", e.Seq, "session", e.AgentSessionID)
		return false
	}
	for {
		t := b.lookup(e.WorkspaceID)
		if t == nil {
			return false
		}
		t.mu.Lock()
		if t.dead {
			t.mu.Unlock()
			continue
		}
		if t.closed || (t.started && e.Seq <= t.last) {
			t.mu.Unlock()
			return false
		}
		var cut []*subscriber
		if !t.started || e.Seq != t.last+1 {
			cut = t.restart(e.Seq - 1)
		}
		t.last = e.Seq
		t.store(e)
		dropped := t.fanout(e)
		t.mu.Unlock()
		for range cut {
			b.log.WarnContext(ctx, "activity: events missed by this instance; subscriber must resync",
				"workspace", e.WorkspaceID, "seq", e.Seq)
		}
		b.logDropped(ctx, e, dropped)
		return true
	}
}

// restart ends the subscriptions of a started topic with a Resync event
// (they cannot get the events before after+1) and empties its window, so
// that the next event is after+1. Runs under t.mu.
func (t *topic) restart(after int64) []*subscriber {
	var cut []*subscriber
	if t.started {
		cut = append(cut, t.all...)
		for _, subs := range t.bySession {
			cut = append(cut, subs...)
		}
		for _, s := range cut {
			select { // the reserved slot is free: a subscriber never has more than cap-1 queued
			case s.ch <- Event{
				Seq: t.last, Kind: Resync, WorkspaceID: t.id, AgentSessionID: s.session, At: time.Now(),
				err: &ResyncError{Reason: ReasonMissed, WorkspaceID: t.id, AfterSeq: t.last, Oldest: after + 1, Latest: after + 1},
			}:
			default:
			}
		}
		t.removeAll()
	}
	t.reset(after)
	return cut
}

// reset empties the window and makes after the latest seq. Runs under t.mu.
func (t *topic) reset(after int64) {
	t.started = true
	t.ring, t.bytes = nil, 0
	t.base, t.last, t.floor = after, after, after
}
