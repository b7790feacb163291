package graph_test

import (
	"testing"

	"github.com/99designs/gqlgen/client"
)

func TestSessionForkFields(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.workspace("ws")
	e.session("ws", "p", "P", 0, 0)
	e.session("ws", "c1", "", 1, 0)
	e.session("ws", "c2", "", 2, 0)
	e.fork("ws", "p", "c1", "p-t1", 1234)
	e.fork("ws", "p", "c2", "", 1235)
	type lineage struct {
		SourceAgentSessionID, TargetAgentSessionID, SourceProviderSessionID, TargetProviderSessionID, Provider string
		LastTurnID                                                                                             *string
		ForkedAtUnixMs                                                                                         int64
	}
	var out struct {
		C1 struct{ ForkedFrom lineage }
		C2 struct{ ForkedFrom lineage }
		P  struct{ ForkedFrom *lineage }
	}
	const fields = `forkedFrom { sourceAgentSessionId targetAgentSessionId sourceProviderSessionId targetProviderSessionId provider lastTurnId forkedAtUnixMs }`
	e.post(`query { c1: session(workspaceId: "ws", id: "c1") { `+fields+` } c2: session(workspaceId: "ws", id: "c2") { `+fields+` }
	  p: session(workspaceId: "ws", id: "p") { `+fields+` } }`, &out)
	want := lineage{SourceAgentSessionID: "p", TargetAgentSessionID: "c1", SourceProviderSessionID: "thread-p",
		TargetProviderSessionID: "thread-c1", Provider: "codex", ForkedAtUnixMs: 1234}
	got := out.C1.ForkedFrom
	if got.LastTurnID == nil || *got.LastTurnID != "p-t1" {
		t.Errorf("c1 lastTurnId %v, want p-t1", got.LastTurnID)
	}
	got.LastTurnID = nil
	if got != want {
		t.Errorf("c1 forkedFrom %+v, want %+v", got, want)
	}
	if out.C2.ForkedFrom.LastTurnID != nil {
		t.Errorf("a whole-conversation fork has lastTurnId %q, want null", *out.C2.ForkedFrom.LastTurnID)
	}
	if out.P.ForkedFrom != nil {
		t.Errorf("a root has forkedFrom %+v", out.P.ForkedFrom)
	}
}

func TestForkSessionRejects(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.workspace("ws")
	e.session("ws", "p", "P", 0, 0)
	const m = `mutation($in: ForkSessionInput!) { forkSession(input: $in) { session { id } } }`
	cases := []struct {
		in   map[string]any
		want string
	}{
		{map[string]any{"workspaceId": "ws", "agentSessionId": "nope", "requestId": "r1"}, "agent.fork_parent_not_found"},
		{map[string]any{"workspaceId": "ws", "agentSessionId": "p", "requestId": "r2", "targetAgentSessionId": "p"}, "agent.fork_target_conflict"},
		{map[string]any{"workspaceId": "ws", "agentSessionId": "p", "requestId": "r3", "lastTurnId": "nope"}, "agent.fork_turn_not_found"},
		{map[string]any{"workspaceId": "ws", "agentSessionId": "p", "requestId": "r4", "settings": map[string]any{"permissionModeId": "root"}}, "invalid_input"},
	}
	for _, c := range cases {
		if code := e.postErr(m, client.Var("in", c.in)); code != c.want {
			t.Errorf("forkSession(%v) answered %s, want %s", c.in, code, c.want)
		}
	}
}
