package explore

import (
	"context"

	"tuttid/apperr"
	"tuttid/session"
)

// MarkWinner marks a branch the winner of its exploration (name "" clears
// the mark).
func (s *Service) MarkWinner(ctx context.Context, ref BranchRef) (*View, error) {
	check := ref.check
	if ref.BranchName == "" {
		check = ref.checkExploration
	}
	if err := check(); err != nil {
		return nil, err
	}
	v, err := s.Exploration(ctx, ref.WorkspaceID, ref.ParentSessionID, ref.ExplorationID)
	if err != nil {
		return nil, err
	}
	if ref.BranchName != "" {
		if _, err := v.branch(ref.BranchName); err != nil {
			return nil, err
		}
	}
	if err := s.store.Client.Exploration.UpdateOne(v.Exploration).SetWinnerBranch(ref.BranchName).SetUpdatedAt(s.now()).Exec(ctx); err != nil {
		return nil, apperr.Storage(err, "mark the winner")
	}
	s.updated(ctx, v.Exploration)
	return s.Exploration(ctx, ref.WorkspaceID, ref.ParentSessionID, ref.ExplorationID)
}

// ArchiveInput is archiveExplorationBranches.
type ArchiveInput struct {
	WorkspaceID, ParentSessionID, ExplorationID string
	// Keep names the branches kept; none: the winner (and there must be
	// one).
	Keep []string
}

// BranchFailure is a branch an action on several could not do (archive,
// stop), with why.
type BranchFailure struct {
	BranchName, ErrorCode, Error string
}

// failureOf is branch name's failure for err, by its stable code.
func failureOf(name string, err error) BranchFailure {
	e := apperr.From(err)
	return BranchFailure{BranchName: name, ErrorCode: string(e.Code), Error: e.Message}
}

// ArchiveResult is what archiving the others did.
type ArchiveResult struct {
	Archived []string
	Failed   []BranchFailure
	View     *View
}

// ArchiveOthers archives every branch not kept (session archive: the
// worktree removed, its files kept as a checkpoint, restore brings them
// back; nothing is lost). Each branch goes on its own: one that fails is
// reported with its error and the rest proceed.
func (s *Service) ArchiveOthers(ctx context.Context, in ArchiveInput) (*ArchiveResult, error) {
	ref := BranchRef{WorkspaceID: in.WorkspaceID, ParentSessionID: in.ParentSessionID, ExplorationID: in.ExplorationID}
	if err := ref.checkExploration(); err != nil {
		return nil, err
	}
	v, err := s.Exploration(ctx, in.WorkspaceID, in.ParentSessionID, in.ExplorationID)
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{}
	for _, k := range in.Keep {
		if _, err := v.branch(k); err != nil {
			return nil, err
		}
		keep[k] = true
	}
	if len(keep) == 0 {
		if v.WinnerBranch == "" {
			return nil, apperr.New(apperr.InvalidInput, "name the branches to keep, or mark a winner first")
		}
		keep[v.WinnerBranch] = true
	}
	out := &ArchiveResult{}
	archived := true
	for _, b := range v.Branches {
		if keep[b.Row.Name] || b.Session == nil || b.State == BranchArchived {
			continue
		}
		// A running check holds the worktree: stopped, not waited for to
		// finish; its end (INTERRUPTED) is stored before the archive, so
		// the view answered says so.
		awaitEnd(ctx, s.checks.stop(b.Session.ID))
		if _, err := s.sessions.Update(ctx, session.UpdateInput{WorkspaceID: in.WorkspaceID, AgentSessionID: b.Session.ID, Archived: &archived}); err != nil {
			out.Failed = append(out.Failed, failureOf(b.Row.Name, err))
			s.log.WarnContext(ctx, "explore: a branch not archived", "exploration", v.ID, "branch", b.Row.Name, "err", err)
			continue
		}
		out.Archived = append(out.Archived, b.Row.Name)
	}
	s.updated(ctx, v.Exploration)
	if out.View, err = s.Exploration(ctx, in.WorkspaceID, in.ParentSessionID, in.ExplorationID); err != nil {
		return nil, err
	}
	return out, nil
}
