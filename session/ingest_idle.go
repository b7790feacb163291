package session

import (
	"context"
	"time"

	"tuttid/activity"
	"tuttid/agent"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/turn"
)

// A session leaves WORKING when Codex's thread goes idle, whatever was
// lost on the way: Codex reports idle just before turn/completed, so a
// turn still running a grace period later lost its end (a store that
// failed until the turn ended, params that did not parse) and is settled
// from Codex's record. The check runs on the thread's lane, after any
// event held there.

const defaultIdleGrace = 3 * time.Second

// idleTurnEnd is the reason of a turn whose thread went idle without an
// end tuttid could read, and Codex's record does not say how it ended.
const idleTurnEnd = "Codex's thread went idle without a readable end of this turn"

// rereadPauses are the waits before each new read of a turn whose Codex
// record was unavailable.
var rereadPauses = []time.Duration{5 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute}

func runningTurnIDs(ctx context.Context, c *ent.Client, sessionID string) ([]string, error) {
	return c.Turn.Query().
		Where(turn.AgentSessionID(sessionID), turn.StatusEQ(turn.StatusIN_PROGRESS)).
		Select(turn.FieldTurnID).Strings(ctx)
}

// checkAfterIdle settles, after the grace period, those of turnIDs still
// running.
func (s *Service) checkAfterIdle(ctx context.Context, thread string, turnIDs []string) {
	grace := s.lanes.idleGrace
	if grace == 0 {
		grace = defaultIdleGrace
	}
	time.AfterFunc(grace, func() {
		if ctx.Err() != nil {
			return
		}
		s.lanes.enqueue(ctx, thread, laneJob{run: func(ctx context.Context) { s.settleIdle(ctx, thread, turnIDs) }})
	})
}

