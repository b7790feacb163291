package codebranch

import (
	"context"

	"tuttid/ent"
)

// Hooks is the service as session calls it (session.Code): the same
// operations, answered in session's and ent's types, so that session
// imports nothing of code branches.
type Hooks struct{ s *Service }

// Hooks returns s as session's code side.
func (s *Service) Hooks() Hooks { return Hooks{s: s} }

// SessionStarted records the session's files at its start.
func (h Hooks) SessionStarted(ctx context.Context, a *ent.AgentSession) { h.s.SessionStarted(ctx, a) }

// TurnEnded records the session's files at the end of a turn; the func it
// returns sets the turn's checkpoint columns on the update that ends the
// turn (nil: no checkpoint).
func (h Hooks) TurnEnded(ctx context.Context, a *ent.AgentSession, turnID string) func(*ent.TurnUpdateOne) *ent.TurnUpdateOne {
	cp, ok := h.s.TurnEnded(ctx, a, turnID)
	if !ok {
		return nil
	}
	return func(up *ent.TurnUpdateOne) *ent.TurnUpdateOne {
		return up.SetCheckpointCommit(cp.Commit).SetCheckpointHead(cp.Head).SetCheckpointAt(cp.At)
	}
}

// ArchiveWorktrees removes the archived sessions' worktrees.
func (h Hooks) ArchiveWorktrees(ctx context.Context, ids []string) { h.s.ArchiveWorktrees(ctx, ids) }

// RestoreWorktrees makes the restored sessions' worktrees again, all or none.
func (h Hooks) RestoreWorktrees(ctx context.Context, ids []string) (undo func(context.Context), err error) {
	return h.s.RestoreWorktrees(ctx, ids)
}

// PrepareDelete refuses unapplied changes unless discard; finish removes
// the worktrees once the delete committed.
func (h Hooks) PrepareDelete(ctx context.Context, ids []string, discard bool) (finish func(context.Context), err error) {
	d, err := h.s.PrepareDelete(ctx, ids, discard)
	if err != nil {
		return nil, err
	}
	if d == nil {
		return nil, nil
	}
	return func(ctx context.Context) { h.s.Finish(ctx, d) }, nil
}

// Forget drops a deleted session's refs and kept index.
func (h Hooks) Forget(ctx context.Context, sessionID string) { h.s.Forget(ctx, sessionID) }

// WorktreeRoot is the session's own worktree for the cwd rule (worktree_root.go).
func (h Hooks) WorktreeRoot(ctx context.Context, a *ent.AgentSession) (string, error) {
	return h.s.WorktreeRoot(ctx, a)
}
