package session

import (
	"context"

	"tuttid/ent"
)

// worktreeRoot is the worktree tuttid made for a WORKTREE session (the
// contract's "Code branches"): it counts as inside the workspace root for
// the cwd rule, since tuttid made and recorded it. "" for any other
// session. The code side answers (Code.WorktreeRoot), refusing an
// archived or missing worktree with a message saying so.
func (s *Service) worktreeRoot(ctx context.Context, a *ent.AgentSession) (string, error) {
	if s.code == nil {
		return "", nil
	}
	return s.code.WorktreeRoot(ctx, a)
}
