package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"tuttid/codex/codextest"
	"tuttid/ent"
	"tuttid/ent/checkrun"
	"tuttid/ent/explorationbranch"
	"tuttid/ent/sessionfork"
	"tuttid/explore"
	"tuttid/store"
)

// exploreMutation explores; its answer is explored.
const exploreMutation = `mutation($in: ExploreSessionInput!) { exploreSession(input: $in) { exploration { id } } }`

type explored struct {
	ExploreSession struct{ Exploration struct{ ID string } }
}

// exploreTwo is exploreSession's input: branches a and b of the parent's
// conversation, prompt "go", the given check ("" none).
func exploreTwo(ws, parent, requestID, check string) map[string]any {
	return map[string]any{"workspaceId": ws, "agentSessionId": parent, "requestId": requestID, "prompt": "go",
		"checkCommand": check, "branches": []any{map[string]any{"name": "a"}, map[string]any{"name": "b"}}}
}

// TestCrashDuringExploration kills tuttid with SIGKILL after an
// exploration is stored (no branch forked yet) and after its first branch
// is forked (its first turn not started, the other maybe not forked), then
// restarts it: every branch is whole
// (one fork, one worktree, its first turn run once), the same requestId
// answers the same exploration, and nothing is made twice.
func TestCrashDuringExploration(t *testing.T) {
	for _, point := range []string{explore.CrashStored, explore.CrashForked} {
		t.Run(point, func(t *testing.T) {
			r := newCrashRig(t)
			gitInit(t, r.root)
			p := r.tuttid("TUTTID_CRASH_AT=" + point)
			ws, parent := r.parent(p)
			in := exploreTwo(ws, parent.ID, "x-crash", "")
			var out explored
			// Stored: tuttid dies before it answers. Forked: the answer
			// (every branch FORKING) may come first; the forks run after it.
			if errs, err := p.gql(exploreMutation, map[string]any{"in": in}, &out); point == explore.CrashStored && err == nil {
				t.Fatalf("exploreSession answered (%v) although tuttid should have died at %s", errs, point)
			}
			p.waitExit(10 * time.Second)

			q := r.tuttid()
			defer q.kill()
			var ids []string
			deadline := time.Now().Add(90 * time.Second)
			for {
				ids = ownTurnsDone(t, r.db)
				if len(ids) == 2 || time.Now().After(deadline) {
					break
				}
				time.Sleep(200 * time.Millisecond)
			}
			if len(ids) != 2 {
				t.Fatalf("after the restart %d branches ran their first turn, want 2", len(ids))
			}
			if errs, err := q.gql(exploreMutation, map[string]any{"in": in}, &out); err != nil || len(errs) > 0 {
				t.Fatalf("replay after the restart: %v %+v", err, errs)
			}
			st, err := store.Open(context.Background(), r.db)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			forks, err := st.Client.SessionFork.Query().Where(sessionfork.ParentAgentSessionID(parent.ID)).Count(context.Background())
			if err != nil || forks != 2 {
				t.Errorf("forks of the parent: %d %v, want 2", forks, err)
			}
			entries, _ := os.ReadDir(filepath.Join(filepath.Dir(r.db), "worktrees", ws))
			if len(entries) != 2 {
				t.Errorf("worktrees %v, want the two branches'", entries)
			}
			if wts := gitWorktrees(t, r.root); len(wts) != 3 {
				t.Errorf("git worktrees %v, want the main one and two", wts)
			}
		})
	}
}

// ownTurnsDone lists the branches whose session has exactly one turn of
// its own, completed (a first turn sent twice would make two).
func ownTurnsDone(t *testing.T, db string) []string {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	bs, err := st.Client.ExplorationBranch.Query().Where(explorationbranch.StateEQ(explorationbranch.StateStarted)).All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var done []string
	for _, b := range bs {
		a, err := st.Client.AgentSession.Get(ctx, b.ChildAgentSessionID)
		if err != nil {
			continue
		}
		ts, err := a.QueryTurns().All(ctx)
		if err != nil {
			t.Fatal(err)
		}
		own, completed := 0, 0
		for _, tr := range ts {
			if !tr.StartedAt.Before(a.CreatedAt) {
				own++
				if tr.CompletedAt != nil {
					completed++
				}
			}
		}
		if own > 1 {
			t.Fatalf("branch %s ran %d turns of its own, want 1", b.Name, own)
		}
		if completed == 1 {
			done = append(done, b.Name)
		}
	}
	return done
}

