package session

import (
	"context"
	"time"

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
