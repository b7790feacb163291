package session

import (
	"context"
	"slices"

	"tuttid/activity"
	"tuttid/agent"
	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/predicate"
	"tuttid/ent/turn"
	"tuttid/lineage"
)

// DeleteInput names the session to delete and what goes with it.
type DeleteInput struct {
	WorkspaceID, SessionID string
	// Subtree deletes every session forked from it too, transitively.
	Subtree bool
	// DiscardChanges deletes WORKTREE sessions whose files hold changes
	// never applied back (deleteSession's discardChanges).
	DiscardChanges bool
}

// Delete removes a session (and with Subtree every session forked from
// it) with their messages, turns and lineage rows in one transaction, and
// archives their provider threads. Running turns are interrupted first.
// SESSION_DELETED is published for each, descendants before their
// ancestors. It returns the session's id.
func (s *Service) Delete(ctx context.Context, in DeleteInput) (string, error) {
	a, err := s.read.RequireSession(ctx, in.WorkspaceID, in.SessionID)
	if err != nil {
		return "", err
	}
	c := s.store.Client
	ids := []string{a.ID}
	running := c.Turn.Query().Where(turn.StatusEQ(turn.StatusIN_PROGRESS), turn.AgentSessionID(a.ID))
	if in.Subtree {
		nodes, err := lineage.Subtree(ctx, c, a.WorkspaceID, a.ID)
		if err != nil {
			return "", apperr.Storage(err, "read the session's forks")
		}
		ids = make([]string, len(nodes))
		for i, n := range nodes {
			ids[i] = n.Session.ID
		}
		slices.Sort(ids)
		running = c.Turn.Query().Where(turn.StatusEQ(turn.StatusIN_PROGRESS),
			predicate.Turn(lineage.ColumnInSubtree(turn.FieldAgentSessionID, a.WorkspaceID, a.ID)))
	}
	// Forks of these sessions in flight finish first (each holds its
	// parent's lock); in id order, as any caller that holds several does.
	for _, id := range ids {
		defer s.LockSession(id)()
	}
	code, err := s.prepareDelete(ctx, ids, in.DiscardChanges)
	if err != nil {
		return "", err
	}
	turns, err := running.WithSession().All(ctx)
	if err != nil {
		return "", apperr.Storage(err, "read the running turns")
	}
	for _, t := range turns {
		if t.Edges.Session != nil {
			s.interruptBeforeDelete(ctx, t.Edges.Session, t.TurnID)
		}
	}
	if s.code != nil {
		// Their refs go while their code rows still name the repository.
		for _, id := range ids {
			s.code.Forget(ctx, id)
		}
	}
	gone, deleted, err := deleteRows(ctx, &s.changes, a, in.Subtree)
	if err != nil {
		return "", apperr.Storage(err, "delete the sessions")
	}
	s.finishDelete(ctx, code)
	for _, d := range deleted {
		s.archiveThread(ctx, d)
	}
	s.Announce(ctx, gone)
	return a.ID, nil
}

// deleteRows deletes a (and with subtree its forks) in one transaction:
// what is deleted is what is reported, including forks made while the
// locks were awaited. The events are staged descendants first.
func deleteRows(ctx context.Context, ch *changes, a *ent.AgentSession, subtree bool) (Staged, []*ent.AgentSession, error) {
	var gone Staged
	deleted := []*ent.AgentSession{a}
	err := ch.store.WithTx(ctx, func(tx *ent.Tx) error {
		if !subtree {
			if err := tx.AgentSession.DeleteOneID(a.ID).Exec(ctx); err != nil {
				return err
			}
		} else {
			nodes, err := lineage.Subtree(ctx, tx.Client(), a.WorkspaceID, a.ID)
			if err != nil {
				return err
			}
			if _, err := tx.AgentSession.Delete().Where(lineage.InSubtree(a.WorkspaceID, a.ID)).Exec(ctx); err != nil {
				return err
			}
			slices.Reverse(nodes)
			deleted = make([]*ent.AgentSession, len(nodes))
			for i, n := range nodes {
				deleted[i] = n.Session
			}
		}
		events := make([]activity.Event, len(deleted))
		for i, d := range deleted {
			events[i] = deletedEvent(d)
		}
		var err error
		gone, err = ch.stage(ctx, tx, events...)
		return err
	})
	return gone, deleted, err
}

// interruptBeforeDelete stops a running turn of a session about to be
// deleted; a failure is only logged, since the delete goes on.
func (s *Service) interruptBeforeDelete(ctx context.Context, a *ent.AgentSession, turnID string) {
	if err := s.rt.Interrupt(ctx, agent.InterruptInput{Provider: a.Provider, ThreadID: a.ProviderSessionID, TurnID: turnID}); err != nil {
		s.log.WarnContext(ctx, "delete: could not interrupt a running turn", "session", a.ID, "turn", turnID, "err", err)
	}
}

// archiveThread follows a session's committed delete, before its
// SESSION_DELETED is published: its provider thread is archived.
func (s *Service) archiveThread(ctx context.Context, a *ent.AgentSession) {
	if a.ProviderSessionID != "" {
		if err := s.rt.Archive(ctx, a.Provider, a.ProviderSessionID); err != nil {
			// The session is gone for the user; the thread is only clutter.
			s.log.WarnContext(ctx, "delete: provider thread not archived", "session", a.ID,
				"thread", a.ProviderSessionID, "err", err)
		}
	}
}

func deletedEvent(a *ent.AgentSession) activity.Event {
	return activity.Event{Kind: activity.SessionDeleted, WorkspaceID: a.WorkspaceID, AgentSessionID: a.ID, Session: a}
}
