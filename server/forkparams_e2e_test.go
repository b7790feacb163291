package server_test

import (
	"bufio"
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"tuttid/codex/codextest"
	"tuttid/session"
)

// recordedParams returns the params of every request of method tuttid sent.
func recordedParams(t *testing.T, record, method string) []map[string]any {
	t.Helper()
	f, err := os.Open(record)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var m struct {
			Method string         `json:"method"`
			Params map[string]any `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.Method == method {
			out = append(out, m.Params)
		}
	}
	return out
}

// tuiThreadParams is what Codex's TUI (codex-rs/tui/src/app_server_session.rs,
// as /work/shared/codex-app-server.md reads it) sends for a thread/fork or
// thread/start from the same configuration: every field it fills, null
// where the configuration leaves it unset.
func tuiThreadParams(model, provider, cwd, approval, sandbox string, config map[string]any) map[string]any {
	return map[string]any{
		"model": model, "modelProvider": provider, "serviceTier": nil, "cwd": cwd,
		"approvalPolicy": approval, "approvalsReviewer": "user", "sandbox": sandbox,
		"config": config, "baseInstructions": nil, "developerInstructions": nil,
		"ephemeral": false, "threadSource": "user",
	}
}

// sameAsTUI: every field the TUI sets is sent with the same value, a field
// the TUI sends as null is absent or null, and nothing else is sent.
func sameAsTUI(t *testing.T, what string, got, tui map[string]any) {
	t.Helper()
	for k, want := range tui {
		v, ok := got[k]
		if want == nil {
			if ok && v != nil {
				t.Errorf("%s: %s = %v, the TUI sends null", what, k, v)
			}
			continue
		}
		if !ok || !reflect.DeepEqual(v, want) {
			t.Errorf("%s: %s = %v, the TUI sends %v", what, k, v, want)
		}
	}
	for k := range got {
		if _, ok := tui[k]; !ok {
			t.Errorf("%s: %s = %v is not a field the TUI sends", what, k, got[k])
		}
	}
}

func TestForkParamsMatchCodexTUIE2E(t *testing.T) {
	bin, record := codextest.RecordingBinary(t)
	h := startServer(t, harnessOpts{codexBin: bin})
	ws := h.createWorkspace("w")
	var root struct{ Workspace struct{ RootPath string } }
	h.must(`query($id: ID!) { workspace(id: $id) { rootPath } }`, map[string]any{"id": ws}, &root)
	var started struct {
		StartSession struct{ ID, ProviderSessionID string }
	}
	h.must(`mutation($in: StartSessionInput!) { startSession(input: $in) { id providerSessionId } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "title": "p", "settings": map[string]any{
			"model": "mock-model", "reasoningEffort": "high", "permissionModeId": "read-only", "browserUse": true,
		}}}, &started)
	parent := started.StartSession
	h.send(ws, parent.ID, "first")
	child, _, errs := h.fork(map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": session.NewID()})
	if len(errs) > 0 {
		t.Fatal(errs)
	}

	cfg := map[string]any{"model_reasoning_effort": "high", "web_search": "live"}
	starts := recordedParams(t, record, "thread/start")
	if len(starts) != 1 {
		t.Fatalf("thread/start sent %d times", len(starts))
	}
	// At start tuttid knows no model provider yet and leaves it to Codex's
	// config, which is where the TUI takes it from too.
	tuiStart := tuiThreadParams("mock-model", "", root.Workspace.RootPath, "never", "read-only", cfg)
	tuiStart["modelProvider"] = nil
	sameAsTUI(t, "thread/start", starts[0], tuiStart)

	forks := recordedParams(t, record, "thread/fork")
	if len(forks) != 1 {
		t.Fatalf("thread/fork sent %d times", len(forks))
	}
	tui := tuiThreadParams("mock-model", "mock", root.Workspace.RootPath, "never", "read-only", cfg)
	tui["threadId"] = parent.ProviderSessionID
	sameAsTUI(t, "thread/fork", forks[0], tui)

	// The child records what Codex said it is.
	if child.RuntimeContext[session.CtxModel] != "mock-model" || child.RuntimeContext[session.CtxModelProvider] != "mock" {
		t.Fatalf("child runtimeContext = %v", child.RuntimeContext)
	}
	var cwd struct{ Session struct{ Cwd string } }
	h.must(`query($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) { cwd } }`, map[string]any{"ws": ws, "id": child.ID}, &cwd)
	if cwd.Session.Cwd != root.Workspace.RootPath {
		t.Fatalf("child cwd = %q, want %q", cwd.Session.Cwd, root.Workspace.RootPath)
	}
}
