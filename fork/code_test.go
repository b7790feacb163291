package fork_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tuttid/agent"
	"tuttid/agent/agenttest"
	"tuttid/apperr"
	sc "tuttid/codebranch"
	"tuttid/ent/forkjournal"
	"tuttid/ent/sessioncode"
	"tuttid/fork"
	"tuttid/session"
	"tuttid/store/storetest"
)

// codeEnv is an env whose parent works in a git repository and whose
// fork service has the code side.
func codeEnv(t *testing.T) (*env, string, string) {
	t.Helper()
	e := newEnv(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(root, "repo")
	if err := os.Mkdir(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}} {
		runGit(t, repo, args...)
	}
	if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runGit(t, repo, "add", ".")
	runGit(t, repo, "commit", "-q", "-m", "first")
	dataDir := filepath.Join(root, "data")
	code := sc.New(sc.Config{Store: e.st.Store, DataDir: dataDir, Logger: e.logger})
	e.sess = session.New(session.Config{Store: e.st.Store, Runtime: e.rt, Publisher: e.pub, Logger: e.logger, Code: code.Hooks(), Accounts: e.acc})
	e.svc = fork.New(fork.Config{Store: e.st.Store, Sessions: e.sess, Accounts: e.acc, Runtime: e.rt, Logger: e.logger, Code: code})
	e.st.Workspace(storetest.Workspace{ID: "ws-code", RootPath: repo})
	p := defaultParent()
	p.ID, p.Workspace, p.Cwd, p.Thread = "parent-code", "ws-code", repo, "thread-parent-code"
	e.st.Session(p)
	return e, repo, dataDir
}

func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func worktreeInput(req string) fork.Input {
	return fork.Input{WorkspaceID: "ws-code", ParentSessionID: "parent-code", RequestID: req, ChildSessionID: "child-" + req,
		Code: &fork.CodeInput{Worktree: true, Branch: "b/" + req}}
}

// TestWorktreeForkUndoneOnFailure: a provider failure or a store failure
// after the worktree was made leaves no worktree, no branch, no ref and no
// code row; the journal recorded the path it removed.
func TestWorktreeForkUndoneOnFailure(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		prepare func(e *env)
		want    apperr.Code
	}{
		{"provider fails", func(e *env) {
			e.rt.ScriptForks(agenttest.ForkAnswer{Err: fmt.Errorf("thread/fork: %w", agent.ErrProviderFailed)})
		}, apperr.ForkProviderFailed},
		{"store fails", func(e *env) {
			if _, err := e.st.DB.ExecContext(e.ctx, `CREATE TRIGGER fail_code BEFORE INSERT ON workspace_agent_session_code
				BEGIN SELECT RAISE(ABORT, 'injected'); END;`); err != nil {
				t.Fatal(err)
			}
		}, apperr.ForkPersistenceFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if storetest.OnPostgres() && c.name == "store fails" {
				t.Skip("SQLite trigger")
			}
			e, repo, dataDir := codeEnv(t)
			c.prepare(e)
			in := worktreeInput("r1")
			e.forkErr(in, c.want)
			path := filepath.Join(dataDir, "worktrees", "ws-code", in.ChildSessionID)
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Errorf("worktree left at %s: %v", path, err)
			}
			if got := runGit(t, repo, "worktree", "list", "--porcelain"); strings.Count(got, "worktree ") != 1 {
				t.Errorf("git worktrees: %s", got)
			}
			if got := runGit(t, repo, "branch", "--list", "b/r1"); got != "" {
				t.Errorf("branch left: %s", got)
			}
			if got := runGit(t, repo, "for-each-ref", "refs/tuttid/"); got != "" {
				t.Errorf("refs left: %s", got)
			}
			if n := e.st.Client.SessionCode.Query().CountX(e.ctx); n != 0 {
				t.Errorf("%d code rows", n)
			}
			j := e.st.Client.ForkJournal.Query().Where(forkjournal.RequestID("r1")).OnlyX(e.ctx)
			if j.WorktreePath != path {
				t.Errorf("journal worktree %q, want %q", j.WorktreePath, path)
			}
		})
	}
}

// TestWorktreeForkGivesCodexTheWorktree: thread/fork gets the worktree
// (plus the parent's cwd below its repository) as its cwd, and the child's
// row records the worktree and its base.
func TestWorktreeForkGivesCodexTheWorktree(t *testing.T) {
	t.Parallel()
	e, _, dataDir := codeEnv(t)
	res := e.mustFork(worktreeInput("r2"))
	want := filepath.Join(dataDir, "worktrees", "ws-code", "child-r2")
	ins := e.rt.ForkInputs()
	if len(ins) != 1 || ins[0].Cwd != want {
		t.Fatalf("thread/fork cwd = %+v, want %s", ins, want)
	}
	if res.Session.Cwd != want {
		t.Errorf("child cwd %q, want %q", res.Session.Cwd, want)
	}
	row := e.st.Client.SessionCode.Query().Where(sessioncode.AgentSessionID(res.Session.ID)).OnlyX(e.ctx)
	if row.Mode != sessioncode.ModeWORKTREE || row.WorktreePath != want || !row.WorktreePresent ||
		row.Branch != "b/r2" || row.BaseCommit == "" || row.StartCommit != row.BaseCommit {
		t.Errorf("code row %+v", row)
	}
	// A different branch under the same requestId is another request.
	in := worktreeInput("r2")
	in.Code.Branch = "other"
	e.forkErr(in, apperr.ForkRequestConflict)
}

