package lineage

import (
	"context"
	"fmt"

	"entgo.io/ent/dialect/sql"

	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/predicate"
	"tuttid/ent/sessionfork"
)

// downCTE names (as down(id)) a session and everything forked from it,
// transitively. Its arguments are the session id and the workspace id.
// UNION and the CROSS JOIN order as in upCTE.
const downCTE = `down(id) AS (
  SELECT CAST(? AS VARCHAR)
  UNION
  SELECT f.child_agent_session_id
    ` + downStep + `
)`

// subtreeSQL selects a session and its descendants.
const subtreeSQL = `WITH RECURSIVE ` + downCTE + ` SELECT id FROM down`

// InSubtree is the predicate "the session is sessionID or forked from it,
// transitively", within a workspace: one subquery, usable in queries,
// updates and deletes of sessions.
func InSubtree(workspaceID, sessionID string) predicate.AgentSession {
	return agentsession.And(agentsession.WorkspaceID(workspaceID),
		in(agentsession.FieldID, subtreeSQL, sessionID, workspaceID))
}

// InChain is the predicate "the session is sessionID or one of its
// ancestors", within a workspace.
func InChain(workspaceID, sessionID string) predicate.AgentSession {
	return agentsession.And(agentsession.WorkspaceID(workspaceID),
		in(agentsession.FieldID, chainSQL, sessionID, workspaceID))
}

// Subtree returns a session and everything forked from it, transitively,
// depth-first from it (depths relative to it), in two queries; nothing for
// an unknown session.
func Subtree(ctx context.Context, c *ent.Client, workspaceID, sessionID string) ([]Node, error) {
	forks, err := c.SessionFork.Query().
		Where(sessionfork.WorkspaceID(workspaceID),
			in(sessionfork.FieldParentAgentSessionID, subtreeSQL, sessionID, workspaceID)).
		All(ctx)
	if err != nil {
		return nil, fmt.Errorf("query the subtree's lineage: %w", err)
	}
	sessions, err := c.AgentSession.Query().Where(InSubtree(workspaceID, sessionID)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("load the subtree: %w", err)
	}
	return walk([]string{sessionID}, sessions, forks), nil
}

// ColumnInSubtree is the predicate "column holds the id of sessionID or of
// a session forked from it, transitively", for tables that refer to
// sessions (turns, messages).
func ColumnInSubtree(column, workspaceID, sessionID string) func(*sql.Selector) {
	return in(column, subtreeSQL, sessionID, workspaceID)
}
