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
	c := s.store.Client.Workspace.Create().
		SetID(s.newID()).SetName(name).SetRootPath(rootPath).
		SetCreatedAt(s.now()).SetUpdatedAt(s.now())
	for _, o := range opts {
		if err := o.apply(c.Mutation()); err != nil {
			return nil, err
		}
	}
	w, err := c.Save(ctx)
	if err != nil {
		return nil, apperr.Storage(err, "create the workspace")
	}
	return w, nil
}
