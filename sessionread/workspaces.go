package sessionread

import (
	"context"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/validate"
)

// Workspace returns a workspace, or nil when there is none with that id.
func (s *Reader) Workspace(ctx context.Context, id string) (*ent.Workspace, error) {
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
func (s *Reader) Workspaces(ctx context.Context) ([]*ent.Workspace, error) {
	ws, err := s.store.Client.Workspace.Query().Order(ent.Asc("created_at"), ent.Asc("workspace_id")).All(ctx)
	if err != nil {
		return nil, apperr.Storage(err, "list workspaces")
	}
	return ws, nil
}

// RequireWorkspace returns the workspace or agent.workspace_not_found.
func (s *Reader) RequireWorkspace(ctx context.Context, id string) (*ent.Workspace, error) {
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
