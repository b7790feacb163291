package gitrepo

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
)

func TestApply(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		// child and parent change their files after the fork.
		child, parent func(t *testing.T, dir string)
		dryRun        bool
		wantClean     bool
		wantApplied   bool
		wantFiles     []FileChange
		wantConflicts []string
		// wantParent maps parent files to their content afterwards.
		wantParent map[string]string
	}{
		{
			name: "clean: the child's edits join the parent's",
			child: func(t *testing.T, dir string) {
				runShell(t, dir, "printf 'a1\\nchild\\n' > a.txt && rm dir/b.txt && echo c > c.txt")
			},
			parent: func(t *testing.T, dir string) {
				writeFile(t, filepath.Join(dir, "p.txt"), "parent\n")
			},
			wantClean: true, wantApplied: true,
			wantFiles: []FileChange{
				{Path: "a.txt", Status: Modified, Additions: 1},
				{Path: "c.txt", Status: Added, Additions: 1},
				{Path: "dir/b.txt", Status: Deleted, Deletions: 1},
			},
			wantParent: map[string]string{"a.txt": "a1\nchild\n", "c.txt": "c\n", "p.txt": "parent\n"},
		},
		{
			name:      "dry run writes nothing",
			child:     func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, "c.txt"), "c\n") },
			parent:    func(t *testing.T, dir string) {},
			dryRun:    true,
			wantClean: true,
			wantFiles: []FileChange{{Path: "c.txt", Status: Added, Additions: 1}},
		},
		{
			name:          "conflict: both changed the same line",
			child:         func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, "a.txt"), "child\n") },
			parent:        func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, "a.txt"), "parent\n") },
			wantConflicts: []string{"a.txt"},
			wantParent:    map[string]string{"a.txt": "parent\n"},
		},
		{
			name:  "an added file would overwrite the parent's untracked file too big to snapshot",
			child: func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, "big.bin"), "small\n") },
			parent: func(t *testing.T, dir string) {
				sized(t, filepath.Join(dir, "big.bin"), MaxUntrackedSize+1)
			},
			wantConflicts: []string{"big.bin"},
		},
		{
			name:        "nothing to bring back",
			child:       func(t *testing.T, dir string) {},
			parent:      func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, "p.txt"), "parent\n") },
			wantClean:   true,
			wantApplied: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := testGit(t)
			repo := newRepo(t)
			installFailingHooks(t, repo)
			parent := openRepo(t, g, repo)
			base, err := parent.Checkpoint(ctx, CheckpointOptions{Ref: SessionRef("child", "base")})
			if err != nil {
				t.Fatal(err)
			}
			dest := filepath.Join(t.TempDir(), "child")
			if _, err := parent.CreateWorktree(ctx, WorktreeOptions{Checkpoint: base.Commit, Path: dest}); err != nil {
				t.Fatal(err)
			}
			tc.child(t, dest)
			tc.parent(t, repo)
			child := openRepo(t, g, dest)
			before := captureState(t, repo)
			childBefore := captureState(t, dest)
			res, err := parent.Apply(ctx, child, base.Commit, tc.dryRun)
			if err != nil {
				t.Fatal(err)
			}
			if res.Clean != tc.wantClean || res.Applied != tc.wantApplied {
				t.Errorf("clean %v applied %v, want %v %v", res.Clean, res.Applied, tc.wantClean, tc.wantApplied)
			}
			if !slices.Equal(res.Conflicts, tc.wantConflicts) {
				t.Errorf("conflicts %v, want %v", res.Conflicts, tc.wantConflicts)
			}
			if tc.wantConflicts == nil && !slices.Equal(res.Files, tc.wantFiles) {
				t.Errorf("files %+v\nwant  %+v", res.Files, tc.wantFiles)
			}
			assertStateUnchanged(t, childBefore, dest)
			if res.Applied && len(tc.wantFiles) > 0 {
				// Only the working files changed.
				assertStateUnchanged(t, before, repo, "status", "files")
				if gitT(t, repo, "diff", "--cached", "--name-only") != "" {
					t.Errorf("the apply staged something")
				}
			} else {
				assertStateUnchanged(t, before, repo)
			}
			for path, content := range tc.wantParent {
				if got := readFile(t, filepath.Join(repo, path)); got != content {
					t.Errorf("parent %s: %q, want %q", path, got, content)
				}
			}
			if fired := hooksFired(t, repo); len(fired) > 0 {
				t.Errorf("hooks ran: %v", fired)
			}
			if res.Applied {
				// Applied: the child's changes are all in the parent.
				again, err := parent.Apply(ctx, child, base.Commit, true)
				if err != nil {
					t.Fatal(err)
				}
				if !again.Clean || len(again.Files) != 0 {
					t.Errorf("a second apply would change %+v (conflicts %v)", again.Files, again.Conflicts)
				}
				// Nothing is lost by removing the child now: its files are
				// what the apply brought back.
				if err := parent.RemoveWorktree(ctx, dest, RemoveOptions{UnchangedFrom: res.Source}); err != nil {
					t.Errorf("removal after the apply: %v", err)
				}
			}
		})
	}
}

func TestApplyRefusesAnotherRepository(t *testing.T) {
	ctx := context.Background()
	g := testGit(t)
	a, b := newRepo(t), newRepo(t)
	ra, rb := openRepo(t, g, a), openRepo(t, g, b)
	if _, err := ra.Apply(ctx, rb, "HEAD", true); !errors.Is(err, ErrDifferentRepository) {
		t.Errorf("err %v, want ErrDifferentRepository", err)
	}
}