// TestWorktreeForksOfOneTargetIdAtOnce: two requests forking two
// sessions (forks of one session wait for each other) and naming the same
// targetAgentSessionId, the second (a SHARED fork: a WORKTREE one is
// refused earlier, its directory being there) while the first is in
// flight: the second is refused with agent.fork_target_conflict before it
// records anything or calls Codex, and the first's child keeps its
// worktree, branch and refs (the second used to record its start under
// the same refs, then fail when storing the child).
func TestWorktreeForksOfOneTargetIdAtOnce(t *testing.T) {
	t.Parallel()
	e, repo, dataDir := codeEnv(t)
	other := defaultParent()
	other.ID, other.Workspace, other.Cwd, other.Thread = "parent-code-2", "ws-code", repo, "thread-parent-code-2"
	e.st.Session(other)
	entered, release := e.rt.HoldForks(2)
	first := worktreeInput("r1")
	done := make(chan error, 1)
	go func() {
		_, err := e.svc.Fork(e.ctx, first)
		done <- err
	}()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the first fork never reached the provider")
	}
	second := fork.Input{WorkspaceID: "ws-code", ParentSessionID: other.ID, RequestID: "r2", ChildSessionID: first.ChildSessionID}
	secondDone := make(chan error, 1)
	go func() {
		_, err := e.svc.Fork(e.ctx, second)
		secondDone <- err
	}()
	select {
	case err := <-secondDone:
		if apperr.CodeOf(err) != apperr.ForkTargetConflict {
			t.Errorf("second fork: %v, want %s", err, apperr.ForkTargetConflict)
		}
	case <-entered:
		t.Error("the second fork reached the provider while the first was in flight")
	case <-time.After(10 * time.Second):
		t.Error("the second fork did not answer")
	}
	release()
	if err := <-done; err != nil {
		t.Fatalf("first fork: %v", err)
	}
	path := filepath.Join(dataDir, "worktrees", "ws-code", first.ChildSessionID)
	if _, err := os.Stat(filepath.Join(path, "a.txt")); err != nil {
		t.Errorf("the first child's worktree: %v", err)
	}
	if got := runGit(t, repo, "branch", "--list", "b/r1"); got == "" {
		t.Error("the first child's branch is gone")
	}
	if got := runGit(t, repo, "branch", "--list", "b/r2"); got != "" {
		t.Errorf("the refused fork made a branch: %s", got)
	}
	if got := runGit(t, repo, "for-each-ref", "--format=%(refname)", "refs/tuttid/sessions/"+first.ChildSessionID+"/"); got == "" {
		t.Error("the first child's refs are gone")
	}
	if n := e.rt.ForkCalls(); n != 1 {
		t.Errorf("provider fork calls = %d, want 1", n)
	}
}

// TestWorktreeForksOfOneParentRunTogether: forks of one parent into
// worktrees of their own (an exploration's branches) are at the provider
// at once, while a fork in the parent's own directory and a send (the
// parent's lock) wait for them; each journal entry records its own cwd,
// the worktree a settle lists its thread under.
func TestWorktreeForksOfOneParentRunTogether(t *testing.T) {
	t.Parallel()
	e, _, _ := codeEnv(t)
	entered, release := e.rt.HoldForks(3)
	done := make(chan error, 3)
	for _, req := range []string{"w1", "w2"} {
		go func() {
			_, err := e.svc.Fork(e.ctx, worktreeInput(req))
			done <- err
		}()
	}
	for i := 0; i < 2; i++ {
		select {
		case <-entered:
		case <-time.After(20 * time.Second):
			release()
			t.Fatalf("%d of two worktree forks reached the provider: they do not run together", i)
		}
	}
	shared := fork.Input{WorkspaceID: "ws-code", ParentSessionID: "parent-code", RequestID: "s1", ChildSessionID: "child-s1"}
	go func() {
		_, err := e.svc.Fork(e.ctx, shared)
		done <- err
	}()
	locked := make(chan struct{})
	go func() { e.sess.LockSession("parent-code")(); close(locked) }()
	select {
	case n := <-entered:
		release()
		t.Fatalf("fork call %d (the parent's own directory) reached the provider beside two in flight", n)
	case <-locked:
		release()
		t.Fatal("the parent's lock was taken while two forks held it")
	case <-time.After(500 * time.Millisecond):
	}
	release()
	for i := 0; i < 3; i++ {
		if err := <-done; err != nil {
			t.Fatalf("fork: %v", err)
		}
	}
	<-locked
	cwds := map[string]bool{}
	for _, req := range []string{"w1", "w2"} {
		j := e.journal(req)[0]
		if j.State != forkjournal.StateDone || !strings.Contains(j.Cwd, "child-"+req) {
			t.Errorf("%s's journal: %s, cwd %q, want done in its own worktree", req, j.State, j.Cwd)
		}
		cwds[j.Cwd] = true
	}
	if len(cwds) != 2 {
		t.Errorf("the two worktree forks' cwds %v, want two", cwds)
	}
}
