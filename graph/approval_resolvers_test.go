package graph_test

import (
	"testing"
	"time"

	"github.com/99designs/gqlgen/client"

	"tuttid/ent/approvalrequest"
)

func TestApprovalFields(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.workspace("ws")
	e.session("ws", "s", "S", 0, 0)
	decided := approvalrequest.DecisionDECLINE
	resolved := seedTime.Add(time.Minute)
	if err := e.db.Client.ApprovalRequest.Create().SetID("a1").SetAgentSessionID("s").SetWorkspaceID("ws").
		SetTurnID("t1").SetItemID("call_1").SetKind(approvalrequest.KindCOMMAND).SetCommand("rm -rf build").
		SetCwd("/work/ws").SetReason("clean up").SetDetails([]byte(`{"command":"rm -rf build"}`)).
		SetAvailableDecisions([]string{"ACCEPT", "DECLINE", "CANCEL"}).SetCreatedAt(seedTime).
		SetResolvedAt(resolved).SetDecision(decided).Exec(e.ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.db.Client.ApprovalRequest.Create().SetID("a2").SetAgentSessionID("s").SetWorkspaceID("ws").
		SetTurnID("t1").SetKind(approvalrequest.KindUSER_INPUT).
		SetAvailableDecisions([]string{"ACCEPT", "DECLINE", "CANCEL"}).SetCreatedAt(seedTime.Add(time.Second)).Exec(e.ctx); err != nil {
		t.Fatal(err)
	}
	type approval struct {
		ID, AgentSessionID, TurnID, Kind string
		ItemID, Command, Cwd, Reason     *string
		Details                          map[string]any
		AvailableDecisions               []string
		ResolvedAt                       *string
		Decision                         *string
	}
	var out struct {
		Session struct{ PendingApprovals, Approvals []approval }
	}
	const fields = `id agentSessionId turnId kind itemId command cwd reason details availableDecisions resolvedAt decision`
	e.post(`query { session(workspaceId: "ws", id: "s") { pendingApprovals { `+fields+` } approvals { `+fields+` } } }`, &out)
	s := out.Session
	if len(s.PendingApprovals) != 1 || s.PendingApprovals[0].ID != "a2" || len(s.Approvals) != 2 {
		t.Fatalf("pending %+v, all %+v", s.PendingApprovals, s.Approvals)
	}
	a1, a2 := s.Approvals[0], s.Approvals[1]
	if a1.ID != "a1" || a1.AgentSessionID != "s" || a1.TurnID != "t1" || a1.Kind != "COMMAND" || *a1.ItemID != "call_1" ||
		*a1.Command != "rm -rf build" || *a1.Cwd != "/work/ws" || *a1.Reason != "clean up" || a1.Details["command"] != "rm -rf build" ||
		len(a1.AvailableDecisions) != 3 || a1.ResolvedAt == nil || a1.Decision == nil || *a1.Decision != "DECLINE" {
		t.Errorf("resolved approval %+v", a1)
	}
	if a2.Kind != "USER_INPUT" || a2.ItemID != nil || a2.Command != nil || a2.Cwd != nil || a2.Reason != nil ||
		len(a2.Details) != 0 || a2.ResolvedAt != nil || a2.Decision != nil {
		t.Errorf("pending approval %+v", a2)
	}

	const respond = `mutation($in: RespondToApprovalInput!) { respondToApproval(input: $in) { id } }`
	cases := []struct {
		in   map[string]any
		want string
	}{
		{map[string]any{"workspaceId": "ws", "agentSessionId": "s", "approvalId": "nope", "decision": "ACCEPT"}, "agent.approval_not_found"},
		{map[string]any{"workspaceId": "ws", "agentSessionId": "s", "approvalId": "a1", "decision": "ACCEPT"}, "agent.approval_already_resolved"},
		{map[string]any{"workspaceId": "ws", "agentSessionId": "nope", "approvalId": "a2", "decision": "ACCEPT"}, "agent.session_not_found"},
		{map[string]any{"workspaceId": "ws", "agentSessionId": "s", "approvalId": "a2", "decision": "ACCEPT", "answers": []any{1}}, "invalid_input"},
	}
	for _, c := range cases {
		if code := e.postErr(respond, client.Var("in", c.in)); code != c.want {
			t.Errorf("respondToApproval(%v) answered %s, want %s", c.in, code, c.want)
		}
	}
}
