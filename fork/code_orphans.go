package fork

import (
	"context"
	"os"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/forkjournal"
	"tuttid/ent/sessioncode"
	"tuttid/store"
)

// listOrphanWorktrees adds to out the worktrees forks recorded that are
// still on disk and that no session holds: a fork a crash cut short
// before the restart removed it, or one whose removal failed. An entry
// already listed for its thread keeps one line; its Worktree says the
// directory is still there, and is cleared when it is not.
func listOrphanWorktrees(ctx context.Context, st *store.Store, out []Orphan, listed map[int]bool) ([]Orphan, error) {
	entries, err := st.Client.ForkJournal.Query().
		Where(forkjournal.WorktreePathNEQ(""), forkjournal.StateNEQ(forkjournal.StateDone)).
		Order(ent.Asc(forkjournal.FieldID)).All(ctx)
	if err != nil {
		return nil, apperr.Storage(err, "read the fork journal")
	}
	lingering := map[string]bool{}
	for _, e := range entries {
		if _, err := os.Lstat(e.WorktreePath); err != nil {
			continue
		}
		held, err := st.Client.SessionCode.Query().Where(sessioncode.WorktreePath(e.WorktreePath)).Exist(ctx)
		if err != nil {
			return nil, apperr.Storage(err, "check a worktree's owner")
		}
		if held {
			continue
		}
		lingering[e.WorktreePath] = true
		if !listed[e.ID] {
			out = append(out, orphanOf(e))
		}
	}
	for i := range out {
		if !lingering[out[i].Worktree] {
			out[i].Worktree = ""
		}
	}
	return out, nil
}
