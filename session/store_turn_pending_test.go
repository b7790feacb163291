package session

import (
	"context"
	"testing"
	"time"

	"tuttid/agent"
	"tuttid/ent/agentsession"
	"tuttid/ent/turn"
	"tuttid/store/storetest"
)

// Point 8: the turn is stored before turn/start is written, and Codex's
// turn id replaces the pending one once it is known. Before, a crash
// between the request and its reply left no record of the turn.
func TestSendStoresTurnBeforeTurnStart(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	root := t.TempDir()
	e.st.Workspace(storetest.Workspace{ID: "w", RootPath: root})
	e.st.Session(storetest.Session{ID: "s1", Workspace: "w", Thread: "thread-1", Cwd: root})
	rt := newRecordRuntime()
	var atSend []string
	rt.onSend = func(agent.SendTurnInput) {
		atSend, _ = e.st.Client.Turn.Query().Where(turn.AgentSessionID("s1"), turn.StatusEQ(turn.StatusIN_PROGRESS)).
			Select(turn.FieldTurnID).Strings(ctx)
	}
	e.withRuntime(rt)
	got, err := e.svc.Send(ctx, "w", "s1", "hello")
	if err != nil {
		t.Fatal(err)
	}
	if len(atSend) != 1 || !isPendingTurn(atSend[0]) {
		t.Errorf("turns stored when turn/start was written: %q, want one pending", atSend)
	}
	ids, _ := e.st.Client.Turn.Query().Where(turn.AgentSessionID("s1")).Select(turn.FieldTurnID).Strings(ctx)
	if got.TurnID != "turn-sent" || len(ids) != 1 || ids[0] != "turn-sent" {
		t.Errorf("after the reply: answered %q, stored %q; want only Codex's turn-sent", got.TurnID, ids)
	}
}

// A send whose turn Codex started but whose store failed (a full disk
// after turn/start) answers Codex's turn, not a failure: a client told it
// failed would send the text again while the first turn runs (the long soak
// found this). The pending turn stays for ingestion to adopt.
func TestSendStartedButNotStoredAnswersTheTurn(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	root := t.TempDir()
	e.st.Workspace(storetest.Workspace{ID: "w", RootPath: root})
	e.st.Session(storetest.Session{ID: "s1", Workspace: "w", Thread: "thread-1", Cwd: root})
	rt := newRecordRuntime()
	rt.onSend = func(agent.SendTurnInput) {
		// The disk fills while turn/start is in flight.
		if _, err := e.st.DB.Exec(`CREATE TRIGGER full BEFORE INSERT ON workspace_agent_turns BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;`); err != nil {
			t.Error(err)
		}
	}
	e.withRuntime(rt)
	got, err := e.svc.Send(ctx, "w", "s1", "hello")
	if err != nil {
		t.Fatalf("send = %v, want Codex's turn (it runs)", err)
	}
	if got.TurnID != "turn-sent" || got.Status != turn.StatusIN_PROGRESS {
		t.Errorf("answered %q %s, want turn-sent IN_PROGRESS", got.TurnID, got.Status)
	}
	ids, _ := e.st.Client.Turn.Query().Where(turn.AgentSessionID("s1")).Select(turn.FieldTurnID).Strings(ctx)
	if len(ids) != 1 || !isPendingTurn(ids[0]) {
		t.Errorf("stored %q, want the pending turn kept for ingestion", ids)
	}
}

// Point 8: a pending turn the previous run left (killed between turn/start
// and its reply) is the turn Codex has and tuttid does not: at start it
// takes Codex's id, status and items, the user's text among them.
func TestReconcileSettlesPendingTurnFromCodex(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		history []agent.RuntimeTurn
		want    string // t1's status, or "" when no turn may remain
	}{
		{"codex has it", []agent.RuntimeTurn{{ID: "t0", Status: agent.TurnCompleted},
			{ID: "t1", Status: agent.TurnInterrupted, Messages: []agent.RuntimeMessage{userHello}}}, "INTERRUPTED"},
		{"codex never got it", []agent.RuntimeTurn{{ID: "t0", Status: agent.TurnCompleted}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t)
			ctx := context.Background()
			e.st.Workspace(storetest.Workspace{ID: "w"})
			e.st.Session(storetest.Session{ID: "s1", Workspace: "w", Thread: "thread-1", Status: agentsession.StatusWORKING,
				Turns: []storetest.Turn{{ID: "t0"}, {ID: pendingTurnPrefix + "x", Status: turn.StatusIN_PROGRESS}}})
			rt := newRecordRuntime()
			rt.SetHistory("thread-1", tc.history)
			e.withRuntime(rt)
			if err := e.svc.Reconcile(ctx); err != nil {
				t.Fatal(err)
			}
			ids, _ := e.st.Client.Turn.Query().Where(turn.AgentSessionID("s1")).Select(turn.FieldTurnID).Strings(ctx)
			if tc.want == "" {
				if len(ids) != 1 || ids[0] != "t0" {
					t.Errorf("turns %q, want only t0", ids)
				}
				return
			}
			tr, err := e.st.Client.Turn.Query().Where(turn.TurnID("t1")).Only(ctx)
			if err != nil {
				t.Fatalf("Codex's turn not stored: %v (turns %q)", err, ids)
			}
			if string(tr.Status) != tc.want || len(ids) != 2 {
				t.Errorf("t1 %s, turns %q; want %s and no pending turn", tr.Status, ids, tc.want)
			}
			if got := msgNow(e, "u1"); got != "completed hello" {
				t.Errorf("the user's text: %q", got)
			}
		})
	}
}

// A send refused because the disk is full (its turn could not be stored)
// gives the session back its status once the store takes writes again,
// though the write that would restore it failed too: before, the session
// stayed WORKING, refusing every send, until tuttid restarted (the soak's
// disk-full window found it once SQLite's checkpoints left the commits).
func TestRefusedSendReleasesTheSessionWhenTheDiskIsBack(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	root := t.TempDir()
	e.st.Workspace(storetest.Workspace{ID: "w", RootPath: root})
	e.st.Session(storetest.Session{ID: "s1", Workspace: "w", Thread: "thread-1", Cwd: root})
	e.withRuntime(newRecordRuntime())
	for _, full := range []string{
		`CREATE TRIGGER full_turns BEFORE INSERT ON workspace_agent_turns BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;`,
		`CREATE TRIGGER full_release BEFORE UPDATE OF status ON workspace_agent_sessions WHEN NEW.status <> 'WORKING' BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;`,
	} {
		if _, err := e.st.DB.Exec(full); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.svc.Send(ctx, "w", "s1", "hello"); err == nil {
		t.Fatal("send succeeded with a full disk")
	}
	status := func() agentsession.Status { return e.st.Client.AgentSession.GetX(ctx, "s1").Status }
	time.Sleep(300 * time.Millisecond)
	if st := status(); st != agentsession.StatusWORKING {
		t.Fatalf("status while the disk is full = %s, want WORKING (the release cannot be written)", st)
	}
	for _, tr := range []string{"full_turns", "full_release"} {
		if _, err := e.st.DB.Exec(`DROP TRIGGER ` + tr); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for status() != agentsession.StatusREADY {
		if time.Now().After(deadline) {
			t.Fatalf("status 10 s after the disk is back = %s, want READY", status())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := e.svc.Send(ctx, "w", "s1", "again"); err != nil {
		t.Fatalf("send after the disk is back: %v", err)
	}
}
