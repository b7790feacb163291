package graph

import (
	"context"

	"tuttid/ent"
	"tuttid/lineage"
	"tuttid/session"
)

// LineageTooling is what the lineage tooling resolvers call (compare,
// fork points, rename/archive, subtree delete); session.Service is one.
type LineageTooling interface {
	Compare(ctx context.Context, workspaceID, a, b string, withMessages bool) (*lineage.Comparison, error)
	ForkPoints(ctx context.Context, a *ent.AgentSession) ([]lineage.ForkPoint, error)
	Update(ctx context.Context, in session.UpdateInput) (*ent.AgentSession, error)
	DeleteSubtree(ctx context.Context, workspaceID, sessionID string) (string, error)
}

func forkPoints(points []lineage.ForkPoint) []*lineage.ForkPoint {
	out := make([]*lineage.ForkPoint, len(points))
	for i := range points {
		out[i] = &points[i]
	}
	return out
}
