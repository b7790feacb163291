package shellrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"tuttid/priority"
)

// alive reports whether pid is a running process (a zombie waiting for a
// reaper is dead).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// readPID waits for the file a command wrote its background pid to.
func readPID(t *testing.T, path string) int {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(path)
		if err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
	}
	t.Fatalf("no pid in %s", path)
	return 0
}

// waitDead fails unless pid is gone within a second (the kill is
// asynchronous to Run's return only by the kernel's delivery).
func waitDead(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if !alive(pid) {
			return
		}
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	t.Fatalf("process %d outlived the run", pid)
}

func TestRunResults(t *testing.T) {
	dir := t.TempDir()
	own, err := priority.Own()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		c         Command
		exit      int
		output    string // exact, unless empty
		contains  []string
		truncated bool
		bytes     int64
	}{
		{name: "passes", c: Command{Line: "true"}, exit: 0},
		{name: "exit code", c: Command{Line: "echo failing; exit 7"}, exit: 7, output: "failing\n"},
		{name: "killed by a signal", c: Command{Line: "kill -TERM $$"}, exit: -1},
		{name: "both streams in order", c: Command{Line: "echo out; echo err >&2; echo out2"}, output: "out\nerr\nout2\n"},
		{name: "runs in Dir", c: Command{Line: "pwd"}, output: dir + "\n"},
		{name: "no stdin", c: Command{Line: "cat; echo done"}, output: "done\n"},
		// /proc/self/stat's field 19 is the nice value: the command's and
		// its child's Nice, or tuttid's own (0: unchanged; never below it).
		{name: "at its nice value", c: Command{Line: "cut -d' ' -f19 /proc/self/stat; sh -c 'cut -d\" \" -f19 /proc/self/stat'", Nice: 6},
			output: fmt.Sprintf("%d\n%d\n", max(6, own), max(6, own))},
		{name: "nice 0: tuttid's", c: Command{Line: "cut -d' ' -f19 /proc/self/stat"}, output: fmt.Sprintf("%d\n", own)},
		{
			name:     "output cut to the last bytes",
			c:        Command{Line: "head -c 100000 /dev/zero | tr '\\0' a; printf END", MaxOutput: 1000},
			contains: []string{strings.Repeat("a", 997) + "END"}, truncated: true, bytes: 100003,
		},
		{
			name:     "default bound keeps 64 KiB",
			c:        Command{Line: "head -c 70000 /dev/zero | tr '\\0' b; printf END"},
			contains: []string{strings.Repeat("b", DefaultMaxOutput-3) + "END"}, truncated: true, bytes: 70003,
		},
		{
			name:   "cut after a whole character",
			c:      Command{Line: "printf 'xééé'", MaxOutput: 5},
			output: "éé", truncated: true, bytes: 7,
		},
		{name: "fits exactly", c: Command{Line: "printf abcde", MaxOutput: 5}, output: "abcde", bytes: 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.Dir = dir
			res, err := Run(context.Background(), tc.c)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.ExitCode != tc.exit || res.TimedOut || res.Passed() != (tc.exit == 0) {
				t.Errorf("exit %d timed out %v passed %v, want exit %d", res.ExitCode, res.TimedOut, res.Passed(), tc.exit)
			}
			if tc.output != "" && res.Output != tc.output {
				t.Errorf("output %q, want %q", res.Output, tc.output)
			}
			for _, want := range tc.contains {
				if res.Output != want {
					t.Errorf("output of %d bytes, want %d ending %q", len(res.Output), len(want), want[max(0, len(want)-10):])
				}
			}
			if res.Truncated != tc.truncated {
				t.Errorf("truncated %v, want %v", res.Truncated, tc.truncated)
			}
			if tc.bytes != 0 && res.OutputBytes != tc.bytes {
				t.Errorf("output bytes %d, want %d", res.OutputBytes, tc.bytes)
			}
			if res.Duration <= 0 || res.Duration > 10*time.Second {
				t.Errorf("duration %v", res.Duration)
			}
		})
	}
}

// The bound kills the whole process group, a grandchild included, and the
// Result says it timed out; the output written before stays.
func TestRunTimeoutKillsTheGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	start := time.Now()
	res, err := Run(context.Background(), Command{
		Dir: dir, Timeout: 300 * time.Millisecond,
		// KeepBackground: the kill at the bound, not the one after the
		// shell exits, must reach the grandchild.
		KeepBackground: true,
		// A subshell's child: the grandchild of Run's shell.
		Line: "echo started; (sleep 30 & echo $! > pid; wait); echo never",
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !res.TimedOut || res.ExitCode != -1 || res.Passed() || res.Output != "started\n" {
		t.Fatalf("result %+v, want timed out with the output before the kill", res)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("Run took %v for a 300ms bound", took)
	}
	waitDead(t, readPID(t, pidFile))
}

// By default nothing the command started outlives the shell; with
// KeepBackground it stays, and Run still returns (after Drain) although
// it holds the output pipe.
func TestRunBackground(t *testing.T) {
	tests := []struct {
		name string
		keep bool
	}{{"killed when the shell exits", false}, {"kept", true}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			start := time.Now()
			res, err := Run(context.Background(), Command{
				Dir: dir, Line: "sleep 30 & echo $! > pid; echo bye", KeepBackground: tc.keep, Drain: 300 * time.Millisecond,
			})
			if err != nil || !res.Passed() || res.Output != "bye\n" {
				t.Fatalf("Run: %+v %v", res, err)
			}
			if took := time.Since(start); took > 3*time.Second {
				t.Fatalf("Run took %v", took)
			}
			pid := readPID(t, filepath.Join(dir, "pid"))
			if !tc.keep {
				waitDead(t, pid)
				return
			}
			t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
			if !alive(pid) {
				t.Fatal("the background process was killed")
			}
		})
	}
}

