package codebranch_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/gitrepo/gittest"
)

// archivedChildren makes WORKTREE children of a parent in newRepo, each
// with edits of its own, and archives them; it returns the repository,
// and each child's worktree path and files as they were.
func (k *kit) archivedChildren(ids ...string) (repo string, paths, files map[string]string) {
	k.t.Helper()
	repo = newRepo(k.t)
	parent := k.session("p", repo)
	k.svc.SessionStarted(k.ctx, parent)
	t1 := k.endTurn(parent, "turn-1")
	paths, files = map[string]string{}, map[string]string{}
	for _, id := range ids {
		c := k.worktreeChild(parent, id, t1.CheckpointCommit)
		row, _ := k.svc.Row(k.ctx, c.ID)
		writeFile(k.t, filepath.Join(row.WorktreePath, "a.txt"), "a1\n"+id+"\n")
		writeFile(k.t, filepath.Join(row.WorktreePath, "new-"+id+".txt"), "new\n")
		paths[id], files[id] = row.WorktreePath, gittest.Files(k.t, row.WorktreePath)
	}
	k.svc.ArchiveWorktrees(k.ctx, ids)
	for _, id := range ids {
		if _, err := os.Stat(paths[id]); !os.IsNotExist(err) {
			k.t.Fatalf("%s's worktree is still there after the archive: %v", id, err)
		}
	}
	return repo, paths, files
}

func (k *kit) row(id string) *ent.SessionCode {
	k.t.Helper()
	row, err := k.svc.Row(k.ctx, id)
	if err != nil || row == nil {
		k.t.Fatalf("%s's code row: %v, %v", id, row, err)
	}
	return row
}

// TestRestoreFailsWholeAndTouchesNothing: a worktree that cannot be made
// again fails the restore with agent.fork_code_failed, leaves its row
// archived and what is at its path as it was, and undoes the worktrees
// made before it; once the cause is gone, restore brings the files back
// byte for byte.
func TestRestoreFailsWholeAndTouchesNothing(t *testing.T) {
	for _, tc := range []struct {
		name string
		// spoil breaks the restore of d and returns what undoes it and the
		// user's files at d's path to find untouched ("" for none).
		spoil func(t *testing.T, repo, path string) (mend func(), mine string)
		why   string
		fails string // the session the error names: d, or c when both fail
	}{
		{"a file at the path", func(t *testing.T, _, path string) (func(), string) {
			writeFile(t, path, "my notes\n")
			return func() { os.Remove(path) }, "my notes\n"
		}, "may not remove", "d"},
		{"a directory at the path", func(t *testing.T, _, path string) (func(), string) {
			writeFile(t, filepath.Join(path, "notes.txt"), "mine\n")
			return func() { os.RemoveAll(path) }, "mine\n"
		}, "may not remove", "d"},
		{"an empty directory at the path", func(t *testing.T, _, path string) (func(), string) {
			if err := os.MkdirAll(path, 0o755); err != nil {
				t.Fatal(err)
			}
			return func() { os.Remove(path) }, ""
		}, "may not remove", "d"},
		{"a worktree of the user's own with changes", func(t *testing.T, repo, path string) (func(), string) {
			gitT(t, repo, "worktree", "add", "-q", "--detach", path)
			writeFile(t, filepath.Join(path, "notes.txt"), "mine\n")
			return func() { gitT(t, repo, "worktree", "remove", "--force", path) }, "mine\n"
		}, "may not remove", "d"},
		{"the repository moved away", func(t *testing.T, repo, _ string) (func(), string) {
			if err := os.Rename(repo, repo+".away"); err != nil {
				t.Fatal(err)
			}
			return func() { os.Rename(repo+".away", repo) }, ""
		}, "repository cannot be opened", "c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newKit(t)
			repo, paths, files := k.archivedChildren("c", "d")
			before := map[string]*ent.SessionCode{"c": k.row("c"), "d": k.row("d")}
			mend, mine := tc.spoil(t, repo, paths["d"])

			undo, err := k.svc.RestoreWorktrees(k.ctx, []string{"c", "d"})
			if apperr.CodeOf(err) != apperr.ForkCodeFailed || undo != nil {
				t.Fatalf("restore = %v, want agent.fork_code_failed", err)
			}
			msg := apperr.From(err).Message
			for _, want := range []string{`"` + tc.fails + `"`, paths[tc.fails], tc.why, before[tc.fails].ArchiveCommit} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q does not say %q", msg, want)
				}
			}
			if mine != "" {
				p := paths["d"]
				if fi, _ := os.Stat(p); fi != nil && fi.IsDir() {
					p = filepath.Join(p, "notes.txt")
				}
				if got, err := os.ReadFile(p); err != nil || string(got) != mine {
					t.Errorf("the user's file at the path = %q, %v; want %q untouched", got, err, mine)
				}
			}
			// c, made before d failed, is archived again: all or nothing.
			if _, err := os.Stat(paths["c"]); !os.IsNotExist(err) {
				t.Errorf("c's worktree is left by a failed restore: %v", err)
			}
			for _, id := range []string{"c", "d"} {
				if row := k.row(id); row.WorktreePresent || row.ArchiveCommit == "" {
					t.Errorf("%s after a failed restore: present %v, archive commit %q", id, row.WorktreePresent, row.ArchiveCommit)
				}
			}
			if row := k.row("d"); row.ArchiveCommit != before["d"].ArchiveCommit {
				t.Errorf("d's archive commit moved: %s, was %s", row.ArchiveCommit, before["d"].ArchiveCommit)
			}

			mend()
			if _, err := k.svc.RestoreWorktrees(k.ctx, []string{"c", "d"}); err != nil {
				t.Fatalf("restore once mended: %v", err)
			}
			for _, id := range []string{"c", "d"} {
				if got := gittest.Files(t, paths[id]); got != files[id] {
					t.Errorf("%s's restored files:\n%s\nwant\n%s", id, got, files[id])
				}
				if !k.row(id).WorktreePresent {
					t.Errorf("%s not present after the restore", id)
				}
			}
		})
	}
}

