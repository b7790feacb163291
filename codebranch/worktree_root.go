package codebranch

import (
	"context"
	"os"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/sessioncode"
)

// WorktreeRoot is the worktree tuttid made for a WORKTREE session (the
// contract's "Code branches"): it counts as inside the workspace root for
// the cwd rule, since tuttid made and recorded it. "" for any other
// session. An archived session's worktree is not there: its cwd is refused
// with a message saying so.
func (s *Service) WorktreeRoot(ctx context.Context, a *ent.AgentSession) (string, error) {
	c, err := s.store.Client.SessionCode.Query().
		Where(sessioncode.AgentSessionID(a.ID), sessioncode.ModeEQ(sessioncode.ModeWORKTREE)).Only(ctx)
	if ent.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", apperr.Storage(err, "read the session's code")
	}
	if c.WorktreePath == "" {
		return "", nil
	}
	if !c.WorktreePresent {
		return "", apperr.New(apperr.InvalidInput,
			"session %q's worktree %s is removed while the session is archived; restore the session first", a.ID, c.WorktreePath)
	}
	if _, err := os.Stat(c.WorktreePath); err != nil {
		// Deleted by hand: say so, and what is kept (the checkpoints).
		return "", apperr.New(apperr.InvalidInput,
			"session %q's worktree %s is missing (deleted outside tuttid?); nothing else was changed: its fork point is kept as commit %s under refs/tuttid/sessions/%s/, and archiving then restoring the session makes the worktree again from its last checkpoint",
			a.ID, c.WorktreePath, c.BaseCommit, a.ID)
	}
	return c.WorktreePath, nil
}
