package gitrepo

import (
	"cmp"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// parentAtTurn changes the repository as a turn would, takes the turn's
// checkpoint, records what git showed then, and changes the files again
// (a later turn) so that a worktree made from the checkpoint must not see
// the later changes.
type turnView struct {
	cp        Checkpoint
	diffHead  string // git diff HEAD --name-status, tracked files
	untracked string // untracked files
	files     map[string]string
}

func parentAtTurn(t *testing.T, g *Git, dir string) turnView {
	t.Helper()
	ctx := context.Background()
	root := gitT(t, dir, "rev-parse", "--show-toplevel")
	runShell(t, root, "printf 'a2\\n' >> a.txt && rm dir/b.txt && mkdir -p new && echo n > new/n.txt && echo s > .env && echo l > x.log")
	var v turnView
	var err error
	v.cp, err = openRepo(t, g, dir).Checkpoint(ctx, CheckpointOptions{Ref: TurnRef("parent", "3")})
	if err != nil {
		t.Fatal(err)
	}
	v.diffHead = gitT(t, root, "diff", "HEAD", "--name-status")
	v.untracked = gitT(t, root, "ls-files", "--others", "--exclude-standard")
	v.files = treeFiles(t, root)
	delete(v.files, ".env")
	delete(v.files, "x.log")
	runShell(t, root, "echo later > a.txt && echo later > later.txt")
	return v
}

func TestCreateWorktree(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		// dir is the session's directory in the repository newRepo made.
		dir       func(t *testing.T, repo string) string
		newBranch string
		wantDir   string // the child's cwd relative to the worktree
	}{
		{name: "detached, from the top level", dir: func(t *testing.T, repo string) string { return repo }},
		{name: "new branch", dir: func(t *testing.T, repo string) string { return repo }, newBranch: "try/one"},
		{name: "from a subdirectory", dir: func(t *testing.T, repo string) string { return filepath.Join(repo, "dir") }, wantDir: "dir"},
		{
			name: "from a linked worktree",
			dir: func(t *testing.T, repo string) string {
				wt := filepath.Join(filepath.Dir(repo), "linked")
				gitT(t, repo, "worktree", "add", "-q", "-b", "side", wt)
				return wt
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := testGit(t)
			repo := newRepo(t)
			dir := tc.dir(t, repo)
			installFailingHooks(t, repo)
			view := parentAtTurn(t, g, dir)
			before := captureState(t, dir)
			r := openRepo(t, g, dir)
			dest := filepath.Join(t.TempDir(), "data", "worktrees", "ws", "child")
			wt, err := r.CreateWorktree(ctx, WorktreeOptions{Checkpoint: view.cp.Commit, Path: dest, NewBranch: tc.newBranch})
			if err != nil {
				t.Fatal(err)
			}
			assertStateUnchanged(t, before, dir, "worktrees", "refs outside refs/tuttid/")
			if fired := hooksFired(t, repo); len(fired) > 0 {
				t.Errorf("hooks ran: %v", fired)
			}
			if wt.Path != dest || wt.Dir != filepath.Join(dest, tc.wantDir) || wt.Head != view.cp.Head || wt.Branch != tc.newBranch {
				t.Errorf("worktree %+v", wt)
			}
			if fi, err := os.Stat(wt.Dir); err != nil || !fi.IsDir() {
				t.Errorf("child dir %s: %v", wt.Dir, err)
			}
			// The child sees what the parent saw after that turn.
			if got := gitT(t, dest, "rev-parse", "HEAD"); got != view.cp.Head {
				t.Errorf("child HEAD %s, want %s", got, view.cp.Head)
			}
			if got := gitT(t, dest, "diff", "HEAD", "--name-status"); got != view.diffHead {
				t.Errorf("child git diff HEAD:\n%s\nparent had:\n%s", got, view.diffHead)
			}
			if got := gitT(t, dest, "ls-files", "--others", "--exclude-standard"); got != view.untracked {
				t.Errorf("child untracked:\n%s\nparent had:\n%s", got, view.untracked)
			}
			if got := treeFiles(t, dest); mapString(got) != mapString(view.files) {
				t.Errorf("child files:\n%s\nwant:\n%s", mapString(got), mapString(view.files))
			}
			if got := gitT(t, dest, "diff", "--cached", "--name-only"); got != "" {
				t.Errorf("child index differs from HEAD: %s", got)
			}
			// Refs: the parent's refs unchanged but for the new branch.
			refs := nonTuttidRefs(t, repo)
			wantRefs := before.Refs
			if tc.newBranch != "" {
				if got := gitT(t, repo, "rev-parse", "refs/heads/"+tc.newBranch); got != view.cp.Head {
					t.Errorf("branch at %s, want %s", got, view.cp.Head)
				}
				var kept []string
				for _, line := range strings.Split(refs, "\n") {
					if line != view.cp.Head+" refs/heads/"+tc.newBranch {
						kept = append(kept, line)
					}
				}
				refs = strings.Join(kept, "\n")
			}
			if refs != wantRefs {
				t.Errorf("refs:\n%s\nwant:\n%s", refs, wantRefs)
			}
		})
	}
}

