package session

import (
	"context"
	"strings"
	"time"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/workspace"
	"tuttid/validate"
)

// MaxCommandLen bounds a workspace's shell commands (worktreeSetup,
// checkCommand) and an exploration's checkCommand.
const MaxCommandLen = 16 << 10

// MaxCheckTimeout bounds a check command's time bound.
const MaxCheckTimeout = time.Hour

// WorkspaceSettings are a workspace's settings besides its name and root;
// a nil field is left as it is (createWorkspace: unset).
type WorkspaceSettings struct {
	// WorktreeSetup is the shell command run in each new worktree of a
	// WORKTREE fork before the fork answers; "" clears it.
	WorktreeSetup *string
	// CheckCommand is run in an exploration branch's worktree after each
	// of its turns (package explore); "" clears it. CheckTimeout bounds
	// it; 0 restores the default.
	CheckCommand *string
	CheckTimeout *time.Duration
	// CommandSandbox is where the check and the setup run (package
	// sandbox): AGENT, in Codex's sandbox as the branch's agent; NONE, as
	// the person.
	CommandSandbox *workspace.CommandSandbox
}

// Command is a shell command as stored: trimmed, bounded, without NUL;
// what names it in an error.
func Command(what, cmd string) (string, error) {
	cmd = strings.TrimSpace(cmd)
	if err := validate.Text(what, cmd, MaxCommandLen); err != nil {
		return "", err
	}
	if strings.ContainsRune(cmd, 0) {
		return "", apperr.New(apperr.InvalidInput, "%s contains a NUL byte", what)
	}
	return cmd, nil
}

// CheckTimeout checks a check command's time bound (0: the default).
func CheckTimeout(d time.Duration) error {
	if d < 0 || d > MaxCheckTimeout || d%time.Second != 0 {
		return apperr.New(apperr.InvalidInput, "checkTimeoutSeconds must be from 1 to %d", int(MaxCheckTimeout/time.Second))
	}
	return nil
}

// apply sets set's fields on a workspace's create or update (their
// mutation).
func (set WorkspaceSettings) apply(w *ent.WorkspaceMutation) error {
	if set.WorktreeSetup != nil {
		cmd, err := Command("worktreeSetup", *set.WorktreeSetup)
		if err != nil {
			return err
		}
		w.SetWorktreeSetup(cmd)
	}
	if set.CheckCommand != nil {
		cmd, err := Command("checkCommand", *set.CheckCommand)
		if err != nil {
			return err
		}
		w.SetCheckCommand(cmd)
	}
	if set.CheckTimeout != nil {
		if err := CheckTimeout(*set.CheckTimeout); err != nil {
			return err
		}
		w.SetCheckTimeoutMs(set.CheckTimeout.Milliseconds())
	}
	if set.CommandSandbox != nil {
		if err := workspace.CommandSandboxValidator(*set.CommandSandbox); err != nil {
			return apperr.New(apperr.InvalidInput, "commandSandbox must be AGENT or NONE")
		}
		w.SetCommandSandbox(*set.CommandSandbox)
	}
	return nil
}

// UpdateWorkspace changes a workspace's settings (updateWorkspace); fields
// left nil are kept.
func (s *Service) UpdateWorkspace(ctx context.Context, id string, set WorkspaceSettings) (*ent.Workspace, error) {
	if err := validate.ID("workspaceId", id); err != nil {
		return nil, err
	}
	u := s.store.Client.Workspace.UpdateOneID(id).SetUpdatedAt(s.now())
	if err := set.apply(u.Mutation()); err != nil {
		return nil, err
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
