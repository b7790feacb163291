package codebranch

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"tuttid/apperr"
)

func testRepo(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gitT(t, dir, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitT(t, dir, "add", ".")
	gitT(t, dir, "commit", "-q", "-m", "first")
	return dir
}

func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestFailedSetupLeavesNothing: a worktree made on a new branch whose
// setup fails is undone whole: no directory, no git worktree, no branch,
// no ref of the child.
func TestFailedSetupLeavesNothing(t *testing.T) {
	ctx := context.Background()
	s := newTestService(t, 0)
	repo := testRepo(t)
	fc, err := s.PlanFork(ctx, ForkCodeInput{WorkspaceID: "w", ParentSessionID: "p", ChildSessionID: "c",
		ParentCwd: repo, Worktree: true, Branch: "try/x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Record(ctx, fc); err != nil {
		t.Fatal(err)
	}
	err = s.MakeWorktree(ctx, fc, "echo nope; exit 1")
	if apperr.CodeOf(err) != apperr.ForkCodeFailed || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("MakeWorktree = %v", err)
	}
	if _, err := os.Stat(fc.WorktreePath); !os.IsNotExist(err) {
		t.Errorf("worktree directory left: %v", err)
	}
	if got := gitT(t, repo, "worktree", "list", "--porcelain"); strings.Count(got, "worktree ") != 1 {
		t.Errorf("git worktrees: %s", got)
	}
	if got := gitT(t, repo, "branch", "--list", "try/x"); got != "" {
		t.Errorf("branch left: %q", got)
	}
	if got := gitT(t, repo, "for-each-ref", "refs/tuttid/"); got != "" {
		t.Errorf("refs left: %s", got)
	}
}

func TestPlanForkOutsideARepository(t *testing.T) {
	s := newTestService(t, 0)
	dir := t.TempDir()
	if _, err := s.PlanFork(context.Background(), ForkCodeInput{ParentSessionID: "p", ChildSessionID: "c", ParentCwd: dir, Worktree: true}); apperr.CodeOf(err) != apperr.ForkNotARepository {
		t.Errorf("WORKTREE outside a repository = %v", err)
	}
	fc, err := s.PlanFork(context.Background(), ForkCodeInput{ParentSessionID: "p", ChildSessionID: "c", ParentCwd: dir})
	if err != nil || fc != nil {
		t.Errorf("SHARED outside a repository = %v %v, want no code", fc, err)
	}
}
