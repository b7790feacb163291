package server_test

import (
	"fmt"
	"os"
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
// server (this test process) keeps its own. Where the kernel shares the
// CPU between sessions first (autogroups) and Codex's sandbox runs the
// command in a session of its own, that session's autogroup is at
// AgentNice too (priority.KeepAutogroups), and so are the sessions tuttid
// starts the setup and the check in: each waits up to 10 s for it, then
// writes its autogroup into the worktree. tuttid's own git (gitrepo's, on
// the branches' files) runs at AgentNice too.
func TestAgentWorkRunsAtAgentNice(t *testing.T) {
	const nice = 7 // not a value anything here would have by chance
	own := ownNice(t)
	if own >= nice {
		t.Fatalf("this test runs at nice %d: it shows nothing at %d", own, nice)
	}
	repo := gitRepo(t) // the test's own git, before the wrapper
	// tuttid's git (not Codex's) logs its nice value and its arguments.
	bin := t.TempDir()
	gitCalls := filepath.Join(bin, "calls")
	wrapper := fmt.Sprintf("#!/bin/sh\n[ \"$PPID\" = %d ] && echo \"$(cut -d' ' -f19 /proc/self/stat) $*\" >> '%s'\nexec /usr/bin/git \"$@\"\n", os.Getpid(), gitCalls)
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	h := startServer(t, harnessOpts{agentNice: nice})
	const readNice = `cut -d' ' -f19 /proc/self/stat > `
	readAutogroup := func(file string) string {
		return `; for i in $(seq 100); do grep -q ' nice 7$' /proc/self/autogroup && break; sleep 0.1; done; cat /proc/self/autogroup > ` + file
	}
	ws := h.createWorkspaceAt("nice", repo, readNice+"setup-nice.txt"+readAutogroup("setup-autogroup.txt"))
	parent := h.startSession(ws, "parent")
	turn := h.send(ws, parent.ID, "hello")
	h.model.SetModelReply("mock-nice", codextest.CommandThen(readNice+"agent-nice.txt"+readAutogroup("agent-autogroup.txt"), "read my nice value"))
	autogroups, ownGroup := autogroupOf(t, "self")

	x, _, errs := h.explore(map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": "nice-1", "lastTurnId": turn,
		"prompt": "read your nice value", "checkCommand": readNice + "check-nice.txt" + readAutogroup("check-autogroup.txt"),
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
		if !autogroups {
			continue
		}
		// "/autogroup-85632 nice 7". Codex's command: tuttid's own
		// session's (its nice value counted there, as above) or one of its
		// own (its sandbox's) at AgentNice; the setup and the check, which
		// tuttid starts in a session of their own: one at AgentNice.
		for _, f := range []string{"agent-autogroup.txt", "setup-autogroup.txt", "check-autogroup.txt"} {
			text := strings.TrimSpace(readFile(t, filepath.Join(dir, f)))
			group := strings.Fields(text)
			ours := f == "agent-autogroup.txt" && (text == "" && ownGroup == "" || len(group) == 3 && group[0] == ownGroup)
			if !ours && (len(group) != 3 || group[0] == ownGroup || group[2] != strconv.Itoa(nice)) {
				t.Errorf("branch %s: %s = %q (ours %q), want one at nice %d", b.Name, f, group, ownGroup, nice)
			}
			t.Logf("branch %s: %s = %q (ours %q)", b.Name, f, group, ownGroup)
		}
	}
	// tuttid's git: the forks' worktrees, the checkpoints, the change
	// counts the ranking read.
	calls := strings.Split(strings.TrimSpace(readFile(t, gitCalls)), "\n")
	for _, c := range calls {
		if v, _, _ := strings.Cut(c, " "); v != strconv.Itoa(nice) {
			t.Errorf("tuttid's git ran at nice %s, want %d: %s", v, nice, c)
		}
	}
	t.Logf("tuttid's git: %d calls", len(calls))
	if len(calls) < 10 {
		t.Errorf("tuttid's git: %d calls logged, want the forks' and the checkpoints' (10 or more)", len(calls))
	}
	if got := ownNice(t); got != own {
		t.Errorf("the server's own nice value went from %d to %d", own, got)
	}
}

// autogroupOf answers whether the kernel schedules by autogroup and, if
// so, process pid's ("self": this one) as /proc says: its id, or "" in
// the kernel's first session (no autogroup: its file is empty; CI's
// runner), which a process started below it in a session of its own
// leaves for an autogroup like any other.
func autogroupOf(t *testing.T, pid string) (bool, string) {
	t.Helper()
	on, err := os.ReadFile("/proc/sys/kernel/sched_autogroup_enabled")
	if err != nil || strings.TrimSpace(string(on)) != "1" {
		t.Log("the kernel does not schedule by autogroup: only nice values checked")
		return false, ""
	}
	group, _, _ := strings.Cut(strings.TrimSpace(readFile(t, "/proc/"+pid+"/autogroup")), " ")
	return true, group
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