// Canceling ctx kills the group too, and Run says why with an error.
func TestRunContextCancel(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		readPID(t, filepath.Join(dir, "pid"))
		cancel()
	}()
	res, err := Run(ctx, Command{Dir: dir, Timeout: time.Minute, KeepBackground: true, Line: "(sleep 30 & echo $! > pid; wait)"})
	if !errors.Is(err, context.Canceled) || res.TimedOut || res.ExitCode != -1 {
		t.Fatalf("Run = %+v, %v; want context.Canceled, not timed out", res, err)
	}
	waitDead(t, readPID(t, filepath.Join(dir, "pid")))

	// Already canceled: nothing runs.
	res, err = Run(ctx, Command{Dir: dir, Line: "touch ran"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run on a canceled ctx = %+v, %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Fatal("the command ran on a canceled ctx")
	}
}

// OnStart gets the process group id while the command runs: killing that
// group ends the run (what a start after a crash does).
func TestRunOnStart(t *testing.T) {
	var pgid int
	res, err := Run(context.Background(), Command{
		Dir: t.TempDir(), Line: "sleep 30; echo never",
		OnStart: func(g int) {
			pgid = g
			if err := syscall.Kill(-g, syscall.SIGKILL); err != nil {
				t.Errorf("kill the group %d: %v", g, err)
			}
		},
	})
	if err != nil || pgid <= 0 || res.ExitCode != -1 || res.TimedOut || res.Output != "" {
		t.Fatalf("Run = %+v, %v (pgid %d)", res, err, pgid)
	}
}

func TestRunStartFailure(t *testing.T) {
	res, err := Run(context.Background(), Command{Dir: filepath.Join(t.TempDir(), "missing"), Line: "true"})
	if err == nil || res.ExitCode != -1 || res.Passed() {
		t.Fatalf("Run in a missing dir = %+v, %v", res, err)
	}
}

func TestEnv(t *testing.T) {
	tests := []struct {
		name        string
		base, extra []string
		want        []string
	}{
		{
			name:  "TUTTID_ variables stripped in any case, the rest kept in order",
			base:  []string{"PATH=/bin", "TUTTID_TOKEN=secret", "tuttid_db=x", "Tuttid_No_Auth=1", "HOME=/h", "TUTTIDX=kept"},
			extra: nil,
			want:  []string{"PATH=/bin", "HOME=/h", "TUTTIDX=kept"},
		},
		{
			name:  "the caller's extras follow, its own TUTTID_ ones included",
			base:  []string{"PATH=/bin", "TUTTID_PORT_BASE=1"},
			extra: []string{"TUTTID_PORT_BASE=41000", "TUTTID_WORKTREE=/w"},
			want:  []string{"PATH=/bin", "TUTTID_PORT_BASE=41000", "TUTTID_WORKTREE=/w"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Env(tc.base, tc.extra...); !slices.Equal(got, tc.want) {
				t.Errorf("Env = %q, want %q", got, tc.want)
			}
		})
	}
}

// What the command really sees: tuttid's environment without its secrets,
// the extras overriding.
func TestRunEnvironment(t *testing.T) {
	t.Setenv("TUTTID_TOKEN", "s3cret-token")
	t.Setenv("tuttid_db", "s3cret-db")
	t.Setenv("SHELLRUN_KEEP", "inherited")
	res, err := Run(context.Background(), Command{
		Dir: t.TempDir(), Line: "env",
		Env: []string{"TUTTID_PORT_BASE=41000", "SHELLRUN_KEEP=override"},
	})
	if err != nil || !res.Passed() {
		t.Fatalf("Run: %+v %v", res, err)
	}
	lines := strings.Split(res.Output, "\n")
	if strings.Contains(res.Output, "s3cret") {
		t.Errorf("a TUTTID_ variable reached the command:\n%s", res.Output)
	}
	for _, want := range []string{"TUTTID_PORT_BASE=41000", "SHELLRUN_KEEP=override"} {
		if !slices.Contains(lines, want) {
			t.Errorf("env lacks %s", want)
		}
	}
	if slices.Contains(lines, "SHELLRUN_KEEP=inherited") {
		t.Error("the extra did not override the inherited variable")
	}
	if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "PATH=") }) {
		t.Error("PATH was not inherited")
	}
}
