package server_test

import (
	"strings"
	"testing"

	"tuttid/codex/codextest"
)

// agentGit is what the agent runs in its worktree: git's read commands,
// then a commit; each prints its exit status.
const agentGit = `echo x > wrote.txt 2>/dev/null; echo "write=$?"; git status --porcelain >/dev/null 2>&1; echo "status=$?"; ` +
	`git diff --stat >/dev/null 2>&1; echo "diff=$?"; ` +
	`git log --oneline -1 >/dev/null 2>&1; echo "log=$?"; ` +
	`git -c user.name=agent -c user.email=agent@example.com commit -qam agent-commit >/dev/null 2>&1; echo "commit=$?"`

// TestAgentGitInWorktreeChild is point 8 on the real Codex: in a worktree
// child the agent's git status, diff and log work in every permission
// mode; commit (which writes the parent repository's .git, where the
// worktree's git directory lives) works only where the sandbox lets it
// write there: full-access, not read-only or workspace-write (whose
// writable root is the worktree; /tmp is left out here as it is for a
// repository in a home directory).
func TestAgentGitInWorktreeChild(t *testing.T) {
	model := codextest.StartModelServer(t)
	home := codextest.NewCodexHome(t, model.URL())
	codextest.AppendConfig(t, home, codextest.StrictWorkspaceWrite)
	h := startServer(t, harnessOpts{model: model, home: home})
	repo := gitRepo(t)
	ws := h.createWorkspaceAt("code", repo, "")
	parent := h.startSession(ws, "parent")
	h.send(ws, parent.ID, "hello")
	model.SetReply(func(r codextest.Request) codextest.Reply { return replyWithCommand(r, agentGit) })

	want := map[string]string{"read-only": "1", "workspace-write": "1", "full-access": "0"}
	for _, mode := range []string{"read-only", "workspace-write", "full-access"} {
		t.Run(mode, func(t *testing.T) {
			child, _, errs := h.fork(map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": "git-" + mode,
				"code": map[string]any{"mode": "WORKTREE"}, "settings": map[string]any{"permissionModeId": mode}})
			if len(errs) > 0 {
				t.Fatalf("fork: %v", errs)
			}
			wt := childCwd(t, h, child.ID)
			head := git(t, wt, "rev-parse", "HEAD")
			h.send(ws, child.ID, "run git")
			var out string
			for _, r := range model.RequestsFor(child.ProviderSessionID) {
				for _, o := range r.FunctionCallOutputs() {
					out += o.Output
				}
			}
			for _, step := range []string{"status=0", "diff=0", "log=0"} {
				if !strings.Contains(out, step) {
					t.Errorf("%s: want %s in the command's output %q", mode, step, out)
				}
			}
			// The worktree is the child's writable root in workspace-write.
			if wrote := strings.Contains(out, "write=0"); wrote != (mode != "read-only") {
				t.Errorf("%s: writing in the worktree succeeded=%v (output %q)", mode, wrote, out)
			}
			committed := strings.Contains(out, "commit=0")
			if committed != (want[mode] == "0") {
				t.Errorf("%s: commit succeeded=%v, want %v (output %q)", mode, committed, want[mode] == "0", out)
			}
			moved := git(t, wt, "rev-parse", "HEAD") != head
			if moved != committed {
				t.Errorf("%s: HEAD moved=%v but commit=%v", mode, moved, committed)
			}
			t.Logf("%s: %q", mode, out)
		})
	}
}
