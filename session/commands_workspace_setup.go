package session

import (
	"context"
	"strings"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/validate"
)

// MaxWorktreeSetupLen bounds a workspace's worktreeSetup command.
const MaxWorktreeSetupLen = 16 << 10

// WorkspaceSettings are a workspace's settings besides its name and root;
// a nil field is left as it is (createWorkspace: unset).
type WorkspaceSettings struct {
	// WorktreeSetup is the shell command run in each new worktree of a
	// WORKTREE fork before the fork answers; "" clears it.
	WorktreeSetup *string
}

func checkWorktreeSetup(cmd string) (string, error) {
	cmd = strings.TrimSpace(cmd)
	if err := validate.Text("worktreeSetup", cmd, MaxWorktreeSetupLen); err != nil {
		return "", err
	}
	if strings.ContainsRune(cmd, 0) {
		return "", apperr.New(apperr.InvalidInput, "worktreeSetup contains a NUL byte")
	}
	return cmd, nil
}

// UpdateWorkspace changes a workspace's settings (updateWorkspace); fields
// left nil are kept.
func (s *Service) UpdateWorkspace(ctx context.Context, id string, set WorkspaceSettings) (*ent.Workspace, error) {
	if err := validate.ID("workspaceId", id); err != nil {
		return nil, err
	}
	u := s.store.Client.Workspace.UpdateOneID(id).SetUpdatedAt(s.now())
	if set.WorktreeSetup != nil {
		cmd, err := checkWorktreeSetup(*set.WorktreeSetup)
		if err != nil {
			return nil, err
		}
		u.SetWorktreeSetup(cmd)
	}
	w, err := u.Save(ctx)
	if ent.IsNotFound(err) {
		return nil, apperr.New(apperr.WorkspaceNotFound, "workspace %q does not exist", id)
	}
	if err != nil {
		return nil, apperr.Storage(err, "update the workspace")
	}
	return w, nil
}
