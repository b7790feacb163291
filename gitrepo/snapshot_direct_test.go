package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDirectTreeMatchesGit: the tree a snapshot builds in process is the
// one git update-index and write-tree make of the same index and files,
// for each kind of change, through a copy of the user's index and through
// a kept index over several turns (whose background refresh compares the
// two and turns the in-process path off on a difference).
func TestDirectTreeMatchesGit(t *testing.T) {
	g := testGit(t)
	ctx := context.Background()
	type step func(t *testing.T, repo string)
	write := func(path, content string) step {
		return func(t *testing.T, repo string) { writeFile(t, filepath.Join(repo, path), content) }
	}
	remove := func(path string) step {
		return func(t *testing.T, repo string) {
			if err := os.RemoveAll(filepath.Join(repo, path)); err != nil {
				t.Fatal(err)
			}
		}
	}
	chmod := func(path string, mode os.FileMode) step {
		return func(t *testing.T, repo string) {
			if err := os.Chmod(filepath.Join(repo, path), mode); err != nil {
				t.Fatal(err)
			}
		}
	}
	symlink := func(target, path string) step {
		return func(t *testing.T, repo string) {
			if err := os.Symlink(target, filepath.Join(repo, path)); err != nil {
				t.Fatal(err)
			}
		}
	}
	shell := func(script string) step {
		return func(t *testing.T, repo string) { runShell(t, repo, script) }
	}
	cases := []struct {
		name  string
		setup []step // committed before the session starts
		turns [][]step
	}{
		{"modify one file deep", []step{write("a/b/c/f.txt", "1\n"), write("a/g.txt", "g\n")},
			[][]step{{write("a/b/c/f.txt", "2\n")}, {write("a/g.txt", "h\n")}}},
		{"add untracked in a new directory", []step{write("f.txt", "f\n")},
			[][]step{{write("new/dir/x.txt", "x\n"), write("top.txt", "t\n")}, {write("new/dir/y.txt", "y\n")}}},
		{"delete files and empty a directory", []step{write("d/one.txt", "1\n"), write("d/two.txt", "2\n"), write("e.txt", "e\n")},
			[][]step{{remove("d/one.txt")}, {remove("d/two.txt")}, {write("d/back.txt", "b\n")}}},
		{"file becomes directory and back", []step{write("x", "file\n"), write("y.txt", "y\n")},
			[][]step{{remove("x"), write("x/inside.txt", "in\n")}, {remove("x"), write("x", "file again\n")}}},
		{"executable bit and symlinks", []step{write("run.sh", "#!/bin/sh\n"), write("target.txt", "t\n")},
			[][]step{{chmod("run.sh", 0o755)}, {symlink("target.txt", "link")}, {remove("link"), symlink("run.sh", "link")}, {chmod("run.sh", 0o644)}}},
		{"names that sort around a directory", []step{write("a/x.txt", "x\n"), write("a-b", "1\n"), write("a.b", "2\n"), write("a0", "3\n")},
			[][]step{{write("a/y.txt", "y\n"), write("a.c", "4\n"), write("a+", "5\n")}, {remove("a"), write("a", "now a file\n")}}},
		{"spaces, unicode and a quote", []step{write("with space/é ü.txt", "1\n")},
			[][]step{{write("with space/é ü.txt", "2\n"), write(`"quoted".txt`, "q\n"), write("tab\there.txt", "t\n")}}},
		{"ignored and large files", []step{write(".gitignore", "*.log\n"), write("keep.txt", "k\n")},
			[][]step{{write("debug.log", "ignored\n"), write("keep.txt", "k2\n")}, {write(".gitignore", "*.log\nkeep.txt\n")}, {shell("head -c 11000000 /dev/zero > big.bin")}}},
		{"staged but not committed", nil,
			[][]step{{write("first.txt", "1\n"), shell("git add first.txt")}, {write("first.txt", "2\n"), write("second.txt", "2\n")}}},
		{"a nested repository is left out", []step{write("top.txt", "t\n")},
			[][]step{{shell("mkdir nested && cd nested && git init -q && echo n > n.txt"), write("top.txt", "t2\n")}}},
		{"end of line conversion", []step{write(".gitattributes", "*.txt text eol=lf\n"), write("a.txt", "a\n")},
			[][]step{{write("a.txt", "crlf\r\nline\r\n"), write("b.txt", "new\r\n")}}},
		{"index version 4", []step{write("d/a.txt", "a\n"), write("d/b.txt", "b\n"), write("e/c.txt", "c\n"), shell("git update-index --index-version 4")},
			[][]step{{write("d/b.txt", "b2\n"), write("e/d.txt", "d\n")}, {remove("d/a.txt")}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			repo := newRepo(t)
			for _, s := range tc.setup {
				s(t, repo)
			}
			if len(tc.setup) > 0 {
				gitT(t, repo, "add", "-A")
				gitT(t, repo, "commit", "-q", "-m", "setup")
			}
			r := openRepo(t, g, repo)
			if !r.direct.objects {
				t.Fatal("the test repository does not take direct writes")
			}
			kept := filepath.Join(t.TempDir(), "index")
			for i, turn := range tc.turns {
				for _, s := range turn {
					s(t, repo)
				}
				// Through a copy of the user's index: in process, then git.
				direct, err := r.Snapshot(ctx, SnapshotOptions{})
				if err != nil {
					t.Fatalf("turn %d: %v", i, err)
				}
				r.treeMismatch.Store(true) // forces the git path
				viaGit, err := r.Snapshot(ctx, SnapshotOptions{})
				r.treeMismatch.Store(false)
				if err != nil {
					t.Fatalf("turn %d: %v", i, err)
				}
				if direct.Tree != viaGit.Tree {
					t.Fatalf("turn %d: tree built in process %s, by git %s\n%s\n---\n%s", i, direct.Tree, viaGit.Tree,
						gitT(t, repo, "ls-tree", "-r", direct.Tree), gitT(t, repo, "ls-tree", "-r", viaGit.Tree))
				}
				// Through the kept index: the refresh compares with git.
				keptSnap, err := r.Snapshot(ctx, SnapshotOptions{Index: kept})
				if err != nil {
					t.Fatalf("turn %d kept: %v", i, err)
				}
				if err := g.awaitRefresh(ctx, kept); err != nil {
					t.Fatal(err)
				}
				if r.treeMismatch.Load() {
					t.Fatalf("turn %d: the kept index's refresh found another tree than %s", i, keptSnap.Tree)
				}
				if keptSnap.Tree != viaGit.Tree {
					t.Fatalf("turn %d: kept index tree %s, by git %s", i, keptSnap.Tree, viaGit.Tree)
				}
			}
			if files := gitT(t, repo, "fsck", "--no-dangling"); strings.Contains(files, "error") {
				t.Fatalf("fsck: %s", files)
			}
		})
	}
}

