package session

import (
	"context"
	"strings"
	"testing"
	"time"

	"tuttid/agent"
	"tuttid/agent/agenttest"
	"tuttid/ent/agentsession"
	"tuttid/ent/message"
	"tuttid/ent/turn"
	"tuttid/store/storetest"
)

func (e *testEnv) withRuntime(rt agent.Runtime) { e.svc.rt = rt }

func (e *testEnv) threadSession(id, thread string) {
	e.st.Session(storetest.Session{ID: id, Workspace: "w", Thread: thread, Status: agentsession.StatusWORKING})
}

func (e *testEnv) msgStatus(t *testing.T, id string) string {
	t.Helper()
	m, err := e.st.Client.Message.Query().Where(message.MessageID(id)).Only(context.Background())
	if err != nil {
		t.Fatalf("message %s: %v", id, err)
	}
	return m.Status + " " + m.Text
}

func ev(kind agent.EventKind, turnID string, m *agent.RuntimeMessage) agent.Event {
	return agent.Event{Kind: kind, Provider: agent.ProviderCodex, ThreadID: "thread-1", TurnID: turnID, Message: m}
}

// A write that fails for a moment is retried, and the event is stored.
func TestIngestRetriesFailedWrite(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	e.st.Workspace(storetest.Workspace{ID: "w"})
	e.threadSession("s1", "thread-1")
	if _, err := e.st.DB.Exec(`CREATE TRIGGER f BEFORE INSERT ON workspace_agent_messages BEGIN SELECT RAISE(ABORT, 'injected'); END;`); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(30*time.Millisecond, func() { _, _ = e.st.DB.Exec(`DROP TRIGGER f`) })
	m := &agent.RuntimeMessage{ID: "u1", TurnID: "t1", Role: "user", Text: "hi", Status: "completed"}
	if err := e.svc.handleDurably(ctx, ev(agent.EventItemCompleted, "t1", m)); err != nil {
		t.Fatalf("handleDurably: %v", err)
	}
	if got := e.msgStatus(t, "u1"); got != "completed hi" {
		t.Errorf("message = %q", got)
	}
}