// TestCrashDuringCheck kills tuttid with SIGKILL while a branch's check
// runs: the check's process group outlives tuttid (a kill -9 reaches no
// child); the restart kills that group (still the check's: a shell in the
// branch's worktree) and runs the check again for the same turn.
func TestCrashDuringCheck(t *testing.T) {
	r := newCrashRig(t)
	gitInit(t, r.root)
	p := r.tuttid()
	ws, parent := r.parent(p)
	if errs, err := p.gql(exploreMutation, map[string]any{"in": exploreTwo(ws, parent.ID, "x-check", "sleep 600")}, nil); err != nil || len(errs) > 0 {
		t.Fatalf("exploreSession: %v %+v", err, errs)
	}
	ctx := context.Background()
	running := func() []*ent.CheckRun {
		st, err := store.Open(ctx, r.db)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		rows, err := st.Client.CheckRun.Query().Where(checkrun.StateEQ(checkrun.StateRunning), checkrun.PgidGT(0)).All(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	var before []*ent.CheckRun
	deadline := time.Now().Add(90 * time.Second)
	for len(before) < 2 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		before = running()
	}
	if len(before) != 2 {
		t.Fatalf("%d checks running with their process group, want 2", len(before))
	}
	p.kill()
	// Whatever the test's end, no check outlives it.
	t.Cleanup(func() {
		for _, c := range append(before, running()...) {
			_ = syscall.Kill(-c.Pgid, syscall.SIGKILL)
		}
	})
	for _, c := range before {
		if syscall.Kill(c.Pgid, 0) != nil {
			t.Fatalf("check %s's process group %d did not outlive tuttid: the test proves nothing", c.ID, c.Pgid)
		}
	}

	q := r.tuttid()
	defer q.kill()
	var after []*ent.CheckRun
	deadline = time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		after = running()
		if len(after) == 2 && after[0].Pgid != before[0].Pgid && after[0].Pgid != before[1].Pgid {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, c := range before {
		// Reaped by init once killed: gone, or a zombie for a moment.
		gone := false
		for i := 0; i < 50 && !gone; i++ {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.Pgid))
			gone = err != nil || strings.Contains(string(b), ") Z ")
			time.Sleep(100 * time.Millisecond)
		}
		if !gone {
			t.Errorf("the crashed run's check (pgid %d) is still running after the restart", c.Pgid)
		}
	}
	if len(after) != 2 {
		t.Fatalf("after the restart %d checks run, want both again", len(after))
	}
	turns := map[string]string{}
	for _, c := range before {
		turns[c.AgentSessionID] = c.TurnID
	}
	for _, c := range after {
		if turns[c.AgentSessionID] != c.TurnID {
			t.Errorf("check again for session %s turn %s, want turn %s", c.AgentSessionID, c.TurnID, turns[c.AgentSessionID])
		}
	}
}

