package server_test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"tuttid/codex/codextest"
)

// canaryListener counts the connections made to it: a sandboxed command
// that reached the network shows here, whatever it printed.
func canaryListener(t *testing.T) (port string, accepted *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted = new(atomic.Int64)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	_, port, _ = net.SplitHostPort(ln.Addr().String())
	return port, accepted
}

// attackScript is what a prompt-injected agent writes into the check (or
// the setup) it knows tuttid will run after its turn: write outside its
// worktree, read the home directory, tuttid's data and Codex's home,
// reach the network, copy the environment into the worktree for its next
// turn. Each line says whether it got through.
func attackScript(outside, dataCanary, codexHome, port string) string {
	home, _ := os.UserHomeDir()
	return strings.Join([]string{
		`echo pwned > ` + outside + ` && echo ESCAPED-WRITE || echo "write outside: refused"`,
		`cat ` + dataCanary + ` && echo READ-DATA || echo "tuttid data: refused"`,
		`ls -a ` + home + ` >/dev/null 2>&1 && echo READ-HOME || echo "home: refused"`,
		`cat ` + filepath.Join(codexHome, "config.toml") + ` >/dev/null 2>&1 && echo READ-CODEX-HOME || echo "codex home: refused"`,
		`git ls-remote http://127.0.0.1:` + port + `/x >/dev/null 2>&1; echo "network tried"`,
		`env > stolen-env.txt`,
		`echo done`,
	}, "\n")
}

var escapes = []string{"ESCAPED-WRITE", "READ-DATA", "READ-HOME", "READ-CODEX-HOME"}

