//go:build unix

package codex

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts the child in its own process group: the npm `codex`
// entry point is a node wrapper that spawns the real binary, and killing
// only the wrapper would leave the app-server running.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func signalGroup(cmd *exec.Cmd, kill bool) {
	if cmd.Process == nil {
		return
	}
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
}