// TestRestoreUndo: undo (a restore whose commit failed) archives again
// what the restore made; a later restore brings the same files.
func TestRestoreUndo(t *testing.T) {
	k := newKit(t)
	_, paths, files := k.archivedChildren("c")
	undo, err := k.svc.RestoreWorktrees(k.ctx, []string{"c"})
	if err != nil {
		t.Fatal(err)
	}
	if got := gittest.Files(t, paths["c"]); got != files["c"] {
		t.Fatalf("restored files:\n%s\nwant\n%s", got, files["c"])
	}
	undo(k.ctx)
	if _, err := os.Stat(paths["c"]); !os.IsNotExist(err) {
		t.Fatalf("undo left the worktree: %v", err)
	}
	if k.row("c").WorktreePresent {
		t.Fatal("undo left the row present")
	}
	if _, err := k.svc.RestoreWorktrees(k.ctx, []string{"c"}); err != nil {
		t.Fatal(err)
	}
	if got := gittest.Files(t, paths["c"]); got != files["c"] {
		t.Errorf("files after undo and restore:\n%s\nwant\n%s", got, files["c"])
	}
}

// TestDeleteKeepsWhatIsAtAnArchivedPath: deleting an archived session
// removes nothing at its worktree's path: tuttid's worktree went with the
// archive, so what is there now is someone else's.
func TestDeleteKeepsWhatIsAtAnArchivedPath(t *testing.T) {
	k := newKit(t)
	_, paths, _ := k.archivedChildren("c")
	writeFile(t, filepath.Join(paths["c"], "notes.txt"), "mine\n")
	d, err := k.svc.PrepareDelete(k.ctx, []string{"c"}, true)
	if err != nil {
		t.Fatal(err)
	}
	k.svc.Finish(k.ctx, d)
	if got, err := os.ReadFile(filepath.Join(paths["c"], "notes.txt")); err != nil || string(got) != "mine\n" {
		t.Errorf("the user's file after the delete = %q, %v", got, err)
	}
}
