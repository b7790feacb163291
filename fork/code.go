package fork

import (
	"context"
	"strings"
	"time"

	"tuttid/apperr"
	"tuttid/codebranch"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/forkjournal"
)

// CodeInput is a fork's code (the API's code: ForkCodeInput).
type CodeInput struct {
	// Worktree: the child gets its own worktree (mode WORKTREE); false is
	// SHARED, today's fork.
	Worktree bool
	// Branch is a new branch created in the worktree; "" leaves HEAD
	// detached.
	Branch string
}

// Code is what the fork needs of the code side (satisfied by
// *codebranch.Service): plan a child's code, record its checkpoint, make
// and drop its worktree, and clean the worktree of a fork that did not
// finish.
type Code interface {
	PlanFork(ctx context.Context, in codebranch.ForkCodeInput) (*codebranch.ForkCode, error)
	Record(ctx context.Context, fc *codebranch.ForkCode) error
	MakeWorktree(ctx context.Context, fc *codebranch.ForkCode, setup string) error
	DropWorktree(ctx context.Context, fc *codebranch.ForkCode)
	RemoveOrphanWorktree(ctx context.Context, childID, path, parentCwd string) error
	OrphanWorktreeExists(ctx context.Context, path string) (bool, error)
	DropForkRefs(ctx context.Context, childID, parentCwd string)
}

var _ Code = (*codebranch.Service)(nil)

// CrashWorktreeMade: the journal recorded the worktree and it is made (its
// setup run); Codex is not yet called. A restart removes it.
const CrashWorktreeMade = "fork.worktree_made"

func normalizeCode(c *CodeInput) (*CodeInput, error) {
	if c == nil {
		return nil, nil
	}
	b := strings.TrimSpace(c.Branch)
	if b != "" && !c.Worktree {
		return nil, apperr.New(apperr.InvalidInput, "code.branch needs code.mode WORKTREE")
	}
	if len(b) > 200 {
		return nil, apperr.New(apperr.InvalidInput, "code.branch is longer than 200 bytes")
	}
	if !c.Worktree {
		return nil, nil // SHARED is the fork without code: one fingerprint
	}
	return &CodeInput{Worktree: true, Branch: b}, nil
}

// planCode checks the fork's code before anything is written: a WORKTREE
// fork of a session outside a repository, or from a turn without a
// checkpoint, is refused here.
func (s *Service) planCode(ctx context.Context, in Input, parent *ent.AgentSession, childID string) (*codebranch.ForkCode, error) {
	if s.code == nil {
		if in.Code != nil {
			return nil, apperr.New(apperr.ForkCodeFailed, "this tuttid has no code branches configured")
		}
		return nil, nil
	}
	ci := codebranch.ForkCodeInput{WorkspaceID: in.WorkspaceID, ParentSessionID: parent.ID, ChildSessionID: childID,
		ParentCwd: parent.Cwd, TurnID: in.LastTurnID}
	if in.Code != nil {
		ci.Worktree, ci.Branch = true, in.Code.Branch
	}
	if in.LastTurnID != "" {
		t, err := s.sessions.Turn(ctx, parent.ID, in.LastTurnID)
		if err != nil {
			return nil, err
		}
		if t != nil {
			ci.TurnCheckpoint = t.CheckpointCommit
		}
	}
	return s.code.PlanFork(ctx, ci)
}

// makeCode records the fork's checkpoint and, for a WORKTREE fork, makes
// the worktree (its path in the journal first, so that a crash leaves a
// directory tuttid can find) and runs the workspace's setup there.
func (s *Service) makeCode(ctx context.Context, entry *ent.ForkJournal, fc *codebranch.ForkCode) error {
	if fc == nil {
		return nil
	}
	if fc.Mode == codebranch.ModeWorktree {
		if err := s.store.Client.ForkJournal.UpdateOneID(entry.ID).SetWorktreePath(fc.WorktreePath).
			SetUpdatedAt(s.now()).Exec(ctx); err != nil {
			return apperr.Storage(err, "record the fork's worktree")
		}
		entry.WorktreePath = fc.WorktreePath
	}
	if err := s.code.Record(ctx, fc); err != nil {
		if fc.Mode == codebranch.ModeWorktree {
			return err
		}
		// A SHARED child works without its start recorded.
		s.log.WarnContext(ctx, "fork: the child's start checkpoint not recorded", "workspace", entry.WorkspaceID,
			"child_session", entry.ChildAgentSessionID, "err", err)
		return nil
	}
	if fc.Mode != codebranch.ModeWorktree {
		return nil
	}
	w, err := s.store.Client.Workspace.Get(ctx, entry.WorkspaceID)
	if err != nil {
		s.code.DropWorktree(ctx, fc)
		return apperr.Storage(err, "read the workspace's worktree setup")
	}
	if err := s.code.MakeWorktree(ctx, fc, w.WorktreeSetup); err != nil {
		return err
	}
	// The child's thread lives in the worktree: a settle after a crash
	// looks for it there (the provider lists threads by cwd).
	if err := s.store.Client.ForkJournal.UpdateOneID(entry.ID).SetCwd(fc.Cwd).SetUpdatedAt(s.now()).Exec(ctx); err != nil {
		s.code.DropWorktree(ctx, fc)
		return apperr.Storage(err, "record the fork's worktree")
	}
	entry.Cwd = fc.Cwd
	return nil
}

// dropCode undoes makeCode when the fork fails after it.
func (s *Service) dropCode(ctx context.Context, fc *codebranch.ForkCode) {
	if fc != nil && s.code != nil {
		s.code.DropWorktree(ctx, fc)
	}
}

// reconcileRefs drops the refs the code side recorded for the child of an
// attempt the previous run left unfinished (a crash after the child's
// start was recorded, before the child was stored), when no attempt
// stored that child: only the refs under that child's own prefix.
func (s *Service) reconcileRefs(ctx context.Context, entries []*ent.ForkJournal) error {
	if s.code == nil {
		return nil
	}
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
		s.code.DropForkRefs(ctx, e.ChildAgentSessionID, s.parentCwd(ctx, e))
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

// reconcileWorktrees removes the worktrees of forks that did not finish
// (a crash between making the worktree and storing the child): only a
// path the journal recorded, under the data directory, that no session's
// code row holds. With busySince set (beside a running server), an attempt
// still pending or forked and updated since may be in flight: left alone.
func (s *Service) reconcileWorktrees(ctx context.Context, busySince time.Time) error {
	if s.code == nil {
		return nil
	}
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
		orphan, err := s.code.OrphanWorktreeExists(ctx, e.WorktreePath)
		if err != nil {
			return err
		}
		if !orphan {
			continue
		}
		if err := s.code.RemoveOrphanWorktree(ctx, e.ChildAgentSessionID, e.WorktreePath, s.parentCwd(ctx, e)); err != nil {
			s.log.WarnContext(ctx, "fork journal: an unfinished fork's worktree not removed; tuttid orphans lists it",
				"request", e.RequestID, "worktree", e.WorktreePath, "err", err)
			continue
		}
		s.log.WarnContext(ctx, "fork journal: removed the worktree of a fork that did not finish",
			"request", e.RequestID, "workspace", e.WorkspaceID, "child_session", e.ChildAgentSessionID, "worktree", e.WorktreePath)
	}
	return nil
}
