package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"tuttid/ent/checkrun"
	"tuttid/ent/explorationbranch"
	"tuttid/ent/sessioncode"
	"tuttid/store/storetest"
)

// costData is a workspace filled to the largest sizes the API lists, for
// measuring what a read costs: a parent session whose explorations (up to
// explore.MaxListed) have 8 branches each, every branch a WORKTREE session
// in a real git worktree with a change, its history inherited from the
// parent, turns of its own each with a check of 64 KiB of output.
type costData struct {
	ws, parent   string
	explorations []string
	branches     []string // the branches' session ids
	// large is a session of large messages (a page of them is bounded in
	// bytes, not rows).
	large string
}

// costSizes are costData's sizes.
type costSizes struct {
	explorations int // each of 8 branches
	files        int // in the repository (1 KB each)
	inherited    int // turns of the parent, inherited by every branch
	own          int // turns of each branch, each with a check
	sessions     int // sessions in all, the others plain ones of 2 turns
	largeTurns   int // turns of the large session, each of 2 messages of 64 KiB
}

// seedCostData seeds sz into h's store (rows written directly, worktrees
// made with git).
func seedCostData(tb testing.TB, h *harness, sz costSizes) costData {
	tb.Helper()
	ctx := context.Background()
	repo := costRepo(tb, sz.files)
	ws := h.createWorkspaceAt("cost", repo, "")
	db := storetest.Wrap(tb, h.srv.Store)
	c := h.srv.Store.Client
	base := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	d := costData{ws: ws, parent: "cost-parent"}
	parentTurns := storetest.Exchanges(d.parent, sz.inherited)
	for i := range parentTurns {
		parentTurns[i].StartedAt = base.Add(time.Duration(i) * time.Minute)
		parentTurns[i].CompletedAt = parentTurns[i].StartedAt.Add(30 * time.Second)
	}
	db.Session(storetest.Session{ID: d.parent, Workspace: ws, Cwd: repo, CreatedAt: base, Turns: parentTurns})
	head := strings.TrimSpace(costGit(tb, repo, "rev-parse", "HEAD"))
	forked := base.Add(time.Duration(sz.inherited+1) * time.Minute)
	output := strings.Repeat(strings.Repeat("x", 79)+"\n", 64<<10/80)
	var mu, addMu sync.Mutex
	var wg sync.WaitGroup
	slots := make(chan struct{}, 2)
	for x := range sz.explorations {
		xid := fmt.Sprintf("cost-x%02d", x)
		d.explorations = append(d.explorations, xid)
		c.Exploration.Create().SetID(xid).SetWorkspaceID(ws).SetParentAgentSessionID(d.parent).SetRequestID(xid).
			SetFingerprint(xid).SetPrompt("try it").SetCheckCommand("make test").SetCheckTimeoutMs(600_000).
			SetCreatedAt(forked.Add(time.Duration(x) * time.Second)).ExecX(ctx)
		for n := range 8 {
			name := fmt.Sprintf("b%d", n)
			child := fmt.Sprintf("%s-%s", xid, name)
			turns := storetest.Exchanges(child, sz.inherited+sz.own)
			for i := range turns {
				if i < sz.inherited {
					turns[i] = parentTurns[i]
					continue
				}
				turns[i].StartedAt = forked.Add(time.Duration(i) * time.Minute)
				turns[i].CompletedAt = turns[i].StartedAt.Add(time.Minute)
			}
			db.Session(storetest.Session{ID: child, Workspace: ws, Cwd: repo, CreatedAt: forked, Turns: turns})
			c.ExplorationBranch.Create().SetExplorationID(xid).SetOrdinal(n).SetName(name).SetPrompt("try it").
				SetSettings(json.RawMessage(`{}`)).SetForkRequestID(xid + "." + name).SetChildAgentSessionID(child).
				SetState(explorationbranch.StateStarted).SetSummary(strings.Repeat("s", 16<<10)).ExecX(ctx)
			for i := sz.inherited; i < len(turns); i++ {
				code := 0
				c.CheckRun.Create().SetID(fmt.Sprintf("%s-c%d", child, i)).SetWorkspaceID(ws).SetAgentSessionID(child).
					SetTurnID(turns[i].ID).SetExplorationID(xid).SetState(checkrun.StatePassed).SetExitCode(code).
					SetDurationMs(1000).SetOutput(output).SetOutputTruncated(true).
					SetStartedAt(turns[i].CompletedAt).SetFinishedAt(turns[i].CompletedAt.Add(time.Second)).ExecX(ctx)
			}
			dir := filepath.Join(h.worktreesDir(ws), child)
			mu.Lock()
			d.branches = append(d.branches, child)
			mu.Unlock()
			wg.Add(1)
			slots <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-slots }()
				// git's worktree add takes the repository's locks: two at
				// once fail (exit 128, seen under load), as gitrepo knows.
				// Added one at a time without files, checked out at once.
				addMu.Lock()
				costGit(tb, repo, "worktree", "add", "-q", "--no-checkout", "--detach", dir, head)
				addMu.Unlock()
				costGit(tb, dir, "reset", "-q", "--hard", head)
				if err := os.WriteFile(filepath.Join(dir, "d00", "f0000.txt"), []byte("changed by "+child+"\n"), 0o644); err != nil {
					tb.Error(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "new.txt"), []byte("new\n"), 0o644); err != nil {
					tb.Error(err)
				}
			}()
			c.SessionCode.Create().SetAgentSessionID(child).SetWorkspaceID(ws).SetMode(sessioncode.ModeWORKTREE).
				SetRepositoryRoot(dir).SetCommonDir(filepath.Join(repo, ".git")).SetWorktreePath(dir).SetWorktreePresent(true).
				SetBaseCommit(head).SetBaseHead(head).SetBaseAt(forked).ExecX(ctx)
		}
	}
	wg.Wait()
	for i := len(d.branches) + 1; i < sz.sessions; i++ {
		// After the branches: a list's first pages are the worktrees.
		db.Session(storetest.Session{ID: fmt.Sprintf("cost-s%04d", i), Workspace: ws, Cwd: repo, Title: "plain",
			CreatedAt: forked.Add(time.Hour + time.Duration(i)*time.Second), Turns: storetest.Exchanges(fmt.Sprintf("cost-s%04d", i), 2)})
	}
	d.large = "cost-large"
	large := storetest.Exchanges(d.large, sz.largeTurns)
	text := strings.Repeat(strings.Repeat("y", 99)+"\n", 64<<10/100)
	for i := range large {
		for j := range large[i].Messages {
			large[i].Messages[j].Text = text
		}
	}
	db.Session(storetest.Session{ID: d.large, Workspace: ws, Cwd: repo, CreatedAt: base, Turns: large})
	return d
}

// costRepo is a committed repository of n files of 1 KB in 100
// directories.
func costRepo(tb testing.TB, n int) string {
	tb.Helper()
	root, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	dir := filepath.Join(root, "repo")
	line := strings.Repeat("abcdefghij", 8)[:79] + "\n"
	body := []byte(strings.Repeat(line, 1000/80+1)[:1000])
	for i := range n {
		path := filepath.Join(dir, fmt.Sprintf("d%02d", i%100), fmt.Sprintf("f%04d.txt", i/100))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, append([]byte(fmt.Sprintf("%d\n", i)), body...), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	costGit(tb, dir, "init", "-q", "-b", "main")
	costGit(tb, dir, "add", "-A")
	costGit(tb, dir, "commit", "-q", "-m", "files")
	return dir
}

func costGit(tb testing.TB, dir string, args ...string) string {
	cmd := exec.Command("git", append([]string{"-c", "user.name=b", "-c", "user.email=b@b"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Errorf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// cpuTime is the CPU this process and its waited-for children (git) have
// used: tuttid's, when the server runs in the test's process.
func cpuTime() time.Duration {
	var self, kids syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
}
