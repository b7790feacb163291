package session

import (
	"context"
	"testing"

	"tuttid/agent"
	"tuttid/agent/agenttest"
	"tuttid/ent/turn"
	"tuttid/store/storetest"
)

// TestReconcileKeepsCodexErrorCode: a turn the previous run left running
// that Codex's record says failed is settled with Codex's message and its
// kind (errorCode), as a live turn/completed would have stored them.
func TestReconcileKeepsCodexErrorCode(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	rt := agenttest.New()
	e.svc = New(Config{Store: e.st.Store, Runtime: rt})
	e.st.Workspace(storetest.Workspace{ID: "w"})
	e.st.Session(storetest.Session{ID: "s1", Workspace: "w", Thread: "thread-1", Status: "WORKING",
		Turns: []storetest.Turn{{ID: "t1", Status: turn.StatusIN_PROGRESS}}})
	rt.SetHistory("thread-1", []agent.RuntimeTurn{{ID: "t1", Status: agent.TurnFailed,
		Error: "You exceeded your current quota", ErrorCode: "usageLimitExceeded"}})
	if err := e.svc.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	tr, err := e.st.Client.Turn.Query().Where(turn.TurnID("t1")).Only(context.Background())
	if err != nil || tr.Status != turn.StatusFAILED || tr.Error != "You exceeded your current quota" || tr.ErrorCode != "usageLimitExceeded" {
		t.Fatalf("settled turn = %+v, %v", tr, err)
	}
}
