package session

import (
	"context"
	"strings"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/validate"
)

// CreateWorkspace creates a workspace rooted at an existing directory,
// stored with symlinks resolved.
func (s *Service) CreateWorkspace(ctx context.Context, name, rootPath string, opts ...WorkspaceSettings) (*ent.Workspace, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return nil, apperr.New(apperr.InvalidInput, "name is required")
	}
	if err := validate.Line("name", name, validate.MaxNameLen); err != nil {
		return nil, err
	}
	rootPath, err := ResolveRoot(rootPath)
	if err != nil {
		return nil, err
	}
	setup := ""
	for _, o := range opts {
		if o.WorktreeSetup != nil {
			if setup, err = checkWorktreeSetup(*o.WorktreeSetup); err != nil {
				return nil, err
			}
		}
	}
	w, err := s.store.Client.Workspace.Create().
		SetID(s.newID()).SetName(name).SetRootPath(rootPath).SetWorktreeSetup(setup).
		SetCreatedAt(s.now()).SetUpdatedAt(s.now()).
		Save(ctx)
	if err != nil {
		return nil, apperr.Storage(err, "create the workspace")
	}
	return w, nil
}

// Workspace returns a workspace, or nil when there is none with that id.
func (s *Service) Workspace(ctx context.Context, id string) (*ent.Workspace, error) {
	w, err := s.store.Client.Workspace.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, apperr.Storage(err, "read the workspace")
	}
	return w, nil
}

// Workspaces lists every workspace, oldest first.
func (s *Service) Workspaces(ctx context.Context) ([]*ent.Workspace, error) {
	ws, err := s.store.Client.Workspace.Query().Order(ent.Asc("created_at"), ent.Asc("workspace_id")).All(ctx)
	if err != nil {
		return nil, apperr.Storage(err, "list workspaces")
	}
	return ws, nil
}

// mustWorkspace returns the workspace or agent.workspace_not_found.
func (s *Service) mustWorkspace(ctx context.Context, id string) (*ent.Workspace, error) {
	if err := validate.ID("workspaceId", id); err != nil {
		return nil, err
	}
	w, err := s.Workspace(ctx, id)
	if err != nil {
		return nil, err
	}
	if w == nil {
		return nil, apperr.New(apperr.WorkspaceNotFound, "workspace %q does not exist", id)
	}
	return w, nil
}
