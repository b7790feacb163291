package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiffFilesBetweenObjectsAsksGitOnce: DiffFiles between two object
// ids runs git once per pair (diffcache.go); between names that can move
// (HEAD) every time, and a moved HEAD is seen. A caller's change to an
// answer is not kept.
func TestDiffFilesBetweenObjectsAsksGitOnce(t *testing.T) {
	ctx := context.Background()
	g, calls := loggingGit(t)
	repo := newRepo(t)
	r := openRepo(t, g, repo)
	first := strings.TrimSpace(gitT(t, repo, "rev-parse", "HEAD"))
	writeFile(t, filepath.Join(repo, "a.txt"), "one\ntwo\n")
	gitT(t, repo, "commit", "-qam", "two")
	second := strings.TrimSpace(gitT(t, repo, "rev-parse", "HEAD"))
	writeFile(t, filepath.Join(repo, "a.txt"), "one\ntwo\nthree\n")
	gitT(t, repo, "commit", "-qam", "three")

	diffRuns := func() int {
		b, _ := os.ReadFile(calls)
		return strings.Count(string(b), " diff-tree ")
	}
	added := func(from, to string) int {
		t.Helper()
		d, err := r.DiffFiles(ctx, from, to)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Files) != 1 || d.Files[0].Path != "a.txt" {
			t.Fatalf("DiffFiles(%s, %s) = %+v, want a.txt alone", from, to, d.Files)
		}
		n := d.Files[0].Additions
		d.Files[0].Path = "changed by the caller" // not in what the next caller gets
		return n
	}

	// Object ids: git runs for the first ask (name-status and numstat)
	// only.
	before := diffRuns()
	for range 3 {
		if got := added(first, second); got != 2 {
			t.Fatalf("added %d, want 2", got)
		}
	}
	if got := diffRuns() - before; got != 2 {
		t.Errorf("three asks between two object ids ran git diff-tree %d times, want 2", got)
	}

	// HEAD moves: asked every time, and the move is seen.
	before = diffRuns()
	if got := added(first, "HEAD"); got != 3 {
		t.Fatalf("added up to HEAD %d, want 3", got)
	}
	writeFile(t, filepath.Join(repo, "a.txt"), "one\ntwo\nthree\nfour\n")
	gitT(t, repo, "commit", "-qam", "four")
	if got := added(first, "HEAD"); got != 4 {
		t.Fatalf("added up to the moved HEAD %d, want 4", got)
	}
	if got := diffRuns() - before; got != 4 {
		t.Errorf("two asks up to HEAD ran git diff-tree %d times, want 4", got)
	}
}

func TestIsObjectID(t *testing.T) {
	for _, c := range []struct {
		s    string
		want bool
	}{
		{strings.Repeat("a", 40), true},
		{strings.Repeat("0", 64), true},
		{strings.Repeat("a", 39), false},
		{strings.Repeat("A", 40), false},
		{"HEAD", false},
		{strings.Repeat("g", 40), false},
		{"", false},
	} {
		if got := isObjectID(c.s); got != c.want {
			t.Errorf("isObjectID(%q) = %v, want %v", c.s, got, c.want)
		}
	}
}
