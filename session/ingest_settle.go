package session

import (
	"context"
	"fmt"
	"time"

	"tuttid/agent"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/message"
	"tuttid/ent/turn"
)

// Ingestion loses nothing: a store write that fails is retried; one that
// still fails ends the event's turn FAILED with the reason, and no message
// stays in progress after its turn ended.

// ingestRetries are the pauses before each retry of a failed event write:
// long enough to ride out a lock or a short I/O hiccup, short enough that
// the events behind it wait little.
func ingestRetries() []time.Duration {
	return []time.Duration{20 * time.Millisecond, 100 * time.Millisecond, 500 * time.Millisecond}
}

// handleDurably is HandleEvent, retried; when every attempt failed, the
// event's turn is failed so that the session can go on.
func (s *Service) handleDurably(ctx context.Context, e agent.Event) error {
	err := s.HandleEvent(ctx, e)
	if err == nil || malformed(e) {
		return err // a bad event fails the same way every time
	}
	for _, pause := range ingestRetries() {
		if err == nil || ctx.Err() != nil {
			return err
		}
		s.log.WarnContext(ctx, "ingest: event not stored; retrying", "kind", e.Kind, "turn", e.TurnID, "err", err)
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			return err
		}
		err = s.HandleEvent(ctx, e)
	}
	if err == nil {
		return nil
	}
	failed, ferr := s.failTurnOf(ctx, e, err)
	if ferr != nil {
		return fmt.Errorf("%w; the turn could not be failed either: %w", err, ferr)
	}
	if failed {
		return fmt.Errorf("%w; %w", err, errTurnFailed)
	}
	return err
}

// lostEventReason begins the reason of a turn tuttid failed because it
// could not store one of its events.
const lostEventReason = "tuttid could not store an event of this turn"

// malformed is an event HandleEvent rejects whatever the store does.
func malformed(e agent.Event) bool {
	item := e.Kind == agent.EventItemStarted || e.Kind == agent.EventItemCompleted
	return item && (e.Message == nil || e.Message.ID == "")
}

// failTurnOf ends the turn an unstored event belongs to: FAILED, with the
// reason, its open items failed, the session READY. Codex is asked to stop
// the turn (best effort), so that it does not run on unrecorded. It
// reports whether it failed a running turn.
func (s *Service) failTurnOf(ctx context.Context, e agent.Event, cause error) (bool, error) {
	turnID := e.TurnID
	if turnID == "" && e.Message != nil {
		turnID = e.Message.TurnID
	}
	if e.ThreadID == "" || turnID == "" {
		return false, nil // not a turn's event: nothing to settle
	}
	a, err := s.store.Client.AgentSession.Query().Where(agentsession.ProviderSessionID(e.ThreadID)).First(ctx)
	if ent.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	reason := lostEventReason + " (" + string(e.Kind) + "): " + cause.Error()
	t, err := s.ensureTurn(ctx, a, turnID)
	if err != nil {
		return false, err
	}
	if t.Status != turn.StatusIN_PROGRESS {
		return false, closeOpenItems(ctx, s.now(), s.store.Client, a.ID, turnID, agent.ItemFailed)
	}
	if s.rt != nil {
		if ierr := s.rt.Interrupt(ctx, agent.InterruptInput{Provider: a.Provider, ThreadID: a.ProviderSessionID, TurnID: turnID}); ierr != nil {
			s.log.WarnContext(ctx, "ingest: could not stop the turn whose event was lost", "turn", turnID, "err", ierr)
		}
	}
	s.log.ErrorContext(ctx, "ingest: turn failed: an event could not be stored", "session", a.ID, "turn", turnID, "err", cause)
	if err := s.approvals.cancelPending(ctx, a, turnID, "turn_ended"); err != nil {
		return false, err
	}
	// FAILED, its open items failed, the session READY, all published.
	if err := s.completeTurn(ctx, a, turnID, turn.StatusFAILED, reason, ""); err != nil {
		return false, err
	}
	return true, nil
}

// keepTuttidFailure: a turn tuttid already ended FAILED (an event it
// could not store) stays so, with its reason, whatever Codex reports later.
func (s *Service) keepTuttidFailure(ctx context.Context, a *ent.AgentSession, turnID string, status turn.Status, reason string) (turn.Status, string, error) {
	t, err := s.store.Client.Turn.Query().Where(turn.AgentSessionID(a.ID), turn.TurnID(turnID)).Only(ctx)
	if ent.IsNotFound(err) {
		return status, reason, nil
	}
	if err != nil {
		return status, reason, err
	}
	if t.Status == turn.StatusFAILED && t.CompletedAt != nil {
		return turn.StatusFAILED, t.Error, nil
	}
	return status, reason, nil
}

// settleOpenItems: when a turn completes with messages still in progress
// (an item's completion was lost), Codex's record of the turn replaces
// them; what it lacks ends incomplete. A turn that failed or was
// interrupted ends its open items with its own status (completeTurn).
func (s *Service) settleOpenItems(ctx context.Context, a *ent.AgentSession, turnID string, status turn.Status) error {
	if status != turn.StatusCOMPLETED {
		return nil
	}
	open, err := s.store.Client.Message.Query().
		Where(message.AgentSessionID(a.ID), message.TurnID(turnID), message.Status(agent.ItemInProgress)).Exist(ctx)
	if err != nil || !open {
		return err
	}
	if s.rt != nil && a.ProviderSessionID != "" {
		turns, err := s.rt.History(ctx, agent.HistoryInput{Provider: a.Provider, ThreadID: a.ProviderSessionID,
			TurnIDs: []string{turnID}})
		if err != nil {
			// What Codex has is read again later; until then the items
			// end incomplete rather than in progress.
			s.log.WarnContext(ctx, "ingest: Codex's record of the turn unavailable; re-read later", "turn", turnID, "err", err)
			s.rereadLater(ctx, a.ProviderSessionID, turnID, 0)
		}
		for _, rt := range turns {
			if rt.ID == turnID {
				if err := s.storeRecorded(ctx, a, rt); err != nil {
					return err
				}
			}
		}
	}
	return closeOpenItems(ctx, s.now(), s.store.Client, a.ID, turnID, agent.ItemIncomplete)
}

// storeRecorded stores the items of a turn as Codex recorded them and
// publishes what changed.
func (s *Service) storeRecorded(ctx context.Context, a *ent.AgentSession, rt agent.RuntimeTurn) error {
	for _, m := range rt.Messages {
		if m.TurnID == "" {
			m.TurnID = rt.ID
		}
		if m.Status == agent.ItemInProgress {
			continue // Codex has no more of it than we do
		}
		if err := s.onItem(ctx, a, m); err != nil {
			return err
		}
	}
	return nil
}
