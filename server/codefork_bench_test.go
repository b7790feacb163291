package server_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"tuttid/agent"
	"tuttid/benchtest"
	"tuttid/codex/codextest"
	"tuttid/ent"
	"tuttid/ent/turn"
	"tuttid/fork"
	"tuttid/gitrepo"
	"tuttid/logtest"
	"tuttid/server"
	"tuttid/session"
)

// BenchmarkWorktreeFork compares, in the same run on one repository of
// TUTTID_BENCH_FILES files (10,000 by default) of 10 KB (about 100 MB):
//   - saga: the whole worktree fork from a turn (forkSession with code
//     WORKTREE and lastTurnId) on the real Codex: checks, journal, the
//     turn's checkpoint, git worktree add, the checkpoint's files written,
//     thread/fork, the child's history, one transaction;
//   - baseline: git worktree add --detach of HEAD plus the runtime's raw
//     thread/fork of the same parent.
//
// Each iteration runs both (a loaded machine slows both alike); the
// medians and their ratio are the metrics. The bound: saga <= 1.3x
// baseline.
func BenchmarkWorktreeFork(b *testing.B) {
	ctx := context.Background()
	n := benchEnvInt("TUTTID_BENCH_FILES", 10_000)
	repo := benchForkRepo(b, n)
	srv, w, parent, turnID := benchParent(b, repo)
	// The turn changed 10 files; its checkpoint is what the fork gets.
	for i := 0; i < 10; i++ {
		p := filepath.Join(repo, fmt.Sprintf("d%02d", i), fmt.Sprintf("f%04d.txt", i))
		if err := os.WriteFile(p, []byte("turn change "+strconv.Itoa(i)+"\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	r, err := gitrepo.New(gitrepo.Config{}).Open(ctx, repo)
	if err != nil {
		b.Fatal(err)
	}
	cp, err := r.Checkpoint(ctx, gitrepo.CheckpointOptions{Ref: gitrepo.TurnRef(parent.ID, turnID)})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := srv.Store.Client.Turn.Update().Where(turn.AgentSessionID(parent.ID), turn.TurnID(turnID)).
		SetCheckpointCommit(cp.Commit).SetCheckpointHead(cp.Head).Save(ctx); err != nil {
		b.Fatal(err)
	}
	parent, err = srv.Sessions.Session(ctx, w.ID, parent.ID)
	if err != nil {
		b.Fatal(err)
	}
	raw := b.TempDir()
	var saga, base []time.Duration
	i := 0
	for b.Loop() {
		i++
		start := time.Now()
		res, err := srv.Forks.Fork(ctx, fork.Input{WorkspaceID: w.ID, ParentSessionID: parent.ID,
			RequestID: fmt.Sprintf("bench-%d", i), LastTurnID: turnID, Code: &fork.CodeInput{Worktree: true}})
		if err != nil {
			b.Fatal(err)
		}
		saga = append(saga, time.Since(start))

		start = time.Now()
		path := filepath.Join(raw, strconv.Itoa(i))
		benchRun(b, repo, "git", "worktree", "add", "--quiet", "--detach", path, "HEAD")
		rf, err := srv.Runtime.Fork(ctx, agent.RuntimeForkInput{WorkspaceID: w.ID, ParentSessionID: parent.ID,
			ChildSessionID: fmt.Sprintf("raw-%d", i), Provider: parent.Provider, ParentThreadID: parent.ProviderSessionID,
			Cwd: path, LastTurnID: turnID})
		if err != nil {
			b.Fatal(err)
		}
		base = append(base, time.Since(start))

		b.StopTimer()
		if rf.History != nil {
			rf.History.Close()
		}
		_ = srv.Runtime.Archive(ctx, parent.Provider, rf.Session.ThreadID)
		benchRun(b, repo, "git", "worktree", "remove", "--force", path)
		if _, err := srv.Sessions.Delete(ctx, session.DeleteInput{WorkspaceID: w.ID, SessionID: res.Session.ID, DiscardChanges: true}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	ms, mb := benchtest.Median(saga), benchtest.Median(base)
	b.ReportMetric(float64(ms.Milliseconds()), "saga-ms")
	b.ReportMetric(float64(mb.Milliseconds()), "baseline-ms")
	b.ReportMetric(float64(ms)/float64(mb), "saga/baseline")
}

// benchParent starts a server on the real Codex (closed when b ends) with a
// workspace on repo and a session there that ran one turn.
func benchParent(b *testing.B, repo string) (*server.Server, *ent.Workspace, *ent.AgentSession, string) {
	b.Helper()
	ctx := context.Background()
	model := codextest.StartModelServer(b)
	home := codextest.NewCodexHome(b, model.URL())
	srv, err := server.New(ctx, server.Config{DBPath: filepath.Join(b.TempDir(), "tuttid.db"), CodexBin: codextest.Binary(b),
		CodexEnv: append(os.Environ(), "CODEX_HOME="+home), NoAuth: true, Logger: logtest.Discard()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close() })
	w, err := srv.Sessions.CreateWorkspace(ctx, "bench", repo)
	if err != nil {
		b.Fatal(err)
	}
	parent, err := srv.Sessions.Start(ctx, session.StartInput{WorkspaceID: w.ID})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := srv.Sessions.Send(ctx, w.ID, parent.ID, "hello"); err != nil {
		b.Fatal(err)
	}
	return srv, w, parent, waitBenchTurn(b, srv, parent.ID)
}

func waitBenchTurn(b *testing.B, srv *server.Server, sessionID string) string {
	b.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		a, err := srv.Store.Client.AgentSession.Get(context.Background(), sessionID)
		if err == nil && a.Status == "READY" {
			t, err := srv.Store.Client.Turn.Query().Where(turn.AgentSessionID(sessionID), turn.StatusEQ(turn.StatusCOMPLETED)).First(context.Background())
			if err == nil {
				return t.TurnID
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.Fatal("the parent's turn did not complete")
	return ""
}

// benchForkRepo is a repository of n files of 10 KB in 100 directories.
func benchForkRepo(b *testing.B, n int) string {
	b.Helper()
	root, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(root, "repo")
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 10_000)
	for i := 0; i < n; i++ {
		for j := range buf {
			buf[j] = 'a' + byte(rng.IntN(26))
			if j%80 == 79 {
				buf[j] = '\n'
			}
		}
		path := filepath.Join(dir, fmt.Sprintf("d%02d", i%100), fmt.Sprintf("f%04d.txt", i/100))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(path, buf, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	benchRun(b, dir, "git", "init", "-q")
	benchRun(b, dir, "git", "add", "-A")
	benchRun(b, dir, "git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "bench")
	return dir
}

func benchRun(b *testing.B, dir string, name string, args ...string) {
	b.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

func benchEnvInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