func TestCreateWorktreeRefusals(t *testing.T) {
	ctx := context.Background()
	g := testGit(t)
	cases := []struct {
		name  string
		opts  func(t *testing.T, repo string, cp string) WorktreeOptions
		want  error
		setup func(t *testing.T, repo string)
	}{
		{name: "branch with ..", want: ErrInvalidBranch, opts: branch("a..b")},
		{name: "branch with a space", want: ErrInvalidBranch, opts: branch("a b")},
		{name: "branch starting with -", want: ErrInvalidBranch, opts: branch("-x")},
		{name: "branch HEAD", want: ErrInvalidBranch, opts: branch("HEAD")},
		{name: "branch @{-1}", want: ErrInvalidBranch, opts: branch("@{-1}")},
		{name: "branch ending .lock", want: ErrInvalidBranch, opts: branch("x.lock")},
		{name: "existing branch", want: ErrBranchExists, opts: branch("main")},
		{
			name: "destination exists", want: ErrDestinationExists,
			opts: func(t *testing.T, repo, cp string) WorktreeOptions {
				dest := t.TempDir()
				return WorktreeOptions{Checkpoint: cp, Path: dest}
			},
		},
		{
			name: "relative path", want: ErrInvalidInput,
			opts: func(t *testing.T, repo, cp string) WorktreeOptions {
				return WorktreeOptions{Checkpoint: cp, Path: "rel/child"}
			},
		},
		{
			name: "unknown checkpoint", want: ErrGit,
			opts: func(t *testing.T, repo, cp string) WorktreeOptions {
				return WorktreeOptions{Checkpoint: strings.Repeat("1", len(cp)), Path: filepath.Join(t.TempDir(), "c")}
			},
		},
		{
			name: "include symlink out of the repository", want: ErrUnsafeInclude,
			setup: func(t *testing.T, repo string) {
				outside := filepath.Join(t.TempDir(), "secret")
				writeFile(t, outside, "secret\n")
				writeFile(t, filepath.Join(repo, IncludeFile), ".env\n")
				if err := os.Symlink(outside, filepath.Join(repo, ".env")); err != nil {
					t.Fatal(err)
				}
			},
			opts: func(t *testing.T, repo, cp string) WorktreeOptions {
				return WorktreeOptions{Checkpoint: cp, Path: filepath.Join(t.TempDir(), "c"), NewBranch: "made", CopyIncluded: true}
			},
		},
		{
			name: "include file that is a symlink", want: ErrUnsafeInclude,
			setup: func(t *testing.T, repo string) {
				outside := filepath.Join(t.TempDir(), "patterns")
				writeFile(t, outside, "*\n")
				if err := os.Symlink(outside, filepath.Join(repo, IncludeFile)); err != nil {
					t.Fatal(err)
				}
			},
			opts: func(t *testing.T, repo, cp string) WorktreeOptions {
				return WorktreeOptions{Checkpoint: cp, Path: filepath.Join(t.TempDir(), "c"), CopyIncluded: true}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			repo := newRepo(t)
			r := openRepo(t, g, repo)
			cp, err := r.Checkpoint(ctx, CheckpointOptions{Ref: TurnRef("s", "1")})
			if err != nil {
				t.Fatal(err)
			}
			if tc.setup != nil {
				tc.setup(t, repo)
			}
			opts := tc.opts(t, repo, cp.Commit)
			before := captureState(t, repo)
			_, err = r.CreateWorktree(ctx, opts)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
			// Nothing left behind: no worktree, no branch, no directory
			// (unless it was there before).
			assertStateUnchanged(t, before, repo)
			if tc.want != ErrDestinationExists && filepath.IsAbs(opts.Path) {
				if _, err := os.Lstat(opts.Path); !os.IsNotExist(err) {
					t.Errorf("%s left behind: %v", opts.Path, err)
				}
			}
		})
	}
	t.Run("unborn HEAD", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "fresh")
		gitT(t, t.TempDir(), "init", "-q", dir)
		writeFile(t, filepath.Join(dir, "f"), "f\n")
		r := openRepo(t, g, dir)
		cp, err := r.Checkpoint(ctx, CheckpointOptions{Ref: TurnRef("s", "1")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.CreateWorktree(ctx, WorktreeOptions{Checkpoint: cp.Commit, Path: filepath.Join(t.TempDir(), "c")}); !errors.Is(err, ErrNoCommit) {
			t.Errorf("err %v, want ErrNoCommit", err)
		}
	})
}

