package session

import (
	"context"

	"tuttid/agent"
	"tuttid/apperr"
	"tuttid/ent/agentsession"
	"tuttid/ent/turn"
)

// Reconcile runs at start: turns that were running when the previous
// process stopped died with its Codex child. Each is settled from Codex's
// record (settleRunningTurns), leftover items end failed, and the sessions
// are READY again; otherwise they would stay WORKING forever and refuse
// every send and fork.
func (s *Service) Reconcile(ctx context.Context) error {
	now := s.now()
	if err := s.settlePendingTurns(ctx); err != nil {
		return apperr.Storage(err, "settle the turns being started by the previous run")
	}
	turns, err := s.settleRunningTurns(ctx)
	if err != nil {
		return err
	}
	if err := s.store.Client.Message.Update().Where(inProgressItems()).Where(s.own.items()...).
		SetStatus(agent.ItemFailed).SetUpdatedAt(now).Exec(ctx); err != nil {
		return apperr.Storage(err, "close the items of the previous run")
	}
	approvals, err := s.approvals.cancelOfPreviousRun(ctx, now)
	if err != nil {
		return err
	}
	// A session FAILED by its thread's system error had it in the previous
	// run's Codex; this run's reloads the thread before its next turn.
	sessions, err := s.store.Client.AgentSession.Update().
		Where(agentsession.StatusIn(agentsession.StatusWORKING, agentsession.StatusFAILED)).Where(s.own.sessions()...).
		SetStatus(agentsession.StatusREADY).SetUpdatedAt(now).
		Save(ctx)
	if err != nil {
		return apperr.Storage(err, "reset the sessions of the previous run")
	}
	if turns > 0 || sessions > 0 || approvals > 0 {
		s.log.WarnContext(ctx, "settled work left running by the previous run", "turns", turns, "sessions_ready", sessions, "approvals_cancelled", approvals)
	}
	return nil
}

// settleRunningTurns runs at start for the turns the previous process left
// in progress. Their app-server died with it, so none is still running;
// how each ended, and the items it recorded, come from Codex's own record
// (thread/turns/list). A turn Codex does not have, or has in progress,
// failed; so does every turn when Codex cannot be read, with unsettledMark
// so that it is revisited when Codex is back. It returns how many turns
// it settled.
func (s *Service) settleRunningTurns(ctx context.Context) (int, error) {
	running, err := s.store.Client.Turn.Query().Where(runningTurns()).
		WithSession().All(ctx)
	if err != nil {
		return 0, apperr.Storage(err, "read the turns of the previous run")
	}
	running = s.own.turns(running)
	// Codex is asked for just these turns (its newest), not whole histories.
	wanted := map[string][]string{} // turn ids by session
	for _, t := range running {
		wanted[t.AgentSessionID] = append(wanted[t.AgentSessionID], t.TurnID)
	}
	histories := map[string]map[string]agent.RuntimeTurn{} // by session, by turn id
	for _, t := range running {
		a := t.Edges.Session
		h, ok := histories[a.ID]
		unreadable := h == nil && ok
		if !ok {
			h = map[string]agent.RuntimeTurn{}
			if s.rt != nil && a.ProviderSessionID != "" {
				turns, err := s.rt.History(ctx, agent.HistoryInput{Provider: a.Provider, ThreadID: a.ProviderSessionID,
					TurnIDs: wanted[a.ID]})
				if err != nil {
					s.log.WarnContext(ctx, "reconcile: Codex's record unavailable; the running turns are failed until it is back",
						"session", a.ID, "err", err)
					h, unreadable = nil, true
				}
				for _, rt := range turns {
					h[rt.ID] = rt
				}
			}
			histories[a.ID] = h
		}
		status, reason, code := turn.StatusFAILED, "tuttid stopped while the turn was running", ""
		if unreadable {
			reason += unsettledMark
			s.lanes.setAllSettled(false)
		}
		if rec, ok := h[t.TurnID]; ok {
			if err := s.storeRecorded(ctx, a, rec); err != nil {
				return 0, apperr.Storage(err, "store the recorded items")
			}
			// A turn Codex still has in progress died with its app-server.
			if st, ended := TurnStatusOf(rec.Status); ended {
				status = st
				if st != turn.StatusFAILED {
					reason = ""
				} else if rec.Error != "" {
					reason, code = rec.Error, rec.ErrorCode
				}
			}
		}
		if err := t.Update().SetStatus(status).SetError(reason).SetErrorCode(code).SetCompletedAt(s.now()).Exec(ctx); err != nil {
			return 0, apperr.Storage(err, "close a turn of the previous run")
		}
		end := itemEnd(status)
		if status == turn.StatusCOMPLETED {
			end = agent.ItemIncomplete
		}
		if err := closeOpenItems(ctx, s.now(), s.store.Client, a.ID, t.TurnID, end); err != nil {
			return 0, apperr.Storage(err, "close the items of the previous run")
		}
		s.log.WarnContext(ctx, "reconcile: turn left running by the previous run settled", "session", a.ID,
			"turn", t.TurnID, "status", status, "from_codex", h[t.TurnID].ID != "")
	}
	return len(running), nil
}