// TestCheckHasNoMorePowerThanItsAgent is issue 42's first hole, on the
// real Codex: a workspace-write branch whose agent only rewrites check.sh
// inside its worktree (which Codex's sandbox allows) gets nothing more
// when tuttid runs the check: no file outside the worktree, no read of
// the home, tuttid's data or Codex's home, no connection, no secret of
// tuttid's environment copied into the worktree; the check's output says
// each was refused. A full-access branch's check runs as the person (its
// agent could do the same).
func TestCheckHasNoMorePowerThanItsAgent(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-canary-api-key")
	t.Setenv("TUTTID_CANARY", "tuttid-canary-setting")
	h := startServer(t, harnessOpts{})
	canary := filepath.Join(h.dataDir, "canary")
	if err := os.WriteFile(canary, []byte("data-canary\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	evilPort, evilConns := canaryListener(t)
	fullPort, fullConns := canaryListener(t)
	write := func(script string) string {
		return "cat > check.sh <<'TUTTID_EOF'\n" + script + "\nTUTTID_EOF"
	}
	h.model.SetModelReply("mock-evil", codextest.CommandThen(
		write(attackScript(filepath.Join(outside, "evil.txt"), canary, h.home, evilPort)), "rewrote the check"))
	h.model.SetModelReply("mock-full", codextest.CommandThen(
		write(attackScript(filepath.Join(outside, "full.txt"), canary, h.home, fullPort)), "rewrote the check"))

	repo := gitRepo(t)
	ws := h.createWorkspaceAt("sandbox", repo, "")
	var wsOut struct {
		UpdateWorkspace struct{ CommandSandbox string }
	}
	h.must(`mutation($in: UpdateWorkspaceInput!) { updateWorkspace(input: $in) { commandSandbox } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "checkCommand": "sh ./check.sh"}}, &wsOut)
	if wsOut.UpdateWorkspace.CommandSandbox != "AGENT" {
		t.Fatalf("a new workspace's commandSandbox = %q, want AGENT", wsOut.UpdateWorkspace.CommandSandbox)
	}
	parent := h.startSession(ws, "parent")
	turn1 := h.send(ws, parent.ID, "hello")
	x, _, errs := h.explore(map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": "sandbox-1",
		"lastTurnId": turn1, "prompt": "improve the check",
		"branches": []any{
			map[string]any{"name": "evil", "settings": map[string]any{"model": "mock-evil"}},
			map[string]any{"name": "full", "settings": map[string]any{"model": "mock-full", "permissionModeId": "full-access"}},
		}})
	if len(errs) > 0 {
		t.Fatalf("exploreSession: %+v", errs)
	}
	x = h.settledExploration(ws, parent.ID, x.ID)
	evil, full := x.branch(t, "evil"), x.branch(t, "full")

	if evil.Check == nil || evil.Check.State != "PASSED" {
		t.Fatalf("evil's check = %+v, want it run (PASSED: the script ends with echo)", evil.Check)
	}
	for _, want := range []string{"write outside: refused", "tuttid data: refused", "home: refused", "codex home: refused", "done"} {
		if !strings.Contains(evil.Check.Output, want) {
			t.Errorf("evil's check output lacks %q:\n%s", want, evil.Check.Output)
		}
	}
	for _, bad := range append(escapes, "data-canary") {
		if strings.Contains(evil.Check.Output, bad) {
			t.Errorf("evil's check got through (%s):\n%s", bad, evil.Check.Output)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "evil.txt")); err == nil {
		t.Error("evil's check wrote outside its worktree")
	}
	if n := evilConns.Load(); n != 0 {
		t.Errorf("evil's check reached the network (%d connections)", n)
	}
	env := readFile(t, filepath.Join(h.worktreesDir(ws), evil.Session.ID, "stolen-env.txt"))
	for _, secret := range []string{"sk-canary-api-key", "tuttid-canary-setting", h.token} {
		if secret != "" && strings.Contains(env, secret) {
			t.Errorf("evil's check copied a secret of tuttid's environment into its worktree: %q", secret)
		}
	}

	// The full-access branch's agent could do all this itself: its check
	// runs as the person.
	if full.Check == nil || full.Check.State != "PASSED" || !strings.Contains(full.Check.Output, "ESCAPED-WRITE") {
		t.Errorf("full's check = %+v, want it run as the person", full.Check)
	}
	if got := readFile(t, filepath.Join(outside, "full.txt")); got != "pwned\n" {
		t.Errorf("full's check's file outside = %q", got)
	}
	if fullConns.Load() == 0 {
		t.Error("full's check did not reach the network (it runs as the person)")
	}
}

// TestWorktreeSetupHasNoMorePowerThanTheChild: the workspace's setup runs
// files of the forked checkpoint (an agent may have written them): in
// Codex's sandbox it cannot write outside the worktree, read tuttid's data
// or reach the network, and the fork still succeeds with the setup's
// output saying so. With commandSandbox NONE (the person's call, once per
// workspace) the same setup runs as the person.
func TestWorktreeSetupHasNoMorePowerThanTheChild(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-canary-api-key")
	h := startServer(t, harnessOpts{})
	canary := filepath.Join(h.dataDir, "canary")
	if err := os.WriteFile(canary, []byte("data-canary\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	port, conns := canaryListener(t)
	repo := gitRepo(t)
	ws := h.createWorkspaceAt("setup", repo, attackScript(filepath.Join(outside, "setup.txt"), canary, h.home, port))
	parent := h.startSession(ws, "parent")
	h.send(ws, parent.ID, "hello")

	child, _, errs := h.fork(map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": "setup-1",
		"code": map[string]any{"mode": "WORKTREE"}})
	if len(errs) > 0 {
		t.Fatalf("fork: %v", errs)
	}
	setup := h.childCode(child.ID).Setup
	for _, want := range []string{"write outside: refused", "tuttid data: refused", "home: refused", "codex home: refused", "done"} {
		if !strings.Contains(setup, want) {
			t.Errorf("the setup's output lacks %q:\n%s", want, setup)
		}
	}
	for _, bad := range append(escapes, "data-canary") {
		if strings.Contains(setup, bad) {
			t.Errorf("the setup got through (%s):\n%s", bad, setup)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "setup.txt")); err == nil {
		t.Error("the setup wrote outside the worktree")
	}
	if n := conns.Load(); n != 0 {
		t.Errorf("the setup reached the network (%d connections)", n)
	}
	if env := readFile(t, filepath.Join(h.worktreesDir(ws), child.ID, "stolen-env.txt")); strings.Contains(env, "sk-canary-api-key") {
		t.Error("the setup copied OPENAI_API_KEY into the worktree")
	}

	var out struct {
		UpdateWorkspace struct{ CommandSandbox string }
	}
	h.must(`mutation($in: UpdateWorkspaceInput!) { updateWorkspace(input: $in) { commandSandbox } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "commandSandbox": "NONE"}}, &out)
	if out.UpdateWorkspace.CommandSandbox != "NONE" {
		t.Fatalf("commandSandbox = %q, want NONE", out.UpdateWorkspace.CommandSandbox)
	}
	if _, _, errs := h.fork(map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": "setup-2",
		"code": map[string]any{"mode": "WORKTREE"}}); len(errs) > 0 {
		t.Fatalf("fork: %v", errs)
	}
	if got := readFile(t, filepath.Join(outside, "setup.txt")); got != "pwned\n" {
		t.Errorf("with commandSandbox NONE the setup's file outside = %q, want it written", got)
	}
	if conns.Load() == 0 {
		t.Error("with commandSandbox NONE the setup did not reach the network")
	}
	bad := h.do(`mutation($in: UpdateWorkspaceInput!) { updateWorkspace(input: $in) { commandSandbox } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "commandSandbox": "SOMETIMES"}}, nil)
	if len(bad) == 0 {
		t.Error("commandSandbox SOMETIMES was taken")
	}
}
