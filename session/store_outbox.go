package session

import (
	"context"

	"tuttid/activity"
	"tuttid/ent"
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

// Staged is what a transaction staged: Announce publishes it once the
// transaction committed, never before.
type Staged struct {
	keys   []string         // in the outbox
	events []activity.Event // without an outbox: published by Announce
}

// stage stages events in the transaction tx (see Staged). Without an
// outbox the events are kept as they are, their entities shared: a caller
// that unwraps them from tx after the commit unwraps the published ones.
func (s *Service) stage(ctx context.Context, tx activity.Execer, events ...activity.Event) (Staged, error) {
	if s.outbox == nil {
		return Staged{events: events}, nil
	}
	keys, err := s.outbox.Stage(ctx, tx, events...)
	if err != nil {
		return Staged{}, err
	}
	return Staged{keys: keys}, nil
}

// Announce publishes the events of a committed transaction (StageForked).
func (s *Service) Announce(ctx context.Context, st Staged) {
	if s.outbox != nil {
		s.outbox.Committed(ctx, st.keys)
		return
	}
	for _, e := range st.events {
		s.publish(ctx, e)
	}
}

// change commits write, a state change through c that returns the events
// announcing it, and returns them staged for Announce: with an outbox in
// one transaction with them, without one on the store's client as before
// (write's entities are then not a transaction's).
func (s *Service) change(ctx context.Context, write func(c *ent.Client) ([]activity.Event, error)) (Staged, error) {
	if s.outbox == nil {
		events, err := write(s.store.Client)
		return Staged{events: events}, err
	}
	var st Staged
	err := s.store.WithTx(ctx, func(tx *ent.Tx) error {
		events, err := write(tx.Client())
		if err != nil || len(events) == 0 {
			return err
		}
		st, err = s.stage(ctx, tx, events...)
		return err
	})
	return st, err
}

// commit is change, then Announce.
func (s *Service) commit(ctx context.Context, write func(c *ent.Client) ([]activity.Event, error)) error {
	st, err := s.change(ctx, write)
	if err != nil {
		return err
	}
	s.Announce(ctx, st)
	return nil
}

// StageForked stages SESSION_CREATED of child and SESSION_FORKED of row in
// tx, the fork's transaction, after its last write; Announce publishes
// them once it committed (what Forked publishes, but kept with the commit
// where there is an outbox).
func (s *Service) StageForked(ctx context.Context, tx *ent.Tx, child *ent.AgentSession, row *ent.SessionFork) (Staged, error) {
	return s.stage(ctx, tx, forkedEvents(child, row)...)
}

func forkedEvents(child *ent.AgentSession, row *ent.SessionFork) []activity.Event {
	return []activity.Event{createdEvent(child),
		{Kind: activity.SessionForked, WorkspaceID: child.WorkspaceID, AgentSessionID: row.ParentAgentSessionID, Session: child, Fork: row}}
}

func createdEvent(a *ent.AgentSession) activity.Event {
	return activity.Event{Kind: activity.SessionCreated, WorkspaceID: a.WorkspaceID, AgentSessionID: a.ID, Session: a}
}
