package gitrepo

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"tuttid/gitfile"
)

// The commit and ref a checkpoint writes itself are ones git reads back
// and git fsck accepts; a repository where direct writes would differ from
// git's (SHA-256, shared permissions) goes through git.
func TestDirectWritesMatchGit(t *testing.T) {
	ctx := context.Background()
	g := testGit(t)
	for _, tc := range []struct {
		name   string
		init   []string // git init arguments
		config [][]string
		direct bool
	}{
		{"sha1, files", nil, nil, true},
		{"sha256", []string{"--object-format=sha256"}, nil, false},
		{"shared repository", nil, [][]string{{"core.sharedRepository", "group"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := filepath.Join(t.TempDir(), "repo")
			gitT(t, t.TempDir(), append(append([]string{"init", "-q"}, tc.init...), repo)...)
			writeFile(t, filepath.Join(repo, "a.txt"), "a\n")
			gitT(t, repo, "add", "a.txt")
			gitT(t, repo, "commit", "-q", "-m", "one")
			for _, kv := range tc.config {
				gitT(t, repo, "config", kv[0], kv[1])
			}
			r := openRepo(t, g, repo)
			if r.direct.objects != tc.direct || r.direct.refs != tc.direct {
				t.Fatalf("direct = %+v, want %v", r.direct, tc.direct)
			}
			writeFile(t, filepath.Join(repo, "b.txt"), "b\n")
			when := time.Unix(1_700_000_000, 0)
			cp, err := r.Checkpoint(ctx, CheckpointOptions{Ref: TurnRef("s", "t1"), Message: "m", Time: when})
			if err != nil {
				t.Fatal(err)
			}
			got := gitT(t, repo, "cat-file", "commit", cp.Commit)
			if !strings.Contains(got, "author tuttid <tuttid@localhost> 1700000000 +0000") {
				t.Fatalf("commit date/identity: %s", got)
			}
			if ref := gitT(t, repo, "rev-parse", TurnRef("s", "t1")); ref != cp.Commit {
				t.Fatalf("ref = %s, want %s", ref, cp.Commit)
			}
			gitT(t, repo, "fsck", "--strict", "--no-dangling")
			// Moved again, and deleted by git.
			writeFile(t, filepath.Join(repo, "b.txt"), "b2\n")
			cp2, err := r.Checkpoint(ctx, CheckpointOptions{Ref: TurnRef("s", "t1")})
			if err != nil {
				t.Fatal(err)
			}
			if ref := gitT(t, repo, "rev-parse", TurnRef("s", "t1")); ref != cp2.Commit {
				t.Fatalf("moved ref = %s, want %s", ref, cp2.Commit)
			}
			if err := r.DeleteRefs(ctx, SessionRefPrefix("s")); err != nil {
				t.Fatal(err)
			}
			if refs := gitT(t, repo, "for-each-ref", RefPrefix); refs != "" {
				t.Fatalf("refs left: %s", refs)
			}
		})
	}
}

// The id of a commit written directly is git's own for the same bytes.
func TestCommitBodyIsGits(t *testing.T) {
	g := testGit(t)
	repo := newRepo(t)
	r := openRepo(t, g, repo)
	if !r.direct.objects {
		t.Skip("repository takes no direct writes")
	}
	tree := gitT(t, repo, "write-tree")
	head := gitT(t, repo, "rev-parse", "HEAD")
	when := time.Unix(1_700_000_123, 0)
	id, err := gitfile.WriteLooseObject(r.CommonDir, "commit", gitfile.CommitBody(tree, head, "tuttid checkpoint x", when))
	if err != nil {
		t.Fatal(err)
	}
	out, err := g.run(context.Background(), call{dir: repo, env: []string{
		"GIT_AUTHOR_DATE=@1700000123 +0000", "GIT_COMMITTER_DATE=@1700000123 +0000"}},
		"commit-tree", tree, "-p", head, "-m", "tuttid checkpoint x")
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSpace(string(out)); id != want {
		t.Fatalf("direct commit %s, git's %s", id, want)
	}
}
