// Package lineage answers fork-lineage questions (parent, children,
// ancestors, the whole tree) from the workspace_agent_session_forks table,
// each in a constant number of SQL queries whatever the tree's size.
package lineage

import (
	"context"
	"database/sql"
	"fmt"

	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/sessionfork"
)

// Node is one session of a fork tree.
type Node struct {
	Session  *ent.AgentSession
	ParentID string // "" for the root
	Depth    int    // the root has depth 0
}

// maxDepth bounds the recursive queries so that a corrupt (cyclic) table
// cannot make them run forever.
const maxDepth = 10000

// ancestorsSQL walks from a session up to its root; depth 1 is the parent.
const ancestorsSQL = `
WITH RECURSIVE up(id, depth) AS (
  SELECT parent_agent_session_id, 1 FROM workspace_agent_session_forks
   WHERE workspace_id = ? AND child_agent_session_id = ?
  UNION ALL
  SELECT f.parent_agent_session_id, up.depth + 1
    FROM workspace_agent_session_forks f JOIN up ON f.child_agent_session_id = up.id
   WHERE f.workspace_id = ? AND up.depth < ?
)
SELECT id, depth FROM up ORDER BY depth DESC`

// treeSQL walks down from a root; path orders the rows depth-first with
// siblings oldest first.
const treeSQL = `
WITH RECURSIVE down(id, parent, depth, path) AS (
  SELECT ?, '', 0, ''
  UNION ALL
  SELECT f.child_agent_session_id, f.parent_agent_session_id, down.depth + 1,
         down.path || '/' || printf('%020d', f.forked_at_unix_ms) || f.child_agent_session_id
    FROM workspace_agent_session_forks f JOIN down ON f.parent_agent_session_id = down.id
   WHERE f.workspace_id = ? AND down.depth < ?
)
SELECT id, parent, depth FROM down ORDER BY path`

// Ancestors returns a session's ancestors, root first and parent last.
func Ancestors(ctx context.Context, c *ent.Client, workspaceID, sessionID string) ([]*ent.AgentSession, error) {
	ids, err := ancestorIDs(ctx, c, workspaceID, sessionID)
	if err != nil {
		return nil, err
	}
	return loadInOrder(ctx, c, ids)
}

// Tree returns the whole fork tree a session belongs to, from its root,
// depth-first with siblings oldest first.
func Tree(ctx context.Context, c *ent.Client, workspaceID, sessionID string) ([]Node, error) {
	ids, err := ancestorIDs(ctx, c, workspaceID, sessionID)
	if err != nil {
		return nil, err
	}
	root := sessionID
	if len(ids) > 0 {
		root = ids[0]
	}
	rows, err := c.QueryContext(ctx, treeSQL, root, workspaceID, maxDepth)
	if err != nil {
		return nil, fmt.Errorf("query fork tree: %w", err)
	}
	defer rows.Close()
	var order []string
	parents := map[string]string{}
	depths := map[string]int{}
	for rows.Next() {
		var id, parent string
		var depth int
		if err := rows.Scan(&id, &parent, &depth); err != nil {
			return nil, fmt.Errorf("scan fork tree: %w", err)
		}
		if _, seen := depths[id]; seen {
			continue
		}
		order = append(order, id)
		parents[id], depths[id] = parent, depth
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read fork tree: %w", err)
	}
	sessions, err := loadInOrder(ctx, c, order)
	if err != nil {
		return nil, err
	}
	nodes := make([]Node, 0, len(sessions))
	for _, s := range sessions {
		nodes = append(nodes, Node{Session: s, ParentID: parents[s.ID], Depth: depths[s.ID]})
	}
	return nodes, nil
}

// Children returns a session's direct forks, oldest first.
func Children(ctx context.Context, c *ent.Client, workspaceID, sessionID string) ([]*ent.AgentSession, error) {
	forks, err := c.SessionFork.Query().
		Where(sessionfork.WorkspaceID(workspaceID), sessionfork.ParentAgentSessionID(sessionID)).
		Order(ent.Asc(sessionfork.FieldForkedAtUnixMs), ent.Asc(sessionfork.FieldID)).
		WithChild().
		All(ctx)
	if err != nil {
		return nil, fmt.Errorf("query children: %w", err)
	}
	out := make([]*ent.AgentSession, 0, len(forks))
	for _, f := range forks {
		out = append(out, f.Edges.Child)
	}
	return out, nil
}

func ancestorIDs(ctx context.Context, c *ent.Client, workspaceID, sessionID string) ([]string, error) {
	rows, err := c.QueryContext(ctx, ancestorsSQL, workspaceID, sessionID, workspaceID, maxDepth)
	if err != nil {
		return nil, fmt.Errorf("query ancestors: %w", err)
	}
	return scanIDs(rows)
}

func scanIDs(rows *sql.Rows) ([]string, error) {
	defer rows.Close()
	var ids []string
	seen := map[string]bool{}
	for rows.Next() {
		var id string
		var depth int
		if err := rows.Scan(&id, &depth); err != nil {
			return nil, fmt.Errorf("scan ancestors: %w", err)
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read ancestors: %w", err)
	}
	return ids, nil
}

// loadInOrder loads sessions by id in one query, keeping the ids' order.
func loadInOrder(ctx context.Context, c *ent.Client, ids []string) ([]*ent.AgentSession, error) {
	if len(ids) == 0 {
		return []*ent.AgentSession{}, nil
	}
	list, err := c.AgentSession.Query().Where(agentsession.IDIn(ids...)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("load sessions: %w", err)
	}
	byID := make(map[string]*ent.AgentSession, len(list))
	for _, s := range list {
		byID[s.ID] = s
	}
	out := make([]*ent.AgentSession, 0, len(ids))
	for _, id := range ids {
		if s, ok := byID[id]; ok {
			out = append(out, s)
		}
	}
	return out, nil
}

// ForkedFrom returns the lineage row where a session is the child, or nil
// for a root.
func ForkedFrom(ctx context.Context, c *ent.Client, workspaceID, sessionID string) (*ent.SessionFork, error) {
	f, err := c.SessionFork.Query().
		Where(sessionfork.WorkspaceID(workspaceID), sessionfork.ChildAgentSessionID(sessionID)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("query lineage: %w", err)
	}
	return f, nil
}

// Parent returns a session's direct parent, or nil for a root.
func Parent(ctx context.Context, c *ent.Client, workspaceID, sessionID string) (*ent.AgentSession, error) {
	f, err := c.SessionFork.Query().
		Where(sessionfork.WorkspaceID(workspaceID), sessionfork.ChildAgentSessionID(sessionID)).
		WithParent().Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("query parent: %w", err)
	}
	return f.Edges.Parent, nil
}
