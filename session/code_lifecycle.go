package session

import (
	"context"

	"tuttid/sessioncode"
)

// Worktrees is what archive, restore and delete need of the code side
// (satisfied by *sessioncode.Service): a WORKTREE session's worktree is
// removed when it is archived (its files kept as a checkpoint), made again
// when it is restored, and checked for unapplied changes, then removed,
// when it is deleted.
type Worktrees interface {
	ArchiveWorktrees(ctx context.Context, ids []string)
	RestoreWorktrees(ctx context.Context, ids []string) error
	PrepareDelete(ctx context.Context, ids []string, discard bool) (*sessioncode.Deletion, error)
	Finish(ctx context.Context, d *sessioncode.Deletion)
}

var _ Worktrees = (*sessioncode.Service)(nil)

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
func (s *Service) prepareDelete(ctx context.Context, ids []string, opts []DeleteOptions) (*sessioncode.Deletion, error) {
	if s.worktrees == nil {
		return nil, nil
	}
	return s.worktrees.PrepareDelete(ctx, ids, discard(opts))
}

func (s *Service) finishDelete(ctx context.Context, d *sessioncode.Deletion) {
	if s.worktrees != nil && d != nil {
		s.worktrees.Finish(ctx, d)
	}
}

// archivedWorktrees follows a committed archive or restore of sessions:
// their worktrees are removed (archived) or made again (restored).
func (s *Service) archivedWorktrees(ctx context.Context, ids []string, archived bool) error {
	if s.worktrees == nil || len(ids) == 0 {
		return nil
	}
	if archived {
		s.worktrees.ArchiveWorktrees(ctx, ids)
		return nil
	}
	return s.worktrees.RestoreWorktrees(ctx, ids)
}
