//go:build linux

package codex

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"tuttid/agent"
	"tuttid/codex/codextest"
)

// The helper process of TestCodexDiesWithTuttid: a stand-in for tuttid that
// launches the real Codex through the Runtime, prints the app-server's pid
// and waits to be killed.
const (
	lifetimeHelperEnv = "TUTTID_CODEX_LIFETIME_HELPER"
	lifetimeHomeEnv   = "TUTTID_CODEX_LIFETIME_HOME"
	// lifetimeTurnEnv, when set, is a prompt the helper sends in a new
	// full-access thread before it reports (the model's reply runs a
	// command).
	lifetimeTurnEnv = "TUTTID_CODEX_LIFETIME_TURN"
)

func TestCodexLifetimeHelper(t *testing.T) {
	if os.Getenv(lifetimeHelperEnv) == "" {
		t.Skip("the helper process of TestCodexDiesWithTuttid")
	}
	r := New(Config{
		Bin:    os.Getenv(codextest.BinaryEnv),
		Env:    append(os.Environ(), "CODEX_HOME="+os.Getenv(lifetimeHomeEnv)),
		Logger: slog.New(slog.DiscardHandler),
	})
	if err := r.Launch(context.Background()); err != nil {
		fmt.Println("launch:", err)
		os.Exit(1)
	}
	p, err := r.current()
	if err != nil {
		fmt.Println("current:", err)
		os.Exit(1)
	}
	if prompt := os.Getenv(lifetimeTurnEnv); prompt != "" {
		full := agent.ComposerSettings{PermissionModeID: agent.PermissionFullAccess}
		sess, err := r.Start(context.Background(), agent.StartInput{Provider: agent.ProviderCodex, Cwd: os.TempDir(), Settings: full})
		if err != nil {
			fmt.Println("start:", err)
			os.Exit(1)
		}
		if _, err := r.SendTurn(context.Background(), agent.SendTurnInput{Provider: agent.ProviderCodex,
			ThreadID: sess.ThreadID, Settings: full, Text: prompt}); err != nil {
			fmt.Println("send:", err)
			os.Exit(1)
		}
	}
	// A process that outlives this one holding the app-server's stdin, so
	// that Codex cannot learn of this process's death from an end of file:
	// only a signal can stop it in time.
	holder := exec.Command("sleep", "60")
	holder.ExtraFiles = []*os.File{p.Stdin()}
	holder.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := holder.Start(); err != nil {
		fmt.Println("holder:", err)
		os.Exit(1)
	}
	fmt.Printf("codex %d holder %d\n", p.Pid(), holder.Process.Pid)
	select {}
}

// TestCodexDiesWithTuttid: a SIGKILLed tuttid takes its Codex with it, the
// npm wrapper (node) and the real binary it runs, even while something else
// keeps Codex's stdin open (so that the end of its input is not what stops
// it).
func TestCodexDiesWithTuttid(t *testing.T) {
	bin := codextest.Binary(t)
	model := codextest.StartModelServer(t)
	home := codextest.NewCodexHome(t, model.URL())

	helper, codexPid := startLifetimeHelper(t, home, bin)

	// The wrapper's child, the real binary, must be running before the kill.
	deadline := time.Now().Add(20 * time.Second)
	var group []int
	for {
		group = liveGroup(t, codexPid)
		if hasRealCodex(group) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("codex process group %d before the kill: %v", codexPid, describe(group))
	if !hasRealCodex(group) {
		t.Fatalf("want the real codex in group %d, have %v", codexPid, describe(group))
	}

	if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	killed := time.Now()
	const bound = 5 * time.Second
	for time.Since(killed) < bound {
		if group = liveGroup(t, codexPid); len(group) == 0 {
			t.Logf("codex gone %v after its parent was killed", time.Since(killed).Round(time.Millisecond))
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%v after tuttid was killed, codex still runs: %v", bound, describe(group))
}

// liveGroup lists the processes of process group pgid that are not zombies.
func liveGroup(t *testing.T, pgid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		state, group, ok := procStat(pid)
		if ok && group == pgid && state != "Z" && state != "X" {
			pids = append(pids, pid)
		}
	}
	return pids
}

// procStat reads a process's state and process group from /proc/pid/stat.
func procStat(pid int) (state string, pgid int, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return "", 0, false
	}
	// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 3 {
		return "", 0, false
	}
	pgid, err = strconv.Atoi(f[2])
	return f[0], pgid, err == nil
}

// hasRealCodex says whether one of pids runs an executable named codex (the
// native binary, where the npm wrapper's process runs node).
func hasRealCodex(pids []int) bool {
	for _, pid := range pids {
		exe, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe"))
		if filepath.Base(exe) == "codex" {
			return true
		}
	}
	return false
}

