package session

import (
	"context"
	"testing"

	"tuttid/agent"
	"tuttid/apperr"
	"tuttid/ent/approvalrequest"
	"tuttid/store/storetest"
)

// Ingestion stores a request, a resolution is recorded once (the first
// writer wins), the end of a turn cancels what is still pending, and a
// restart cancels what the previous process left.
func TestApprovalRequestLifecycle(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	e.st.Workspace(storetest.Workspace{ID: "w"})
	a := e.st.Session(storetest.Session{ID: "s1", Workspace: "w", Thread: "thread-1"})
	ask := func(id, turnID string) {
		t.Helper()
		err := e.svc.HandleEvent(ctx, agent.Event{Kind: agent.EventApprovalRequested, Provider: agent.ProviderCodex,
			ThreadID: "thread-1", TurnID: turnID, Approval: &agent.ApprovalRequest{
				ID: id, ThreadID: "thread-1", TurnID: turnID, Kind: agent.ApprovalCommand, Command: "ls",
				Details:            []byte(`{"command":"ls"}`),
				AvailableDecisions: []agent.ApprovalDecision{agent.DecisionAccept, agent.DecisionDecline, agent.DecisionCancel},
			}})
		if err != nil {
			t.Fatal(err)
		}
	}
	resolve := func(id string, d agent.ApprovalDecision, by string) {
		t.Helper()
		if err := e.svc.HandleEvent(ctx, agent.Event{Kind: agent.EventApprovalResolved, Provider: agent.ProviderCodex,
			ThreadID: "thread-1", Resolution: &agent.ApprovalResolution{ID: id, Decision: d, By: by}}); err != nil {
			t.Fatal(err)
		}
	}
	decision := func(id string) string {
		t.Helper()
		r, err := e.st.Client.ApprovalRequest.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Decision == nil {
			return ""
		}
		return string(*r.Decision) + "/" + r.ResolvedBy
	}

	ask("a1", "turn-1")
	ask("a2", "turn-1")
	ask("a3", "turn-2")
	if p, err := e.reads().PendingApprovals(ctx, a.ID); err != nil || len(p) != 3 || p[0].ID != "a1" {
		t.Fatalf("pending = %v, %v", p, err)
	}
	resolve("a1", agent.DecisionAccept, "user")
	resolve("a1", agent.DecisionCancel, "turn_ended") // too late: the first answer stays
	if got := decision("a1"); got != "ACCEPT/user" {
		t.Fatalf("a1 = %s", got)
	}
	// turn-1 ends: a2 was still pending.
	if err := e.svc.HandleEvent(ctx, agent.Event{Kind: agent.EventTurnCompleted, Provider: agent.ProviderCodex,
		ThreadID: "thread-1", TurnID: "turn-1", Status: string(agent.TurnInterrupted)}); err != nil {
		t.Fatal(err)
	}
	if got := decision("a2"); got != "CANCEL/turn_ended" {
		t.Fatalf("a2 = %s", got)
	}
	if got := decision("a3"); got != "" {
		t.Fatalf("a3 of another turn = %s", got)
	}
	// Answering a resolved request: already resolved, before the runtime.
	_, err := e.svc.RespondToApproval(ctx, RespondInput{WorkspaceID: "w", AgentSessionID: a.ID, ApprovalID: "a2", Decision: agent.DecisionAccept})
	if apperr.CodeOf(err) != apperr.ApprovalAlreadyResolved {
		t.Fatalf("answer a2: %v", err)
	}
	_, err = e.svc.RespondToApproval(ctx, RespondInput{WorkspaceID: "w", AgentSessionID: a.ID, ApprovalID: "nope", Decision: agent.DecisionAccept})
	if apperr.CodeOf(err) != apperr.ApprovalNotFound {
		t.Fatalf("answer unknown: %v", err)
	}
	_, err = e.svc.RespondToApproval(ctx, RespondInput{WorkspaceID: "w", AgentSessionID: a.ID, ApprovalID: "a3", Decision: agent.DecisionAcceptAlways})
	if apperr.CodeOf(err) != apperr.InvalidInput {
		t.Fatalf("answer with a decision not offered: %v", err)
	}
	_, err = e.svc.RespondToApproval(ctx, RespondInput{WorkspaceID: "w", AgentSessionID: a.ID, ApprovalID: "a3", Decision: "MAYBE"})
	if apperr.CodeOf(err) != apperr.InvalidInput {
		t.Fatalf("answer with an unknown decision: %v", err)
	}
	// A restart: what is left pending resolves as CANCEL.
	if err := e.svc.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if got := decision("a3"); got != "CANCEL/restart" {
		t.Fatalf("a3 after restart = %s", got)
	}
	if n, _ := e.st.Client.ApprovalRequest.Query().Where(approvalrequest.ResolvedAtIsNil()).Count(ctx); n != 0 {
		t.Fatalf("%d still pending", n)
	}
	all, err := e.reads().Approvals(ctx, a.ID)
	if err != nil || len(all) != 3 {
		t.Fatalf("approvals = %v, %v", all, err)
	}
}
