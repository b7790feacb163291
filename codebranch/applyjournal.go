package codebranch

import (
	"context"
	"fmt"

	"tuttid/ent"
	"tuttid/ent/applyjournal"
	"tuttid/gitrepo"
)

// applyJournal keeps an apply's write in code_apply_journal
// (gitrepo.ApplyJournal): a row made before the first file is staged, its
// state moved on before each phase, deleted once the write is settled.
// The row is what a start after a crash settles (ReconcileApplies).
type applyJournal struct {
	s      *Service
	target string
}

func (j applyJournal) Record(ctx context.Context, w gitrepo.ApplyWrite, state gitrepo.ApplyState) error {
	c := j.s.store.Client.ApplyJournal
	if state == gitrepo.ApplyStaging {
		return c.Create().SetApplyID(w.ID).SetTargetAgentSessionID(j.target).SetInstanceID(j.s.instanceID).
			SetRoot(w.Root).SetStaging(w.Staging).SetKeptRef(w.KeptRef).SetKeptCommit(w.KeptCommit).
			SetMergedTree(w.Merged).SetPaths(gitrepo.EncodePaths(w.Paths)).
			SetCreatedAt(j.s.now()).SetUpdatedAt(j.s.now()).Exec(ctx)
	}
	n, err := c.Update().Where(applyjournal.ApplyID(w.ID)).
		SetState(applyjournal.State(state)).SetUpdatedAt(j.s.now()).Save(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("apply %s: no journal entry to mark %s", w.ID, state)
	}
	return nil
}

func (j applyJournal) Forget(ctx context.Context, w gitrepo.ApplyWrite) error {
	_, err := j.s.store.Client.ApplyJournal.Delete().Where(applyjournal.ApplyID(w.ID)).Exec(ctx)
	return err
}

// writeOf is the write a journal row records.
func writeOf(row *ent.ApplyJournal) (gitrepo.ApplyWrite, error) {
	paths, err := gitrepo.DecodePaths(row.Paths)
	if err != nil {
		return gitrepo.ApplyWrite{}, fmt.Errorf("apply %s: %w", row.ApplyID, err)
	}
	return gitrepo.ApplyWrite{ID: row.ApplyID, Root: row.Root, Staging: row.Staging, KeptRef: row.KeptRef,
		KeptCommit: row.KeptCommit, Merged: row.MergedTree, Paths: paths}, nil
}
