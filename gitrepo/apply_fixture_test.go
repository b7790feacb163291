package gitrepo

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"tuttid/gitrepo/gittest"
)

// applyFixture is a parent checkout whose person has an uncommitted edit
// in a file the apply changes too, another in a file it leaves, an
// untracked and an ignored file; and a worktree child whose changes since
// base the apply brings back: a modified file, files added in new
// directories (one executable, one a symlink), a deleted file whose
// directory goes, a file replaced by a directory, a mode change, and
// bigFiles incompressible files of bigSize bytes.
type applyFixture struct {
	repo, dest    string
	parent, child *Repo
	base          string
}

// applied is what the parent's files hold once the fixture's apply is in
// (big files left out).
var applied = map[string]string{
	"a.txt":          "1 person\n2\n3\n4\n5 child\n",
	"keep.txt":       "keep, edited by the person\n",
	"untracked.txt":  "untracked\n",
	"new/deep/c.txt": "c\n",
	"run.sh":         "#!/bin/sh\necho run\n",
	"x/y":            "y\n",
}

func newApplyFixture(t *testing.T, g *Git, repo string, bigFiles, bigSize int) applyFixture {
	t.Helper()
	ctx := context.Background()
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	gitT(t, repo, "init", "-q", "-b", "main")
	writeFile(t, filepath.Join(repo, "a.txt"), "1\n2\n3\n4\n5\n")
	writeFile(t, filepath.Join(repo, "dir", "b.txt"), "b\n")
	writeFile(t, filepath.Join(repo, "x"), "x is a file\n")
	writeFile(t, filepath.Join(repo, "m.sh"), "echo m\n")
	writeFile(t, filepath.Join(repo, "keep.txt"), "keep\n")
	writeFile(t, filepath.Join(repo, ".gitignore"), "*.log\n")
	gitT(t, repo, "add", "-A")
	gitT(t, repo, "commit", "-q", "-m", "first")
	parent := openRepo(t, g, repo)
	base, err := parent.Checkpoint(ctx, CheckpointOptions{Ref: SessionRef("child", "base")})
	if err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "child")
	if _, err := parent.CreateWorktree(ctx, WorktreeOptions{Checkpoint: base.Commit, Path: dest}); err != nil {
		t.Fatal(err)
	}
	runShell(t, dest, `printf '1\n2\n3\n4\n5 child\n' > a.txt && rm dir/b.txt &&
		mkdir -p new/deep && echo c > new/deep/c.txt &&
		printf '#!/bin/sh\necho run\n' > run.sh && chmod 755 run.sh && ln -s a.txt link &&
		rm x && mkdir x && echo y > x/y && chmod 755 m.sh`)
	for i := range bigFiles {
		b := make([]byte, bigSize)
		_, _ = rand.Read(b)
		if err := os.WriteFile(filepath.Join(dest, fmt.Sprintf("big%d.bin", i)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(repo, "a.txt"), "1 person\n2\n3\n4\n5\n")
	writeFile(t, filepath.Join(repo, "keep.txt"), "keep, edited by the person\n")
	writeFile(t, filepath.Join(repo, "untracked.txt"), "untracked\n")
	writeFile(t, filepath.Join(repo, "debug.log"), "ignored\n")
	return applyFixture{repo: repo, dest: dest, parent: parent, child: openRepo(t, g, dest), base: base.Commit}
}

// checkApplied fails unless the parent's files are the fixture's applied.
func (f applyFixture) checkApplied(t *testing.T) {
	t.Helper()
	for path, want := range applied {
		if got := readFile(t, filepath.Join(f.repo, path)); got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
	for _, gone := range []string{"dir", "dir/b.txt"} {
		if _, err := os.Lstat(filepath.Join(f.repo, gone)); err == nil {
			t.Errorf("%s still there", gone)
		}
	}
	if target, err := os.Readlink(filepath.Join(f.repo, "link")); err != nil || target != "a.txt" {
		t.Errorf("link: %q %v", target, err)
	}
	for path, exec := range map[string]bool{"run.sh": true, "m.sh": true, "a.txt": false} {
		fi, err := os.Lstat(filepath.Join(f.repo, path))
		if err != nil || (fi.Mode()&0o111 != 0) != exec {
			t.Errorf("%s: mode %v (%v), executable wanted %v", path, fi.Mode(), err, exec)
		}
	}
}

// checkoutState is every file of dir (mode and bytes, .git aside) and
// every directory: what an apply that failed must leave as it found.
func checkoutState(t *testing.T, dir string) string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == ".git" {
			return filepath.SkipDir
		}
		if d.IsDir() {
			dirs = append(dirs, rel+"/")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(dirs)
	return gittest.Files(t, dir) + strings.Join(dirs, "\n")
}

// checkNoStaging fails when an apply left a staging directory.
func checkNoStaging(t *testing.T, r *Repo) {
	t.Helper()
	for _, p := range []string{filepath.Join(r.GitDir, "tuttid-apply", "*"), filepath.Join(r.Root, ".tuttid-apply-*")} {
		if m, _ := filepath.Glob(p); len(m) > 0 {
			t.Errorf("staging left: %v", m)
		}
	}
}

// recordingJournal keeps the states an apply recorded.
type recordingJournal struct {
	mu     sync.Mutex
	write  ApplyWrite
	states []ApplyState
	forgot bool
	// failAt fails Record of that state.
	failAt ApplyState
}

func (j *recordingJournal) Record(_ context.Context, w ApplyWrite, s ApplyState) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if s == j.failAt {
		return fmt.Errorf("journal down")
	}
	j.write, j.states = w, append(j.states, s)
	return nil
}

func (j *recordingJournal) Forget(context.Context, ApplyWrite) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.forgot = true
	return nil
}
