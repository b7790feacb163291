package server_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"tuttid/agent/agenttest"
	"tuttid/codex/codextest"
)

// TestSessionContinuesAfterRestart stops tuttid (and with it Codex) and
// starts it again on the same database: the session continues on its
// thread, with its history.
func TestSessionContinuesAfterRestart(t *testing.T) {
	first := startServer(t, harnessOpts{})
	ws := first.createWorkspace("demo")
	s := first.startSession(ws, "Survivor")
	first.send(ws, s.ID, "before restart")
	first.stop()

	second := startServer(t, harnessOpts{dbPath: first.dbPath, model: first.model, home: first.home})
	second.send(ws, s.ID, "after restart")
	got := second.session(ws, s.ID)
	if texts := userTexts(got); !slices.Equal(texts, []string{"before restart", "after restart"}) {
		t.Errorf("stored user texts = %q", texts)
	}
	reqs := second.model.RequestsFor(s.ProviderSessionID)
	if texts := reqs[len(reqs)-1].UserTexts(); !slices.Equal(texts, []string{"before restart", "after restart"}) {
		t.Errorf("model saw %q after the restart; the thread lost its history", texts)
	}
}

// TestInterruptTurn interrupts a slow turn: the turn ends INTERRUPTED and
// the session is usable again; interrupting it again is agent.session_not_busy.
func TestInterruptTurn(t *testing.T) {
	h := startServer(t, harnessOpts{})
	h.model.SetReply(func(r codextest.Request) codextest.Reply {
		reply := codextest.DefaultReply(r)
		if r.LastUserText() == "slow" {
			reply.Delay = 30 * time.Second
		}
		return reply
	})
	ws := h.createWorkspace("demo")
	s := h.startSession(ws, "")
	var out struct{ SendMessage struct{ ID string } }
	h.must(`mutation($in: SendMessageInput!) { sendMessage(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": s.ID, "text": "slow"}}, &out)
	turnID := out.SendMessage.ID
	// The turn is active in Codex once the model has been asked.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := h.model.WaitRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if got := h.session(ws, s.ID); got.Status != "WORKING" {
		t.Fatalf("status while the turn runs = %s", got.Status)
	}
	// A second message while working is refused.
	errs := h.do(`mutation($in: SendMessageInput!) { sendMessage(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": s.ID, "text": "again"}}, nil)
	if len(errs) != 1 || errs[0].Code() != "agent.session_busy" {
		t.Errorf("send while working: %+v", errs)
	}
	// So is a whole-conversation fork.
	_, _, errs = h.fork(map[string]any{"workspaceId": ws, "agentSessionId": s.ID, "requestId": "while-working"})
	if len(errs) != 1 || errs[0].Code() != "agent.fork_session_not_idle" {
		t.Errorf("fork while working: %+v", errs)
	}
	_, _, errs = h.fork(map[string]any{"workspaceId": ws, "agentSessionId": s.ID, "requestId": "from-running", "lastTurnId": turnID})
	if len(errs) != 1 || errs[0].Code() != "agent.fork_turn_in_progress" {
		t.Errorf("fork from the running turn: %+v", errs)
	}
	h.must(`mutation($in: InterruptTurnInput!) { interruptTurn(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": s.ID, "turnId": turnID}}, nil)
	got := h.waitTurn(ws, s.ID, turnID, "INTERRUPTED")
	if got.Status != "READY" {
		t.Errorf("status after interrupt = %s", got.Status)
	}
	errs = h.do(`mutation($in: InterruptTurnInput!) { interruptTurn(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": s.ID, "turnId": turnID}}, nil)
	if len(errs) != 1 || errs[0].Code() != "agent.session_not_busy" {
		t.Errorf("second interrupt: %+v", errs)
	}
	h.send(ws, s.ID, "fast")
}

// TestDeleteSession deletes a forked parent: its row, messages and the
// lineage rows go; the child stays, now a root.
func TestDeleteSession(t *testing.T) {
	h := startServer(t, harnessOpts{})
	ws := h.createWorkspace("demo")
	parent := h.startSession(ws, "Doomed")
	h.send(ws, parent.ID, "hi")
	child, _, errs := h.fork(map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": "r1"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var del struct{ DeleteSession string }
	h.must(`mutation($in: DeleteSessionInput!) { deleteSession(input: $in) }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": parent.ID}}, &del)
	if del.DeleteSession != parent.ID {
		t.Errorf("deleteSession = %q", del.DeleteSession)
	}
	var out struct {
		Gone  *struct{ ID string }
		Child struct {
			Parent    *struct{ ID string }
			Ancestors []struct{ ID string }
		}
	}
	h.must(`query($ws: ID!, $p: ID!, $c: ID!) { gone: session(workspaceId: $ws, id: $p) { id }
	  child: session(workspaceId: $ws, id: $c) { parent { id } ancestors { id } } }`,
		map[string]any{"ws": ws, "p": parent.ID, "c": child.ID}, &out)
	if out.Gone != nil || out.Child.Parent != nil || len(out.Child.Ancestors) != 0 {
		t.Errorf("after delete: %+v", out)
	}
	errs = h.do(`mutation($in: DeleteSessionInput!) { deleteSession(input: $in) }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": parent.ID}}, nil)
	if len(errs) != 1 || errs[0].Code() != "agent.session_not_found" {
		t.Errorf("second delete: %+v", errs)
	}
	// The child keeps working on its own thread.
	h.send(ws, child.ID, "still here")
}

// TestRestartClosesTurnsLeftRunning: a turn that was running when tuttid
// stopped died with its Codex child; at the next start it is FAILED and the
// session READY, so it can be continued and forked.
func TestRestartClosesTurnsLeftRunning(t *testing.T) {
	first := startServer(t, harnessOpts{runtime: agenttest.Idle()})
	ws := first.createWorkspace("demo")
	id := first.seedSession(ws, "codex", "thread-1")
	ctx := t.Context()
	if err := first.srv.Store.Client.AgentSession.UpdateOneID(id).SetStatus("WORKING").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := first.srv.Store.Client.Turn.Create().SetTurnID("t1").SetAgentSessionID(id).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	first.stop()

	second := startServer(t, harnessOpts{runtime: agenttest.Idle(), dbPath: first.dbPath})
	got := second.session(ws, id)
	if got.Status != "READY" || len(got.Turns) != 1 || got.Turns[0].Status != "FAILED" {
		t.Errorf("after restart: status %s turns %+v", got.Status, got.Turns)
	}
}
