package session

import (
	"context"
	"time"

	"tuttid/activity"
	"tuttid/agent"
	"tuttid/ent"
	"tuttid/ent/turn"
)

// A turn settled while Codex's record was unavailable (at start, or when
// its thread went idle without its end) is FAILED with unsettledMark at
// the end of its reason. It is revisited when Codex is back: on the
// runtime's restart, and every revisitEvery while any is left, so that a
// turn Codex completed shows its status and items.

const unsettledMark = " (Codex's record was unavailable; tuttid reads it again when Codex is back)"

const revisitEvery = 30 * time.Second

// revisitUntilSettled revisits the unsettled turns every revisitEvery
// until none is left or ctx ends; the returned func stops it.
func (s *Service) revisitUntilSettled(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	every := revisitEvery
	if s.lanes.rereadPause > 0 {
		every = s.lanes.rereadPause
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if s.lanes.allSettled() {
				continue
			}
			left, err := unsettledTurns(ctx, s.store.Client, s.own)
			if err != nil {
				continue
			}
			if len(left) == 0 {
				s.lanes.setAllSettled(true)
				continue
			}
			// Each on its thread's lane, in order with its events.
			for _, t := range left {
				th := t.Edges.Session.ProviderSessionID
				s.lanes.enqueue(ctx, th, laneJob{run: func(ctx context.Context) { s.revisitTurn(ctx, t) }})
			}
		}
	}()
	return func() { cancel(); <-done }
}

func unsettledTurns(ctx context.Context, c *ent.Client, own owner) ([]*ent.Turn, error) {
	turns, err := c.Turn.Query().
		Where(turn.StatusEQ(turn.StatusFAILED), turn.ErrorHasSuffix(unsettledMark)).
		WithSession().All(ctx)
	if err != nil {
		return nil, err
	}
	return own.turns(turns), nil // another instance's are read from its Codex
}

func (l *lanes) allSettled() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.noneUnsettled
}

// setAllSettled records whether a turn may carry unsettledMark: false
// whenever one is marked.
func (l *lanes) setAllSettled(none bool) {
	l.mu.Lock()
	l.noneUnsettled = none
	l.mu.Unlock()
}

// revisitUnsettled revisits every unsettled turn now.
func (s *Service) revisitUnsettled(ctx context.Context) error {
	left, err := unsettledTurns(ctx, s.store.Client, s.own)
	if err != nil {
		return err
	}
	for _, t := range left {
		s.revisitTurn(ctx, t)
	}
	return nil
}

// revisitTurn takes Codex's record of an unsettled turn: its items, and
// its status when Codex ended it. A turn Codex does not have keeps its
// reason without the mark.
func (s *Service) revisitTurn(ctx context.Context, t *ent.Turn) {
	cur, err := s.store.Client.Turn.Get(ctx, t.ID)
	if err != nil || cur.Status != turn.StatusFAILED || len(cur.Error) < len(unsettledMark) ||
		cur.Error[len(cur.Error)-len(unsettledMark):] != unsettledMark {
		return // gone, or settled meanwhile
	}
	a := t.Edges.Session
	if isPendingTurn(t.TurnID) {
		// Codex's id first, then its record as for any other turn.
		cur.Edges.Session = a
		real, err := s.settlePending(ctx, cur, turn.StatusFAILED)
		if err != nil {
			s.log.ErrorContext(ctx, "revisit: turn being started not settled", "session", a.ID, "err", err)
			return
		}
		if real != nil && !isPendingTurn(real.TurnID) {
			real.Edges.Session = a
			s.revisitTurn(ctx, real)
		}
		return
	}
	rec, found, err := recordOf(ctx, s.rt, a, t.TurnID)
	if err != nil {
		s.log.DebugContext(ctx, "revisit: Codex's record still unavailable", "session", a.ID, "turn", t.TurnID, "err", err)
		return
	}
	status, reason, code := turn.StatusFAILED, cur.Error[:len(cur.Error)-len(unsettledMark)], cur.ErrorCode
	if found {
		if err := s.storeRecorded(ctx, a, rec); err != nil {
			s.log.ErrorContext(ctx, "revisit: recorded items not stored", "session", a.ID, "turn", t.TurnID, "err", err)
			return
		}
		if st, ended := TurnStatusOf(rec.Status); ended {
			status, reason = st, ""
			if st == turn.StatusFAILED {
				reason, code = rec.Error, rec.ErrorCode
			}
		}
	}
	err = s.changes.commit(ctx, func(c *ent.Client) ([]activity.Event, error) {
		if err := c.Turn.UpdateOneID(cur.ID).SetStatus(status).SetError(reason).SetErrorCode(code).Exec(ctx); err != nil {
			return nil, err
		}
		if status == turn.StatusCOMPLETED {
			if err := closeOpenItems(ctx, s.now(), c, a.ID, t.TurnID, agent.ItemIncomplete); err != nil {
				s.log.ErrorContext(ctx, "revisit: items not closed", "session", a.ID, "turn", t.TurnID, "err", err)
			}
		}
		return turnEnded(ctx, c, a, cur.ID), nil
	})
	if err != nil {
		s.log.ErrorContext(ctx, "revisit: turn not updated", "session", a.ID, "turn", t.TurnID, "err", err)
		return
	}
	s.log.InfoContext(ctx, "revisit: turn settled from Codex's record", "session", a.ID, "turn", t.TurnID,
		"status", status, "from_codex", found)
}

// turnEnded is TURN_COMPLETED of turn id as read through c (none if it
// cannot be read), for a turn whose end changed.
func turnEnded(ctx context.Context, c *ent.Client, a *ent.AgentSession, id int) []activity.Event {
	t, err := c.Turn.Get(ctx, id)
	if err != nil {
		return nil
	}
	return []activity.Event{{Kind: activity.TurnCompleted, WorkspaceID: a.WorkspaceID, AgentSessionID: a.ID, Turn: t}}
}
