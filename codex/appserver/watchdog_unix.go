//go:build unix

package appserver

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// groupWatchdog is a shell in the app-server's process group that kills the
// whole group when tuttid exits, however it exits. Its stdin is a pipe
// whose only writer is tuttid (our end is close-on-exec, so no other child
// inherits it): when tuttid dies the kernel closes it, `read` meets the end
// of file, and `kill -KILL 0` reaches every process of the group.
//
// Pdeathsig (Linux) stops only the direct child. With Node < 23.11 (no
// process.execve) the npm wrapper runs the real binary as its own child,
// which would live on until it noticed the end of its stdin, and not at
// all while anything else held that pipe; a shell-script wrapper has the
// same shape. The watchdog covers every member of the group.
type groupWatchdog struct {
	cmd *exec.Cmd
	w   *os.File
}

// startWatchdog starts the watchdog in process group pgid, with env (the
// app-server's environment, so that it holds nothing more).
func startWatchdog(pgid int, env []string) (*groupWatchdog, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("codex watchdog: %w", err)
	}
	cmd := exec.Command("/bin/sh", "-c", "read x; kill -KILL 0")
	cmd.Env = env
	cmd.Stdin = r
	// No Pdeathsig: it has to outlive tuttid to do its job.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: pgid}
	err = cmd.Start()
	_ = r.Close()
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("codex watchdog: %w", err)
	}
	return &groupWatchdog{cmd: cmd, w: w}, nil
}

// stop ends the watchdog once the app-server is gone: closing the pipe has
// it kill what is left of the group (itself, at least), and it is reaped.
func (g *groupWatchdog) stop() {
	if g == nil {
		return
	}
	_ = g.w.Close()
	done := make(chan struct{})
	go func() {
		_ = g.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		_ = g.cmd.Process.Kill()
		<-done
	}
}
