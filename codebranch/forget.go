package codebranch

import (
	"context"

	"tuttid/gitrepo"
)

// Forget drops what the session kept in its repository: every ref under
// its refs/tuttid/sessions/<id>/ (git gc then reclaims its checkpoints)
// and its kept index. Session delete calls it while the session's code row
// still exists (it names the repository). It never removes a worktree
// or a branch (the worktree is the delete's own step). A failure is
// logged: the session goes anyway, its refs are only clutter.
func (s *Service) Forget(ctx context.Context, sessionID string) {
	defer s.guards.Lock(sessionID)()
	s.remember(sessionID, gitrepo.Checkpoint{})
	if p := s.indexPath(sessionID); p != "" {
		if err := s.git.RemoveIndex(ctx, p); err != nil {
			s.log.WarnContext(ctx, "code: kept index not removed", "session", sessionID, "err", err)
		}
	}
	row, err := s.Row(ctx, sessionID)
	if err != nil {
		s.log.WarnContext(ctx, "code: cannot read the session's code; its refs stay", "session", sessionID, "err", err)
		return
	}
	if row == nil {
		return
	}
	// Its own checkout when it is still there (a removed worktree is
	// not), else the repository's shared git directory.
	r, err := s.repo(ctx, repoAt{dir: row.RepositoryRoot, gitDir: row.CommonDir})
	if err != nil {
		s.log.WarnContext(ctx, "code: repository gone; the session's refs stay", "session", sessionID, "err", err)
		return
	}
	if err := r.DeleteRefs(ctx, gitrepo.SessionRefPrefix(sessionID)); err != nil {
		s.log.WarnContext(ctx, "code: the session's refs were not deleted", "session", sessionID, "err", err)
	}
}
