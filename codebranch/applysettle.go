package codebranch

import (
	"context"
	"errors"
	"os"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/applyjournal"
	"tuttid/gitrepo"
)

// ReconcileApplies settles, at start, the applies this instance's previous
// run left part way (killed, or an undo that failed): each write's staging
// is removed, and a write caught swapping files is undone, the target's
// files put back as they were before the apply (gitrepo.SettleApply says
// why undone rather than finished). It runs before anything else reads
// or checkpoints those files. A write that cannot be settled is logged
// with the ref that keeps the files before it, and tried again before the
// next apply to its target and at the next start; only a failure to read
// the journal fails the start.
func (s *Service) ReconcileApplies(ctx context.Context) error {
	rows, err := s.store.Client.ApplyJournal.Query().Where(applyjournal.InstanceID(s.instanceID)).
		Order(ent.Asc(applyjournal.FieldID)).All(ctx)
	if err != nil {
		return apperr.Storage(err, "read the apply journal")
	}
	for _, row := range rows {
		if err := s.settle(ctx, row); err != nil {
			s.log.ErrorContext(ctx, "code: an apply cut short could not be settled; its files before are kept",
				"session", row.TargetAgentSessionID, "kept_ref", row.KeptRef, "kept_commit", row.KeptCommit, "err", err)
		}
	}
	return nil
}

// settleEarlier settles the writes of earlier applies to target that are
// still in the journal (an undo that failed) before a new one writes:
// the new apply's snapshot must not take half an old one for the person's
// files. One that still cannot be settled refuses the new apply.
func (s *Service) settleEarlier(ctx context.Context, target string) error {
	rows, err := s.store.Client.ApplyJournal.Query().
		Where(applyjournal.InstanceID(s.instanceID), applyjournal.TargetAgentSessionID(target)).
		Order(ent.Asc(applyjournal.FieldID)).All(ctx)
	if err != nil {
		return apperr.Storage(err, "read the apply journal")
	}
	for _, row := range rows {
		if err := s.settle(ctx, row); err != nil {
			return apperr.Wrap(err, apperr.StorageUnavailable,
				"an earlier apply to session %q left files that still cannot be put back; nothing was applied. "+
					"Its files before that apply are kept as commit %s (ref %s)", target, row.KeptCommit, row.KeptRef)
		}
	}
	return nil
}

// settle settles one journal row's write and deletes the row; the row
// stays when the write could not be settled.
func (s *Service) settle(ctx context.Context, row *ent.ApplyJournal) error {
	w, err := writeOf(row)
	if err != nil {
		return err
	}
	if _, err := os.Stat(row.Root); errors.Is(err, os.ErrNotExist) {
		// The checkout went (a worktree deleted by hand): nothing to put
		// back there.
		s.log.WarnContext(ctx, "code: the checkout of an apply cut short is gone; its journal entry is dropped",
			"session", row.TargetAgentSessionID, "kept_ref", row.KeptRef)
	} else {
		r, err := s.repo(ctx, repoAt{dir: row.Root})
		if err != nil {
			return err
		}
		if err := r.SettleApply(ctx, w, gitrepo.ApplyState(row.State)); err != nil {
			return err
		}
		s.changed.drop(row.TargetAgentSessionID)
		if row.State == applyjournal.StateSwapping {
			s.log.WarnContext(ctx, "code: an apply cut short was undone; the target's files are as before it",
				"session", row.TargetAgentSessionID, "kept_ref", row.KeptRef, "kept_commit", row.KeptCommit)
		}
	}
	if _, err := s.store.Client.ApplyJournal.Delete().Where(applyjournal.ID(row.ID)).Exec(ctx); err != nil {
		return apperr.Storage(err, "drop a settled apply from the journal")
	}
	return nil
}
