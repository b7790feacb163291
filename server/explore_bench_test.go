package server_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"tuttid/agent"
	"tuttid/benchtest"
	"tuttid/ent"
	"tuttid/ent/explorationbranch"
	"tuttid/ent/turn"
	"tuttid/explore"
	"tuttid/server"
	"tuttid/session"
)

// BenchmarkExploreFour is the first speed figure: four branches
// from one turn, end to end until all four first turns complete,
//   - explore: exploreSession with four branches (checks, rows, four
//     WORKTREE forks at once, four first turns under the bound of 4),
//     waited for in the store;
//   - baseline: what a client would do by hand, four at once: git worktree
//     add of the turn's checkpoint, the runtime's raw thread/fork into it,
//     turn/start, waited for by reading the thread's turns;
//
// on one repository of TUTTID_BENCH_FILES files (1,000 by default) of
// 10 KB, on the real Codex and the test model server. Each iteration runs
// both; the medians and their ratio are the metrics (the bound:
// explore <= 1.2x baseline).
func BenchmarkExploreFour(b *testing.B) {
	ctx := context.Background()
	repo := benchForkRepo(b, benchEnvInt("TUTTID_BENCH_FILES", 1_000))
	srv, w, parent, turnID := benchParent(b, repo)
	var err error
	if parent, err = srv.Sessions.Session(ctx, w.ID, parent.ID); err != nil {
		b.Fatal(err)
	}
	t, err := srv.Store.Client.Turn.Query().Where(turn.AgentSessionID(parent.ID), turn.TurnID(turnID)).Only(ctx)
	if err != nil || t.CheckpointCommit == "" {
		b.Fatalf("the turn's checkpoint: %v %q", err, t.CheckpointCommit)
	}
	raw := b.TempDir()
	var explored, base []time.Duration
	i := 0
	for b.Loop() {
		i++
		var ids []string
		var threads []string
		benchtest.Alternate(i, func() {
			start := time.Now()
			ids = exploreFour(b, srv, w.ID, parent.ID, turnID, i)
			explored = append(explored, time.Since(start))
		}, func() {
			start := time.Now()
			threads = rawFour(b, srv, repo, raw, parent, turnID, t.CheckpointCommit, i)
			base = append(base, time.Since(start))
		})
		b.StopTimer()
		for _, th := range threads {
			_ = srv.Runtime.Archive(ctx, parent.Provider, th)
		}
		for j := range threads {
			benchRun(b, repo, "git", "worktree", "remove", "--force", filepath.Join(raw, fmt.Sprintf("%d-%d", i, j)))
		}
		for _, id := range ids {
			if _, err := srv.Sessions.Delete(ctx, session.DeleteInput{WorkspaceID: w.ID, SessionID: id, DiscardChanges: true}); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
	}
	me, mb := benchtest.Median(explored), benchtest.Median(base)
	b.ReportMetric(float64(me.Milliseconds()), "explore-ms")
	b.ReportMetric(float64(mb.Milliseconds()), "baseline-ms")
	b.ReportMetric(float64(me)/float64(mb), "explore/baseline")
}

// exploreFour explores four ways and waits until every branch's first
// turn completed; it returns the branches' sessions.
func exploreFour(b *testing.B, srv *server.Server, ws, parent, turnID string, i int) []string {
	in := explore.Input{WorkspaceID: ws, ParentSessionID: parent, RequestID: "bench-" + strconv.Itoa(i), LastTurnID: turnID,
		Prompt: "go", CheckCommand: new(string)}
	for j := 0; j < 4; j++ {
		in.Branches = append(in.Branches, explore.BranchInput{Name: fmt.Sprintf("b%d", j)})
	}
	res, err := srv.Explore.Explore(context.Background(), in)
	if err != nil {
		b.Fatal(err)
	}
	// The answer comes before the forks: wait until none is forking (a
	// query of one index, as light as waitOwnTurn's), then read it.
	ctx := context.Background()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		forking, err := srv.Store.Client.ExplorationBranch.Query().
			Where(explorationbranch.ExplorationID(res.Exploration.ID), explorationbranch.StateEQ(explorationbranch.StateForking)).Exist(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if !forking {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the branches were not forked")
		}
	}
	v, err := srv.Explore.Exploration(ctx, ws, parent, res.Exploration.ID)
	if err != nil {
		b.Fatal(err)
	}
	var ids []string
	for _, br := range v.Branches {
		if br.Session == nil {
			b.Fatalf("branch %s: %s %s", br.Row.Name, br.ErrorCode, br.Error)
		}
		ids = append(ids, br.Session.ID)
	}
	for _, id := range ids {
		waitOwnTurn(b, srv, id)
	}
	return ids
}

func waitOwnTurn(b *testing.B, srv *server.Server, id string) {
	ctx := context.Background()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		a, err := srv.Store.Client.AgentSession.Get(ctx, id)
		if err != nil {
			b.Fatal(err)
		}
		done, err := srv.Store.Client.Turn.Query().Where(turn.AgentSessionID(id), turn.StartedAtGTE(a.CreatedAt),
			turn.StatusEQ(turn.StatusCOMPLETED)).Exist(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if done && a.Status == "READY" {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	b.Fatalf("branch %s's first turn did not complete", id)
}

// rawFour is the same by hand, four at once: worktree, raw fork, turn,
// waited for by reading the thread's turns.
func rawFour(b *testing.B, srv *server.Server, repo, raw string, parent *ent.AgentSession, turnID, checkpoint string, i int) []string {
	ctx := context.Background()
	threads := make([]string, 4)
	var wg sync.WaitGroup
	// git worktree add, one at a time: two at once in one repository fail
	// now and then (as tuttid's own do, gitrepo.runWorktreeAdmin).
	var adding sync.Mutex
	errs := make([]error, 4)
	for j := 0; j < 4; j++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := filepath.Join(raw, fmt.Sprintf("%d-%d", i, j))
			adding.Lock()
			out, err := gitOut(repo, "worktree", "add", "--quiet", "--detach", path, checkpoint)
			adding.Unlock()
			if err != nil {
				errs[j] = fmt.Errorf("git worktree add: %v %s", err, out)
				return
			}
			rf, err := srv.Runtime.Fork(ctx, agent.RuntimeForkInput{WorkspaceID: parent.WorkspaceID, ParentSessionID: parent.ID,
				ChildSessionID: fmt.Sprintf("raw-%d-%d", i, j), Provider: parent.Provider, ParentThreadID: parent.ProviderSessionID,
				Cwd: path, LastTurnID: turnID, Settings: parent.Settings})
			if err != nil {
				errs[j] = err
				return
			}
			if rf.History != nil {
				rf.History.Close()
			}
			threads[j] = rf.Session.ThreadID
			rt, err := srv.Runtime.SendTurn(ctx, agent.SendTurnInput{Provider: parent.Provider, ThreadID: rf.Session.ThreadID,
				Cwd: path, Settings: parent.Settings, Text: "go"})
			if err != nil {
				errs[j] = err
				return
			}
			deadline := time.Now().Add(60 * time.Second)
			for time.Now().Before(deadline) {
				ts, err := srv.Runtime.History(ctx, agent.HistoryInput{Provider: parent.Provider, ThreadID: rf.Session.ThreadID, TurnIDs: []string{rt.ID}})
				if err == nil && len(ts) == 1 && ts[0].Status == agent.TurnCompleted {
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
			errs[j] = fmt.Errorf("raw turn %s did not complete", rt.ID)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	return threads
}

func gitOut(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	return cmd.CombinedOutput()
}