func sessionOfThread(ctx context.Context, c *ent.Client, thread string) (*ent.AgentSession, error) {
	a, err := c.AgentSession.Query().Where(agentsession.ProviderSessionID(thread)).First(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	return a, err
}

func (s *Service) settleIdle(ctx context.Context, thread string, turnIDs []string) {
	a, err := sessionOfThread(ctx, s.store.Client, thread)
	if err != nil || a == nil {
		if err != nil {
			s.log.ErrorContext(ctx, "ingest: idle thread's session unreadable", "thread", thread, "err", err)
		}
		return
	}
	for _, id := range turnIDs {
		if err := s.settleIdleTurn(ctx, a, id); err != nil {
			s.log.ErrorContext(ctx, "ingest: turn of an idle thread not settled", "session", a.ID, "turn", id, "err", err)
		}
	}
}

func (s *Service) settleIdleTurn(ctx context.Context, a *ent.AgentSession, turnID string) error {
	t, err := s.read.Turn(ctx, a.ID, turnID)
	if err != nil || t == nil || t.Status != turn.StatusIN_PROGRESS {
		return err
	}
	status, reason, code := turn.StatusFAILED, idleTurnEnd, ""
	rec, found, err := recordOf(ctx, s.rt, a, turnID)
	switch {
	case err != nil:
		reason += unsettledMark
		s.lanes.setAllSettled(false)
	case found:
		if err := s.storeRecorded(ctx, a, rec); err != nil {
			return err
		}
		if st, ended := TurnStatusOf(rec.Status); ended {
			status, reason = st, ""
			if st == turn.StatusFAILED {
				reason, code = rec.Error, rec.ErrorCode
			}
		}
	}
	s.log.WarnContext(ctx, "ingest: thread idle without the turn's end; settled", "session", a.ID,
		"turn", turnID, "status", status, "from_codex", found)
	if err := s.approvals.cancelPending(ctx, a, turnID, "turn_ended"); err != nil {
		return err
	}
	if status == turn.StatusCOMPLETED {
		if err := closeOpenItems(ctx, s.now(), s.store.Client, a.ID, turnID, agent.ItemIncomplete); err != nil {
			return err
		}
	}
	return s.completeTurn(ctx, a, turnID, status, reason, code)
}

// recordOf reads Codex's record of one turn.
func recordOf(ctx context.Context, rt agent.Runtime, a *ent.AgentSession, turnID string) (agent.RuntimeTurn, bool, error) {
	if rt == nil || a.ProviderSessionID == "" {
		return agent.RuntimeTurn{}, false, nil
	}
	turns, err := rt.History(ctx, agent.HistoryInput{Provider: a.Provider, ThreadID: a.ProviderSessionID,
		TurnIDs: []string{turnID}})
	if err != nil {
		return agent.RuntimeTurn{}, false, err
	}
	for _, rt := range turns {
		if rt.ID == turnID {
			return rt, true, nil
		}
	}
	return agent.RuntimeTurn{}, false, nil
}

// rereadTurn stores Codex's record of a turn's items; when Codex cannot
// be read it tries again later.
func (s *Service) rereadTurn(ctx context.Context, thread, turnID string, attempt int) {
	a, err := sessionOfThread(ctx, s.store.Client, thread)
	if err != nil || a == nil {
		return
	}
	rec, found, err := recordOf(ctx, s.rt, a, turnID)
	if err != nil {
		s.log.WarnContext(ctx, "ingest: Codex's record of the turn unavailable; re-read later", "session", a.ID,
			"turn", turnID, "err", err)
		s.rereadLater(ctx, thread, turnID, attempt)
		return
	}
	if !found {
		return
	}
	if rec.ID == "" {
		rec.ID = turnID
	}
	if err := s.storeRecorded(ctx, a, rec); err != nil {
		s.log.ErrorContext(ctx, "ingest: Codex's record of the turn not stored", "session", a.ID, "turn", turnID, "err", err)
		s.rereadLater(ctx, thread, turnID, attempt)
		return
	}
	// A turn tuttid failed for an event it could not store, and that
	// Codex completed, is whole again once its record is stored.
	if rec.Status == agent.TurnCompleted {
		err := s.changes.commit(ctx, func(c *ent.Client) ([]activity.Event, error) {
			n, err := c.Turn.Update().Where(turn.AgentSessionID(a.ID), turn.TurnID(turnID),
				turn.StatusEQ(turn.StatusFAILED), turn.ErrorHasPrefix(lostEventReason)).
				SetStatus(turn.StatusCOMPLETED).SetError("").Save(ctx)
			if err != nil || n == 0 {
				return nil, err
			}
			t, err := c.Turn.Query().Where(turn.AgentSessionID(a.ID), turn.TurnID(turnID)).Only(ctx)
			if err != nil {
				return nil, nil // stored; only the event is lost, as before
			}
			return []activity.Event{{Kind: activity.TurnCompleted, WorkspaceID: a.WorkspaceID, AgentSessionID: a.ID, Turn: t}}, nil
		})
		if err != nil {
			s.log.ErrorContext(ctx, "ingest: re-read turn's status not stored", "session", a.ID, "turn", turnID, "err", err)
		}
	}
}

// rereadLater queues a re-read of a turn on its thread's lane after the
// attempt's pause; after the last, the turn is left as it is.
func (s *Service) rereadLater(ctx context.Context, thread, turnID string, attempt int) {
	if attempt >= len(rereadPauses) {
		s.log.ErrorContext(ctx, "ingest: gave up re-reading a turn from Codex", "thread", thread, "turn", turnID)
		return
	}
	pause := rereadPauses[attempt]
	if s.lanes.rereadPause > 0 {
		pause = s.lanes.rereadPause
	}
	time.AfterFunc(pause, func() {
		if ctx.Err() != nil {
			return
		}
		s.lanes.enqueue(ctx, thread, laneJob{run: func(ctx context.Context) { s.rereadTurn(ctx, thread, turnID, attempt+1) }})
	})
}
