package fork

import (
	"context"

	"tuttid/codebranch"
	"tuttid/store"
)

// listOrphanWorktrees adds to out the worktrees forks recorded that are
// still on disk and that no session holds (codebranch.LingeringWorktrees).
// An entry already listed for its thread keeps one line; its Worktree says
// the directory is still there, and is cleared when it is not.
func listOrphanWorktrees(ctx context.Context, st *store.Store, out []Orphan, listed map[int]bool) ([]Orphan, error) {
	entries, err := codebranch.LingeringWorktrees(ctx, st)
	if err != nil {
		return nil, err
	}
	lingering := map[string]bool{}
	for _, e := range entries {
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
