package session

import (
	"context"

	"tuttid/activity"
	"tuttid/agent"
	"tuttid/ent"
	"tuttid/ent/agentsession"
)

// onTurnRetrying says on the running turn why it waits: the provider
// retries a model request that failed.
func (s *Service) onTurnRetrying(ctx context.Context, a *ent.AgentSession, e agent.Event) error {
	msg, code := e.Error, ""
	if e.Failure != nil {
		code = e.Failure.Code
		if msg == "" {
			msg = e.Failure.Message
		}
	}
	s.log.DebugContext(ctx, "provider retrying a model request", "session", a.ID, "turn", e.TurnID, "code", code, "error", msg)
	var t *ent.Turn
	if e.TurnID != "" {
		var err error
		if t, err = s.ensureTurn(ctx, a, e.TurnID); err != nil {
			return err
		}
	}
	s.changes.publish(ctx, activity.Event{Kind: activity.TurnRetrying, WorkspaceID: a.WorkspaceID, AgentSessionID: a.ID, Turn: t, Error: msg})
	return nil
}

// onTokenUsage stores a session's usage (it survives a restart) and
// publishes it.
func (s *Service) onTokenUsage(ctx context.Context, a *ent.AgentSession, u agent.TokenUsage) error {
	return s.changes.commit(ctx, func(c *ent.Client) ([]activity.Event, error) {
		updated, err := c.AgentSession.UpdateOneID(a.ID).SetTokenUsage(&u).Save(ctx)
		if ent.IsNotFound(err) {
			return nil, nil // deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		return []activity.Event{{Kind: activity.TokenUsageUpdated, WorkspaceID: a.WorkspaceID, AgentSessionID: a.ID, Session: updated}}, nil
	})
}

// publishToEveryWorkspace publishes ev, which belongs to no session, once
// per workspace: it reaches every subscription.
func (c *changes) publishToEveryWorkspace(ctx context.Context, ev activity.Event) error {
	ids, err := c.store.Client.Workspace.Query().IDs(ctx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		ev.WorkspaceID = id
		c.publish(ctx, ev)
	}
	return nil
}

// onWarning tells the person what the provider warned about: the
// subscribers of the session whose thread it names, or, for a warning about
// no known thread (its configuration, a deprecation), every workspace's.
// The runtime logs it at warn already.
func (s *Service) onWarning(ctx context.Context, e agent.Event) error {
	s.log.DebugContext(ctx, "provider warning", "method", e.Method, "text", e.Notice, "thread", e.ThreadID)
	if e.Notice == "" {
		return nil
	}
	ev := activity.Event{Kind: activity.ProviderWarning, Notice: e.Notice, NoticeKind: e.Method}
	if e.ThreadID != "" {
		a, err := s.store.Client.AgentSession.Query().Where(agentsession.ProviderSessionID(e.ThreadID)).First(ctx)
		switch {
		case err == nil:
			ev.WorkspaceID, ev.AgentSessionID = a.WorkspaceID, a.ID
			s.changes.publish(ctx, ev)
			return nil
		case !ent.IsNotFound(err):
			return err
		}
	}
	return s.changes.publishToEveryWorkspace(ctx, ev)
}
