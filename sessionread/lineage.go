package sessionread

import (
	"context"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/lineage"
	"tuttid/readahead"
)

// The fork lineage as the transports read it: lineage's queries, with
// failures as storage_unavailable and, for sessions listed together, one
// load for the whole list (see readAhead).

// Parent returns a session's direct parent, or nil for a root.
func (s *Reader) Parent(ctx context.Context, a *ent.AgentSession) (*ent.AgentSession, error) {
	if p := sessionList(ctx, a.ID); p != nil {
		m, err := readahead.Load(p, parentsKey{}, func() (map[string]*ent.AgentSession, error) {
			return lineage.ParentsOf(ctx, s.store.Client, p.Scope, p.IDs)
		})
		if err != nil {
			return nil, apperr.Storage(err, "read the parent sessions")
		}
		return m[a.ID], nil
	}
	parent, err := lineage.Parent(ctx, s.store.Client, a.WorkspaceID, a.ID)
	if err != nil {
		return nil, apperr.Storage(err, "read the parent session")
	}
	return parent, nil
}

// Children returns a session's direct forks, oldest first.
func (s *Reader) Children(ctx context.Context, a *ent.AgentSession) ([]*ent.AgentSession, error) {
	if p := sessionList(ctx, a.ID); p != nil {
		m, err := readahead.Load(p, childrenKey{}, func() (map[string][]*ent.AgentSession, error) {
			return lineage.ChildrenOf(ctx, s.store.Client, p.Scope, p.IDs)
		})
		if err != nil {
			return nil, apperr.Storage(err, "read the sessions' forks")
		}
		return nonNil(m[a.ID]), nil
	}
	kids, err := lineage.Children(ctx, s.store.Client, a.WorkspaceID, a.ID)
	if err != nil {
		return nil, apperr.Storage(err, "read the session's forks")
	}
	return kids, nil
}

// ForkedFrom returns the lineage row where a session is the child, or nil
// for a root.
func (s *Reader) ForkedFrom(ctx context.Context, a *ent.AgentSession) (*ent.SessionFork, error) {
	if p := sessionList(ctx, a.ID); p != nil {
		m, err := readahead.Load(p, forkedFromKey{}, func() (map[string]*ent.SessionFork, error) {
			return lineage.ForkedFromOf(ctx, s.store.Client, p.Scope, p.IDs)
		})
		if err != nil {
			return nil, apperr.Storage(err, "read the sessions' lineage")
		}
		return m[a.ID], nil
	}
	f, err := lineage.ForkedFrom(ctx, s.store.Client, a.WorkspaceID, a.ID)
	if err != nil {
		return nil, apperr.Storage(err, "read the session's lineage")
	}
	return f, nil
}

// Ancestors returns a session's ancestors, root first and parent last.
func (s *Reader) Ancestors(ctx context.Context, a *ent.AgentSession) ([]*ent.AgentSession, error) {
	out, err := lineage.Ancestors(ctx, s.store.Client, a.WorkspaceID, a.ID)
	if err != nil {
		return nil, apperr.Storage(err, "read the session's ancestors")
	}
	return out, nil
}

// Tree returns the fork tree a session belongs to, from its root.
func (s *Reader) Tree(ctx context.Context, workspaceID, sessionID string) ([]lineage.Node, error) {
	nodes, err := lineage.Tree(ctx, s.store.Client, workspaceID, sessionID)
	if err != nil {
		return nil, apperr.Storage(err, "read the fork tree")
	}
	return nodes, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
