package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"tuttid/codex/codextest"
	"tuttid/priority"
)

// TestServeLowersTheAgentByDefault: `tuttid serve` without --agent-nice
// starts its Codex app-server (a child leading its own process group) at
// nice priority.DefaultAgentNice, and stays at its own; --agent-nice 0
// keeps Codex at tuttid's. (server's TestAgentWorkRunsAtAgentNice shows
// the value reaches the commands the agent runs, checks and setups.)
func TestServeLowersTheAgentByDefault(t *testing.T) {
	bin := codextest.Binary(t)
	model := codextest.StartModelServer(t)
	own := procNice(t, os.Getpid())
	for _, c := range []struct {
		name string
		env  string
		want int
	}{
		{"default", "TUTTID_AGENT_NICE=", max(priority.DefaultAgentNice, own)},
		{"zero", "TUTTID_AGENT_NICE=0", own},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			if err := codextest.WriteCodexHome(home, model.URL()); err != nil {
				t.Fatal(err)
			}
			p := startTuttid(t, filepath.Join(t.TempDir(), "tuttid.db"), bin, home, c.env)
			codex := groupLeaderChild(t, p.cmd.Process.Pid)
			if got := procNice(t, codex); got != c.want {
				t.Errorf("codex app-server (pid %d): nice %d, want %d", codex, got, c.want)
			}
			if got := procNice(t, p.cmd.Process.Pid); got != own {
				t.Errorf("tuttid: nice %d, want its own %d", got, own)
			}
		})
	}
}

// groupLeaderChild finds the child of pid that leads a process group of
// its own: the Codex app-server (its watchdog shell is in Codex's group).
func groupLeaderChild(t *testing.T, pid int) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			child, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			f, ok := statFields(child)
			if ok && f[1] == strconv.Itoa(pid) && f[2] == e.Name() {
				return child
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("tuttid (pid %d) has no child leading its own process group", pid)
	return 0
}

// statFields are /proc/PID/stat's fields after the command name: state,
// ppid, pgrp, ... (field 3 of proc(5) first).
func statFields(pid int) ([]string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, false
	}
	s := string(b)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+2:]), true
}

// procNice is a process's nice value (proc(5): field 19).
func procNice(t *testing.T, pid int) int {
	t.Helper()
	f, ok := statFields(pid)
	if !ok {
		t.Fatalf("no process %d", pid)
	}
	n, err := strconv.Atoi(f[16])
	if err != nil {
		t.Fatal(err)
	}
	return n
}
