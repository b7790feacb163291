package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// On the real Codex: a session started in a directory inside the root,
// which is then swapped for a symlink to outside the root, cannot be
// forked (the cwd is checked again, as its real path, before Codex is
// asked), and nothing is created (issue 22, point 15).
func TestForkRefusesCwdSwappedOutOfRoot(t *testing.T) {
	h := startServer(t, harnessOpts{})
	ws := h.createWorkspace("demo")
	root := h.srv.Store.Client.Workspace.GetX(t.Context(), ws).RootPath
	app := filepath.Join(root, "app")
	if err := os.Mkdir(app, 0o700); err != nil {
		t.Fatal(err)
	}
	var out struct{ StartSession sessionView }
	h.must(`mutation($in: StartSessionInput!) { startSession(input: $in) { `+sessionFields+` } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "title": "Parent", "cwd": "app"}}, &out)
	parent := out.StartSession
	h.send(ws, parent.ID, "hello")

	outside := t.TempDir()
	if err := os.Rename(app, filepath.Join(root, "app-old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, app); err != nil {
		t.Fatal(err)
	}
	before := h.srv.Store.Client.AgentSession.Query().CountX(t.Context())
	_, _, errs := h.fork(map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": "r-swapped"})
	if len(errs) != 1 || errs[0].Code() != "invalid_input" || !strings.Contains(errs[0].Message, "outside the workspace root") {
		t.Fatalf("fork of a session whose cwd now leads out of the root: %+v, want invalid_input", errs)
	}
	if after := h.srv.Store.Client.AgentSession.Query().CountX(t.Context()); after != before {
		t.Errorf("sessions %d -> %d: a child was made outside the root", before, after)
	}
	if n := h.srv.Store.Client.ForkJournal.Query().CountX(t.Context()); n != 0 {
		t.Errorf("%d journal entries: Codex was asked to fork", n)
	}
}