func branch(name string) func(t *testing.T, repo, cp string) WorktreeOptions {
	return func(t *testing.T, repo, cp string) WorktreeOptions {
		return WorktreeOptions{Checkpoint: cp, Path: filepath.Join(t.TempDir(), "c"), NewBranch: name}
	}
}

func TestWorktreeInclude(t *testing.T) {
	ctx := context.Background()
	g := testGit(t)
	repo := newRepo(t)
	writeFile(t, filepath.Join(repo, ".gitignore"), "*.log\n.env\nbuild/\nsecrets/\nconfig/*.local\nlink.env\n")
	// gitignore syntax: a file in an excluded directory cannot be
	// re-included, one matched by a wildcard can.
	writeFile(t, filepath.Join(repo, IncludeFile), ".env\nconfig/*.local\nsecrets/*\n!secrets/skip.txt\nlink.env\nnotes.txt\n../outside\n")
	gitT(t, repo, "add", "-A")
	gitT(t, repo, "commit", "-q", "-m", "ignore and include")
	writeFile(t, filepath.Join(repo, ".env"), "TOKEN=1\n")
	if err := os.Chmod(filepath.Join(repo, ".env"), 0o600); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(repo, "config", "app.local"), "local\n")
	writeFile(t, filepath.Join(repo, "secrets", "real.env"), "real\n")
	writeFile(t, filepath.Join(repo, "secrets", "skip.txt"), "skip\n")
	writeFile(t, filepath.Join(repo, "debug.log"), "not included\n")
	writeFile(t, filepath.Join(repo, "notes.txt"), "untracked, not ignored\n")
	if err := os.Symlink("secrets/real.env", filepath.Join(repo, "link.env")); err != nil {
		t.Fatal(err)
	}
	r := openRepo(t, g, repo)
	cp, err := r.Checkpoint(ctx, CheckpointOptions{Ref: TurnRef("s", "1")})
	if err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "child")
	wt, err := r.CreateWorktree(ctx, WorktreeOptions{Checkpoint: cp.Commit, Path: dest, CopyIncluded: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".env", "config/app.local", "link.env", "secrets/real.env"}
	if !slices.Equal(wt.Included, want) {
		t.Errorf("included %v, want %v", wt.Included, want)
	}
	if got := readFile(t, filepath.Join(dest, ".env")); got != "TOKEN=1\n" {
		t.Errorf(".env: %q", got)
	}
	if fi, err := os.Stat(filepath.Join(dest, ".env")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf(".env mode %v, %v", fi.Mode(), err)
	}
	if target, err := os.Readlink(filepath.Join(dest, "link.env")); err != nil || target != "secrets/real.env" {
		t.Errorf("link.env -> %q, %v", target, err)
	}
	for _, absent := range []string{"debug.log", "secrets/skip.txt"} {
		if _, err := os.Lstat(filepath.Join(dest, absent)); !os.IsNotExist(err) {
			t.Errorf("%s copied", absent)
		}
	}
	if got := readFile(t, filepath.Join(dest, "notes.txt")); got != "untracked, not ignored\n" {
		t.Errorf("notes.txt (from the checkpoint): %q", got)
	}
}

