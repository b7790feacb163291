package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

func TestCheckpoint(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		// setup changes the repository made by newRepo (or makes its own)
		// and returns the directory the session works in.
		setup func(t *testing.T, repo string) string
		// want maps files of the checkpoint to their content.
		want map[string]string
		// absent are paths the checkpoint must not hold.
		absent  []string
		skipped []string
		unborn  bool
	}{
		{
			name: "shell edit of a tracked file",
			setup: func(t *testing.T, repo string) string {
				runShell(t, repo, "printf 'a2\\n' >> a.txt")
				return repo
			},
			want: map[string]string{"a.txt": "a1\na2\n", "dir/b.txt": "b1\n", ".gitignore": "*.log\n.env\nbuild/\n"},
		},
		{
			name: "staged new file, then modified in the working tree",
			setup: func(t *testing.T, repo string) string {
				writeFile(t, filepath.Join(repo, "staged.txt"), "staged\n")
				gitT(t, repo, "add", "staged.txt")
				writeFile(t, filepath.Join(repo, "staged.txt"), "working\n")
				return repo
			},
			want: map[string]string{"staged.txt": "working\n", "a.txt": "a1\n"},
		},
		{
			name: "untracked files kept, ignored ones left out",
			setup: func(t *testing.T, repo string) string {
				writeFile(t, filepath.Join(repo, "new", "n.txt"), "n\n")
				writeFile(t, filepath.Join(repo, "debug.log"), "log\n")
				writeFile(t, filepath.Join(repo, ".env"), "SECRET=1\n")
				writeFile(t, filepath.Join(repo, "build", "out.bin"), "out\n")
				return repo
			},
			want:   map[string]string{"new/n.txt": "n\n"},
			absent: []string{"debug.log", ".env", "build/out.bin"},
		},
		{
			name: "untracked file over 10 MiB left out, one of exactly 10 MiB kept",
			setup: func(t *testing.T, repo string) string {
				sized(t, filepath.Join(repo, "big.bin"), MaxUntrackedSize+1)
				sized(t, filepath.Join(repo, "edge.bin"), MaxUntrackedSize)
				return repo
			},
			want:    map[string]string{"a.txt": "a1\n"},
			absent:  []string{"big.bin"},
			skipped: []string{"big.bin"},
		},
		{
			name: "tracked file over 10 MiB kept",
			setup: func(t *testing.T, repo string) string {
				sized(t, filepath.Join(repo, "tracked.bin"), MaxUntrackedSize+1)
				gitT(t, repo, "add", "tracked.bin")
				gitT(t, repo, "commit", "-q", "-m", "big")
				runShell(t, repo, "printf x >> tracked.bin")
				return repo
			},
			want: map[string]string{"a.txt": "a1\n"},
		},
		{
			name: "deleted file, and a file replaced by a directory",
			setup: func(t *testing.T, repo string) string {
				runShell(t, repo, "rm a.txt && rm dir/b.txt && rmdir dir && mkdir -p a.txt && echo inner > a.txt/inner")
				return repo
			},
			want:   map[string]string{"a.txt/inner": "inner\n"},
			absent: []string{"dir/b.txt"},
		},
		{
			name: "force-added ignored file stays, nested repository left out",
			setup: func(t *testing.T, repo string) string {
				writeFile(t, filepath.Join(repo, "keep.log"), "kept\n")
				gitT(t, repo, "add", "-f", "keep.log")
				nested := filepath.Join(repo, "nested")
				writeFile(t, filepath.Join(nested, "x.txt"), "x\n")
				gitT(t, nested, "init", "-q")
				return repo
			},
			want:   map[string]string{"keep.log": "kept\n"},
			absent: []string{"nested", "nested/x.txt"},
		},
		{
			name: "session in a subdirectory",
			setup: func(t *testing.T, repo string) string {
				writeFile(t, filepath.Join(repo, "top.txt"), "top\n")
				writeFile(t, filepath.Join(repo, "dir", "c.txt"), "c\n")
				return filepath.Join(repo, "dir")
			},
			want: map[string]string{"top.txt": "top\n", "dir/c.txt": "c\n", "dir/b.txt": "b1\n"},
		},
		{
			name: "linked worktree",
			setup: func(t *testing.T, repo string) string {
				wt := filepath.Join(filepath.Dir(repo), "linked")
				gitT(t, repo, "worktree", "add", "-q", "-b", "side", wt)
				writeFile(t, filepath.Join(wt, "a.txt"), "in worktree\n")
				writeFile(t, filepath.Join(wt, "w.txt"), "w\n")
				return wt
			},
			want: map[string]string{"a.txt": "in worktree\n", "w.txt": "w\n"},
		},
		{
			name: "unmerged index during a merge conflict",
			setup: func(t *testing.T, repo string) string {
				gitT(t, repo, "checkout", "-q", "-b", "other")
				writeFile(t, filepath.Join(repo, "a.txt"), "other\n")
				gitT(t, repo, "commit", "-q", "-am", "other")
				gitT(t, repo, "checkout", "-q", "main")
				writeFile(t, filepath.Join(repo, "a.txt"), "main\n")
				gitT(t, repo, "commit", "-q", "-am", "main")
				if _, err := runQuiet(repo, "merge", "other"); err == nil {
					t.Fatal("merge did not conflict")
				}
				return repo
			},
			want: map[string]string{"dir/b.txt": "b1\n"},
		},
		{
			name:   "unborn HEAD",
			unborn: true,
			setup: func(t *testing.T, _ string) string {
				dir := filepath.Join(t.TempDir(), "fresh")
				gitT(t, t.TempDir(), "init", "-q", dir)
				writeFile(t, filepath.Join(dir, "f.txt"), "f\n")
				writeFile(t, filepath.Join(dir, "s.txt"), "s\n")
				gitT(t, dir, "add", "s.txt")
				return dir
			},
			want: map[string]string{"f.txt": "f\n", "s.txt": "s\n"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := testGit(t)
			repo := newRepo(t)
			dir := tc.setup(t, repo)
			installFailingHooks(t, dir)
			before := captureState(t, dir)
			r := openRepo(t, g, dir)
			ref := TurnRef("s1", "t1")
			cp, err := r.Checkpoint(ctx, CheckpointOptions{Ref: ref})
			if err != nil {
				t.Fatal(err)
			}
			assertStateUnchanged(t, before, dir)
			if fired := hooksFired(t, dir); len(fired) > 0 {
				t.Errorf("hooks ran: %v", fired)
			}
			if got := gitT(t, dir, "rev-parse", ref); got != cp.Commit {
				t.Errorf("%s = %s, want %s", ref, got, cp.Commit)
			}
			parents := gitT(t, dir, "show", "-s", "--format=%P", cp.Commit)
			if tc.unborn {
				if parents != "" || cp.Head != "" {
					t.Errorf("unborn: parents %q, head %q", parents, cp.Head)
				}
			} else if parents != before.Head || cp.Head != before.Head {
				t.Errorf("parents %q, head %q; want HEAD %s", parents, cp.Head, before.Head)
			}
			if id := gitT(t, dir, "show", "-s", "--format=%an <%ae>|%cn <%ce>", cp.Commit); id != "tuttid <tuttid@localhost>|tuttid <tuttid@localhost>" {
				t.Errorf("identity %q", id)
			}
			files := commitFiles(t, dir, cp.Commit)
			for path, content := range tc.want {
				if got := gitT(t, dir, "cat-file", "blob", cp.Commit+":"+path); got+"\n" != content && got != content {
					t.Errorf("%s: %q, want %q", path, got, content)
				}
			}
			for _, path := range tc.absent {
				if slices.Contains(files, path) {
					t.Errorf("%s is in the checkpoint: %v", path, files)
				}
			}
			if !slices.Equal(cp.Skipped, tc.skipped) {
				t.Errorf("skipped %v, want %v", cp.Skipped, tc.skipped)
			}
			// The checkpoint's tree is the working files: what git status
			// would show, had everything been added.
			if tree := gitT(t, dir, "rev-parse", cp.Commit+"^{tree}"); tree != cp.Tree {
				t.Errorf("tree %s, want %s", cp.Tree, tree)
			}
		})
	}
}

