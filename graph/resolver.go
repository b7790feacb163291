package graph

import (
	"context"

	"tuttid/ent"
	"tuttid/fork"
	"tuttid/lineage"
	"tuttid/session"
)

// Resolver holds the services the resolvers translate GraphQL to.
type Resolver struct {
	Sessions *session.Service
	Lineage  LineageReader
	Tooling  LineageTooling
	Forks    *fork.Service
}

// LineageReader is the fork lineage as the resolvers read it;
// session.Service is one.
type LineageReader interface {
	Parent(ctx context.Context, a *ent.AgentSession) (*ent.AgentSession, error)
	Children(ctx context.Context, a *ent.AgentSession) ([]*ent.AgentSession, error)
	ForkedFrom(ctx context.Context, a *ent.AgentSession) (*ent.SessionFork, error)
	Ancestors(ctx context.Context, a *ent.AgentSession) ([]*ent.AgentSession, error)
	Tree(ctx context.Context, workspaceID, sessionID string) ([]lineage.Node, error)
}
