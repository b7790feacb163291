package session

import (
	"context"
	"strings"
	"testing"
	"time"

	"tuttid/agent"
	"tuttid/ent/agentsession"
	"tuttid/ent/message"
	"tuttid/ent/turn"
	"tuttid/store/storetest"
)

func msgEv(kind agent.EventKind, thread, turnID string, m agent.RuntimeMessage) agent.Event {
	m.TurnID = turnID
	return agent.Event{Kind: kind, Provider: agent.ProviderCodex, ThreadID: thread, TurnID: turnID, Message: &m}
}

func turnEv(kind agent.EventKind, thread, turnID string, status agent.TurnStatus) agent.Event {
	return agent.Event{Kind: kind, Provider: agent.ProviderCodex, ThreadID: thread, TurnID: turnID, Status: string(status)}
}

func idleEv(thread string) agent.Event {
	return agent.Event{Kind: agent.EventThreadStatus, Provider: agent.ProviderCodex, ThreadID: thread, Status: string(agent.ThreadIdle)}
}

// deltaEv is stored nowhere: emitted after others, it returns once
// ingestion took them.
func deltaEv(thread string) agent.Event {
	return agent.Event{Kind: agent.EventMessageDelta, Provider: agent.ProviderCodex, ThreadID: thread, Delta: "x"}
}

func emitAll(t *testing.T, rt *recordRuntime, evs ...agent.Event) {
	t.Helper()
	for _, e := range evs {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := rt.Emit(ctx, e)
		cancel()
		if err != nil {
			t.Fatalf("emit %s: %v", e.Kind, err)
		}
	}
}

