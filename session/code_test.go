package session

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"tuttid/activity"
	"tuttid/activity/activitytest"
	"tuttid/codebranch"
	"tuttid/ent/agentsession"
	"tuttid/ent/turn"
	"tuttid/store/storetest"
)

// Every way a turn ends (completed, interrupted, failed) stores its
// checkpoint with the end, so TURN_COMPLETED and the READY that follows
// carry it; a session outside a repository gets none, and its turn ends
// as before.
func TestTurnEndStoresCheckpoint(t *testing.T) {
	ctx := context.Background()
	repo := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"commit", "-q", "--allow-empty", "-m", "one"}} {
		cmd := exec.Command("git", append([]string{"-c", "user.name=p", "-c", "user.email=p@p"}, args...)...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	st := storetest.New(t)
	st.Workspace(storetest.Workspace{ID: "w", RootPath: "/"})
	pub := &activitytest.Recorder{}
	code := codebranch.New(codebranch.Config{Store: st.Store, DataDir: t.TempDir()})
	t.Cleanup(func() { code.Wait(context.Background()) }) // before its data directory goes
	svc := New(Config{Store: st.Store, Publisher: pub, Code: code.Hooks()})
	for i, tc := range []struct {
		status turn.Status
		inRepo bool
	}{
		{turn.StatusCOMPLETED, true},
		{turn.StatusINTERRUPTED, true},
		{turn.StatusFAILED, true},
		{turn.StatusCOMPLETED, false},
	} {
		t.Run(string(tc.status), func(t *testing.T) {
			cwd := t.TempDir()
			if tc.inRepo {
				cwd = repo
			}
			id := string(rune('a' + i))
			a := st.Session(storetest.Session{ID: id, Workspace: "w", Cwd: cwd, Status: agentsession.StatusWORKING})
			if err := os.WriteFile(filepath.Join(repo, id+".txt"), []byte(id), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := st.Client.Turn.Create().SetAgentSessionID(id).SetTurnID("t1").SetStartedAt(time.Now()).Exec(ctx); err != nil {
				t.Fatal(err)
			}
			pub.Take()
			if err := svc.completeTurn(ctx, a, "t1", tc.status, "", ""); err != nil {
				t.Fatal(err)
			}
			ev := pub.Take()
			if len(ev) != 2 || ev[0].Kind != activity.TurnCompleted || ev[1].Kind != activity.SessionUpdated {
				t.Fatalf("published %v", ev)
			}
			got := ev[0].Turn
			if got.Status != tc.status || (got.CheckpointCommit != "") != tc.inRepo || (tc.inRepo && got.CheckpointAt == nil) {
				t.Fatalf("TURN_COMPLETED turn = status %s checkpoint %q", got.Status, got.CheckpointCommit)
			}
			stored, err := st.Client.Turn.Query().Where(turn.AgentSessionID(id)).Only(ctx)
			if err != nil || stored.CheckpointCommit != got.CheckpointCommit {
				t.Fatalf("stored checkpoint %q, published %q (%v)", stored.CheckpointCommit, got.CheckpointCommit, err)
			}
		})
	}
}