func describe(pids []int) string {
	var parts []string
	for _, pid := range pids {
		exe, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe"))
		parts = append(parts, fmt.Sprintf("%d(%s)", pid, exe))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// TestCodexOutlivesTheThreadThatStartedIt: Pdeathsig fires when the OS
// thread that forked the child exits. A caller whose goroutine locked its
// thread and ends without unlocking it (Go then ends that thread) must not
// take Codex with it.
func TestCodexOutlivesTheThreadThatStartedIt(t *testing.T) {
	cfg := fakeConfig(t, t.TempDir(), "normal")
	r := New(cfg)
	t.Cleanup(func() { _ = r.Close() })
	// Go never ends the main thread; a goroutine that finds itself locked
	// to it stays there (until the test ends), so that the next one is
	// locked to a thread that does end.
	release := make(chan struct{})
	defer close(release)
	errc := make(chan error, 1)
	for launched := false; !launched; {
		onMain := make(chan bool, 1)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread exits with this goroutine
			if syscall.Gettid() == os.Getpid() {
				onMain <- true
				<-release
				return
			}
			onMain <- false
			errc <- r.Launch(context.Background())
		}()
		launched = !<-onMain
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	p, err := r.current()
	if err != nil {
		t.Fatal(err)
	}
	pid := p.Pid()
	time.Sleep(500 * time.Millisecond) // the locked thread is gone by now
	if state, _, ok := procStat(pid); !ok || state == "Z" {
		t.Fatalf("codex (pid %d) died with the thread that started it (state %q)", pid, state)
	}
	if p, err = r.current(); err != nil || p.gen != 1 {
		t.Fatalf("the app-server was restarted (err %v)", err)
	}
}

// TestCodexCommandsDieWithTuttid: a command the agent runs (through
// Codex's exec_command) does not outlive a SIGKILLed tuttid either.
func TestCodexCommandsDieWithTuttid(t *testing.T) {
	bin := codextest.Binary(t)
	model := codextest.StartModelServer(t)
	const marker = "313.25"
	model.SetReply(func(r codextest.Request) codextest.Reply {
		if r.AfterToolCall() {
			return codextest.Reply{Text: "done"}
		}
		return codextest.Reply{Text: "running", FunctionCall: &codextest.FunctionCall{Cmd: "sleep " + marker}}
	})
	home := codextest.NewCodexHome(t, model.URL())

	helper, codexPid := startLifetimeHelper(t, home, bin, lifetimeTurnEnv+"=run it")

	var sleeper int
	for deadline := time.Now().Add(30 * time.Second); sleeper == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		sleeper = findCmdline("sleep\x00" + marker)
	}
	if sleeper == 0 {
		t.Fatalf("the command never ran")
	}
	t.Cleanup(func() { _ = syscall.Kill(sleeper, syscall.SIGKILL) })
	_, pgid, _ := procStat(sleeper)
	t.Logf("the command: pid %d, process group %d (codex's: %d)", sleeper, pgid, codexPid)

	if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	killed := time.Now()
	for time.Since(killed) < 5*time.Second {
		if state, _, ok := procStat(sleeper); !ok || state == "Z" {
			t.Logf("the command gone %v after tuttid was killed", time.Since(killed).Round(time.Millisecond))
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("5s after tuttid was killed, the command it ran still runs: %v", describe([]int{sleeper}))
}

// findCmdline finds a process whose /proc/pid/cmdline starts with prefix.
func findCmdline(prefix string) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if strings.HasPrefix(string(b), prefix) {
			return pid
		}
	}
	return 0
}

// startLifetimeHelper re-runs the test binary as a small tuttid that starts
// Codex on home (with env added) and prints Codex's pid and the pid of the
// process that holds Codex's stdin open. Whatever happens, the test leaves
// no Codex behind writing to the removed home, nor the holder.
func startLifetimeHelper(t *testing.T, home, bin string, env ...string) (*exec.Cmd, int) {
	t.Helper()
	helper := exec.Command(os.Args[0], "-test.run=^TestCodexLifetimeHelper$", "-test.count=1")
	helper.Env = append(append(os.Environ(), lifetimeHelperEnv+"=1", lifetimeHomeEnv+"="+home, codextest.BinaryEnv+"="+bin), env...)
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	helper.Stderr = os.Stderr
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = helper.Process.Kill(); _ = helper.Wait() })
	var codexPid, holderPid int
	line, err := bufio.NewReader(out).ReadString('\n')
	if _, serr := fmt.Sscanf(line, "codex %d holder %d", &codexPid, &holderPid); serr != nil {
		t.Fatalf("helper said %q (%v)", line, err)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	t.Cleanup(func() { _ = syscall.Kill(holderPid, syscall.SIGKILL) })
	t.Cleanup(func() { _ = syscall.Kill(-codexPid, syscall.SIGKILL) })
	return helper, codexPid
}
