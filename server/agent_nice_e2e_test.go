package server_test

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"tuttid/codex/codextest"
	"tuttid/priority"
)

// TestAgentWorkRunsAtAgentNice: with server.Config.AgentNice (tuttid
// serve's --agent-nice), what the agent runs yields the CPU to the
// person's programs: a command Codex runs in an exploration's branch (so
// the Codex app-server that started it), the workspace's worktree setup
// and the exploration's check each read their own nice value from
// /proc/self/stat into the branch's worktree, and each is AgentNice; the
// server (this test process) keeps its own.
func TestAgentWorkRunsAtAgentNice(t *testing.T) {
	const nice = 7 // not a value anything here would have by chance
	own := ownNice(t)
	if own >= nice {
		t.Fatalf("this test runs at nice %d: it shows nothing at %d", own, nice)
	}
	h := startServer(t, harnessOpts{agentNice: nice})
	repo := gitRepo(t)
	const readNice = `cut -d' ' -f19 /proc/self/stat > `
	ws := h.createWorkspaceAt("nice", repo, readNice+"setup-nice.txt")
	parent := h.startSession(ws, "parent")
	turn := h.send(ws, parent.ID, "hello")
	h.model.SetModelReply("mock-nice", codextest.CommandThen(readNice+"agent-nice.txt", "read my nice value"))

	x, _, errs := h.explore(map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": "nice-1", "lastTurnId": turn,
		"prompt": "read your nice value", "checkCommand": readNice + "check-nice.txt",
		"branches": []any{
			map[string]any{"name": "a", "settings": map[string]any{"model": "mock-nice"}},
			map[string]any{"name": "b", "settings": map[string]any{"model": "mock-nice"}},
		}})
	if len(errs) > 0 {
		t.Fatalf("exploreSession: %+v", errs)
	}
	x = h.settledExploration(ws, parent.ID, x.ID)
	for _, b := range x.Branches {
		if b.Session == nil || b.Check == nil || b.Check.State != "PASSED" {
			t.Fatalf("branch %s: %+v, want a session and a passed check", b.Name, b)
		}
		dir := filepath.Join(h.worktreesDir(ws), b.Session.ID)
		for _, f := range []string{"setup-nice.txt", "agent-nice.txt", "check-nice.txt"} {
			if got := strings.TrimSpace(readFile(t, filepath.Join(dir, f))); got != strconv.Itoa(nice) {
				t.Errorf("branch %s: %s = %q, want %d", b.Name, f, got, nice)
			}
		}
	}
	if got := ownNice(t); got != own {
		t.Errorf("the server's own nice value went from %d to %d", own, got)
	}
}

// ownNice is this process's nice value.
func ownNice(t *testing.T) int {
	t.Helper()
	n, err := priority.Own()
	if err != nil {
		t.Fatal(err)
	}
	return n
}