// TestCrashWhileTellingTheParent kills tuttid with SIGKILL while a
// branch's summary is being told to the parent: before Codex is asked
// (explore.telling) and after Codex took it, before the row says so
// (explore.told). After the restart the branch's summaryState is
// UNCERTAIN; applying again with tellParent tells nothing (uncertain:
// true), so the parent never has the summary twice; with tellAgain it is
// told, and the parent's next model request then carries it exactly once
// when the kill came before Codex was asked.
func TestCrashWhileTellingTheParent(t *testing.T) {
	for _, point := range []string{explore.CrashTelling, explore.CrashTold} {
		t.Run(point, func(t *testing.T) {
			r := newCrashRig(t)
			gitInit(t, r.root)
			p := r.tuttid("TUTTID_CRASH_AT=" + point)
			ws, parent := r.parent(p)
			var out explored
			p.must(exploreMutation, map[string]any{"in": exploreTwo(ws, parent.ID, "x-tell", "")}, &out)
			xID := out.ExploreSession.Exploration.ID
			deadline := time.Now().Add(90 * time.Second)
			for len(ownTurnsDone(t, r.db)) < 2 && time.Now().Before(deadline) {
				time.Sleep(200 * time.Millisecond)
			}
			const apply = `mutation($in: ApplyExplorationBranchInput!) { applyExplorationBranch(input: $in) {
			  alreadyTold uncertain summary branch { summaryState toldAt } } }`
			applyIn := func(again bool) map[string]any {
				return map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "explorationId": xID,
					"branchName": "a", "tellParent": true, "tellAgain": again}}
			}
			if errs, err := p.gql(apply, applyIn(false), nil); err == nil {
				t.Fatalf("applyExplorationBranch answered (%v) although tuttid should have died at %s", errs, point)
			}
			p.waitExit(10 * time.Second)

			q := r.tuttid()
			defer q.kill()
			var res struct {
				ApplyExplorationBranch struct {
					AlreadyTold, Uncertain bool
					Summary                *string
					Branch                 struct {
						SummaryState *string
						ToldAt       *string
					}
				}
			}
			q.must(apply, applyIn(false), &res)
			got := res.ApplyExplorationBranch
			if !got.Uncertain || got.AlreadyTold || got.Branch.SummaryState == nil || *got.Branch.SummaryState != "UNCERTAIN" || got.Branch.ToldAt != nil {
				t.Fatalf("apply with tellParent after the restart: %+v (state %v), want uncertain and UNCERTAIN, nothing told", got, got.Branch.SummaryState)
			}
			if point == explore.CrashTelling {
				q.must(apply, applyIn(true), &res)
				if got := res.ApplyExplorationBranch; got.Uncertain || got.Branch.SummaryState == nil || *got.Branch.SummaryState != "TOLD" {
					t.Fatalf("apply with tellAgain: %+v, want TOLD", got)
				}
			}
			before := len(r.model.Requests())
			q.send(ws, parent.ID, "next")
			q.waitSession(ws, parent.ID, "the parent's next turn", idle)
			reqs := r.model.Requests()[before:]
			if len(reqs) == 0 {
				t.Fatal("the parent's next turn made no model request")
			}
			n := 0
			for _, u := range reqs[len(reqs)-1].UserTexts() {
				if strings.Contains(u, "<tuttid_branch_summary") {
					n++
				}
			}
			if point == explore.CrashTelling && n != 1 {
				t.Errorf("the parent's next model request carries the summary %d times, want once (told again knowingly)", n)
			}
			if n > 1 {
				t.Errorf("the parent's next model request carries the summary %d times: told twice", n)
			}
			t.Logf("%s: the parent's next request carries the summary %d time(s)", point, n)
		})
	}
}