// A later symlinked directory in the checkpoint must not let an included
// file be written outside the worktree.
func TestWorktreeIncludeCannotEscapeThroughCheckpointSymlink(t *testing.T) {
	ctx := context.Background()
	g := testGit(t)
	repo := newRepo(t)
	outside := t.TempDir()
	writeFile(t, filepath.Join(repo, ".gitignore"), "*.env\n")
	writeFile(t, filepath.Join(repo, IncludeFile), "*.env\n")
	if err := os.Symlink(outside, filepath.Join(repo, "conf")); err != nil {
		t.Fatal(err)
	}
	gitT(t, repo, "add", "-A")
	gitT(t, repo, "commit", "-q", "-m", "conf is a link")
	r := openRepo(t, g, repo)
	cp, err := r.Checkpoint(ctx, CheckpointOptions{Ref: TurnRef("s", "1")})
	if err != nil {
		t.Fatal(err)
	}
	// Now conf is a real directory with an ignored, included file.
	runShell(t, repo, "rm conf && mkdir conf && echo x > conf/a.env")
	dest := filepath.Join(t.TempDir(), "child")
	_, err = r.CreateWorktree(ctx, WorktreeOptions{Checkpoint: cp.Commit, Path: dest, CopyIncluded: true})
	if err == nil {
		t.Fatal("the include copy wrote through a symlink")
	}
	if _, err := os.Lstat(filepath.Join(outside, "a.env")); !os.IsNotExist(err) {
		t.Errorf("a file was written outside the worktree: %v", err)
	}
	if _, err := os.Lstat(dest); !os.IsNotExist(err) {
		t.Errorf("worktree left behind after a failure")
	}
}