func TestCheckpointReusesPrevious(t *testing.T) {
	ctx := context.Background()
	g := testGit(t)
	repo := newRepo(t)
	r := openRepo(t, g, repo)
	first, err := r.Checkpoint(ctx, CheckpointOptions{Ref: TurnRef("s", "t1")})
	if err != nil {
		t.Fatal(err)
	}
	objects := countObjects(t, repo)
	same, err := r.Checkpoint(ctx, CheckpointOptions{Ref: TurnRef("s", "t2"), Previous: first.Commit})
	if err != nil {
		t.Fatal(err)
	}
	if !same.Reused || same.Commit != first.Commit {
		t.Errorf("unchanged files: %+v, want the previous %s", same, first.Commit)
	}
	if n := countObjects(t, repo); n != objects {
		t.Errorf("unchanged files added objects: %s, was %s", n, objects)
	}
	writeFile(t, filepath.Join(repo, "a.txt"), "changed\n")
	next, err := r.Checkpoint(ctx, CheckpointOptions{Ref: TurnRef("s", "t3"), Previous: first.Commit})
	if err != nil {
		t.Fatal(err)
	}
	if next.Reused || next.Commit == first.Commit {
		t.Errorf("changed files reused the previous checkpoint")
	}
	// HEAD moved, files equal to HEAD's: a new commit (its parent differs).
	gitT(t, repo, "commit", "-q", "-am", "commit the change")
	moved, err := r.Checkpoint(ctx, CheckpointOptions{Ref: TurnRef("s", "t4"), Previous: next.Commit})
	if err != nil {
		t.Fatal(err)
	}
	if moved.Reused || moved.Tree != next.Tree {
		t.Errorf("HEAD moved: %+v", moved)
	}
}

