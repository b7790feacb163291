package codebranch

import (
	"context"
	"time"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/forkjournal"
	"tuttid/ent/turn"
)

// The fork's code step (the fork saga calls it through fork.Code): plan
// the child's code before anything is written, make it (its checkpoint,
// for a WORKTREE fork its worktree and the workspace's setup) once the
// journal holds the attempt, drop it when the fork fails after, and
// settle at start what a crash left of it. The journal's worktree path
// and cwd are written here, where the worktree is made.

// PlanChild checks the fork's code before anything is written: a WORKTREE
// fork of a session outside a repository, or from a turn without a
// checkpoint, is refused here. It reads the checkpoint of in.TurnID (a
// turn of the parent) itself.
func (s *Service) PlanChild(ctx context.Context, in ForkCodeInput) (*ForkCode, error) {
	if in.TurnID != "" {
		t, err := s.store.Client.Turn.Query().
			Where(turn.AgentSessionID(in.ParentSessionID), turn.TurnID(in.TurnID)).Only(ctx)
		if err != nil && !ent.IsNotFound(err) {
			return nil, apperr.Storage(err, "read the turn")
		}
		if t != nil {
			in.TurnCheckpoint = t.CheckpointCommit
		}
	}
	return s.PlanFork(ctx, in)
}

// MakeChild records the fork's checkpoint and, for a WORKTREE fork, makes
// the worktree (its path in the journal entry first, so that a crash
// leaves a directory tuttid can find) and runs the workspace's setup
// there. The entry gets the worktree's path and the child's cwd.
func (s *Service) MakeChild(ctx context.Context, entry *ent.ForkJournal, fc *ForkCode) error {
	if fc == nil {
		return nil
	}
	if fc.Mode == ModeWorktree {
		if err := s.store.Client.ForkJournal.UpdateOneID(entry.ID).SetWorktreePath(fc.WorktreePath).
			SetUpdatedAt(s.now()).Exec(ctx); err != nil {
			return apperr.Storage(err, "record the fork's worktree")
		}
		entry.WorktreePath = fc.WorktreePath
	}
	if err := s.Record(ctx, fc); err != nil {
		if fc.Mode == ModeWorktree {
			return err
		}
		// A SHARED child works without its start recorded.
		s.log.WarnContext(ctx, "fork: the child's start checkpoint not recorded", "workspace", entry.WorkspaceID,
			"child_session", entry.ChildAgentSessionID, "err", err)
		return nil
	}
	if fc.Mode != ModeWorktree {
		return nil
	}
	w, err := s.store.Client.Workspace.Get(ctx, entry.WorkspaceID)
	if err != nil {
		s.DropWorktree(ctx, fc)
		return apperr.Storage(err, "read the workspace's worktree setup")
	}
	if w.WorktreeSetup != "" {
		if fc.confine, err = s.setupSandbox(w, fc.in.PermissionMode); err != nil {
			s.DropWorktree(ctx, fc)
			return err
		}
	}
	if err := s.MakeWorktree(ctx, fc, w.WorktreeSetup); err != nil {
		return err
	}
	// The child's thread lives in the worktree: a settle after a crash
	// looks for it there (the provider lists threads by cwd).
	if err := s.store.Client.ForkJournal.UpdateOneID(entry.ID).SetCwd(fc.Cwd).SetUpdatedAt(s.now()).Exec(ctx); err != nil {
		s.DropWorktree(ctx, fc)
		return apperr.Storage(err, "record the fork's worktree")
	}
	entry.Cwd = fc.Cwd
	return nil
}

// DropChild undoes MakeChild when the fork fails after it.
func (s *Service) DropChild(ctx context.Context, fc *ForkCode) {
	if fc != nil {
		s.DropWorktree(ctx, fc)
	}
}

// ReconcileRefs drops the refs recorded for the child of an attempt the
// previous run left unfinished (a crash after the child's start was
// recorded, before the child was stored), when no attempt stored that
// child: only the refs under that child's own prefix.
func (s *Service) ReconcileRefs(ctx context.Context, entries []*ent.ForkJournal) error {
	for _, e := range entries {
		if e.ChildAgentSessionID == "" {
			continue
		}
		stored, err := s.store.Client.AgentSession.Query().Where(agentsession.ID(e.ChildAgentSessionID)).Exist(ctx)
		if err != nil {
			return apperr.Storage(err, "check an unfinished fork's child")
		}
		if stored {
			continue
		}
		s.DropForkRefs(ctx, e.ChildAgentSessionID, s.parentCwd(ctx, e))
	}
	return nil
}

// parentCwd is where the repository of an attempt's parent is found: the
// parent's cwd (the entry's cwd is the worktree's once it was made), or
// the entry's when the parent is gone.
func (s *Service) parentCwd(ctx context.Context, e *ent.ForkJournal) string {
	if p, err := s.store.Client.AgentSession.Get(ctx, e.ParentAgentSessionID); err == nil {
		return p.Cwd
	}
	return e.Cwd
}

// ReconcileWorktrees removes the worktrees of forks that did not finish
// (a crash between making the worktree and storing the child): only a
// path the journal recorded, under the data directory, that no session's
// code row holds. With busySince set (beside a running server), an attempt
// still pending or forked and updated since may be in flight: left alone.
func (s *Service) ReconcileWorktrees(ctx context.Context, busySince time.Time) error {
	q := s.store.Client.ForkJournal.Query().
		Where(forkjournal.WorktreePathNEQ(""), forkjournal.StateNEQ(forkjournal.StateDone))
	entries, err := q.All(ctx)
	if err != nil {
		return apperr.Storage(err, "read the fork journal")
	}
	for _, e := range entries {
		inFlight := e.State == forkjournal.StatePending || e.State == forkjournal.StateForked
		if inFlight && !busySince.IsZero() && !e.UpdatedAt.Before(busySince) {
			continue
		}
		orphan, err := s.OrphanWorktreeExists(ctx, e.WorktreePath)
		if err != nil {
			return err
		}
		if !orphan {
			continue
		}
		if err := s.RemoveOrphanWorktree(ctx, e.ChildAgentSessionID, e.WorktreePath, s.parentCwd(ctx, e)); err != nil {
			s.log.WarnContext(ctx, "fork journal: an unfinished fork's worktree not removed; tuttid orphans lists it",
				"request", e.RequestID, "worktree", e.WorktreePath, "err", err)
			continue
		}
		s.log.WarnContext(ctx, "fork journal: removed the worktree of a fork that did not finish",
			"request", e.RequestID, "workspace", e.WorkspaceID, "child_session", e.ChildAgentSessionID, "worktree", e.WorktreePath)
	}
	return nil
}