func TestRemoveWorktree(t *testing.T) {
	ctx := context.Background()
	g := testGit(t)
	setup := func(t *testing.T) (*Repo, string, Checkpoint, string) {
		repo := newRepo(t)
		r := openRepo(t, g, repo)
		cp, err := r.Checkpoint(ctx, CheckpointOptions{Ref: SessionRef("child", "base")})
		if err != nil {
			t.Fatal(err)
		}
		dest := filepath.Join(t.TempDir(), "child")
		if _, err := r.CreateWorktree(ctx, WorktreeOptions{Checkpoint: cp.Commit, Path: dest, NewBranch: "kept"}); err != nil {
			t.Fatal(err)
		}
		return r, repo, cp, dest
	}
	t.Run("refuses changes not matching the base", func(t *testing.T) {
		r, _, cp, dest := setup(t)
		writeFile(t, filepath.Join(dest, "a.txt"), "changed\n")
		writeFile(t, filepath.Join(dest, "new.txt"), "new\n")
		err := r.RemoveWorktree(ctx, dest, RemoveOptions{UnchangedFrom: cp.Commit})
		var ce *ChangesError
		if !errors.Is(err, ErrHasChanges) || !errors.As(err, &ce) || !slices.Equal(ce.Paths, []string{"a.txt", "new.txt"}) {
			t.Fatalf("err %v, want ChangesError naming a.txt and new.txt", err)
		}
		if got := readFile(t, filepath.Join(dest, "a.txt")); got != "changed\n" {
			t.Errorf("the refused removal touched the files")
		}
	})
	t.Run("removes an unchanged worktree and its ignored files, keeps the branch", func(t *testing.T) {
		r, repo, cp, dest := setup(t)
		writeFile(t, filepath.Join(dest, "debug.log"), "ignored\n")
		if err := r.RemoveWorktree(ctx, dest, RemoveOptions{UnchangedFrom: cp.Commit}); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(dest); !os.IsNotExist(err) {
			t.Errorf("%s still there", dest)
		}
		if strings.Contains(gitT(t, repo, "worktree", "list", "--porcelain"), dest) {
			t.Errorf("git still lists the worktree")
		}
		gitT(t, repo, "rev-parse", "--verify", "refs/heads/kept")
	})
	t.Run("discarding changes", func(t *testing.T) {
		r, _, _, dest := setup(t)
		writeFile(t, filepath.Join(dest, "a.txt"), "changed\n")
		if err := r.RemoveWorktree(ctx, dest, RemoveOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(dest); !os.IsNotExist(err) {
			t.Errorf("%s still there", dest)
		}
	})
	t.Run("worktree deleted by hand", func(t *testing.T) {
		r, repo, cp, dest := setup(t)
		if err := os.RemoveAll(dest); err != nil {
			t.Fatal(err)
		}
		list, err := r.Worktrees(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 2 || !list[0].Main || list[1].Path != dest || !list[1].Prunable || list[1].Branch != "kept" {
			t.Errorf("worktrees %+v", list)
		}
		if err := r.RemoveWorktree(ctx, dest, RemoveOptions{UnchangedFrom: cp.Commit}); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(gitT(t, repo, "worktree", "list", "--porcelain"), dest) {
			t.Errorf("git still lists the worktree")
		}
	})
	t.Run("made again where one was deleted by hand", func(t *testing.T) {
		r, _, cp, dest := setup(t)
		if err := os.RemoveAll(dest); err != nil {
			t.Fatal(err)
		}
		wt, err := r.CreateWorktree(ctx, WorktreeOptions{Checkpoint: cp.Commit, Path: dest, Branch: "kept"})
		if err != nil {
			t.Fatal(err)
		}
		if wt.Branch != "kept" || readFile(t, filepath.Join(dest, "a.txt")) != "a1\n" {
			t.Errorf("worktree %+v", wt)
		}
	})
	t.Run("refuses the main working tree and strangers", func(t *testing.T) {
		r, repo, _, _ := setup(t)
		for _, path := range []string{repo, t.TempDir()} {
			if err := r.RemoveWorktree(ctx, path, RemoveOptions{}); !errors.Is(err, ErrNotAWorktree) {
				t.Errorf("RemoveWorktree(%s) = %v, want ErrNotAWorktree", path, err)
			}
		}
		if _, err := os.Stat(filepath.Join(repo, "a.txt")); err != nil {
			t.Errorf("main working tree touched: %v", err)
		}
	})
}

// Archive and restore: a checkpoint of the worktree, its removal, and a
// worktree made again at the same path on the same branch has the same
// files byte for byte.
func TestArchiveRestoreRoundTrip(t *testing.T) {
	ctx := context.Background()
	g := testGit(t)
	repo := newRepo(t)
	r := openRepo(t, g, repo)
	base, err := r.Checkpoint(ctx, CheckpointOptions{Ref: SessionRef("child", "base")})
	if err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "child")
	if _, err := r.CreateWorktree(ctx, WorktreeOptions{Checkpoint: base.Commit, Path: dest, NewBranch: "work"}); err != nil {
		t.Fatal(err)
	}
	runShell(t, dest, "echo c > committed.txt && git add committed.txt && git -c user.name=a -c user.email=b commit -qm c && echo mod >> a.txt && rm dir/b.txt && echo u > u.txt && ln -s a.txt link && chmod +x u.txt")
	want := treeFiles(t, dest)
	wantStatus := gitT(t, dest, "status", "--porcelain")
	child := openRepo(t, g, dest)
	archived, err := child.Checkpoint(ctx, CheckpointOptions{Ref: SessionRef("child", "archive")})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.RemoveWorktree(ctx, dest, RemoveOptions{UnchangedFrom: archived.Commit}); err != nil {
		t.Fatal(err)
	}
	wt, err := r.CreateWorktree(ctx, WorktreeOptions{Checkpoint: archived.Commit, Path: dest, Branch: "work"})
	if err != nil {
		t.Fatal(err)
	}
	if wt.Branch != "work" {
		t.Errorf("branch %q", wt.Branch)
	}
	if got := treeFiles(t, dest); mapString(got) != mapString(want) {
		t.Errorf("restored files:\n%s\nwant:\n%s", mapString(got), mapString(want))
	}
	if got := gitT(t, dest, "status", "--porcelain"); got != wantStatus {
		t.Errorf("restored status:\n%s\nwant:\n%s", got, wantStatus)
	}
	if fi, err := os.Stat(filepath.Join(dest, "u.txt")); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("u.txt lost its executable bit: %v", err)
	}
}