func countObjects(t *testing.T, dir string) string {
	t.Helper()
	return gitT(t, dir, "count-objects")
}

func TestCheckpointIgnoresInheritedGitEnvironment(t *testing.T) {
	ctx := context.Background()
	other := newRepo(t)
	t.Setenv("GIT_DIR", filepath.Join(other, ".git"))
	t.Setenv("GIT_WORK_TREE", other)
	t.Setenv("GIT_INDEX_FILE", filepath.Join(other, ".git", "index"))
	g := New(Config{Bin: gitBin})
	repo := newRepo(t)
	writeFile(t, filepath.Join(repo, "mine.txt"), "mine\n")
	r, err := g.Open(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	if !sameFile(r.Root, repo) {
		t.Fatalf("root %s, want %s", r.Root, repo)
	}
	cp, err := r.Checkpoint(ctx, CheckpointOptions{Ref: TurnRef("s", "t")})
	if err != nil {
		t.Fatal(err)
	}
	os.Unsetenv("GIT_DIR")
	os.Unsetenv("GIT_WORK_TREE")
	os.Unsetenv("GIT_INDEX_FILE")
	if !slices.Contains(commitFiles(t, repo, cp.Commit), "mine.txt") {
		t.Errorf("checkpoint was not taken in %s", repo)
	}
	if out, _ := runQuiet(other, "for-each-ref", "refs/tuttid/"); out != "" {
		t.Errorf("the inherited GIT_DIR got refs: %s", out)
	}
}

func TestOpenNotARepository(t *testing.T) {
	ctx := context.Background()
	g := testGit(t)
	repo := newRepo(t)
	bare := filepath.Join(t.TempDir(), "bare.git")
	gitT(t, t.TempDir(), "init", "-q", "--bare", bare)
	for name, dir := range map[string]string{
		"plain directory": t.TempDir(),
		"missing":         filepath.Join(t.TempDir(), "gone"),
		"inside .git":     filepath.Join(repo, ".git"),
		"bare repository": bare,
		"file, not a dir": filepath.Join(repo, "a.txt"),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := g.Open(ctx, dir)
			if !errors.Is(err, ErrNotARepository) {
				t.Errorf("Open(%s) = %v, want ErrNotARepository", dir, err)
			}
		})
	}
}

func TestCheckpointRefs(t *testing.T) {
	ctx := context.Background()
	g := testGit(t)
	repo := newRepo(t)
	r := openRepo(t, g, repo)
	for _, bad := range []string{"refs/heads/x", "refs/tuttid/a..b", "refs/tuttid/", "HEAD", "refs/tuttid/x.lock"} {
		if _, err := r.Checkpoint(ctx, CheckpointOptions{Ref: bad}); !errors.Is(err, ErrInvalidRef) {
			t.Errorf("ref %q: %v, want ErrInvalidRef", bad, err)
		}
	}
	for _, ref := range []string{TurnRef("ab", "1"), SessionRef("ab", "start"), TurnRef("abc", "1")} {
		if _, err := r.Checkpoint(ctx, CheckpointOptions{Ref: ref}); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.DeleteRefs(ctx, SessionRefPrefix("ab")); err != nil {
		t.Fatal(err)
	}
	left, err := r.Refs(ctx, RefPrefix)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[TurnRef("abc", "1")] == "" {
		t.Errorf("after deleting session ab: %v", left)
	}
	if err := r.DeleteRefs(ctx, "refs/heads/"); !errors.Is(err, ErrInvalidRef) {
		t.Errorf("DeleteRefs outside refs/tuttid/: %v", err)
	}
}

func runShell(t *testing.T, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
}

// sized makes a file of n bytes without writing them (a sparse file).
func sized(t *testing.T, path string, n int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(n); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// Sessions sharing one directory checkpoint at once: each builds in its own
// index, and all record the same files.
func TestConcurrentCheckpoints(t *testing.T) {
	ctx := context.Background()
	g := testGit(t)
	repo := newRepo(t)
	writeFile(t, filepath.Join(repo, "u.txt"), "u\n")
	before := captureState(t, repo)
	r := openRepo(t, g, repo)
	const n = 6
	trees := make([]string, n)
	errs := make([]error, n)
	done := make(chan int)
	for i := range n {
		go func() {
			cp, err := r.Checkpoint(ctx, CheckpointOptions{Ref: TurnRef(fmt.Sprintf("s%d", i), "t")})
			trees[i], errs[i] = cp.Tree, err
			done <- i
		}()
	}
	for range n {
		<-done
	}
	for i := range n {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if trees[i] != trees[0] {
			t.Errorf("session %d recorded %s, session 0 %s", i, trees[i], trees[0])
		}
	}
	assertStateUnchanged(t, before, repo)
}
