//go:build linux

package codex

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"tuttid/agent"
	"tuttid/codex/codextest"
)

// TestCodexEnvironmentHoldsNoTuttidSecret: the real app-server (the npm
// wrapper, the binary it runs, and the watchdog) and a command the agent
// runs have none of tuttid's TUTTID_* variables, the token first; Codex
// has what it needs.
func TestCodexEnvironmentHoldsNoTuttidSecret(t *testing.T) {
	bin := codextest.Binary(t)
	model := codextest.StartModelServer(t)
	const marker = "313.5"
	model.SetReply(func(r codextest.Request) codextest.Reply {
		if r.AfterToolCall() {
			return codextest.Reply{Text: "done"}
		}
		return codextest.Reply{Text: "running", FunctionCall: &codextest.FunctionCall{Cmd: "sleep " + marker}}
	})
	home := codextest.NewCodexHome(t, model.URL())
	const token = "tuttid-token-that-codex-must-not-see"
	t.Setenv("TUTTID_TOKEN", token)
	t.Setenv("TUTTID_ALLOWED_HOSTS", "example.test")
	t.Setenv("CODEX_HOME", home)
	t.Setenv("HTTPS_PROXY", "http://127.0.0.1:9")
	t.Setenv("NO_PROXY", "127.0.0.1,localhost")

	// Env nil: the app-server inherits tuttid's environment, as in tuttid.
	r := New(Config{Bin: bin, Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { _ = r.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.Launch(ctx); err != nil {
		t.Fatal(err)
	}
	p, err := r.current()
	if err != nil {
		t.Fatal(err)
	}
	pgid := p.Pid()
	var group []int
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if group = liveGroup(t, pgid); hasRealCodex(group) || time.Now().After(deadline) {
			break
		}
	}
	if !hasRealCodex(group) {
		t.Fatalf("no real codex in group %d: %v", pgid, describe(group))
	}
	t.Logf("codex process group: %v", describe(group))
	for _, pid := range group {
		env := environ(t, pid)
		checkNoSecret(t, pid, env, token)
		for _, name := range []string{"PATH", "CODEX_HOME", "HTTPS_PROXY", "NO_PROXY"} {
			if env[name] != os.Getenv(name) {
				t.Errorf("%s: %s=%q, want %q", describe([]int{pid}), name, env[name], os.Getenv(name))
			}
		}
	}

	// A command the agent runs.
	full := agent.ComposerSettings{PermissionModeID: agent.PermissionFullAccess}
	sess, err := r.Start(ctx, agent.StartInput{Provider: agent.ProviderCodex, Cwd: t.TempDir(), Settings: full})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.SendTurn(ctx, agent.SendTurnInput{Provider: agent.ProviderCodex, ThreadID: sess.ThreadID,
		Settings: full, Text: "run it"}); err != nil {
		t.Fatal(err)
	}
	var cmd int
	for deadline := time.Now().Add(30 * time.Second); cmd == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		cmd = findCmdline("sleep\x00" + marker)
	}
	if cmd == 0 {
		t.Fatal("the command never ran")
	}
	t.Cleanup(func() { _ = syscall.Kill(cmd, syscall.SIGKILL) })
	checkNoSecret(t, cmd, environ(t, cmd), token)
}

// environ reads a process's environment.
func environ(t *testing.T, pid int) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, kv := range bytes.Split(raw, []byte{0}) {
		if name, value, ok := strings.Cut(string(kv), "="); ok {
			env[name] = value
		}
	}
	return env
}

func checkNoSecret(t *testing.T, pid int, env map[string]string, token string) {
	t.Helper()
	for name, value := range env {
		if strings.HasPrefix(strings.ToUpper(name), "TUTTID_") || strings.Contains(value, token) {
			t.Errorf("%s: %s=%s", describe([]int{pid}), name, value)
		}
	}
}
