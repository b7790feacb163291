package server_test

import (
	"testing"
)

// On SQLite (one instance per database) every session is this instance's:
// AgentSession.instanceId is its id, for a started session and a fork's
// child alike, and commands run here.
func TestInstanceIDOnSQLite(t *testing.T) {
	h := startServer(t, harnessOpts{})
	ws := h.createWorkspace("instances")
	s := h.startSession(ws, "one")
	h.send(ws, s.ID, "hello")
	var fk struct {
		ForkSession struct {
			Session struct{ ID, InstanceID string }
		}
	}
	h.must(`mutation($in: ForkSessionInput!) { forkSession(input: $in) { session { id instanceId } } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": s.ID, "requestId": "r1"}}, &fk)
	var out struct{ Session struct{ InstanceID string } }
	h.must(`query($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) { instanceId } }`,
		map[string]any{"ws": ws, "id": s.ID}, &out)
	want := h.srv.Instances.ID()
	if want == "" || out.Session.InstanceID != want || fk.ForkSession.Session.InstanceID != want {
		t.Errorf("instanceId: session %q, child %q, want %q", out.Session.InstanceID, fk.ForkSession.Session.InstanceID, want)
	}
}
