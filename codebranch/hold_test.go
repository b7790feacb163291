package codebranch_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"tuttid/ent"
)

// TestReadsWhileArchivingAnswerWhole: reads of a worktree session's code
// (its changes with and without the patch, its branch, a turn's diff, a
// comparison with its sibling), each given a row read before the archive
// as the GUI's list is, run in a loop while the session is archived and
// restored again and again. Every read answers, with the same files,
// from the worktree as it was or from the archive checkpoint: none runs
// git in the directory being removed.
func TestReadsWhileArchivingAnswerWhole(t *testing.T) {
	k := newKit(t)
	repo := newRepo(t)
	parent := k.session("p", repo)
	k.svc.SessionStarted(k.ctx, parent)
	t1 := k.endTurn(parent, "turn-1")
	c := k.worktreeChild(parent, "c", t1.CheckpointCommit)
	d := k.worktreeChild(parent, "d", t1.CheckpointCommit)
	cPath := k.row("c").WorktreePath
	writeFile(t, filepath.Join(cPath, "a.txt"), "a1\nc\n")
	writeFile(t, filepath.Join(cPath, "new-c.txt"), "new\n")
	turnC := k.endTurn(c, "turn-c1")
	if turnC.CheckpointCommit == "" {
		t.Fatal("the child's turn has no checkpoint")
	}
	want := []string{"MODIFIED a.txt", "ADDED new-c.txt"}
	slices.Sort(want)

	present := k.row("c") // read before any archive: WorktreePresent
	ctx, stop := context.WithCancel(k.ctx)
	var reads atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	check := func(what string, got []string, err error) bool {
		if err != nil {
			errs <- fmt.Errorf("%s: %w", what, err)
			return false
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			errs <- fmt.Errorf("%s: files %v, want %v", what, got, want)
			return false
		}
		reads.Add(1)
		return true
	}
	reader := func(read func(row *ent.SessionCode) bool) {
		defer wg.Done()
		for ctx.Err() == nil {
			// Half the reads with the stale row, half with one read now.
			row := present
			if reads.Load()%2 == 1 {
				row = k.row("c")
			}
			if !read(row) {
				return
			}
		}
	}
	wg.Add(4)
	go reader(func(row *ent.SessionCode) bool {
		diff, err := k.svc.Changes(k.ctx, row)
		return check("Changes", paths(&diff), err)
	})
	go reader(func(row *ent.SessionCode) bool {
		diff, err := k.svc.ChangedFiles(k.ctx, row)
		if err == nil {
			_, err = k.svc.Branch(k.ctx, row)
		}
		return check("ChangedFiles and Branch", paths(&diff), err)
	})
	go reader(func(*ent.SessionCode) bool {
		diff, err := k.svc.TurnDiff(k.ctx, turnC, true)
		if err == nil && diff == nil {
			err = fmt.Errorf("no diff")
		}
		if err != nil {
			return check("TurnDiff", nil, err)
		}
		return check("TurnDiff", paths(diff), nil)
	})
	go reader(func(*ent.SessionCode) bool {
		cmp, err := k.svc.Compare(k.ctx, c, d, parent, "turn-1")
		if err == nil && cmp == nil {
			err = fmt.Errorf("no comparison")
		}
		if err != nil {
			return check("Compare", nil, err)
		}
		return check("Compare", paths(&cmp.AChanges), nil)
	})

	const cycles = 25
	for i := 0; i < cycles && len(errs) == 0; i++ {
		k.svc.ArchiveWorktrees(k.ctx, []string{"c"})
		if k.row("c").WorktreePresent {
			t.Fatalf("cycle %d: the worktree was not archived", i)
		}
		if _, err := k.svc.RestoreWorktrees(k.ctx, []string{"c"}); err != nil {
			t.Fatalf("cycle %d: restore: %v", i, err)
		}
	}
	stop()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := reads.Load(); n < cycles {
		t.Fatalf("%d reads across %d archives, want at least one each", n, cycles)
	}
	t.Logf("%d reads across %d archive and restore cycles", reads.Load(), cycles)
}
