package gitrepo

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// A kept per-session index gives the same trees as a fresh copy of the
// user's index, through edits, racy same-size rewrites, and the user
// changing what is tracked.
func TestSnapshotWithKeptIndex(t *testing.T) {
	ctx := context.Background()
	// The person's global excludes file, which a step changes.
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	g := testGit(t)
	repo := newRepo(t)
	r := openRepo(t, g, repo)
	kept := filepath.Join(t.TempDir(), "sessions", "s1.index")
	steps := []struct {
		name   string
		change func(t *testing.T)
	}{
		{"nothing", func(t *testing.T) {}},
		{"edit", func(t *testing.T) { writeFile(t, filepath.Join(repo, "a.txt"), "aaa\n") }},
		{"same-size rewrite right after", func(t *testing.T) { writeFile(t, filepath.Join(repo, "a.txt"), "bbb\n") }},
		{"untracked file", func(t *testing.T) { writeFile(t, filepath.Join(repo, "u.txt"), "u\n") }},
		{"user force-adds an ignored file", func(t *testing.T) {
			writeFile(t, filepath.Join(repo, "keep.log"), "k\n")
			gitT(t, repo, "add", "-f", "keep.log")
		}},
		{"user untracks a file and ignores it", func(t *testing.T) {
			gitT(t, repo, "rm", "-q", "--cached", "keep.log")
		}},
		{"user ignores an untracked file", func(t *testing.T) {
			writeFile(t, filepath.Join(repo, ".git", "info", "exclude"), "u.txt\n")
		}},
		{"untracked file grows over the limit", func(t *testing.T) {
			writeFile(t, filepath.Join(repo, "grow.bin"), "small\n")
		}},
		{"...grown", func(t *testing.T) { sized(t, filepath.Join(repo, "grow.bin"), MaxUntrackedSize+1) }},
		{"...and small again", func(t *testing.T) { writeFile(t, filepath.Join(repo, "grow.bin"), "small again\n") }},
		{"untracked file replaced by a directory", func(t *testing.T) {
			writeFile(t, filepath.Join(repo, "x"), "x\n")
		}},
		{"...replaced", func(t *testing.T) { runShell(t, repo, "rm x && mkdir x && echo in > x/in") }},
		{"new directories of untracked files, one ignored", func(t *testing.T) {
			writeFile(t, filepath.Join(repo, "newdir", "deep", "n.txt"), "n\n")
			writeFile(t, filepath.Join(repo, "newdir", "n.log"), "ignored\n")
			writeFile(t, filepath.Join(repo, "new[glob]", "g.txt"), "g\n")
		}},
		{"a nested repository in a new directory", func(t *testing.T) {
			writeFile(t, filepath.Join(repo, "outer", "f.txt"), "f\n")
			writeFile(t, filepath.Join(repo, "outer", "sub", "s.txt"), "s\n")
			gitT(t, filepath.Join(repo, "outer", "sub"), "init", "-q")
		}},
		{"untracked files to be ignored later", func(t *testing.T) {
			writeFile(t, filepath.Join(repo, "later.txt"), "l\n")
			writeFile(t, filepath.Join(repo, "sub", "v.txt"), "v\n")
			writeFile(t, filepath.Join(repo, "global.txt"), "g\n")
		}},
		{"a .gitignore ignores one", func(t *testing.T) {
			writeFile(t, filepath.Join(repo, ".gitignore"), readFile(t, filepath.Join(repo, ".gitignore"))+"later.txt\n")
		}},
		{"a new nested .gitignore ignores one", func(t *testing.T) {
			writeFile(t, filepath.Join(repo, "sub", ".gitignore"), "v.txt\n")
		}},
		{"the global excludes file ignores one", func(t *testing.T) {
			writeFile(t, filepath.Join(xdg, "git", "ignore"), "global.txt\n")
		}},
		{"user commits", func(t *testing.T) { gitT(t, repo, "commit", "-q", "-am", "c") }},
		{"delete", func(t *testing.T) { runShell(t, repo, "rm dir/b.txt") }},
		{"edit after the commit", func(t *testing.T) { writeFile(t, filepath.Join(repo, "a.txt"), "ccc\n") }},
	}
	for _, step := range steps {
		step.change(t)
		fresh, err := r.Snapshot(ctx, SnapshotOptions{})
		if err != nil {
			t.Fatal(err)
		}
		withKept, err := r.Snapshot(ctx, SnapshotOptions{Index: kept})
		if err != nil {
			t.Fatal(err)
		}
		if fresh.Tree != withKept.Tree || fresh.Head != withKept.Head || !slices.Equal(fresh.Skipped, withKept.Skipped) {
			t.Errorf("%s: kept index gives %+v %v, fresh copy %+v %v", step.name, withKept, commitFiles(t, repo, withKept.Tree), fresh, commitFiles(t, repo, fresh.Tree))
		}
		// And both are the files as they are.
		if got := commitFiles(t, repo, fresh.Tree); len(got) == 0 {
			t.Errorf("%s: empty tree", step.name)
		}
		if want := gitT(t, repo, "show", fresh.Tree+":a.txt"); want != trimNL(readFile(t, filepath.Join(repo, "a.txt"))) {
			t.Errorf("%s: a.txt %q in the snapshot", step.name, want)
		}
	}
	if err := g.awaitRefresh(ctx, kept); err != nil {
		t.Fatal(err)
	}
	if matches, _ := filepath.Glob(kept + ".*"); !slices.Equal(matches, []string{kept + ".excludes", kept + ".tree", kept + ".untracked", kept + ".user"}) {
		t.Errorf("temporary indexes left: %v", matches)
	}
}

func trimNL(s string) string {
	for len(s) > 0 && s[len(s)-1] == '\n' {
		s = s[:len(s)-1]
	}
	return s
}

// validRefName agrees with git check-ref-format.
func TestValidRefNameAgreesWithGit(t *testing.T) {
	testGit(t)
	for _, ref := range []string{
		"refs/tuttid/sessions/abc/turns/1", "refs/tuttid/a..b", "refs/tuttid/.hidden", "refs/tuttid/x.lock",
		"refs/tuttid/x/", "refs/tuttid/x.", "refs/tuttid/a b", "refs/tuttid/a~1", "refs/tuttid/a^", "refs/tuttid/a:b",
		"refs/tuttid/a?", "refs/tuttid/a*", "refs/tuttid/a[", "refs/tuttid/a\\b", "refs/tuttid/a@{1}", "refs/tuttid/a@b",
		"refs/tuttid//a", "refs/tuttid/\x01", "refs/tuttid/émoji", "refs/tuttid/a.lock/b", "refs/tuttid/9f1c-uuid-like",
	} {
		err := exec.Command(gitBin, "check-ref-format", ref).Run()
		if got, want := validRefName(ref), err == nil; got != want {
			t.Errorf("%q: valid %v, git says %v", ref, got, want)
		}
	}
}
