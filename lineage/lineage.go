// Package lineage answers fork-lineage questions (parent, children,
// ancestors, the whole tree) from the workspace_agent_session_forks table,
// each in a constant number of SQL queries whatever the tree's size.
//
// The recursive walks are SQL CTEs used as subqueries of ordinary ent
// queries, so every statement goes through the ent client's
// dialect.Driver (and so through any driver wrapper: debug logging,
// tracing, query counting) and no list of ids is ever bound as parameters.
package lineage

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"entgo.io/ent/dialect/sql"

	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/sessionfork"
	"tuttid/store"
)

// Node is one session of a fork tree.
type Node struct {
	Session  *ent.AgentSession
	ParentID string // "" for the root
	Depth    int    // the root has depth 0
	// Fork is the lineage row where Session is the child; nil for the root.
	Fork *ent.SessionFork
}

// upCTE names (as up(id)) a session and all its ancestors. Its arguments
// are the session id and the workspace id. UNION (not UNION ALL) keeps each
// id once, so the walk ends even on a corrupt, cyclic table. The CROSS JOINs
// fix the join order: each step looks its row up by index; left to itself
// SQLite scanned the workspace's forks per step (quadratic). PostgreSQL's
// planner reorders a CROSS JOIN like any inner join and needs no such help
// (TestPostgresLineagePlan); it does need the seed typed as the recursive
// step's column (a bare parameter would be text, the column varchar).
// Placeholders are `?`: in makes them the dialect's.
const upCTE = `up(id) AS (
  SELECT CAST(? AS VARCHAR)
  UNION
  SELECT f.parent_agent_session_id
    ` + upStep + `
)`

// upStep is a step of a walk up, as SQLite plans it well: from the rows
// of up, the lineage row where each is the child, looked up by index.
const upStep = `FROM up CROSS JOIN workspace_agent_session_forks f
   WHERE f.workspace_id = ? AND f.child_agent_session_id = up.id`

// downStep is a step of a walk down: the rows where each is the parent.
const downStep = `FROM down CROSS JOIN workspace_agent_session_forks f
   WHERE f.workspace_id = ? AND f.parent_agent_session_id = down.id`

// postgresSteps rewrites the steps for PostgreSQL, whose planner reorders
// a CROSS JOIN: it estimates a step at 10 rows and joins it by hashing
// the workspace's whole lineage table, at every step (quadratic in the
// depth: TestPostgresLineagePlan). A LATERAL subquery with OFFSET 0 is
// not flattened into a join: it runs once per row of the step, as an
// index lookup. (SQLite has no LATERAL.)
var postgresSteps = strings.NewReplacer(
	upStep, `FROM up CROSS JOIN LATERAL (SELECT parent_agent_session_id FROM workspace_agent_session_forks
   WHERE workspace_id = ? AND child_agent_session_id = up.id OFFSET 0) f`,
	downStep, `FROM down CROSS JOIN LATERAL (SELECT child_agent_session_id FROM workspace_agent_session_forks
   WHERE workspace_id = ? AND parent_agent_session_id = down.id OFFSET 0) f`,
)

// chainSQL selects a session and its ancestors.
const chainSQL = `WITH RECURSIVE ` + upCTE + ` SELECT id FROM up`

// treeSQL selects every session of the tree a session belongs to: its
// ancestors, then everything below any of them (which is everything below
// the root). Its arguments are the session id and the workspace id twice.
const treeSQL = `WITH RECURSIVE ` + upCTE + `,
down(id) AS (
  SELECT id FROM up
  UNION
  SELECT f.child_agent_session_id
    ` + downStep + `
)
SELECT id FROM down`

// in is the predicate "column IN (subquery)", the subquery's steps and
// placeholders made the dialect's.
func in(column, subquery string, args ...any) func(*sql.Selector) {
	return func(s *sql.Selector) {
		q := subquery
		if store.DialectOf(s.Dialect()) == store.Postgres {
			q = postgresSteps.Replace(q)
		}
		s.Where(store.ExprP(s.C(column)+" IN ("+q+")", args...))
	}
}

// Ancestors returns a session's ancestors, root first and parent last, in
// one query.
func Ancestors(ctx context.Context, c *ent.Client, workspaceID, sessionID string) ([]*ent.AgentSession, error) {
	sessions, forks, err := sessionsWithForks(ctx, c, workspaceID, in(agentsession.FieldID, chainSQL, sessionID, workspaceID))
	if err != nil {
		return nil, fmt.Errorf("query ancestors: %w", err)
	}
	parentOf := make(map[string]string, len(forks))
	for _, f := range forks {
		parentOf[f.ChildAgentSessionID] = f.ParentAgentSessionID
	}
	// Walk up from the session; seen stops a corrupt cycle.
	var ids []string
	seen := map[string]bool{sessionID: true}
	for id, ok := parentOf[sessionID]; ok && !seen[id]; id, ok = parentOf[id] {
		seen[id] = true
		ids = append(ids, id)
	}
	slices.Reverse(ids)
	return inOrder(sessions, ids), nil
}

