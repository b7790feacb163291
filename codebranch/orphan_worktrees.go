package codebranch

import (
	"context"
	"os"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/forkjournal"
	"tuttid/ent/sessioncode"
	"tuttid/store"
)

// LingeringWorktrees are the journal entries of forks whose recorded
// worktree is still on disk and held by no session: a fork a crash cut
// short before the restart removed it, or one whose removal failed
// (`tuttid orphans` lists them). It needs no service: the command reads
// the database beside a running server.
func LingeringWorktrees(ctx context.Context, st *store.Store) ([]*ent.ForkJournal, error) {
	entries, err := st.Client.ForkJournal.Query().
		Where(forkjournal.WorktreePathNEQ(""), forkjournal.StateNEQ(forkjournal.StateDone)).
		Order(ent.Asc(forkjournal.FieldID)).All(ctx)
	if err != nil {
		return nil, apperr.Storage(err, "read the fork journal")
	}
	var out []*ent.ForkJournal
	for _, e := range entries {
		if _, err := os.Lstat(e.WorktreePath); err != nil {
			continue
		}
		held, err := st.Client.SessionCode.Query().Where(sessioncode.WorktreePath(e.WorktreePath)).Exist(ctx)
		if err != nil {
			return nil, apperr.Storage(err, "check a worktree's owner")
		}
		if !held {
			out = append(out, e)
		}
	}
	return out, nil
}
