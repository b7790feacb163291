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
	ID, WorkspaceID, Provider, ThreadID string
	// InstanceID is the owner: the instance whose Codex holds ThreadID.
	InstanceID     string
	Title, Cwd     string
	Status         agentsession.Status
	Visible        bool
	Settings       agent.ComposerSettings
	RuntimeContext map[string]any
	At             time.Time
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
		SetProviderSessionID(n.ThreadID).SetTitle(n.Title).
		SetStatus(n.Status).SetVisible(n.Visible).SetCwd(n.Cwd).
		SetSettings(n.Settings).SetRuntimeContext(rc).
		SetInstanceID(n.InstanceID).
		SetCreatedAt(n.At).SetUpdatedAt(n.At).
		Save(ctx)
}

// Created announces a stored (committed) session.
func (s *Service) Created(ctx context.Context, a *ent.AgentSession) {
	s.publish(ctx, activity.Event{Kind: activity.SessionCreated, WorkspaceID: a.WorkspaceID, AgentSessionID: a.ID, Session: a})
}

// Forked announces a stored (committed) fork: the child exists, and its
// parent has a new fork.
func (s *Service) Forked(ctx context.Context, child *ent.AgentSession, row *ent.SessionFork) {
	s.Created(ctx, child)
	s.publish(ctx, activity.Event{Kind: activity.SessionForked, WorkspaceID: child.WorkspaceID, AgentSessionID: row.ParentAgentSessionID, Session: child, Fork: row})
}
