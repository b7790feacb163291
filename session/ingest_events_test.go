package session

import (
	"context"
	"testing"

	"tuttid/agent"
	"tuttid/ent/agentsession"
	"tuttid/ent/message"
	"tuttid/ent/turn"
	"tuttid/store/storetest"
)

// TestIngestTurnLifecycle feeds a turn's runtime events in Codex's order
// (thread idle comes before turn/completed) and checks what is stored after
// each: the turn, its items, and the session's status.
func TestIngestTurnLifecycle(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		end         agent.TurnStatus
		wantTurn    turn.Status
		wantPending string // the status an item left in progress ends with
	}{
		// No runtime here to read the turn's record from.
		{"completed", agent.TurnCompleted, turn.StatusCOMPLETED, agent.ItemIncomplete},
		{"interrupted", agent.TurnInterrupted, turn.StatusINTERRUPTED, "interrupted"},
		{"failed", agent.TurnFailed, turn.StatusFAILED, "failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t)
			ctx := context.Background()
			e.st.Workspace(storetest.Workspace{ID: "w"})
			e.st.Session(storetest.Session{ID: "s1", Workspace: "w", Thread: "thread-1"})
			handle := e.svc.HandleEvent
			ev := func(k agent.EventKind, mut func(*agent.Event)) {
				t.Helper()
				e := agent.Event{Kind: k, Provider: agent.ProviderCodex, ThreadID: "thread-1", TurnID: "turn-1"}
				if mut != nil {
					mut(&e)
				}
				if err := handle(ctx, e); err != nil {
					t.Fatalf("%s: %v", k, err)
				}
			}
			status := func() agentsession.Status {
				got, err := e.st.Client.AgentSession.Get(ctx, "s1")
				if err != nil {
					t.Fatal(err)
				}
				return got.Status
			}

			ev(agent.EventThreadStatus, func(e *agent.Event) { e.Status = string(agent.ThreadActive) })
			ev(agent.EventTurnStarted, nil)
			if s := status(); s != agentsession.StatusWORKING {
				t.Fatalf("status after turn start = %s", s)
			}
			ev(agent.EventItemStarted, func(e *agent.Event) {
				e.Message = &agent.RuntimeMessage{ID: "user-1", TurnID: "turn-1", Role: "user", Text: "hi", Status: "completed"}
			})
			ev(agent.EventItemStarted, func(e *agent.Event) {
				e.Message = &agent.RuntimeMessage{ID: "cmd-1", TurnID: "turn-1", Role: "tool", Status: "in_progress"}
			})
			ev(agent.EventThreadStatus, func(e *agent.Event) { e.Status = string(agent.ThreadIdle) })
			if s := status(); s != agentsession.StatusWORKING {
				t.Errorf("status after thread idle, before turn/completed = %s; READY must wait for the turn", s)
			}
			ev(agent.EventTurnCompleted, func(e *agent.Event) { e.Status = string(tc.end) })
			if s := status(); s != agentsession.StatusREADY {
				t.Errorf("status after the turn = %s", s)
			}
			tr, err := e.st.Client.Turn.Query().Where(turn.TurnID("turn-1")).Only(ctx)
			if err != nil || tr.Status != tc.wantTurn || tr.CompletedAt == nil {
				t.Fatalf("turn = %+v, %v", tr, err)
			}
			cmd, err := e.st.Client.Message.Query().Where(message.MessageID("cmd-1")).Only(ctx)
			if err != nil || cmd.Status != tc.wantPending {
				t.Errorf("unfinished item status = %q (%v), want %q", cmd.Status, err, tc.wantPending)
			}
			user, err := e.st.Client.Message.Query().Where(message.MessageID("user-1")).Only(ctx)
			if err != nil || user.Status != "completed" || user.Version != 1 || cmd.Version != 2 {
				t.Errorf("user item = %+v, cmd version %d", user, cmd.Version)
			}
		})
	}
}

// TestRuntimeRestartRecoversFailedSessions: a crash marks the running
// sessions FAILED; once the provider is back they are READY again.
func TestRuntimeRestartRecoversFailedSessions(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	e.st.Workspace(storetest.Workspace{ID: "w"})
	e.st.Session(storetest.Session{ID: "crashed", Workspace: "w"})
	e.st.Session(storetest.Session{ID: "fine", Workspace: "w"})
	if err := e.st.Client.AgentSession.UpdateOneID("crashed").SetStatus(agentsession.StatusFAILED).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.HandleEvent(ctx, agent.Event{Kind: agent.EventRuntimeRestarted, Provider: agent.ProviderCodex}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"crashed", "fine"} {
		a, err := e.st.Client.AgentSession.Get(ctx, id)
		if err != nil || a.Status != agentsession.StatusREADY {
			t.Errorf("%s: status %v (%v), want READY", id, a.Status, err)
		}
	}
}
