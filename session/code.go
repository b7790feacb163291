package session

import (
	"context"

	"tuttid/ent"
)

// Code is the code side of sessions (package codebranch, through
// codebranch.Service.Hooks), called at the moments of a session's life
// that touch its files. Its types are session's and ent's, so that
// session knows nothing of git or of the code side's tables. Its
// failures at a session's start and a turn's end are its own (logged): a
// session or turn never fails for them.
type Code interface {
	// SessionStarted records the session's files when it starts.
	SessionStarted(ctx context.Context, a *ent.AgentSession)
	// TurnEnded records the session's files at the end of a turn and
	// returns what sets the turn's checkpoint on the update that ends it
	// (the same transaction); nil when there is none.
	TurnEnded(ctx context.Context, a *ent.AgentSession, turnID string) (stamp func(*ent.TurnUpdateOne) *ent.TurnUpdateOne)
	// ArchiveWorktrees removes the archived sessions' worktrees, their
	// files kept as a checkpoint (a failure keeps one, logged).
	ArchiveWorktrees(ctx context.Context, ids []string)
	// RestoreWorktrees makes the restored sessions' worktrees again, all
	// or none; undo archives again what it made.
	RestoreWorktrees(ctx context.Context, ids []string) (undo func(context.Context), err error)
	// PrepareDelete refuses to delete sessions whose worktrees hold
	// changes never applied back, unless discard; finish removes their
	// worktrees once the delete committed.
	PrepareDelete(ctx context.Context, ids []string, discard bool) (finish func(context.Context), err error)
	// Forget drops what the code side kept of a deleted session.
	Forget(ctx context.Context, sessionID string)
	// WorktreeRoot is the worktree tuttid made for a WORKTREE session,
	// "" for any other, for the cwd rule (worktreeRoot).
	WorktreeRoot(ctx context.Context, a *ent.AgentSession) (string, error)
}

// turnCheckpoint records the session's files at the end of a turn, before
// the turn is stored ended (so before the session turns READY); nil when
// there is no checkpoint to store.
func (s *Service) turnCheckpoint(ctx context.Context, a *ent.AgentSession, turnID string) func(*ent.TurnUpdateOne) *ent.TurnUpdateOne {
	if s.code == nil {
		return nil
	}
	return s.code.TurnEnded(ctx, a, turnID)
}
