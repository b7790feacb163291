package session

import (
	"context"
)

// A WORKTREE session's worktree is removed when it is archived (its files
// kept as a checkpoint), made again when it is restored, and checked for
// unapplied changes, then removed, when it is deleted (Code).

// prepareDelete refuses a delete that would lose unapplied changes unless
// discard (DeleteInput.DiscardChanges); the func it returns (nil when
// there is nothing to do) finishes the delete's code side once it
// committed (finishDelete).
func (s *Service) prepareDelete(ctx context.Context, ids []string, discard bool) (func(context.Context), error) {
	if s.code == nil {
		return nil, nil
	}
	return s.code.PrepareDelete(ctx, ids, discard)
}

func (s *Service) finishDelete(ctx context.Context, finish func(context.Context)) {
	if finish != nil {
		finish(ctx)
	}
}

// archiveWorktrees follows a committed archive: the sessions' worktrees
// are removed (a failure keeps a worktree, and is logged).
func (s *Service) archiveWorktrees(ctx context.Context, ids []string) {
	if s.code != nil && len(ids) > 0 {
		s.code.ArchiveWorktrees(ctx, ids)
	}
}

// restoreWorktrees goes before a restore commits: the sessions' worktrees
// are made again, all or none, so that a restore that cannot make one
// fails and the sessions stay archived. undo (never nil) archives them
// again if the commit fails.
func (s *Service) restoreWorktrees(ctx context.Context, ids []string) (undo func(context.Context), err error) {
	if s.code == nil || len(ids) == 0 {
		return func(context.Context) {}, nil
	}
	undo, err = s.code.RestoreWorktrees(ctx, ids)
	if err != nil {
		return nil, err
	}
	return undo, nil
}
