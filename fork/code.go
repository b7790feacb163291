package fork

import (
	"context"
	"strings"
	"time"

	"tuttid/apperr"
	"tuttid/codebranch"
	"tuttid/ent"
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

// Code is the fork's code step (satisfied by *codebranch.Service): plan a
// child's code, make it (checkpoint, worktree, setup), drop it when the
// fork fails after, and settle at start what a crash left of it.
type Code interface {
	PlanChild(ctx context.Context, in codebranch.ForkCodeInput) (*codebranch.ForkCode, error)
	MakeChild(ctx context.Context, entry *ent.ForkJournal, fc *codebranch.ForkCode) error
	DropChild(ctx context.Context, fc *codebranch.ForkCode)
	ReconcileRefs(ctx context.Context, entries []*ent.ForkJournal) error
	ReconcileWorktrees(ctx context.Context, busySince time.Time) error
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

// planCode asks the code side to check the fork's code before anything is
// written.
func (s *Service) planCode(ctx context.Context, in Input, parent *ent.AgentSession, childID string) (*codebranch.ForkCode, error) {
	if s.code == nil {
		if in.Code != nil {
			return nil, apperr.New(apperr.ForkCodeFailed, "this tuttid has no code branches configured")
		}
		return nil, nil
	}
	ci := codebranch.ForkCodeInput{WorkspaceID: in.WorkspaceID, ParentSessionID: parent.ID, ChildSessionID: childID,
		ParentCwd: parent.Cwd, TurnID: in.LastTurnID, PermissionMode: parent.Settings.PermissionModeID}
	if in.Settings.PermissionModeID != nil {
		ci.PermissionMode = *in.Settings.PermissionModeID
	}
	if in.Code != nil {
		ci.Worktree, ci.Branch = true, in.Code.Branch
	}
	return s.code.PlanChild(ctx, ci)
}

// makeCode makes the planned code once the journal holds the attempt.
func (s *Service) makeCode(ctx context.Context, entry *ent.ForkJournal, fc *codebranch.ForkCode) error {
	if fc == nil {
		return nil
	}
	return s.code.MakeChild(ctx, entry, fc)
}

// dropCode undoes makeCode when the fork fails after it.
func (s *Service) dropCode(ctx context.Context, fc *codebranch.ForkCode) {
	if fc != nil && s.code != nil {
		s.code.DropChild(ctx, fc)
	}
}

// reconcileRefs drops the refs of unfinished attempts' children no attempt
// stored.
func (s *Service) reconcileRefs(ctx context.Context, entries []*ent.ForkJournal) error {
	if s.code == nil {
		return nil
	}
	return s.code.ReconcileRefs(ctx, entries)
}

// reconcileWorktrees removes the worktrees of forks that did not finish
// (busySince: see codebranch.Service.ReconcileWorktrees).
func (s *Service) reconcileWorktrees(ctx context.Context, busySince time.Time) error {
	if s.code == nil {
		return nil
	}
	return s.code.ReconcileWorktrees(ctx, busySince)
}