// TestCrashDuringReview kills tuttid with SIGKILL while Codex reviews a
// branch (the reviewer's reply held open at the model server): after the
// restart the review is FAILED, saying tuttid stopped, and Review can run
// again.
func TestCrashDuringReview(t *testing.T) {
	r := newCrashRig(t)
	gitInit(t, r.root)
	held := make(chan struct{}, 1)
	r.model.SetReply(func(req codextest.Request) codextest.Reply {
		if strings.HasPrefix(req.LastUserText(), "Review the code changes this branch made") {
			select {
			case held <- struct{}{}:
			default:
			}
			return codextest.Reply{Text: "REVIEW-LATE", Delay: time.Minute}
		}
		return codextest.DefaultReply(req)
	})
	p := r.tuttid()
	ws, parent := r.parent(p)
	var out explored
	p.must(exploreMutation, map[string]any{"in": exploreTwo(ws, parent.ID, "x-review", "")}, &out)
	xID := out.ExploreSession.Exploration.ID
	deadline := time.Now().Add(90 * time.Second)
	for len(ownTurnsDone(t, r.db)) < 2 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	const review = `mutation($in: ReviewExplorationBranchInput!) { reviewExplorationBranch(input: $in) { review { state error } } }`
	in := map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "explorationId": xID, "branchName": "a"}}
	p.must(review, in, nil)
	select {
	case <-held:
	case <-time.After(60 * time.Second):
		t.Fatal("the review never reached the model server")
	}
	p.kill()

	q := r.tuttid()
	defer q.kill()
	var got struct {
		Exploration struct {
			Branches []struct {
				Name   string
				Review *struct{ State, Error string }
			}
		}
	}
	q.must(`query($ws: ID!, $s: ID!, $x: ID!) { exploration(workspaceId: $ws, agentSessionId: $s, explorationId: $x) { branches { name review { state error } } } }`,
		map[string]any{"ws": ws, "s": parent.ID, "x": xID}, &got)
	for _, b := range got.Exploration.Branches {
		if b.Name != "a" {
			continue
		}
		if b.Review == nil || b.Review.State != "FAILED" || !strings.Contains(b.Review.Error, "tuttid stopped") {
			t.Fatalf("a's review after the restart: %+v, want FAILED because tuttid stopped", b.Review)
		}
		var again struct {
			ReviewExplorationBranch struct{ Review struct{ State string } }
		}
		q.must(review, in, &again)
		if again.ReviewExplorationBranch.Review.State != "RUNNING" && again.ReviewExplorationBranch.Review.State != "DONE" {
			t.Fatalf("Review again after the restart: %+v, want it running", again)
		}
		return
	}
	t.Fatal("no branch a")
}

// TestRestartAfterStopRunsNoStoppedCheck: both branches' checks (sleep
// 600) run; stopExploration interrupts them; tuttid is killed and started
// again: the start, which runs again the checks a stopped tuttid left
// interrupted, runs neither of these: the person stopped them.
func TestRestartAfterStopRunsNoStoppedCheck(t *testing.T) {
	r := newCrashRig(t)
	gitInit(t, r.root)
	p := r.tuttid()
	ws, parent := r.parent(p)
	var x explored
	if errs, err := p.gql(exploreMutation, map[string]any{"in": exploreTwo(ws, parent.ID, "x-stop", "sleep 600")}, &x); err != nil || len(errs) > 0 {
		t.Fatalf("exploreSession: %v %+v", err, errs)
	}
	ctx := context.Background()
	checks := func(state checkrun.State) []*ent.CheckRun {
		st, err := store.Open(ctx, r.db)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		rows, err := st.Client.CheckRun.Query().Where(checkrun.StateEQ(state)).All(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	deadline := time.Now().Add(90 * time.Second)
	for len(checks(checkrun.StateRunning)) < 2 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	if n := len(checks(checkrun.StateRunning)); n != 2 {
		t.Fatalf("%d checks running, want 2", n)
	}
	p.must(`mutation($in: StopExplorationInput!) { stopExploration(input: $in) { interrupted } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "explorationId": x.ExploreSession.Exploration.ID}}, nil)
	deadline = time.Now().Add(30 * time.Second)
	for len(checks(checkrun.StateInterrupted)) < 2 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if n := len(checks(checkrun.StateInterrupted)); n != 2 {
		t.Fatalf("%d checks interrupted by the stop, want 2", n)
	}
	p.kill()

	q := r.tuttid()
	defer q.kill()
	// The start's checks go on in the background: give them the time a
	// check took to start before.
	time.Sleep(3 * time.Second)
	if running := checks(checkrun.StateRunning); len(running) != 0 {
		t.Errorf("after the restart %d checks run again, want none: the person stopped them", len(running))
	}
	if n := len(checks(checkrun.StateInterrupted)); n != 2 {
		t.Errorf("after the restart %d checks interrupted, want the stop's 2", n)
	}
}
