package codebranch

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/sessioncode"
	"tuttid/lineage"
)

// InWorktree calls run with a WORKTREE session's worktree held (an
// archive, restore or delete waits until run returns): dir is the
// session's cwd in it, env what a command there gets besides tuttid's
// environment: TUTTID_WORKTREE, TUTTID_PARENT_DIR and TUTTID_PORT_BASE
// (the worktree's own, reserved now when its setup did not reserve one, so
// that branches' servers do not collide). A session without a worktree
// there, or whose cwd is outside it, is agent.fork_code_failed: a command
// never runs in the person's checkout.
func (s *Service) InWorktree(ctx context.Context, a *ent.AgentSession, run func(dir string, env []string) error) error {
	row, err := s.Row(ctx, a.ID)
	if err != nil {
		return apperr.Storage(err, "read the session's code")
	}
	if row == nil || row.Mode != sessioncode.ModeWORKTREE {
		return apperr.New(apperr.ForkCodeFailed, "session %q has no worktree of its own", a.ID)
	}
	release := s.checkouts.RLock(a.ID)
	defer release()
	if row, err = s.Row(ctx, a.ID); err != nil || row == nil {
		return apperr.New(apperr.SessionNotFound, "session %q was deleted", a.ID)
	}
	if !row.WorktreePresent {
		return apperr.New(apperr.ForkCodeFailed, "session %q is archived: its worktree was removed", a.ID)
	}
	dir := filepath.Clean(a.Cwd)
	root := filepath.Clean(row.WorktreePath)
	if dir != root && !strings.HasPrefix(dir, root+string(filepath.Separator)) {
		return apperr.New(apperr.ForkCodeFailed, "session %q works outside its worktree", a.ID)
	}
	port := row.PortBase
	if port == 0 {
		p, done, err := s.reservePort(ctx, row.WorkspaceID)
		if err != nil {
			return err
		}
		err = s.store.Client.SessionCode.UpdateOne(row).SetPortBase(p).Exec(ctx)
		done()
		if err != nil {
			return apperr.Storage(err, "record the worktree's port base")
		}
		port = p
	}
	parentDir := ""
	if p, err := lineage.Parent(ctx, s.store.Client, a.WorkspaceID, a.ID); err == nil && p != nil {
		parentDir = p.Cwd
	}
	return run(dir, []string{"TUTTID_WORKTREE=" + root, "TUTTID_PARENT_DIR=" + parentDir, "TUTTID_PORT_BASE=" + strconv.Itoa(port)})
}
