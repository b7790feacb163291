package session

import (
	"context"

	"tuttid/activity"
	"tuttid/ent"
	"tuttid/store"
)

// The events of a stored change go out with its transaction where the
// feed has an outbox (Config.Outbox: PostgreSQL, several instances): they
// are staged by the transaction's last statement, so they commit or roll
// back with it, and a process killed between the commit and the feed's
// writer leaves them for the next run (activity/pgfeed). Without one
// (SQLite, the in-process broker, whose subscribers die with the process)
// they are published after the commit, as before, and nothing changes.
// Events that announce no stored change (MESSAGE_DELTA, TURN_RETRYING,
// ACCOUNT_UPDATED, PROVIDER_WARNING) are published as they come.

// changes writes a stored change and hands on its events: staged with the
// transaction where there is an outbox, else published after the commit.
type changes struct {
	store  *store.Store
	outbox activity.Outbox
	pub    activity.Publisher
}

// publish hands an event to the feed now (nil publisher: dropped).
func (c *changes) publish(ctx context.Context, e activity.Event) {
	if c.pub != nil {
		c.pub.Publish(ctx, e)
	}
}

// Announce publishes the events of a committed transaction (StageForked).
func (s *Service) Announce(ctx context.Context, st Staged) { s.changes.announce(ctx, st) }

// Staged is what a transaction staged: Announce publishes it once the
// transaction committed, never before.
type Staged struct {
	keys   []string         // in the outbox
	events []activity.Event // without an outbox: published by Announce
}

// stage stages events in the transaction tx (see Staged). Without an
// outbox the events are kept as they are, their entities shared: a caller
// that unwraps them from tx after the commit unwraps the published ones.
func (c *changes) stage(ctx context.Context, tx activity.Execer, events ...activity.Event) (Staged, error) {
	if c.outbox == nil {
		return Staged{events: events}, nil
	}
	keys, err := c.outbox.Stage(ctx, tx, events...)
	if err != nil {
		return Staged{}, err
	}
	return Staged{keys: keys}, nil
}

// announce publishes the events of a committed transaction.
func (c *changes) announce(ctx context.Context, st Staged) {
	if c.outbox != nil {
		c.outbox.Committed(ctx, st.keys)
		return
	}
	for _, e := range st.events {
		c.publish(ctx, e)
	}
}

// change commits write, a state change through c that returns the events
// announcing it, and returns them staged for Announce: with an outbox in
// one transaction with them, without one on the store's client as before
// (write's entities are then not a transaction's).
func (c *changes) change(ctx context.Context, write func(cl *ent.Client) ([]activity.Event, error)) (Staged, error) {
	if c.outbox == nil {
		events, err := write(c.store.Client)
		return Staged{events: events}, err
	}
	var st Staged
	err := c.store.WithTx(ctx, func(tx *ent.Tx) error {
		events, err := write(tx.Client())
		if err != nil || len(events) == 0 {
			return err
		}
		st, err = c.stage(ctx, tx, events...)
		return err
	})
	return st, err
}

// commit is change, then Announce.
func (c *changes) commit(ctx context.Context, write func(cl *ent.Client) ([]activity.Event, error)) error {
	st, err := c.change(ctx, write)
	if err != nil {
		return err
	}
	c.announce(ctx, st)
	return nil
}

// StageForked stages SESSION_CREATED of child and SESSION_FORKED of row in
// tx, the fork's transaction, after its last write; Announce publishes
// them once it committed (what Forked publishes, but kept with the commit
// where there is an outbox).
func (s *Service) StageForked(ctx context.Context, tx *ent.Tx, child *ent.AgentSession, row *ent.SessionFork) (Staged, error) {
	return s.changes.stage(ctx, tx, forkedEvents(child, row)...)
}

func forkedEvents(child *ent.AgentSession, row *ent.SessionFork) []activity.Event {
	return []activity.Event{createdEvent(child),
		{Kind: activity.SessionForked, WorkspaceID: child.WorkspaceID, AgentSessionID: row.ParentAgentSessionID, Session: child, Fork: row}}
}

func createdEvent(a *ent.AgentSession) activity.Event {
	return activity.Event{Kind: activity.SessionCreated, WorkspaceID: a.WorkspaceID, AgentSessionID: a.ID, Session: a}
}
