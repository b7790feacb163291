package session

import (
	"context"

	"tuttid/codebranch"
)

// Worktrees is what archive, restore and delete need of the code side
// (satisfied by *codebranch.Service): a WORKTREE session's worktree is
// removed when it is archived (its files kept as a checkpoint), made again
// when it is restored, and checked for unapplied changes, then removed,
// when it is deleted. RestoreWorktrees is all or nothing; its undo
// archives again what it made.
type Worktrees interface {
	ArchiveWorktrees(ctx context.Context, ids []string)
	RestoreWorktrees(ctx context.Context, ids []string) (undo func(context.Context), err error)
	PrepareDelete(ctx context.Context, ids []string, discard bool) (*codebranch.Deletion, error)
	Finish(ctx context.Context, d *codebranch.Deletion)
}

var _ Worktrees = (*codebranch.Service)(nil)

// DeleteOptions change a delete.
type DeleteOptions struct {
	// DiscardChanges deletes WORKTREE sessions whose files hold changes
	// never applied back (deleteSession's discardChanges).
	DiscardChanges bool
}

func discard(opts []DeleteOptions) bool {
	for _, o := range opts {
		if o.DiscardChanges {
			return true
		}
	}
	return false
}

// prepareDelete refuses a delete that would lose unapplied changes.
func (s *Service) prepareDelete(ctx context.Context, ids []string, opts []DeleteOptions) (*codebranch.Deletion, error) {
	if s.worktrees == nil {
		return nil, nil
	}
	return s.worktrees.PrepareDelete(ctx, ids, discard(opts))
}

func (s *Service) finishDelete(ctx context.Context, d *codebranch.Deletion) {
	if s.worktrees != nil && d != nil {
		s.worktrees.Finish(ctx, d)
	}
}

// archiveWorktrees follows a committed archive: the sessions' worktrees
// are removed (a failure keeps a worktree, and is logged).
func (s *Service) archiveWorktrees(ctx context.Context, ids []string) {
	if s.worktrees != nil && len(ids) > 0 {
		s.worktrees.ArchiveWorktrees(ctx, ids)
	}
}

// restoreWorktrees goes before a restore commits: the sessions' worktrees
// are made again, all or none, so that a restore that cannot make one
// fails and the sessions stay archived. undo (never nil) archives them
// again if the commit fails.
func (s *Service) restoreWorktrees(ctx context.Context, ids []string) (undo func(context.Context), err error) {
	if s.worktrees == nil || len(ids) == 0 {
		return func(context.Context) {}, nil
	}
	undo, err = s.worktrees.RestoreWorktrees(ctx, ids)
	if err != nil {
		return nil, err
	}
	return undo, nil
}