// TestRemoveIndexWaitsForTheRefresh: a kept index removed right after a
// snapshot (a session deleted as its turn ends) leaves no file behind,
// though the snapshot's refresh was still running.
func TestRemoveIndexWaitsForTheRefresh(t *testing.T) {
	g := testGit(t)
	ctx := context.Background()
	repo := newRepo(t)
	r := openRepo(t, g, repo)
	dir := t.TempDir()
	kept := filepath.Join(dir, "s1")
	for i := 0; i < 5; i++ {
		writeFile(t, filepath.Join(repo, "a.txt"), strings.Repeat("x", i+1))
		if _, err := r.Snapshot(ctx, SnapshotOptions{Index: kept}); err != nil {
			t.Fatal(err)
		}
		if err := g.RemoveIndex(ctx, kept); err != nil {
			t.Fatal(err)
		}
		if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) > 0 {
			t.Fatalf("left after RemoveIndex: %v", left)
		}
	}
}

// TestKeptSnapshotOfNoChangeIsOneWalk: once a kept index is in place, a
// snapshot that finds no file changed runs one git (the status walk) and
// starts no refresh: its tree is the one recorded.
func TestKeptSnapshotOfNoChangeIsOneWalk(t *testing.T) {
	ctx := context.Background()
	g, calls := loggingGit(t)
	repo := newRepo(t)
	r := openRepo(t, g, repo)
	kept := filepath.Join(t.TempDir(), "index")
	writeFile(t, filepath.Join(repo, "a.txt"), "changed\n")
	first, err := r.Snapshot(ctx, SnapshotOptions{Index: kept})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.awaitRefresh(ctx, kept); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(calls); err != nil {
		t.Fatal(err)
	}
	again, err := r.Snapshot(ctx, SnapshotOptions{Index: kept})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.awaitRefresh(ctx, kept); err != nil {
		t.Fatal(err)
	}
	if again.Tree != first.Tree {
		t.Errorf("tree %s, want %s", again.Tree, first.Tree)
	}
	b, _ := os.ReadFile(calls)
	if ran := strings.Split(strings.TrimSpace(string(b)), "\n"); len(ran) != 1 || !strings.Contains(ran[0], " status ") {
		t.Errorf("git runs for a snapshot of no change: %q, want one status", ran)
	}
}
