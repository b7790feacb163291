package session

import (
	"context"

	"tuttid/activity"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/turn"
)

// A session's state events are published after their commit and in the
// order of their commits: lockState is held from the write to the publish
// by everything that changes a session's status, so that an older status
// never goes out after a newer one (without it, a client that sends on
// TURN_COMPLETED could have its WORKING published before that turn's
// READY). It is held only around store writes and Publish, never around a
// provider call, so ingestion never waits on Codex. Lock order: Lock(id),
// then lockState(id).
func (s *Service) lockState(sessionID string) (unlock func()) {
	return s.guards.Lock("state\x00" + sessionID)
}

// completeTurn ends a stored turn with status and makes its session READY
// in one transaction, then publishes TURN_COMPLETED and SESSION_UPDATED:
// when a client receives TURN_COMPLETED the session already accepts the
// next message, and a refetch on READY finds the turn ended.
func (s *Service) completeTurn(ctx context.Context, a *ent.AgentSession, turnID string, status turn.Status, errText, errCode string) error {
	// The files first (git, outside the state lock): the turn is stored
	// with its checkpoint, so READY never goes out before it.
	stampCheckpoint := s.turnCheckpoint(ctx, a, turnID)
	defer s.lockState(a.ID)()
	now := s.now()
	var t *ent.Turn
	var ready *ent.AgentSession // nil: the session was READY already
	var st Staged
	err := s.store.WithTx(ctx, func(tx *ent.Tx) error {
		var err error
		t, err = tx.Turn.Query().Where(turn.AgentSessionID(a.ID), turn.TurnID(turnID)).Only(ctx)
		if err != nil {
			return err
		}
		up := t.Update().SetStatus(status).SetError(errText).SetErrorCode(errCode).SetCompletedAt(now)
		if stampCheckpoint != nil {
			up = stampCheckpoint(up)
		}
		if t, err = up.Save(ctx); err != nil {
			return err
		}
		if status != turn.StatusCOMPLETED {
			// Items the provider never completed end with their turn.
			if err := closeOpenItems(ctx, s.now(), tx.Client(), a.ID, turnID, itemEnd(status)); err != nil {
				return err
			}
		}
		// A failed turn leaves the session usable; only a thread-level
		// system error (a thread status event) marks the session FAILED.
		ready, err = tx.AgentSession.UpdateOneID(a.ID).Where(agentsession.StatusNEQ(agentsession.StatusREADY)).
			SetStatus(agentsession.StatusREADY).SetUpdatedAt(now).Save(ctx)
		if ent.IsNotFound(err) {
			ready, err = nil, nil
		}
		if err != nil {
			return err
		}
		events := []activity.Event{{Kind: activity.TurnCompleted, WorkspaceID: a.WorkspaceID, AgentSessionID: a.ID, Turn: t}}
		if ready != nil {
			events = append(events, sessionUpdated(ready))
		}
		st, err = s.changes.stage(ctx, tx, events...)
		return err
	})
	if err != nil {
		return err
	}
	s.crash(CrashTurnCommitted)
	// Detach from the committed transaction: subscribers may query through them.
	t.Unwrap()
	if ready != nil {
		ready.Unwrap()
	}
	s.Announce(ctx, st)
	if s.turnEnded != nil {
		s.turnEnded(ctx, a, t)
	}
	return nil
}
