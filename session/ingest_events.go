package session

import (
	"context"
	"errors"
	"time"

	"tuttid/activity"
	"tuttid/agent"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/message"
	"tuttid/ent/turn"
)

// Ingest stores what the runtime reports until ctx ends or the runtime
// closes its events. Each thread's events go to a lane of their own
// (ingest_lanes.go), stored in the order the provider sent them; Ingest
// returns once every lane has stopped.
func (s *Service) Ingest(ctx context.Context) {
	s.lanes.accept()
	defer s.lanes.drain()
	stopRevisits := s.revisitUntilSettled(ctx)
	defer stopRevisits()
	events := s.rt.Events()
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-events:
			if !ok {
				return
			}
			s.lanes.dispatch(ctx, e)
		}
	}
}

// HandleEvent stores one runtime event and publishes what changed.
func (s *Service) HandleEvent(ctx context.Context, e agent.Event) error {
	switch e.Kind {
	case agent.EventRuntimeRestarted:
		s.log.WarnContext(ctx, "agent runtime restarted; threads resume before their next turn")
		if err := s.recoverFailed(ctx); err != nil {
			return err
		}
		// Codex is back: turns settled without its record take it now.
		return s.revisitUnsettled(ctx)
	case agent.EventAccountUpdated:
		if ev, ok := s.accounts.Updated(ctx, e); ok {
			return s.changes.publishToEveryWorkspace(ctx, ev)
		}
		return nil
	case agent.EventRateLimits:
		// The runtime keeps the latest for the rateLimits query.
		s.log.DebugContext(ctx, "provider rate limits updated")
		return nil
	case agent.EventWarning:
		return s.onWarning(ctx, e)
	case agent.EventOther:
		s.log.DebugContext(ctx, "provider notification not projected", "method", e.Method,
			"thread", e.ThreadID)
		return nil
	}
	if e.ThreadID == "" {
		s.log.DebugContext(ctx, "provider event without a thread", "kind", e.Kind, "method", e.Method)
		return nil
	}
	a, err := s.store.Client.AgentSession.Query().
		Where(agentsession.ProviderSessionID(e.ThreadID)).First(ctx)
	if ent.IsNotFound(err) {
		// A thread tuttid does not know (yet): a fork child before its row is
		// committed, or a thread of another client of the same Codex home.
		s.log.DebugContext(ctx, "provider event for an unknown thread", "kind", e.Kind,
			"thread", e.ThreadID)
		return nil
	}
	if err != nil {
		return err
	}
	switch e.Kind {
	case agent.EventThreadStatus:
		return s.onThreadStatus(ctx, a, agent.ThreadStatus(e.Status))
	case agent.EventTurnStarted:
		return s.onTurnStarted(ctx, a, e.TurnID)
	case agent.EventTurnCompleted:
		return s.onTurnCompleted(ctx, a, e)
	case agent.EventItemStarted, agent.EventItemCompleted:
		if e.Message == nil {
			return errors.New("item event without a message")
		}
		return s.onItem(ctx, a, *e.Message)
	case agent.EventApprovalRequested:
		if e.Approval == nil {
			return errors.New("approval event without a request")
		}
		return s.approvals.requested(ctx, a, *e.Approval)
	case agent.EventApprovalResolved:
		if e.Resolution == nil {
			return errors.New("approval event without a resolution")
		}
		_, err := s.approvals.resolve(ctx, a, e.Resolution.ID, e.Resolution.Decision, e.Resolution.By)
		return err
	case agent.EventTurnRetrying:
		return s.onTurnRetrying(ctx, a, e)
	case agent.EventTokenUsage:
		if e.TokenUsage == nil {
			return errors.New("token usage event without usage")
		}
		return s.onTokenUsage(ctx, a, *e.TokenUsage)
	case agent.EventMessageDelta:
		s.changes.publish(ctx, activity.Event{Kind: activity.MessageDelta, WorkspaceID: a.WorkspaceID,
			AgentSessionID: a.ID, Delta: e.Delta, ItemID: e.ItemID, DeltaKind: e.ItemKind})
		return nil
	}
	s.log.DebugContext(ctx, "runtime event kind not handled", "kind", e.Kind)
	return nil
}

func (s *Service) onThreadStatus(ctx context.Context, a *ent.AgentSession, st agent.ThreadStatus) error {
	var want agentsession.Status
	switch st {
	case agent.ThreadActive:
		want = agentsession.StatusWORKING
	case agent.ThreadIdle:
		// Codex reports the thread idle just before turn/completed; READY
		// then waits for onTurnCompleted, so clients see TURN_COMPLETED
		// first and a refetch on READY finds the turn finished.
		running, err := runningTurnIDs(ctx, s.store.Client, a.ID)
		if err != nil {
			return err
		}
		if len(running) > 0 {
			// If turn/completed never comes (lost, unreadable), the
			// turn is settled from Codex after a grace period.
			s.checkAfterIdle(ctx, a.ProviderSessionID, running)
			return nil
		}
		want = agentsession.StatusREADY
	case agent.ThreadSystemError:
		want = agentsession.StatusFAILED
	default:
		return nil
	}
	return s.setStatus(ctx, a, want)
}