// TestCreateWorktreeCheckoutSlots makes five worktrees of one repository
// at once with Config.Checkouts 2, through a git whose `reset --hard` (the
// checkout) logs its start and end and lasts at least 300 ms: two
// checkouts overlap, never three, and every worktree is made.
func TestCreateWorktreeCheckoutSlots(t *testing.T) {
	testGit(t)
	dir := t.TempDir()
	events := filepath.Join(dir, "events")
	bin := filepath.Join(dir, "git")
	script := `#!/bin/sh
case "$*" in
*"reset --hard"*)
	echo "+ $(date +%s%N)" >> '` + events + `'
	` + gitBin + ` "$@"; rc=$?
	sleep 0.3
	echo "- $(date +%s%N)" >> '` + events + `'
	exit $rc;;
esac
exec ` + gitBin + ` "$@"
`
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	g := New(Config{Bin: bin, Checkouts: 2})
	ctx := context.Background()
	repo := newRepo(t)
	r := openRepo(t, g, repo)
	cp, err := r.Checkpoint(ctx, CheckpointOptions{Ref: TurnRef("parent", "1")})
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	errs := make(chan error, 5)
	for i := range 5 {
		go func() {
			_, err := r.CreateWorktree(ctx, WorktreeOptions{Checkpoint: cp.Commit, Path: filepath.Join(root, strconv.Itoa(i))})
			errs <- err
		}()
	}
	for range 5 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	type event struct {
		at    int64
		delta int
	}
	var evs []event
	for _, line := range strings.Split(strings.TrimSpace(readFile(t, events)), "\n") {
		sign, at, _ := strings.Cut(line, " ")
		n, err := strconv.ParseInt(at, 10, 64)
		if err != nil {
			t.Fatalf("event %q: %v", line, err)
		}
		evs = append(evs, event{n, map[string]int{"+": 1, "-": -1}[sign]})
	}
	// An end before a start at the same instant: they did not overlap.
	slices.SortFunc(evs, func(a, b event) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.delta, b.delta)) })
	running, most := 0, 0
	for _, e := range evs {
		running += e.delta
		most = max(most, running)
	}
	if len(evs) != 10 || most != 2 {
		t.Errorf("%d checkout events, at most %d at once; want 10, and 2 at once (the slots)", len(evs), most)
	}
}
