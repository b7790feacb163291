package session

import (
	"context"
	"time"

	"tuttid/activity"
	"tuttid/agent"
	"tuttid/ent"
	"tuttid/ent/agentsession"
)

// NewSession is a session row to store: a started session, or a fork's child.
type NewSession struct {
	ID, WorkspaceID, Provider, ProviderSessionID string
	Title, Cwd                                   string
	Status                                       agentsession.Status
	Visible                                      bool
	Settings                                     agent.ComposerSettings
	RuntimeContext                               map[string]any
	At                                           time.Time
}

// CreateRecord stores a session row with c: the service's client, or a
// transaction's (a fork stores its child together with its lineage and
// history). Nothing is published: that waits for the commit (Created).
func CreateRecord(ctx context.Context, c *ent.Client, n NewSession) (*ent.AgentSession, error) {
	rc := n.RuntimeContext
	if rc == nil {
		rc = map[string]any{}
	}
	return c.AgentSession.Create().
		SetID(n.ID).SetWorkspaceID(n.WorkspaceID).SetProvider(n.Provider).
		SetProviderSessionID(n.ProviderSessionID).SetTitle(n.Title).
		SetStatus(n.Status).SetVisible(n.Visible).SetCwd(n.Cwd).
		SetSettings(n.Settings).SetRuntimeContext(rc).
		SetCreatedAt(n.At).SetUpdatedAt(n.At).
		Save(ctx)
}

// Created announces a stored (committed) session.
func (s *Service) Created(ctx context.Context, a *ent.AgentSession) {
	s.publish(ctx, activity.Event{Kind: activity.SessionCreated, WorkspaceID: a.WorkspaceID, AgentSessionID: a.ID, Session: a})
}

// Idle reports whether a session is quiet enough to be forked: its status
// is READY or COMPLETED and none of its turns is running. running tells
// the caller which of the two it is not, for its message.
func (s *Service) Idle(ctx context.Context, a *ent.AgentSession) (idle, running bool, err error) {
	running, err = s.HasRunningTurn(ctx, a.ID)
	if err != nil {
		return false, false, err
	}
	quiet := a.Status == agentsession.StatusREADY || a.Status == agentsession.StatusCOMPLETED
	return quiet && !running, running, nil
}