// A write that keeps failing fails its turn, with the reason; the session
// goes on, and the provider's later end of the turn does not hide it.
func TestIngestFailsTurnWhenWritesKeepFailing(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	e.st.Workspace(storetest.Workspace{ID: "w"})
	e.threadSession("s1", "thread-1")
	rt := agenttest.New()
	e.withRuntime(rt)
	if err := e.svc.handleDurably(ctx, ev(agent.EventTurnStarted, "t1", nil)); err != nil {
		t.Fatal(err)
	}
	open := &agent.RuntimeMessage{ID: "a1", TurnID: "t1", Role: "assistant", Text: "par", Status: "in_progress"}
	if err := e.svc.handleDurably(ctx, ev(agent.EventItemStarted, "t1", open)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.DB.Exec(`CREATE TRIGGER f BEFORE UPDATE ON workspace_agent_messages WHEN NEW.status = 'completed' BEGIN SELECT RAISE(ABORT, 'injected'); END;`); err != nil {
		t.Fatal(err)
	}
	done := &agent.RuntimeMessage{ID: "a1", TurnID: "t1", Role: "assistant", Text: "partial reply", Status: "completed"}
	if err := e.svc.handleDurably(ctx, ev(agent.EventItemCompleted, "t1", done)); err == nil {
		t.Fatal("handleDurably reported success for an event it could not store")
	}
	tr, err := e.st.Client.Turn.Query().Where(turn.TurnID("t1")).Only(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Status != turn.StatusFAILED || !strings.Contains(tr.Error, "could not store") {
		t.Errorf("turn = %s %q, want FAILED with the reason", tr.Status, tr.Error)
	}
	if got := e.msgStatus(t, "a1"); got != "failed par" {
		t.Errorf("message = %q, want failed", got)
	}
	if a, _ := e.st.Client.AgentSession.Get(ctx, "s1"); a.Status != agentsession.StatusREADY {
		t.Errorf("session %s, want READY", a.Status)
	}
	if in := rt.Interrupted(); len(in) != 1 || in[0].TurnID != "t1" {
		t.Errorf("interrupted %+v, want [t1]", in)
	}
	// Codex ends the interrupted turn: it stays FAILED with tuttid's reason.
	end := ev(agent.EventTurnCompleted, "t1", nil)
	end.Status = string(agent.TurnInterrupted)
	if err := e.svc.handleDurably(ctx, end); err != nil {
		t.Fatal(err)
	}
	if tr2, _ := e.st.Client.Turn.Get(ctx, tr.ID); tr2.Status != turn.StatusFAILED || tr2.Error != tr.Error {
		t.Errorf("after turn/completed: %s %q", tr2.Status, tr2.Error)
	}
}

// A completed turn whose item completion was lost takes the item from
// Codex's record.
func TestCompletedTurnSettlesOpenItemsFromRecord(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	e.st.Workspace(storetest.Workspace{ID: "w"})
	e.threadSession("s1", "thread-1")
	rt := agenttest.New()
	rt.SetHistory("thread-1", []agent.RuntimeTurn{{ID: "t1", Status: agent.TurnCompleted,
		Messages: []agent.RuntimeMessage{{ID: "a1", Role: "assistant", Text: "whole reply", Status: "completed"}}}})
	e.withRuntime(rt)
	for _, x := range []agent.Event{
		ev(agent.EventTurnStarted, "t1", nil),
		ev(agent.EventItemStarted, "t1", &agent.RuntimeMessage{ID: "a1", TurnID: "t1", Role: "assistant", Status: "in_progress"}),
		ev(agent.EventItemStarted, "t1", &agent.RuntimeMessage{ID: "x1", TurnID: "t1", Role: "tool", Status: "in_progress"}),
		{Kind: agent.EventTurnCompleted, ThreadID: "thread-1", TurnID: "t1", Status: string(agent.TurnCompleted)},
	} {
		if err := e.svc.HandleEvent(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	if got := e.msgStatus(t, "a1"); got != "completed whole reply" {
		t.Errorf("a1 = %q, want Codex's record", got)
	}
	if got := e.msgStatus(t, "x1"); got != agent.ItemIncomplete+" " {
		t.Errorf("x1 = %q, want %s (Codex has no record of it)", got, agent.ItemIncomplete)
	}
}

// At start, turns left running are settled from Codex's record.
func TestReconcileSettlesTurnsFromRecord(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	e.st.Workspace(storetest.Workspace{ID: "w"})
	e.threadSession("s1", "thread-1")
	e.threadSession("s2", "thread-2")
	e.threadSession("s3", "thread-3")
	rt := agenttest.New()
	rt.SetHistory("thread-1", []agent.RuntimeTurn{{ID: "t1", Status: agent.TurnCompleted, Messages: []agent.RuntimeMessage{
		{ID: "u1", Role: "user", Text: "q", Status: "completed"}, {ID: "a1", Role: "assistant", Text: "done", Status: "completed"}}}})
	rt.SetHistory("thread-2", []agent.RuntimeTurn{{ID: "t2", Status: agent.TurnInterrupted, Messages: []agent.RuntimeMessage{
		{ID: "u2", Role: "user", Text: "q2", Status: "completed"}}}})
	// thread-3: Codex has no record of t3 (it died before writing it).
	e.withRuntime(rt)
	for _, x := range [][3]string{{"s1", "t1", "a1"}, {"s2", "t2", "a2"}, {"s3", "t3", "a3"}} {
		a, _ := e.st.Client.AgentSession.Get(ctx, x[0])
		if _, err := e.svc.ensureTurn(ctx, a, x[1]); err != nil {
			t.Fatal(err)
		}
		if err := e.svc.onItem(ctx, a, agent.RuntimeMessage{ID: x[2], TurnID: x[1], Role: "assistant", Text: "stream", Status: "in_progress"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.svc.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		status turn.Status
		msgs   map[string]string
	}{
		"t1": {turn.StatusCOMPLETED, map[string]string{"u1": "completed q", "a1": "completed done"}},
		"t2": {turn.StatusINTERRUPTED, map[string]string{"u2": "completed q2", "a2": "interrupted stream"}},
		"t3": {turn.StatusFAILED, map[string]string{"a3": "failed stream"}},
	}
	for id, w := range want {
		tr, err := e.st.Client.Turn.Query().Where(turn.TurnID(id)).Only(ctx)
		if err != nil || tr.Status != w.status || tr.CompletedAt == nil {
			t.Errorf("turn %s = %+v (%v), want %s", id, tr, err, w.status)
		}
		for m, st := range w.msgs {
			if got := e.msgStatus(t, m); got != st {
				t.Errorf("turn %s message %s = %q, want %q", id, m, got, st)
			}
		}
	}
	if n := e.st.Client.AgentSession.Query().Where(agentsession.StatusEQ(agentsession.StatusWORKING)).CountX(ctx); n != 0 {
		t.Errorf("%d sessions still WORKING", n)
	}
}

// A malformed event is reported at once; it is not retried and does not
// fail the turn it names.
func TestIngestMalformedEventLeavesTurn(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	e.st.Workspace(storetest.Workspace{ID: "w"})
	e.threadSession("s1", "thread-1")
	if err := e.svc.handleDurably(ctx, ev(agent.EventTurnStarted, "t1", nil)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := e.svc.handleDurably(ctx, ev(agent.EventItemCompleted, "t1", nil)); err == nil {
		t.Fatal("an item event without an item was accepted")
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("a malformed event took %s: retried", d)
	}
	if tr, _ := e.st.Client.Turn.Query().Where(turn.TurnID("t1")).Only(ctx); tr.Status != turn.StatusIN_PROGRESS {
		t.Errorf("turn %s after a malformed event, want IN_PROGRESS", tr.Status)
	}
}
