package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"tuttid/agent"
	"tuttid/ent/sessioncode"
	"tuttid/gitrepo"
	"tuttid/store"
)

// `tuttid tree` shows which sessions have a worktree of their own and how
// many files each changed (text), and every session's code (json).
func TestTreeShowsWorktrees(t *testing.T) {
	ctx := context.Background()
	repo := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	git := func(dir string, args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=p", "-c", "user.email=p@p"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(repo, "init", "-q")
	git(repo, "add", "-A")
	git(repo, "commit", "-q", "-m", "one")
	r, err := gitrepo.New(gitrepo.Config{}).Open(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := r.Checkpoint(ctx, gitrepo.CheckpointOptions{Ref: gitrepo.SessionRef("p", "start")})
	if err != nil {
		t.Fatal(err)
	}
	wt, err := r.CreateWorktree(ctx, gitrepo.WorktreeOptions{Checkpoint: cp.Commit, Path: filepath.Join(t.TempDir(), "wt")})
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"a.txt": "changed\n", "b.txt": "new\n"} {
		if err := os.WriteFile(filepath.Join(wt.Path, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	db := filepath.Join(t.TempDir(), "t.db")
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	c := st.Client
	c.Workspace.Create().SetID("w").SetName("w").SetRootPath(repo).ExecX(ctx)
	c.AgentSession.Create().SetID("p").SetTitle("parent").SetWorkspaceID("w").SetProvider(agent.ProviderCodex).SetCwd(repo).
		SetSettings(agent.ComposerSettings{}).ExecX(ctx)
	c.AgentSession.Create().SetID("c").SetTitle("child").SetWorkspaceID("w").SetProvider(agent.ProviderCodex).SetCwd(wt.Path).
		SetSettings(agent.ComposerSettings{}).ExecX(ctx)
	c.SessionFork.Create().SetWorkspaceID("w").SetParentAgentSessionID("p").SetChildAgentSessionID("c").
		SetProvider(agent.ProviderCodex).SetForkedAtUnixMs(1).ExecX(ctx)
	c.SessionCode.Create().SetAgentSessionID("p").SetWorkspaceID("w").SetRepositoryRoot(repo).SetCommonDir(r.CommonDir).ExecX(ctx)
	c.SessionCode.Create().SetAgentSessionID("c").SetWorkspaceID("w").SetMode(sessioncode.ModeWORKTREE).
		SetRepositoryRoot(wt.Path).SetCommonDir(r.CommonDir).SetWorktreePath(wt.Path).SetWorktreePresent(true).
		SetBaseCommit(cp.Commit).SetBaseHead(cp.Head).ExecX(ctx)
	st.Close()

	var stdout, stderr strings.Builder
	if code := run([]string{"tree", "--workspace", "w", "--db", db}, &stdout, &stderr); code != 0 {
		t.Fatalf("tree: %d %s", code, stderr.String())
	}
	want := "parent [READY] p\n  child [READY] c {worktree " + wt.Path + ", 2 files changed}\n"
	if stdout.String() != want {
		t.Fatalf("tree text:\n%s\nwant:\n%s", stdout.String(), want)
	}

	stdout.Reset()
	if code := run([]string{"tree", "--workspace", "w", "--db", db, "--format", "json"}, &stdout, &stderr); code != 0 {
		t.Fatalf("tree json: %d %s", code, stderr.String())
	}
	var roots []struct {
		ID   string
		Code *struct {
			Mode, WorktreePath string
			WorktreePresent    bool
			FilesChanged       *int
		}
		Children []struct {
			ID   string
			Code *struct {
				Mode, WorktreePath string
				WorktreePresent    bool
				FilesChanged       *int
			}
		}
	}
	if err := json.Unmarshal([]byte(stdout.String()), &roots); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	if len(roots) != 1 || roots[0].Code == nil || roots[0].Code.Mode != "SHARED" || roots[0].Code.FilesChanged == nil ||
		*roots[0].Code.FilesChanged != 0 || len(roots[0].Children) != 1 {
		t.Fatalf("json = %s", stdout.String())
	}
	ch := roots[0].Children[0].Code
	if ch == nil || ch.Mode != "WORKTREE" || ch.WorktreePath != wt.Path || !ch.WorktreePresent || ch.FilesChanged == nil || *ch.FilesChanged != 2 {
		t.Fatalf("child json = %s", stdout.String())
	}
}
