package priority

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLowerGroup starts a shell in a process group of its own that has
// already started a child, lowers the group, and reads the nice values
// Linux reports: the leader's, the child's started before, and a child's
// started after.
func TestLowerGroup(t *testing.T) {
	for _, c := range []struct {
		name    string
		nice    int
		want    int
		wantErr bool
	}{
		{"zero changes nothing", 0, own(t), false},
		{"seven", 7, max(7, own(t)), false},
		{"the lowest", MaxNice, MaxNice, false},
		{"above the lowest", MaxNice + 1, own(t), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := startGroup(t)
			err := LowerGroup(g.cmd.Process.Pid, c.nice)
			if (err != nil) != c.wantErr {
				t.Fatalf("LowerGroup(%d) = %v, want an error: %v", c.nice, err, c.wantErr)
			}
			close(g.release)
			for what, pid := range map[string]int{"the leader": g.cmd.Process.Pid, "a child started before": g.pid(t, "before"), "a child started after": g.pid(t, "after")} {
				if got := niceOf(t, pid); got != c.want {
					t.Errorf("%s: nice %d, want %d", what, got, c.want)
				}
			}
		})
	}
}

// TestLowerGroupNeverAboveOwn: a tuttid running nicer than asked keeps
// its agent at least as nice as itself.
func TestLowerGroupNeverAboveOwn(t *testing.T) {
	type started struct {
		pid int
		err error
	}
	res := make(chan started, 1)
	go func() {
		// This thread alone is made nicer, and retired with the goroutine
		// (never unlocked): the test binary's other threads keep theirs.
		runtime.LockOSThread()
		if err := syscall.Setpriority(syscall.PRIO_PROCESS, 0, 15); err != nil {
			res <- started{err: err}
			return
		}
		cmd := exec.Command("sleep", "30")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			res <- started{err: err}
			return
		}
		go func() { _ = cmd.Wait() }()
		res <- started{pid: cmd.Process.Pid, err: LowerGroup(cmd.Process.Pid, 5)}
	}()
	r := <-res
	if r.pid != 0 {
		defer syscall.Kill(-r.pid, syscall.SIGKILL)
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got := niceOf(t, r.pid); got != 15 {
		t.Errorf("nice %d under a tuttid at 15 asking 5, want 15", got)
	}
}

func own(t *testing.T) int {
	t.Helper()
	n, err := Own()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

type group struct {
	cmd     *exec.Cmd
	dir     string
	release chan struct{}
}

// startGroup starts `sh` leading a process group, with one child started
// and a second started once release is closed (a file appears); each child
// writes its pid to a file.
func startGroup(t *testing.T) *group {
	t.Helper()
	dir := t.TempDir()
	script := `sleep 30 & echo $! > before
while [ ! -e go ]; do sleep 0.01; done
sleep 30 & echo $! > after
wait`
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	g := &group{cmd: cmd, dir: dir, release: make(chan struct{})}
	g.pid(t, "before")
	go func() {
		<-g.release
		_ = os.WriteFile(filepath.Join(dir, "go"), nil, 0o600)
	}()
	return g
}

func (g *group) pid(t *testing.T, name string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(filepath.Join(g.dir, name))
		if s := strings.TrimSpace(string(b)); err == nil && s != "" {
			pid, err := strconv.Atoi(s)
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no pid in %s", name)
	return 0
}

// niceOf reads a process's nice value from /proc/PID/stat (field 19).
func niceOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	n, err := strconv.Atoi(fields[16])
	if err != nil {
		t.Fatal(err)
	}
	return n
}
