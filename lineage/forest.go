package lineage

import (
	"context"
	"fmt"

	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/sessionfork"
)

// Forest returns every fork tree of a workspace, in two queries: the roots
// oldest first, each followed by its tree as Tree lays it out. A corrupt
// cycle with no root is left out.
func Forest(ctx context.Context, c *ent.Client, workspaceID string) ([]Node, error) {
	forks, err := c.SessionFork.Query().Where(sessionfork.WorkspaceID(workspaceID)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("query the workspace's lineage: %w", err)
	}
	sessions, err := c.AgentSession.Query().Where(agentsession.WorkspaceID(workspaceID)).
		Order(agentsession.ByCreatedAt(), agentsession.ByID()).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("load the workspace's sessions: %w", err)
	}
	forked := make(map[string]bool, len(forks))
	for _, f := range forks {
		forked[f.ChildAgentSessionID] = true
	}
	var roots []string
	for _, s := range sessions {
		if !forked[s.ID] {
			roots = append(roots, s.ID)
		}
	}
	return walk(roots, sessions, forks), nil
}