// Tree returns the whole fork tree a session belongs to, from its root,
// depth-first with siblings oldest first (the order of Children), in one
// query.
func Tree(ctx context.Context, c *ent.Client, workspaceID, sessionID string) ([]Node, error) {
	sessions, forks, err := sessionsWithForks(ctx, c, workspaceID, in(agentsession.FieldID, treeSQL, sessionID, workspaceID, workspaceID))
	if err != nil {
		return nil, fmt.Errorf("query fork tree: %w", err)
	}
	parentOf := make(map[string]string, len(forks))
	for _, f := range forks {
		parentOf[f.ChildAgentSessionID] = f.ParentAgentSessionID
	}
	// The root is where the walk up from the session ends (on a corrupt
	// cycle: the last session before it repeats).
	root := sessionID
	seen := map[string]bool{root: true}
	for p, ok := parentOf[root]; ok && !seen[p]; p, ok = parentOf[p] {
		seen[p] = true
		root = p
	}
	return walk([]string{root}, sessions, forks), nil
}

// olderFirst orders lineage rows by fork time, then by the order they were
// recorded in.
func olderFirst(a, b *ent.SessionFork) int {
	return cmp.Or(cmp.Compare(a.ForkedAtUnixMs, b.ForkedAtUnixMs), cmp.Compare(a.ID, b.ID))
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
		if f.Edges.Child != nil {
			out = append(out, f.Edges.Child)
		}
	}
	return out, nil
}

// inOrder returns the sessions with the given ids, in the ids' order.
func inOrder(sessions []*ent.AgentSession, ids []string) []*ent.AgentSession {
	byID := make(map[string]*ent.AgentSession, len(sessions))
	for _, s := range sessions {
		byID[s.ID] = s
	}
	out := make([]*ent.AgentSession, 0, len(ids))
	for _, id := range ids {
		if s, ok := byID[id]; ok {
			out = append(out, s)
		}
	}
	return out
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

// ParentsOf returns the direct parents of many sessions of a workspace,
// by child id (roots are absent), in two queries.
func ParentsOf(ctx context.Context, c *ent.Client, workspaceID string, sessionIDs []string) (map[string]*ent.AgentSession, error) {
	forks, err := c.SessionFork.Query().
		Where(sessionfork.WorkspaceID(workspaceID), sessionfork.ChildAgentSessionIDIn(sessionIDs...)).
		WithParent().All(ctx)
	if err != nil {
		return nil, fmt.Errorf("query parents: %w", err)
	}
	out := make(map[string]*ent.AgentSession, len(forks))
	for _, f := range forks {
		if f.Edges.Parent != nil {
			out[f.ChildAgentSessionID] = f.Edges.Parent
		}
	}
	return out, nil
}

// ChildrenOf returns the direct forks of many sessions of a workspace, by
// parent id, each list oldest first (as Children), in two queries.
func ChildrenOf(ctx context.Context, c *ent.Client, workspaceID string, sessionIDs []string) (map[string][]*ent.AgentSession, error) {
	forks, err := c.SessionFork.Query().
		Where(sessionfork.WorkspaceID(workspaceID), sessionfork.ParentAgentSessionIDIn(sessionIDs...)).
		Order(ent.Asc(sessionfork.FieldForkedAtUnixMs), ent.Asc(sessionfork.FieldID)).
		WithChild().All(ctx)
	if err != nil {
		return nil, fmt.Errorf("query children: %w", err)
	}
	out := make(map[string][]*ent.AgentSession, len(sessionIDs))
	for _, f := range forks {
		if f.Edges.Child != nil {
			out[f.ParentAgentSessionID] = append(out[f.ParentAgentSessionID], f.Edges.Child)
		}
	}
	return out, nil
}

// ForkedFromOf returns the lineage rows of many sessions of a workspace,
// by child id (roots are absent), in one query.
func ForkedFromOf(ctx context.Context, c *ent.Client, workspaceID string, sessionIDs []string) (map[string]*ent.SessionFork, error) {
	forks, err := c.SessionFork.Query().
		Where(sessionfork.WorkspaceID(workspaceID), sessionfork.ChildAgentSessionIDIn(sessionIDs...)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("query lineage: %w", err)
	}
	out := make(map[string]*ent.SessionFork, len(forks))
	for _, f := range forks {
		out[f.ChildAgentSessionID] = f
	}
	return out, nil
}