func runIngest(t *testing.T, s *Service) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Ingest(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

var (
	userHello  = agent.RuntimeMessage{ID: "u1", Role: "user", Text: "hello", Status: "completed"}
	replyStart = agent.RuntimeMessage{ID: "a1", Role: "assistant", Text: "", Status: "in_progress"}
	replyDone  = agent.RuntimeMessage{ID: "a1", Role: "assistant", Text: "the reply", Status: "completed"}
)

// Point 6: a full disk for two seconds at the start of a turn (turn
// started, the user's item and the reply fail every retry, and failing
// the turn fails too) loses nothing: the events are held and stored once
// the disk is back, and the turn, which lost events, is re-read from
// Codex at its end. Before, the turn ended COMPLETED without the prompt.
func TestDiskFullAtTurnStartKeepsThePrompt(t *testing.T) {
	d := newFullDisk(t)
	d.seed(t)
	rt := newRecordRuntime()
	rt.SetHistory("thread-1", []agent.RuntimeTurn{{ID: "t1", Status: agent.TurnCompleted,
		Messages: []agent.RuntimeMessage{userHello, replyDone}}})
	svc := New(Config{Store: d.st, Runtime: rt})
	runIngest(t, svc)
	ctx := context.Background()

	d.fill(t)
	full := time.Now()
	emitAll(t, rt,
		turnEv(agent.EventTurnStarted, "thread-1", "t1", agent.TurnInProgress),
		msgEv(agent.EventItemStarted, "thread-1", "t1", userHello),
		msgEv(agent.EventItemCompleted, "thread-1", "t1", userHello),
		deltaEv("thread-1"))
	time.Sleep(time.Until(full.Add(2 * time.Second)))
	d.free()
	emitAll(t, rt,
		msgEv(agent.EventItemStarted, "thread-1", "t1", replyStart),
		msgEv(agent.EventItemCompleted, "thread-1", "t1", replyDone),
		idleEv("thread-1"),
		turnEv(agent.EventTurnCompleted, "thread-1", "t1", agent.TurnCompleted))

	eventually(t, 10*time.Second, "turn t1 and its prompt", func() (bool, string) {
		tr, err := d.st.Client.Turn.Query().Where(turn.TurnID("t1")).Only(ctx)
		if err != nil {
			return false, err.Error()
		}
		u, err := d.st.Client.Message.Query().Where(message.MessageID("u1")).Only(ctx)
		if err != nil {
			return false, string(tr.Status) + ", prompt: " + err.Error()
		}
		return tr.Status == turn.StatusCOMPLETED && u.Text == "hello" && u.Status == "completed",
			string(tr.Status) + ", prompt " + u.Status + " " + u.Text
	})
	if a, _ := d.st.Client.AgentSession.Get(ctx, "s1"); a.Status != agentsession.StatusREADY {
		t.Errorf("session %s, want READY", a.Status)
	}
}

// Point 7: a full disk until the turn ends (turn/completed fails every
// retry, and so does failing the turn) leaves the session WORKING no
// longer than the disk is full. Before, it stayed WORKING until a restart.
func TestDiskFullUntilTurnEndLeavesWorking(t *testing.T) {
	d := newFullDisk(t)
	d.seed(t)
	rt := newRecordRuntime()
	svc := New(Config{Store: d.st, Runtime: rt})
	svc.lanes.idleGrace = time.Hour // only the held turn/completed may end it
	runIngest(t, svc)
	ctx := context.Background()
	emitAll(t, rt,
		turnEv(agent.EventTurnStarted, "thread-1", "t1", agent.TurnInProgress),
		msgEv(agent.EventItemCompleted, "thread-1", "t1", userHello),
		deltaEv("thread-1"))
	eventually(t, 5*time.Second, "turn t1 stored", func() (bool, string) {
		n, _ := d.st.Client.Message.Query().Where(message.MessageID("u1")).Count(ctx)
		return n == 1, "not stored"
	})
	d.fill(t)
	emitAll(t, rt, idleEv("thread-1"),
		turnEv(agent.EventTurnCompleted, "thread-1", "t1", agent.TurnCompleted),
		deltaEv("thread-1"))
	time.Sleep(time.Second)
	d.free()
	eventually(t, 10*time.Second, "session leaves WORKING", func() (bool, string) {
		a, err := d.st.Client.AgentSession.Get(ctx, "s1")
		if err != nil {
			return false, err.Error()
		}
		tr, err := d.st.Client.Turn.Query().Where(turn.TurnID("t1")).Only(ctx)
		if err != nil {
			return false, err.Error()
		}
		// COMPLETED once the held turn/completed is stored; FAILED with
		// tuttid's reason when the disk let the fallback write (SQLite can
		// reuse WAL space on a full disk).
		ended := tr.Status == turn.StatusCOMPLETED ||
			tr.Status == turn.StatusFAILED && strings.Contains(tr.Error, "could not store")
		return a.Status == agentsession.StatusREADY && ended, string(a.Status) + " " + string(tr.Status)
	})
}

// Point 7: a turn/completed whose params do not parse reaches tuttid as
// an unprojected notification; the thread's idle status still ends the
// turn, from Codex's record. Before, the session stayed WORKING.
func TestIdleThreadEndsTurnWhoseEndWasUnreadable(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	e.st.Workspace(storetest.Workspace{ID: "w"})
	e.threadSession("s1", "thread-1")
	rt := newRecordRuntime()
	rt.SetHistory("thread-1", []agent.RuntimeTurn{{ID: "t1", Status: agent.TurnCompleted,
		Messages: []agent.RuntimeMessage{userHello, replyDone}}})
	e.withRuntime(rt)
	e.svc.lanes.idleGrace = 100 * time.Millisecond
	runIngest(t, e.svc)
	emitAll(t, rt,
		turnEv(agent.EventTurnStarted, "thread-1", "t1", agent.TurnInProgress),
		msgEv(agent.EventItemStarted, "thread-1", "t1", replyStart),
		idleEv("thread-1"),
		agent.Event{Kind: agent.EventOther, Provider: agent.ProviderCodex, Method: "turn/completed", ThreadID: "thread-1"})
	eventually(t, 5*time.Second, "session READY, turn settled from Codex", func() (bool, string) {
		a, _ := e.st.Client.AgentSession.Get(ctx, "s1")
		tr, _ := e.st.Client.Turn.Query().Where(turn.TurnID("t1")).Only(ctx)
		if a == nil || tr == nil { // the turn not stored yet
			return false, "no turn yet"
		}
		got := msgNow(e, "a1")
		return a.Status == agentsession.StatusREADY && tr.Status == turn.StatusCOMPLETED && got == "completed the reply",
			string(a.Status) + " " + string(tr.Status) + " " + got
	})
}

// Point 9: a message whose Codex record is unavailable at its turn's end
// ends incomplete, then takes Codex's text once Codex answers. Before, it
// stayed incomplete and empty.
func TestUnavailableRecordIsReadAgain(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.st.Workspace(storetest.Workspace{ID: "w"})
	e.threadSession("s1", "thread-1")
	rt := newRecordRuntime()
	rt.SetHistory("thread-1", []agent.RuntimeTurn{{ID: "t1", Status: agent.TurnCompleted,
		Messages: []agent.RuntimeMessage{userHello, replyDone}}})
	rt.failHistory(agent.ErrRuntimeUnavailable)
	e.withRuntime(rt)
	e.svc.lanes.rereadPause = 100 * time.Millisecond
	runIngest(t, e.svc)
	emitAll(t, rt,
		turnEv(agent.EventTurnStarted, "thread-1", "t1", agent.TurnInProgress),
		msgEv(agent.EventItemStarted, "thread-1", "t1", replyStart),
		idleEv("thread-1"),
		turnEv(agent.EventTurnCompleted, "thread-1", "t1", agent.TurnCompleted))
	eventually(t, 5*time.Second, "reply incomplete while Codex is away", func() (bool, string) {
		got := msgNow(e, "a1")
		return got == "incomplete ", got
	})
	rt.failHistory(nil)
	eventually(t, 5*time.Second, "reply from Codex's record", func() (bool, string) {
		got := msgNow(e, "a1")
		return got == "completed the reply", got
	})
}

// Point 9: one session's settle waiting on Codex does not hold another
// session's events. Before, one goroutine stored every event, so thread-2
// waited for thread-1's Codex read (up to 60 s).
func TestSlowSettleDoesNotBlockOtherSessions(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	e.st.Workspace(storetest.Workspace{ID: "w"})
	e.threadSession("s1", "thread-1")
	e.threadSession("s2", "thread-2")
	rt := newRecordRuntime()
	release := rt.holdHistory("thread-1")
	defer release()
	e.withRuntime(rt)
	runIngest(t, e.svc)
	emitAll(t, rt,
		turnEv(agent.EventTurnStarted, "thread-1", "t1", agent.TurnInProgress),
		msgEv(agent.EventItemStarted, "thread-1", "t1", replyStart),
		turnEv(agent.EventTurnCompleted, "thread-1", "t1", agent.TurnCompleted)) // reads Codex: waits
	start := time.Now()
	emitCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := rt.Emit(emitCtx, msgEv(agent.EventItemCompleted, "thread-2", "t2", userHello)); err != nil {
		t.Fatalf("thread-2's event not taken while thread-1 settles: %v", err)
	}
	eventually(t, 2*time.Second, "thread-2's message stored", func() (bool, string) {
		n, _ := e.st.Client.Message.Query().Where(message.AgentSessionID("s2")).Count(ctx)
		return n == 1, "not stored"
	})
	t.Logf("thread-2 stored %s after thread-1 began waiting on Codex", time.Since(start))
	release()
	eventually(t, 5*time.Second, "thread-1's turn completed", func() (bool, string) {
		tr, _ := e.st.Client.Turn.Query().Where(turn.TurnID("t1")).Only(ctx)
		return tr != nil && tr.Status == turn.StatusCOMPLETED, "not completed"
	})
}

// msgNow is a message's "status text", or "missing".
func msgNow(e *testEnv, id string) string {
	m, err := e.st.Client.Message.Query().Where(message.MessageID(id)).Only(context.Background())
	if err != nil {
		return "missing"
	}
	return m.Status + " " + m.Text
}

// Point 6: a turn that lost an event (its turn was failed by tuttid) is
// re-read from Codex at its end: the lost item is stored and, when Codex
// completed the turn, so is the turn. Before, it stayed FAILED with the
// item as far as tuttid had it.
func TestTurnThatLostAnEventIsReadAgainAtItsEnd(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	e.st.Workspace(storetest.Workspace{ID: "w"})
	e.threadSession("s1", "thread-1")
	rt := newRecordRuntime()
	rt.SetHistory("thread-1", []agent.RuntimeTurn{{ID: "t1", Status: agent.TurnCompleted,
		Messages: []agent.RuntimeMessage{userHello, replyDone}}})
	e.withRuntime(rt)
	runIngest(t, e.svc)
	emitAll(t, rt,
		turnEv(agent.EventTurnStarted, "thread-1", "t1", agent.TurnInProgress),
		msgEv(agent.EventItemCompleted, "thread-1", "t1", userHello),
		msgEv(agent.EventItemStarted, "thread-1", "t1", replyStart))
	eventually(t, 5*time.Second, "reply started", func() (bool, string) { got := msgNow(e, "a1"); return got == "in_progress ", got })
	if _, err := e.st.DB.Exec(`CREATE TRIGGER f BEFORE UPDATE ON workspace_agent_messages WHEN NEW.status = 'completed' BEGIN SELECT RAISE(ABORT, 'injected'); END;`); err != nil {
		t.Fatal(err)
	}
	emitAll(t, rt, msgEv(agent.EventItemCompleted, "thread-1", "t1", replyDone))
	eventually(t, 5*time.Second, "turn failed by tuttid", func() (bool, string) {
		tr, _ := e.st.Client.Turn.Query().Where(turn.TurnID("t1")).Only(ctx)
		return tr.Status == turn.StatusFAILED, string(tr.Status)
	})
	if _, err := e.st.DB.Exec(`DROP TRIGGER f`); err != nil {
		t.Fatal(err)
	}
	emitAll(t, rt, turnEv(agent.EventTurnCompleted, "thread-1", "t1", agent.TurnCompleted))
	eventually(t, 5*time.Second, "turn and reply from Codex's record", func() (bool, string) {
		tr, _ := e.st.Client.Turn.Query().Where(turn.TurnID("t1")).Only(ctx)
		got := msgNow(e, "a1")
		return tr.Status == turn.StatusCOMPLETED && got == "completed the reply", string(tr.Status) + " " + tr.Error + "; a1 " + got
	})
}
