package session

import (
	"context"
	"strings"
	"testing"
	"time"

	"tuttid/agent"
	"tuttid/ent/agentsession"
	"tuttid/ent/turn"
	"tuttid/store/storetest"
)

// Point 9: Codex unavailable at start fails the running turns, but not for
// good: when Codex is back (its restart event) each takes Codex's record,
// its status and items. Before, it stayed FAILED "tuttid stopped".
func TestReconcileRevisitsTurnsWhenCodexIsBack(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	e.st.Workspace(storetest.Workspace{ID: "w"})
	e.st.Session(storetest.Session{ID: "s1", Workspace: "w", Thread: "thread-1", Status: agentsession.StatusWORKING,
		Turns: []storetest.Turn{{ID: "t1", Status: turn.StatusIN_PROGRESS,
			Messages: []storetest.Message{{ID: "a1", Role: "assistant", Status: agent.ItemInProgress}}}}})
	rt := newRecordRuntime()
	rt.failHistory(agent.ErrRuntimeUnavailable)
	rt.SetHistory("thread-1", []agent.RuntimeTurn{{ID: "t1", Status: agent.TurnCompleted,
		Messages: []agent.RuntimeMessage{userHello, replyDone}}})
	e.withRuntime(rt)
	if err := e.svc.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	tr, _ := e.st.Client.Turn.Query().Where(turn.TurnID("t1")).Only(ctx)
	if tr.Status != turn.StatusFAILED || !strings.HasPrefix(tr.Error, "tuttid stopped") {
		t.Fatalf("after start without Codex: %s %q, want FAILED tuttid stopped", tr.Status, tr.Error)
	}
	rt.failHistory(nil)
	runIngest(t, e.svc)
	emitAll(t, rt, agent.Event{Kind: agent.EventRuntimeRestarted, Provider: agent.ProviderCodex})
	eventually(t, 5*time.Second, "turn settled from Codex", func() (bool, string) {
		tr, _ := e.st.Client.Turn.Query().Where(turn.TurnID("t1")).Only(ctx)
		got := msgNow(e, "a1")
		return tr.Status == turn.StatusCOMPLETED && tr.Error == "" && got == "completed the reply",
			string(tr.Status) + " " + tr.Error + "; a1 " + got
	})
}

// Point 9: the periodic revisit finds Codex back without a restart event.
func TestRevisitFindsCodexBackWithoutRestart(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	e.st.Workspace(storetest.Workspace{ID: "w"})
	e.st.Session(storetest.Session{ID: "s1", Workspace: "w", Thread: "thread-1", Status: agentsession.StatusWORKING,
		Turns: []storetest.Turn{{ID: "t1", Status: turn.StatusIN_PROGRESS}}})
	rt := newRecordRuntime()
	rt.failHistory(agent.ErrRuntimeUnavailable)
	rt.SetHistory("thread-1", []agent.RuntimeTurn{{ID: "t1", Status: agent.TurnInterrupted}})
	e.withRuntime(rt)
	if err := e.svc.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	e.svc.lanes.rereadPause = 50 * time.Millisecond
	runIngest(t, e.svc)
	rt.failHistory(nil)
	eventually(t, 5*time.Second, "turn settled from Codex", func() (bool, string) {
		tr, _ := e.st.Client.Turn.Query().Where(turn.TurnID("t1")).Only(ctx)
		return tr.Status == turn.StatusINTERRUPTED, string(tr.Status) + " " + tr.Error
	})
}

// Point 9: a session a thread error left FAILED is usable after a restart
// (the new Codex reloads its thread). Before, it stayed FAILED and every
// fork refused it as not idle.
func TestReconcileReadiesFailedSessions(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	e.st.Workspace(storetest.Workspace{ID: "w"})
	e.st.Session(storetest.Session{ID: "s1", Workspace: "w", Status: agentsession.StatusFAILED})
	if err := e.svc.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if a, _ := e.st.Client.AgentSession.Get(ctx, "s1"); a.Status != agentsession.StatusREADY {
		t.Errorf("session %s after a restart, want READY", a.Status)
	}
}
