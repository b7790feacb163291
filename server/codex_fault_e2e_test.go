package server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"tuttid/agent"
	"tuttid/codex"
	"tuttid/codex/codextest"
	"tuttid/ent/forkjournal"
	"tuttid/ent/turn"
)

// killableCodex is the real codex app-server behind a wrapper script that
// records its pid, so a test can kill -9 it (its process group: the npm
// wrapper and the binary) at a chosen request.
type killableCodex struct {
	t       *testing.T
	rt      *codex.Runtime
	pidFile string
	mu      sync.Mutex
	killOn  string // the method whose sending kills codex, once
}

func startKillableCodex(t *testing.T, model *codextest.ModelServer) *killableCodex {
	t.Helper()
	dir := t.TempDir()
	k := &killableCodex{t: t, pidFile: filepath.Join(dir, "codex.pid")}
	script := filepath.Join(dir, "codex")
	body := fmt.Sprintf("#!/bin/sh\necho $$ > %q\nexec %q \"$@\"\n", k.pidFile, codextest.Binary(t))
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	home := codextest.NewCodexHome(t, model.URL())
	k.rt = codex.New(codex.Config{
		Bin: script, Env: append(os.Environ(), "CODEX_HOME="+home), Logger: testLogger(t),
		RequestTimeout: 30 * time.Second, RestartBackoffMin: 100 * time.Millisecond,
		OnSent: func(method string) {
			k.mu.Lock()
			hit := k.killOn != "" && k.killOn == method
			if hit {
				k.killOn = ""
			}
			k.mu.Unlock()
			if hit {
				k.kill()
			}
		},
	})
	t.Cleanup(func() { _ = k.rt.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := k.rt.Launch(ctx); err != nil {
		t.Fatal(err)
	}
	return k
}

// kill sends SIGKILL to the app-server's process group.
func (k *killableCodex) kill() {
	b, err := os.ReadFile(k.pidFile)
	if err != nil {
		k.t.Errorf("codex pid: %v", err)
		return
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		k.t.Errorf("codex pid %q: %v", b, err)
		return
	}
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		k.t.Errorf("kill codex: %v", err)
	}
}

func (k *killableCodex) killWhenSent(method string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.killOn = method
}

// TestCodexKilledDuringFork: the app-server dies while it handles
// thread/fork. The fork fails with agent.fork_provider_failed, no child
// exists, any thread Codex made is archived and recorded, and the next
// fork works.
func TestCodexKilledDuringFork(t *testing.T) {
	model := codextest.StartModelServer(t)
	k := startKillableCodex(t, model)
	h := startServer(t, harnessOpts{runtime: k.rt})
	ws := h.createWorkspace("fault")
	parent := h.startSession(ws, "Parent")
	h.send(ws, parent.ID, "hello")
	parent = h.session(ws, parent.ID)
	started := time.Now()

	k.killWhenSent("thread/fork")
	_, _, errs := h.fork(map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": "req-killed"})
	if len(errs) != 1 || errs[0].Code() != "agent.fork_provider_failed" {
		t.Fatalf("fork while codex dies: %+v, want agent.fork_provider_failed", errs)
	}
	ctx := t.Context()
	if n := h.srv.Store.Client.SessionFork.Query().CountX(ctx); n != 0 {
		t.Errorf("%d lineage rows after the failed fork", n)
	}
	if n := h.srv.Store.Client.AgentSession.Query().CountX(ctx); n != 1 {
		t.Errorf("%d sessions after the failed fork, want the parent only", n)
	}
	entry := h.srv.Store.Client.ForkJournal.Query().Where(forkjournal.RequestID("req-killed")).OnlyX(ctx)
	if entry.State != forkjournal.StateFailed && entry.State != forkjournal.StateArchived {
		t.Errorf("journal entry %s (%q), want failed or archived", entry.State, entry.Error)
	}
	live, err := k.rt.FindForks(ctx, agent.FindForksInput{Provider: agent.ProviderCodex,
		ParentThreadID: parent.ProviderSessionID, Cwd: h.srv.Store.Client.AgentSession.GetX(ctx, parent.ID).Cwd, CreatedAfter: started})
	if err != nil {
		t.Fatal(err)
	}
	if len(live) != 0 {
		t.Errorf("live forks of the parent at Codex: %+v (entry %s %q)", live, entry.State, entry.ChildProviderSessionID)
	}
	// Codex is back: the same request now forks once.
	child, _, errs := h.fork(map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": "req-killed"})
	if len(errs) > 0 {
		t.Fatalf("fork after the restart: %+v", errs)
	}
	h.send(ws, child.ID, "child works")
}

// TestCodexKilledDuringTurn: the app-server dies while a reply streams.
// The turn ends FAILED with the reason, no message stays in progress, and
// the next message works (the runtime restarts Codex and resumes the
// thread).
func TestCodexKilledDuringTurn(t *testing.T) {
	model := codextest.StartModelServer(t)
	model.SetReply(func(r codextest.Request) codextest.Reply {
		if r.LastUserText() == "slow" {
			return codextest.Reply{Text: "a reply cut short", Delay: time.Minute}
		}
		return codextest.DefaultReply(r)
	})
	k := startKillableCodex(t, model)
	h := startServer(t, harnessOpts{runtime: k.rt})
	ws := h.createWorkspace("fault")
	s := h.startSession(ws, "Turns")
	h.send(ws, s.ID, "hello")

	var out struct{ SendMessage struct{ ID string } }
	h.must(`mutation($in: SendMessageInput!) { sendMessage(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": s.ID, "text": "slow"}}, &out)
	turnID := out.SendMessage.ID
	ctx := t.Context()
	h.eventually("the slow reply streaming", 30*time.Second, func() bool {
		return h.srv.Store.Client.Message.Query().CountX(ctx) >= 4 // hello, reply, slow, the streaming reply
	})
	k.kill()
	h.waitTurn(ws, s.ID, turnID, "FAILED")
	tr := h.srv.Store.Client.Turn.Query().Where(turn.TurnID(turnID)).OnlyX(ctx)
	if !strings.Contains(tr.Error, "exited unexpectedly") {
		t.Errorf("turn error %q, want the reason", tr.Error)
	}
	for _, m := range h.srv.Store.Client.Message.Query().AllX(ctx) {
		if m.Status == "in_progress" {
			t.Errorf("message %s (%s) still in progress", m.MessageID, m.Role)
		}
	}
	h.eventually("codex back", 30*time.Second, func() bool { return k.rt.Health(ctx) == nil })
	h.send(ws, s.ID, "after the crash")
	reqs := model.Requests()
	if got := reqs[len(reqs)-1].UserTexts(); len(got) < 2 || got[0] != "hello" || got[len(got)-1] != "after the crash" {
		t.Errorf("next turn's history %q", got)
	}
}
