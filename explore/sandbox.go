package explore

import (
	"context"

	"tuttid/agent"
	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/workspace"
	"tuttid/sandbox"
)

// confinement is where a branch's check runs: codex nil runs it as the
// person.
type confinement struct {
	codex    *sandbox.Codex
	readOnly bool
}

// commandSandbox is the confinement of a check in a's worktree: no more
// power than a's agent. A full-access branch's check, and any check of a
// workspace whose commandSandbox is NONE (the person's call), runs as the
// person; any other in Codex's sandbox of the branch's permission mode,
// and not at all (sandbox.ErrUnavailable) when tuttid has none.
func (s *Service) commandSandbox(ctx context.Context, a *ent.AgentSession) (confinement, error) {
	w, err := s.store.Client.Workspace.Get(ctx, a.WorkspaceID)
	if err != nil {
		return confinement{}, apperr.Storage(err, "read the workspace's commandSandbox")
	}
	mode := a.Settings.PermissionModeID
	c, err := s.sandbox.For(mode == agent.PermissionFullAccess, w.CommandSandbox == workspace.CommandSandboxNONE)
	return confinement{codex: c, readOnly: mode == agent.PermissionReadOnly}, err
}
