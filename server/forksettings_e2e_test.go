package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"tuttid/session"
)

// TestForkSettingsReachModelE2E: a fork's settings (another model and
// effort, full access, plan mode) are the child's, and its next turn runs
// with them: the model server sees the other model's name and effort,
// while the parent's next turn keeps its own.
func TestForkSettingsReachModelE2E(t *testing.T) {
	h := startServer(t, harnessOpts{})
	ws := h.createWorkspace("w")
	var started struct {
		StartSession struct{ ID, ProviderSessionID string }
	}
	h.must(`mutation($in: StartSessionInput!) { startSession(input: $in) { id providerSessionId } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "settings": map[string]any{
			"model": "mock-model", "reasoningEffort": "low", "permissionModeId": "workspace-write"}}}, &started)
	parent := started.StartSession
	first := h.send(ws, parent.ID, "first")
	child, _, errs := h.fork(map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": session.NewID(),
		"lastTurnId": first, "settings": map[string]any{"model": "mock-model-large", "reasoningEffort": "high",
			"permissionModeId": "full-access", "planMode": true}})
	if len(errs) > 0 {
		t.Fatalf("fork: %+v", errs)
	}
	var got struct {
		Session struct {
			Settings struct {
				Model, ReasoningEffort, PermissionModeID string
				PlanMode                                 bool
			}
		}
	}
	h.must(`query($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) { settings { model reasoningEffort permissionModeId planMode } } }`,
		map[string]any{"ws": ws, "id": child.ID}, &got)
	if s := got.Session.Settings; s.Model != "mock-model-large" || s.ReasoningEffort != "high" || s.PermissionModeID != "full-access" || !s.PlanMode {
		t.Fatalf("child settings = %+v", s)
	}
	h.send(ws, child.ID, "second, in the child")
	h.send(ws, parent.ID, "second, in the parent")

	type body struct {
		Model     string
		Reasoning *struct{ Effort string }
	}
	last := func(thread string) (body, string) {
		t.Helper()
		reqs := h.model.RequestsFor(thread)
		if len(reqs) == 0 {
			t.Fatalf("no model request of thread %s", thread)
		}
		r := reqs[len(reqs)-1]
		var b body
		if err := json.Unmarshal(r.Body, &b); err != nil {
			t.Fatal(err)
		}
		return b, string(r.Body)
	}
	cb, craw := last(child.ProviderSessionID)
	if cb.Model != "mock-model-large" || cb.Reasoning == nil || cb.Reasoning.Effort != "high" {
		t.Errorf("child's request: model %q reasoning %+v; want mock-model-large, high", cb.Model, cb.Reasoning)
	}
	if !strings.Contains(craw, "danger-full-access") {
		t.Errorf("child's request does not carry full access (danger-full-access)")
	}
	pb, praw := last(parent.ProviderSessionID)
	if pb.Model != "mock-model" || pb.Reasoning == nil || pb.Reasoning.Effort != "low" {
		t.Errorf("parent's request: model %q reasoning %+v; want mock-model, low", pb.Model, pb.Reasoning)
	}
	if strings.Contains(praw, "danger-full-access") {
		t.Errorf("parent's request carries the child's full access")
	}
}