// setStatus commits a session's status, unless it has it already, and
// publishes SESSION_UPDATED, then the events of then (staged with it).
func (s *Service) setStatus(ctx context.Context, a *ent.AgentSession, want agentsession.Status, then ...activity.Event) error {
	defer s.lockState(a.ID)()
	return s.changes.commit(ctx, func(c *ent.Client) ([]activity.Event, error) {
		updated, err := c.AgentSession.UpdateOneID(a.ID).Where(agentsession.StatusNEQ(want)).
			SetStatus(want).SetUpdatedAt(s.now()).Save(ctx)
		if ent.IsNotFound(err) {
			return then, nil // already so (or deleted)
		}
		if err != nil {
			return nil, err
		}
		return append([]activity.Event{sessionUpdated(updated)}, then...), nil
	})
}

func (s *Service) onTurnStarted(ctx context.Context, a *ent.AgentSession, turnID string) error {
	t, err := s.ensureTurn(ctx, a, turnID)
	if err != nil {
		return err
	}
	// WORKING is committed (and published) before TURN_STARTED goes out.
	return s.setStatus(ctx, a, agentsession.StatusWORKING,
		activity.Event{Kind: activity.TurnStarted, WorkspaceID: a.WorkspaceID, AgentSessionID: a.ID, Turn: t})
}

func (s *Service) onTurnCompleted(ctx context.Context, a *ent.AgentSession, e agent.Event) error {
	if _, err := s.ensureTurn(ctx, a, e.TurnID); err != nil {
		return err
	}
	status, ended := TurnStatusOf(agent.TurnStatus(e.Status))
	if !ended {
		// The turn did end; Codex did not say how otherwise.
		status = turn.StatusCOMPLETED
	}
	reason, code := e.Error, ""
	if e.Failure != nil && status == turn.StatusFAILED {
		code = e.Failure.Code
		if reason == "" {
			reason = e.Failure.Message
		}
	}
	// A turn tuttid failed already (an event it could not store) keeps that.
	status, kept, err := s.keepTuttidFailure(ctx, a, e.TurnID, status, reason)
	if err != nil {
		return err
	}
	if kept != reason {
		reason, code = kept, ""
	}
	if status == turn.StatusFAILED {
		s.log.WarnContext(ctx, "turn failed", "session", a.ID, "turn", e.TurnID, "code", code, "error", reason)
	}
	// A completed turn's items still in progress take Codex's record.
	if err := s.settleOpenItems(ctx, a, e.TurnID, status); err != nil {
		return err
	}
	// Requests still waiting end with their turn, as CANCEL, before the
	// turn's end is published.
	if err := s.approvals.cancelPending(ctx, a, e.TurnID, "turn_ended"); err != nil {
		return err
	}
	return s.completeTurn(ctx, a, e.TurnID, status, reason, code)
}

func (s *Service) onItem(ctx context.Context, a *ent.AgentSession, m agent.RuntimeMessage) error {
	if m.ID == "" {
		return errors.New("item without an id")
	}
	var saved *ent.Message
	var st Staged
	err := s.store.WithTx(ctx, func(tx *ent.Tx) error {
		var (
			added bool
			err   error
		)
		if saved, added, err = upsertMessage(ctx, tx, a, m, s.now()); err != nil {
			return err
		}
		kind := activity.MessageUpdated
		if added {
			kind = activity.MessageAdded
		}
		st, err = s.changes.stage(ctx, tx, activity.Event{Kind: kind, WorkspaceID: a.WorkspaceID, AgentSessionID: a.ID, Message: saved})
		return err
	})
	if err != nil {
		return err
	}
	// Detach from the committed transaction: subscribers may query through it.
	saved.Unwrap()
	s.Announce(ctx, st)
	return nil
}

// closeOpenItems marks a turn's messages still in progress with the way
// the turn ended, so that none stays in progress forever.
func closeOpenItems(ctx context.Context, now time.Time, c *ent.Client, sessionID, turnID, status string) error {
	return c.Message.Update().
		Where(message.AgentSessionID(sessionID), message.TurnID(turnID), message.Status(agent.ItemInProgress)).
		SetStatus(status).SetUpdatedAt(now).Exec(ctx)
}

// recoverFailed makes the sessions a crashed provider left FAILED usable
// again once it is back: their threads are reloaded before the next turn,
// so they can be continued and forked.
func (s *Service) recoverFailed(ctx context.Context) error {
	failed, err := s.store.Client.AgentSession.Query().Where(agentsession.StatusEQ(agentsession.StatusFAILED)).All(ctx)
	if err != nil {
		return err
	}
	for _, a := range failed {
		if err := s.setStatus(ctx, a, agentsession.StatusREADY); err != nil {
			return err
		}
	}
	return nil
}
