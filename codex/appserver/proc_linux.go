//go:build linux

package appserver

import (
	"os/exec"
	"runtime"
	"syscall"
)

// setProcessGroup puts the child in its own process group (the npm `codex`
// entry point is a node wrapper that spawns the real binary, and killing
// only the wrapper would leave the app-server running) and has the kernel
// SIGKILL it when tuttid dies, however it dies.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// startProcess starts cmd on a goroutine of its own. Pdeathsig fires when
// the OS *thread* that forked the child exits, not the process. Go retires
// a thread only when a goroutine exits while locked to it; a caller's
// goroutine may be one (it locked its thread and will end), a new
// goroutine never is, and this one unlocks before it ends, so the thread
// that forked Codex goes back to the pool and lives as long as tuttid.
func startProcess(cmd *exec.Cmd) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		errc <- cmd.Start()
	}()
	return <-errc
}
