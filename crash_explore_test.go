package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"tuttid/ent/explorationbranch"
	"tuttid/ent/sessionfork"
	"tuttid/explore"
	"tuttid/store"
)

// TestCrashDuringExploration kills tuttid with SIGKILL after an
// exploration is stored (no branch forked yet) and after its branches are
// forked (no first turn started), then restarts it: every branch is whole
// (one fork, one worktree, its first turn run once), the same requestId
// answers the same exploration, and nothing is made twice.
func TestCrashDuringExploration(t *testing.T) {
	for _, point := range []string{explore.CrashStored, explore.CrashForked} {
		t.Run(point, func(t *testing.T) {
			r := newCrashRig(t)
			gitInit(t, r.root)
			p := r.tuttid("TUTTID_CRASH_AT=" + point)
			ws, parent := r.parent(p)
			in := map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": "x-crash", "prompt": "go",
				"checkCommand": "", "branches": []any{map[string]any{"name": "a"}, map[string]any{"name": "b"}}}
			var out struct {
				ExploreSession struct{ Exploration struct{ ID string } }
			}
			const mutation = `mutation($in: ExploreSessionInput!) { exploreSession(input: $in) { exploration { id } } }`
			if errs, err := p.gql(mutation, map[string]any{"in": in}, &out); err == nil {
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
			if errs, err := q.gql(mutation, map[string]any{"in": in}, &out); err != nil || len(errs) > 0 {
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
